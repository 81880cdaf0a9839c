package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/payout"
	"github.com/paygate/paygate/workflows"
)

// payoutRail is a fake of the payout activities' outside world: what the
// ledger and the rail were asked, and the statuses recorded.
type payoutRail struct {
	mu        sync.Mutex
	reserved  activities.PayoutReserveResult
	outcome   activities.PayoutTransfer // what the rail decides after polls
	polls     int                       // polls answered "submitted" before the outcome
	submits   int
	settled   []string
	released  []string
	statuses  []payout.Status
	notes     []activities.RecordNotificationInput
	redeliver int
	// refuseNotice: the merchant does not acknowledge the payout's own
	// attempt at its notification; deliveries are the attempts made and
	// handedOver what the Redeliver child was started with.
	refuseNotice bool
	deliveries   []activities.DeliverInput
	handedOver   []workflows.RedeliverInput
	priced       int // PayoutPrice calls
	// submitErr and findErr script PayoutSubmit's and PayoutFindTransfer's
	// failures by call number; found is what a successful find answers
	// from the second call on (the first is the look before submitting).
	submitErr func(n int) error
	findErr   func(n int) error
	found     activities.PayoutTransfer
	finds     int
	// finder, when set, answers every find by call number in place of
	// findErr and found; getErr scripts PayoutGetTransfer's failures.
	finder func(n int) (activities.PayoutTransfer, error)
	getErr func(n int) error
	gets   int
	// railModes are the modes the rail calls carried, in order;
	// startModes those the record's start was given.
	railModes, startModes []string
	// clock, when set, is the test's clock: polledAt records when each
	// read of the transfer came.
	clock    func() time.Time
	polledAt []time.Time
	// startErr scripts PayoutRecordStart's failures by call number.
	startErr func(n int) error
	starts   int
	// closeErr fails PayoutClose (shape 1) before it does anything;
	// reserveRefused is the ledger's refusal PayoutOpen reports.
	closeErr       error
	reserveRefused string
	// reserveFails: PayoutOpen's reservation failed until its retries ran out.
	reserveFails string
	closes       int
	// recordedRef is the short reference PayoutOpen reports recorded in
	// place of the run's; references are those the submissions carried.
	recordedRef string
	references  []string
}

// The payout activities' steps as the fake takes them. open and close
// take them in the order PayoutOpen and PayoutClose do, for runs of shape 1.

func (f *payoutRail) recordStart(_ context.Context, in activities.PayoutRecordStartInput) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts++
	if f.startErr != nil {
		if err := f.startErr(f.starts - 1); err != nil {
			return err
		}
	}
	f.startModes = append(f.startModes, in.Mode)
	return nil
}

func (f *payoutRail) price(context.Context, activities.PayoutPriceInput) (activities.PayoutPriceResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.priced++
	return activities.PayoutPriceResult{Charges: payoutCharges()}, nil
}

func (f *payoutRail) record(_ context.Context, in activities.PayoutRecordInput) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statuses = append(f.statuses, in.Status)
	return nil
}

func (f *payoutRail) settle(_ context.Context, in activities.PayoutReservationInput) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settled = append(f.settled, in.Reference)
	return nil
}

func (f *payoutRail) release(_ context.Context, in activities.PayoutReservationInput) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.released = append(f.released, in.Reference)
	return nil
}

func (f *payoutRail) recordNotification(_ context.Context, in activities.RecordNotificationInput) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notes = append(f.notes, in)
	return nil
}

func (f *payoutRail) open(ctx context.Context, in activities.PayoutOpenInput) (activities.PayoutOpenResult, error) {
	if err := f.recordStart(ctx, in.Start); err != nil {
		return activities.PayoutOpenResult{}, err
	}
	var out activities.PayoutOpenResult
	if in.Charges != nil {
		out.Charges = *in.Charges
	} else {
		priced, _ := f.price(ctx, activities.PayoutPriceInput{})
		out.Charges = priced.Charges
	}
	ch := out.Charges
	if err := f.record(ctx, activities.PayoutRecordInput{ID: in.Start.ID, Status: payout.StatusNew, Charges: &ch}); err != nil {
		return activities.PayoutOpenResult{}, err
	}
	if f.reserveFails != "" {
		return activities.PayoutOpenResult{}, temporal.NewNonRetryableApplicationError(f.reserveFails, activities.ErrTypePayoutReserveFailed, nil)
	}
	out.Insufficient, out.ReserveRefused = f.reserved.Insufficient, f.reserveRefused
	out.ShortReferenceID = f.recordedRef
	return out, nil
}

func (f *payoutRail) close(ctx context.Context, in activities.PayoutCloseInput) error {
	f.mu.Lock()
	f.closes++
	f.mu.Unlock()
	if f.closeErr != nil {
		return f.closeErr
	}
	switch {
	case in.Reference != "" && in.Settle:
		_ = f.settle(ctx, activities.PayoutReservationInput{Reference: in.Reference})
	case in.Reference != "":
		_ = f.release(ctx, activities.PayoutReservationInput{Reference: in.Reference})
	}
	if err := f.record(ctx, in.Record); err != nil {
		return err
	}
	if in.Notification != nil {
		return f.recordNotification(ctx, *in.Notification)
	}
	return nil
}

func payoutCharges() payout.Charges {
	return payout.Charges{
		Quote: payout.Quote{SourceCurrency: "USD", PaymentCurrency: "USD", Rate: payout.RateScale,
			PaymentAmount: money.FromMinor(10000, "USD"), SourceAmount: money.FromMinor(10000, "USD")},
		FeePaidBy: payout.FeePayer, Fee: money.FromMinor(500, "USD"), PayerPays: money.FromMinor(10500, "USD"),
		Transfer: money.FromMinor(10000, "USD"), BeneficiaryReceives: money.FromMinor(10000, "USD"),
	}
}

func newPayoutEnv(t *testing.T, f *payoutRail) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(&activities.Activities{})
	env.RegisterActivity(&activities.PayoutActivities{})
	env.RegisterWorkflowWithOptions(workflows.Payout, workflow.RegisterOptions{Name: workflows.PayoutWorkflowType})
	env.RegisterWorkflowWithOptions(workflows.Redeliver, workflow.RegisterOptions{Name: workflows.RedeliverWorkflowType})
	var pa *activities.PayoutActivities
	var a *activities.Activities
	env.OnActivity(pa.PayoutRecordStart, mock.Anything, mock.Anything).Return(f.recordStart)
	env.OnActivity(pa.PayoutPrice, mock.Anything, mock.Anything).Return(f.price)
	env.OnActivity(pa.PayoutRecord, mock.Anything, mock.Anything).Return(f.record)
	env.OnActivity(pa.PayoutReserve, mock.Anything, mock.Anything).Return(f.reserved, nil)
	env.OnActivity(pa.PayoutOpen, mock.Anything, mock.Anything).Return(f.open)
	env.OnActivity(pa.PayoutClose, mock.Anything, mock.Anything).Return(f.close)
	env.OnActivity(pa.PayoutFindTransfer, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.PayoutFindInput) (activities.PayoutTransfer, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.railModes = append(f.railModes, in.Mode)
			f.finds++
			if f.finder != nil {
				return f.finder(f.finds - 1)
			}
			if f.findErr != nil {
				if err := f.findErr(f.finds - 1); err != nil {
					return activities.PayoutTransfer{}, err
				}
			}
			if f.finds == 1 {
				return activities.PayoutTransfer{}, nil
			}
			return f.found, nil
		})
	env.OnActivity(pa.PayoutSubmit, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.PayoutSubmitInput) (activities.PayoutTransfer, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.railModes = append(f.railModes, in.Mode)
			f.submits++
			f.references = append(f.references, in.Reference)
			if f.submitErr != nil {
				if err := f.submitErr(f.submits - 1); err != nil {
					return activities.PayoutTransfer{}, err
				}
			}
			if in.IdempotencyKey != "payout/m1/key" || in.Amount != 10000 || in.Currency != "USD" {
				return activities.PayoutTransfer{}, errors.New("unexpected submission")
			}
			return activities.PayoutTransfer{Found: true, ID: "tr_1", Status: activities.TransferSubmitted, Attempt: 1}, nil
		})
	env.OnActivity(pa.PayoutGetTransfer, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.PayoutGetInput) (activities.PayoutTransfer, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.railModes = append(f.railModes, in.Mode)
			if f.clock != nil {
				f.polledAt = append(f.polledAt, f.clock())
			}
			f.gets++
			if f.getErr != nil {
				if err := f.getErr(f.gets - 1); err != nil {
					return activities.PayoutTransfer{}, err
				}
			}
			if f.polls > 0 {
				f.polls--
				return activities.PayoutTransfer{Found: true, ID: "tr_1", Status: activities.TransferSubmitted, Attempt: 1}, nil
			}
			return f.outcome, nil
		})
	env.OnActivity(pa.PayoutSettle, mock.Anything, mock.Anything).Return(f.settle)
	env.OnActivity(pa.PayoutRelease, mock.Anything, mock.Anything).Return(f.release)
	env.OnActivity(a.RecordNotification, mock.Anything, mock.Anything).Return(f.recordNotification)
	env.OnActivity(a.DeliverNotification, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.DeliverInput) (activities.DeliverResult, error) {
			f.deliveries = append(f.deliveries, in)
			if f.refuseNotice {
				return activities.DeliverResult{StatusCode: 503, Error: "HTTP 503"}, nil
			}
			return activities.DeliverResult{Delivered: true, StatusCode: 200}, nil
		})
	env.OnWorkflow(workflows.RedeliverWorkflowType, mock.Anything, mock.Anything).Return(
		func(_ workflow.Context, in workflows.RedeliverInput) (workflows.RedeliverResult, error) {
			f.redeliver++
			f.handedOver = append(f.handedOver, in)
			return workflows.RedeliverResult{}, nil
		})
	return env
}

func payoutInput() workflows.PayoutInput {
	return workflows.PayoutInput{
		ID: "payout/m1/key", MerchantID: "m1", AccountID: "a1", RequestID: "key",
		TransactionID: "1234567890123456789", ShortReferenceID: "20260101-ABC123",
		Instruction: payout.Instruction{
			Request:        payout.Request{MerchantID: "m1", AccountID: "a1", RequestID: "key", PaymentCurrency: "USD", PaymentAmount: "100.00"},
			PaymentAmount:  money.FromMinor(10000, "USD"),
			SourceCurrency: "USD", IBAN: "DE89370400440532013000", BIC: "COBADEFFXXX",
		},
		NotifyURL: "https://shop.example/payouts", Run: 1, NotifySchedule: notify.DefaultSchedule(),
		Shape: workflows.CurrentPayoutShape,
	}
}

func runPayout(t *testing.T, env *testsuite.TestWorkflowEnvironment, in workflows.PayoutInput) workflows.PayoutState {
	t.Helper()
	env.ExecuteWorkflow(workflows.PayoutWorkflowType, in)
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	var st workflows.PayoutState
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestPayoutCompletes(t *testing.T) {
	f := &payoutRail{reserved: activities.PayoutReserveResult{Reserved: true}, polls: 5,
		outcome: activities.PayoutTransfer{Found: true, ID: "tr_1", Status: activities.TransferCompleted, Attempt: 1}}
	env := newPayoutEnv(t, f)
	st := runPayout(t, env, payoutInput())
	if st.Status != payout.StatusCompleted || st.FailureType != "" || st.RailTransferID != "tr_1" {
		t.Fatalf("state = %+v", st)
	}
	if f.submits != 1 || len(f.settled) != 1 || f.settled[0] != "payout/m1/key/run/1" || len(f.released) != 0 {
		t.Errorf("submits %d, settled %v, released %v", f.submits, f.settled, f.released)
	}
	want := []payout.Status{payout.StatusNew, payout.StatusSubmitted, payout.StatusCompleted}
	if len(f.statuses) != len(want) {
		t.Fatalf("statuses = %v, want %v", f.statuses, want)
	}
	for i := range want {
		if f.statuses[i] != want[i] {
			t.Errorf("statuses = %v, want %v", f.statuses, want)
		}
	}
	if len(f.notes) != 1 || f.notes[0].Type != "payout" || f.notes[0].Fields["status"] != "COMPLETED" ||
		f.notes[0].Fields["amount_payer_pays"] != "105.00" || f.notes[0].Fields["fee_amount"] != "5.00" {
		t.Errorf("notifications = %+v", f.notes)
	}
	// Acknowledged at the payout's own attempt: no Redeliver workflow.
	if len(f.deliveries) != 1 || f.deliveries[0].Attempt != 1 || f.deliveries[0].NotifyID != f.notes[0].NotifyID || f.redeliver != 0 {
		t.Errorf("deliveries %+v, Redeliver started %d times", f.deliveries, f.redeliver)
	}
}

// TestPayoutHandsAnUnacknowledgedNotificationOver: a notification the
// merchant did not acknowledge at the payout's attempt goes to a Redeliver
// workflow that knows one attempt was made.
func TestPayoutHandsAnUnacknowledgedNotificationOver(t *testing.T) {
	f := &payoutRail{reserved: activities.PayoutReserveResult{Reserved: true}, refuseNotice: true,
		outcome: activities.PayoutTransfer{Found: true, ID: "tr_1", Status: activities.TransferCompleted, Attempt: 1}}
	env := newPayoutEnv(t, f)
	st := runPayout(t, env, payoutInput())
	if st.Status != payout.StatusCompleted {
		t.Fatalf("state = %+v", st)
	}
	if len(f.deliveries) != 1 || f.redeliver != 1 || len(f.handedOver) != 1 ||
		f.handedOver[0].Attempted != 1 || len(f.handedOver[0].NotifyIDs) != 1 || f.handedOver[0].NotifyIDs[0] != f.notes[0].NotifyID {
		t.Errorf("deliveries %+v, handed over %+v", f.deliveries, f.handedOver)
	}
}

// TestPayoutCarriesItsMode: every call a payout makes to a rail carries
// its account's mode, which picks the rail (a test account's reaches the
// simulated one only), and the record keeps it for re-runs.
func TestPayoutCarriesItsMode(t *testing.T) {
	for _, mode := range []string{"test", "live"} {
		t.Run(mode, func(t *testing.T) {
			f := &payoutRail{reserved: activities.PayoutReserveResult{Reserved: true}, polls: 1,
				outcome: activities.PayoutTransfer{Found: true, ID: "tr_1", Status: activities.TransferCompleted, Attempt: 1}}
			env := newPayoutEnv(t, f)
			in := payoutInput()
			in.Mode = mode
			if st := runPayout(t, env, in); st.Status != payout.StatusCompleted {
				t.Fatalf("state %+v", st)
			}
			if len(f.railModes) < 3 || slices.ContainsFunc(f.railModes, func(m string) bool { return m != mode }) {
				t.Errorf("rail calls carried %q, want %s on each", f.railModes, mode)
			}
			if !slices.Equal(f.startModes, []string{mode}) {
				t.Errorf("recorded modes %q, want [%s]", f.startModes, mode)
			}
		})
	}
}

func TestPayoutInsufficientFunds(t *testing.T) {
	f := &payoutRail{reserved: activities.PayoutReserveResult{Insufficient: true}}
	env := newPayoutEnv(t, f)
	st := runPayout(t, env, payoutInput())
	if st.Status != payout.StatusFailed || st.FailureType != payout.FailureInsufficientFunds {
		t.Fatalf("state = %+v", st)
	}
	if f.submits != 0 || len(f.released) != 0 || len(f.settled) != 0 {
		t.Errorf("submits %d, settled %v, released %v; want nothing", f.submits, f.settled, f.released)
	}
	if len(f.notes) != 1 || f.notes[0].Fields["failure_type"] != "INSUFFICIENT_FUNDS" {
		t.Errorf("notifications = %+v", f.notes)
	}
}

func TestPayoutRailFailureReleases(t *testing.T) {
	f := &payoutRail{reserved: activities.PayoutReserveResult{Reserved: true}, polls: 2,
		outcome: activities.PayoutTransfer{Found: true, ID: "tr_1", Status: activities.TransferFailed, Attempt: 1,
			FailureType: payout.FailureBeneficiaryAccount, FailureReason: "beneficiary account closed"}}
	env := newPayoutEnv(t, f)
	st := runPayout(t, env, payoutInput())
	if st.Status != payout.StatusFailed || st.FailureType != payout.FailureBeneficiaryAccount ||
		st.FailureReason != "beneficiary account closed" {
		t.Fatalf("state = %+v", st)
	}
	if len(f.released) != 1 || len(f.settled) != 0 {
		t.Errorf("settled %v, released %v", f.settled, f.released)
	}
}

func TestPayoutWaitsForPaymentDate(t *testing.T) {
	f := &payoutRail{reserved: activities.PayoutReserveResult{Reserved: true},
		outcome: activities.PayoutTransfer{Found: true, ID: "tr_1", Status: activities.TransferCompleted, Attempt: 1}}
	env := newPayoutEnv(t, f)
	in := payoutInput()
	start := env.Now()
	in.Instruction.PaymentDate = start.Add(72 * time.Hour)
	st := runPayout(t, env, in)
	if st.Status != payout.StatusCompleted || f.statuses[1] != payout.StatusScheduled {
		t.Fatalf("state = %+v, statuses %v", st, f.statuses)
	}
	if env.Now().Sub(start) < 72*time.Hour {
		t.Errorf("completed at %s, before the payment date", env.Now())
	}
}

// TestPayoutRerunKeepsItsCharges: a re-run given the charges its payout
// recorded sends them to the rail as they were and does not price again,
// so rates changed since cannot make the rail see another body under the
// same key.
func TestPayoutRerunKeepsItsCharges(t *testing.T) {
	f := &payoutRail{reserved: activities.PayoutReserveResult{Reserved: true},
		outcome: activities.PayoutTransfer{Found: true, ID: "tr_1", Status: activities.TransferCompleted, Attempt: 2}}
	env := newPayoutEnv(t, f)
	in := payoutInput()
	in.Run = 2
	recorded := payoutCharges()
	in.Charges = &recorded
	st := runPayout(t, env, in)
	if st.Status != payout.StatusCompleted || st.Charges == nil || st.Charges.Fee.Minor != 500 {
		t.Fatalf("state = %+v", st)
	}
	if f.priced != 0 || f.submits != 1 || len(f.settled) != 1 || f.settled[0] != "payout/m1/key/run/2" {
		t.Errorf("priced %d times, submits %d, settled %v", f.priced, f.submits, f.settled)
	}
}

// TestPayoutSubmissionUnanswered: the rail answered none of the submission's
// attempts. The run asks once more whether it took the transfer, and
// releases the money only when the rail says it did not; when the rail
// does not answer that either, the money stays reserved and the workflow
// stops for ops (as when it stops answering about a transfer it took).
func TestPayoutSubmissionUnanswered(t *testing.T) {
	silent := func(int) error { return errors.New("rail: no answer in time, outcome unknown") }
	tests := []struct {
		name      string
		findErr   func(n int) error
		found     activities.PayoutTransfer
		wantFails bool
		want      payout.Status
		released  int
		settled   int
		// finder answers the finds in place of findErr and found;
		// finds is how many are made (the look before the submission
		// included).
		finder func(n int) (activities.PayoutTransfer, error)
		finds  int
	}{
		// The look after the submission, then four more over an hour.
		{name: "the rail never took it", want: payout.StatusFailed, released: 1, finds: 6},
		{name: "the rail shows the transfer only at a later look", finder: func(n int) (activities.PayoutTransfer, error) {
			if n < 3 {
				return activities.PayoutTransfer{}, nil
			}
			return activities.PayoutTransfer{Found: true, ID: "tr_1", Status: activities.TransferSubmitted, Attempt: 1}, nil
		}, want: payout.StatusCompleted, settled: 1, finds: 4},
		{name: "the rail took it", found: activities.PayoutTransfer{Found: true, ID: "tr_1", Status: activities.TransferSubmitted, Attempt: 1},
			want: payout.StatusCompleted, settled: 1, finds: 2},
		{name: "the rail does not say", findErr: func(n int) error {
			if n == 0 {
				return nil
			}
			return silent(n)
		}, wantFails: true, want: payout.StatusNew},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &payoutRail{reserved: activities.PayoutReserveResult{Reserved: true}, submitErr: silent, findErr: tc.findErr,
				found: tc.found, finder: tc.finder,
				outcome: activities.PayoutTransfer{Found: true, ID: "tr_1", Status: activities.TransferCompleted, Attempt: 1}}
			env := newPayoutEnv(t, f)
			env.ExecuteWorkflow(workflows.PayoutWorkflowType, payoutInput())
			if !env.IsWorkflowCompleted() {
				t.Fatal("workflow did not complete")
			}
			if err := env.GetWorkflowError(); (err != nil) != tc.wantFails {
				t.Fatalf("workflow error = %v, want failed %v", err, tc.wantFails)
			}
			if last := f.statuses[len(f.statuses)-1]; last != tc.want {
				t.Errorf("statuses = %v, want the last %v", f.statuses, tc.want)
			}
			if len(f.released) != tc.released || len(f.settled) != tc.settled {
				t.Errorf("released %v, settled %v; want %d and %d", f.released, f.settled, tc.released, tc.settled)
			}
			if f.submits != 30 {
				t.Errorf("submissions = %d, want the 30 attempts", f.submits)
			}
			if tc.finds > 0 && f.finds != tc.finds {
				t.Errorf("finds = %d, want %d", f.finds, tc.finds)
			}
		})
	}
}

// TestPayoutRailOutage: a rail that answers none of a call's retries (a
// quarter of an hour) is asked again on a growing timer for a day. The
// look before the submission is the case that matters most: the rail calls
// are local activities, so a worker that died after the rail took the
// transfer left no submission in the history, and the task run again looks
// first. Taking that unanswered look for "never submitted" released money
// the rail then paid; now the payout waits for the rail's word, and after a
// day without one keeps the money reserved for ops.
func TestPayoutRailOutage(t *testing.T) {
	down := errors.New("rail: connection refused")
	taken := activities.PayoutTransfer{Found: true, ID: "tr_1", Status: activities.TransferSubmitted, Attempt: 1}
	// The first look's 30 attempts, then 15 of the next look's.
	outage := func(answer activities.PayoutTransfer) func(int) (activities.PayoutTransfer, error) {
		return func(n int) (activities.PayoutTransfer, error) {
			if n < 45 {
				return activities.PayoutTransfer{}, down
			}
			return answer, nil
		}
	}
	tests := []struct {
		name      string
		finder    func(int) (activities.PayoutTransfer, error)
		getErr    func(int) error
		wantFails bool
		want      payout.Status
		submits   int
		released  int
		settled   int
		waited    time.Duration // at least, by the test's clock
	}{
		{name: "an outage before anything was submitted", finder: outage(activities.PayoutTransfer{}),
			want: payout.StatusCompleted, submits: 1, settled: 1, waited: time.Minute},
		{name: "a transfer taken before the worker died", finder: outage(taken),
			want: payout.StatusCompleted, submits: 1, settled: 1, waited: time.Minute},
		{name: "no answer for a day", finder: func(int) (activities.PayoutTransfer, error) { return activities.PayoutTransfer{}, down },
			wantFails: true, want: payout.StatusNew, waited: 24 * time.Hour},
		{name: "the rail stops answering about a transfer it took, then answers",
			getErr: func(n int) error {
				if n < 40 {
					return down
				}
				return nil
			},
			want: payout.StatusCompleted, submits: 1, settled: 1, waited: time.Minute},
		{name: "the rail stops answering about a transfer it took, for a day",
			getErr:    func(int) error { return down },
			wantFails: true, want: payout.StatusSubmitted, submits: 1, waited: 24 * time.Hour},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &payoutRail{reserved: activities.PayoutReserveResult{Reserved: true}, finder: tc.finder, getErr: tc.getErr,
				outcome: activities.PayoutTransfer{Found: true, ID: "tr_1", Status: activities.TransferCompleted, Attempt: 1}}
			env := newPayoutEnv(t, f)
			start := env.Now()
			env.ExecuteWorkflow(workflows.PayoutWorkflowType, payoutInput())
			if !env.IsWorkflowCompleted() {
				t.Fatal("workflow did not complete")
			}
			if err := env.GetWorkflowError(); (err != nil) != tc.wantFails {
				t.Fatalf("workflow error = %v, want failed %v", err, tc.wantFails)
			}
			if last := f.statuses[len(f.statuses)-1]; last != tc.want {
				t.Errorf("statuses = %v, want the last %v", f.statuses, tc.want)
			}
			if f.submits != tc.submits || len(f.released) != tc.released || len(f.settled) != tc.settled {
				t.Errorf("submits %d, released %v, settled %v; want %d, %d and %d",
					f.submits, f.released, f.settled, tc.submits, tc.released, tc.settled)
			}
			if waited := env.Now().Sub(start); waited < tc.waited {
				t.Errorf("ended after %s, want at least %s", waited, tc.waited)
			}
		})
	}
}

// TestPayoutTakesTheRecordedShortReference: when another payout held the
// short reference the run was given, the record drew another, and the run
// sends that one to the rail and to the merchant.
func TestPayoutTakesTheRecordedShortReference(t *testing.T) {
	tests := []struct {
		name, recorded, want string
	}{
		{"its own reference", "", "20260101-ABC123"},
		{"another drawn by the record", "20260101-XYZ789", "20260101-XYZ789"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &payoutRail{reserved: activities.PayoutReserveResult{Reserved: true}, recordedRef: tc.recorded,
				outcome: activities.PayoutTransfer{Found: true, ID: "tr_1", Status: activities.TransferCompleted, Attempt: 1}}
			env := newPayoutEnv(t, f)
			if st := runPayout(t, env, payoutInput()); st.Status != payout.StatusCompleted {
				t.Fatalf("state = %+v", st)
			}
			if len(f.references) != 1 || f.references[0] != tc.want {
				t.Errorf("the rail was sent %v, want %s", f.references, tc.want)
			}
			if len(f.notes) != 1 || f.notes[0].Fields["short_reference_id"] != tc.want {
				t.Errorf("notifications %+v, want short_reference_id %s", f.notes, tc.want)
			}
		})
	}
}

// TestPayoutFailureReasonIsTheActivitysOwn: a refused transfer's
// failure_reason, which the merchant reads, is the rail's refusal without
// Temporal's wrapping (activity type, event ids, the worker's identity).
func TestPayoutFailureReasonIsTheActivitysOwn(t *testing.T) {
	f := &payoutRail{reserved: activities.PayoutReserveResult{Reserved: true}, submitErr: func(int) error {
		return temporal.NewNonRetryableApplicationError("rail refused: invalid_beneficiary", activities.ErrTypePayoutRailRejected, nil)
	}}
	env := newPayoutEnv(t, f)
	st := runPayout(t, env, payoutInput())
	const want = "the payout rail refused the transfer: rail refused: invalid_beneficiary"
	if st.Status != payout.StatusFailed || st.FailureType != payout.FailureRailRejected || st.FailureReason != want {
		t.Errorf("state = %v %v %q, want FAILED RAIL_REJECTED %q", st.Status, st.FailureType, st.FailureReason, want)
	}
	if len(f.released) != 1 {
		t.Errorf("released %v, want the reservation released", f.released)
	}
}

// TestPayoutRailCallbacks: with rail callbacks, the rail's word wakes a
// submitted payout, which then asks the rail (the word itself decides
// nothing); without a word it polls at 5 s, then doubling. A payout
// started before callbacks polls from 100 ms and leaves words alone.
func TestPayoutRailCallbacks(t *testing.T) {
	tests := []struct {
		name      string
		callbacks bool
		polls     int             // reads answered "submitted" first
		words     []time.Duration // when the rail's words come
		want      []time.Duration // when the transfer is read
	}{
		{"the word wakes it before its poll", true, 0, []time.Duration{time.Second}, []time.Duration{time.Second}},
		{"no word: the fallback poll", true, 0, nil, []time.Duration{5 * time.Second}},
		{"a second word while the first is being read: one read more", true, 1, []time.Duration{time.Second, time.Second},
			[]time.Duration{time.Second, time.Second}},
		{"a word, then the fallback doubled", true, 1, []time.Duration{time.Second}, []time.Duration{time.Second, 11 * time.Second}},
		{"started before callbacks: polls, words left alone", false, 1, []time.Duration{50 * time.Millisecond},
			[]time.Duration{100 * time.Millisecond, 300 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &payoutRail{reserved: activities.PayoutReserveResult{Reserved: true}, polls: tt.polls,
				outcome: activities.PayoutTransfer{Found: true, ID: "tr_1", Status: activities.TransferCompleted, Attempt: 1}}
			env := newPayoutEnv(t, f)
			f.clock = env.Now
			start := env.Now()
			for _, at := range tt.words {
				env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalPayoutTransferMoved, nil) }, at)
			}
			in := payoutInput()
			in.RailCallbacks = tt.callbacks
			if st := runPayout(t, env, in); st.Status != payout.StatusCompleted {
				t.Fatalf("state %+v", st)
			}
			var got []time.Duration
			for _, at := range f.polledAt {
				got = append(got, at.Sub(start).Round(10*time.Millisecond))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("transfer read at %v, want %v", got, tt.want)
			}
		})
	}
}

// TestPayoutOutlastsADatabaseOutage: the payout's first record cannot be
// written for longer than one attempt's timeout (ten refusals: about a
// minute of retries); the payout waits for the database and completes.
func TestPayoutOutlastsADatabaseOutage(t *testing.T) {
	f := &payoutRail{reserved: activities.PayoutReserveResult{Reserved: true},
		outcome: activities.PayoutTransfer{Found: true, ID: "tr_1", Status: activities.TransferCompleted, Attempt: 1},
		startErr: func(n int) error {
			if n < 10 {
				return errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
			}
			return nil
		}}
	env := newPayoutEnv(t, f)
	st := runPayout(t, env, payoutInput())
	if st.Status != payout.StatusCompleted || f.starts != 11 || f.submits != 1 {
		t.Fatalf("state %+v after %d record attempts and %d submissions, want COMPLETED after 11 and 1", st, f.starts, f.submits)
	}
}

// TestPayoutShapesAgree: a run of shape 1 (merged steps, no version
// markers) does to the record, the ledger, the rail and the merchant what a
// run of shape 0 does, outcome by outcome.
func TestPayoutShapesAgree(t *testing.T) {
	completed := activities.PayoutTransfer{Found: true, ID: "tr_1", Status: activities.TransferCompleted, Attempt: 1}
	tests := []struct {
		name string
		rail func() *payoutRail
		in   func() workflows.PayoutInput
	}{
		{"completes", func() *payoutRail {
			return &payoutRail{reserved: activities.PayoutReserveResult{Reserved: true}, polls: 2, outcome: completed}
		}, payoutInput},
		{"completes, notification refused", func() *payoutRail {
			return &payoutRail{reserved: activities.PayoutReserveResult{Reserved: true}, refuseNotice: true, outcome: completed}
		}, payoutInput},
		{"completes, no notify_url", func() *payoutRail {
			return &payoutRail{reserved: activities.PayoutReserveResult{Reserved: true}, outcome: completed}
		}, func() workflows.PayoutInput { in := payoutInput(); in.NotifyURL = ""; return in }},
		{"insufficient funds", func() *payoutRail {
			return &payoutRail{reserved: activities.PayoutReserveResult{Insufficient: true}}
		}, payoutInput},
		{"rail fails the transfer", func() *payoutRail {
			return &payoutRail{reserved: activities.PayoutReserveResult{Reserved: true}, polls: 1,
				outcome: activities.PayoutTransfer{Found: true, ID: "tr_1", Status: activities.TransferFailed, Attempt: 1,
					FailureType: payout.FailureBeneficiaryAccount, FailureReason: "beneficiary account closed"}}
		}, payoutInput},
		{"re-run with its charges", func() *payoutRail {
			return &payoutRail{reserved: activities.PayoutReserveResult{Reserved: true}, outcome: completed}
		}, func() workflows.PayoutInput {
			in := payoutInput()
			ch := payoutCharges()
			in.Run, in.Charges = 2, &ch
			return in
		}},
	}
	type effects struct {
		State      workflows.PayoutState
		Statuses   []payout.Status
		Settled    []string
		Released   []string
		Notes      []activities.RecordNotificationInput
		Deliveries []activities.DeliverInput
		HandedOver []workflows.RedeliverInput
		Submits    int
		Priced     int
	}
	run := func(t *testing.T, f *payoutRail, in workflows.PayoutInput) effects {
		env := newPayoutEnv(t, f)
		st := runPayout(t, env, in)
		return effects{st, f.statuses, f.settled, f.released, f.notes, f.deliveries, f.handedOver, f.submits, f.priced}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in0 := tc.in()
			in0.Shape = 0
			before := run(t, tc.rail(), in0)
			in1 := tc.in()
			in1.Shape = 1
			f := tc.rail()
			after := run(t, f, in1)
			if !reflect.DeepEqual(before, after) {
				t.Errorf("shape 1 did\n%+v\nshape 0 did\n%+v", after, before)
			}
			if f.closes != 1 {
				t.Errorf("PayoutClose ran %d times, want 1", f.closes)
			}
		})
	}
}

// TestPayoutMergedStepsFallBack: a run of shape 1 whose reservation the
// ledger refuses fails with the ledger's reason, releasing whatever an
// earlier attempt of the run reserved, and one whose closing step
// fails takes the steps one by one, as a run of shape 0 does.
func TestPayoutMergedStepsFallBack(t *testing.T) {
	reservations := []struct {
		name       string
		rail       *payoutRail
		wantReason string
	}{
		{"reservation refused", &payoutRail{reserveRefused: "ledger refused the reservation"},
			"funds could not be reserved: ledger refused the reservation"},
		{"reservation failing until the retries run out", &payoutRail{reserveFails: "reserve payout/m1/key/run/1: connection refused"},
			"funds could not be reserved: reserve payout/m1/key/run/1: connection refused"},
	}
	for _, tc := range reservations {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.rail
			st := runPayout(t, newPayoutEnv(t, f), payoutInput())
			if st.Status != payout.StatusFailed || st.FailureType != payout.FailureUnknown || st.FailureReason != tc.wantReason {
				t.Fatalf("state = %+v", st)
			}
			// The run's reservation is released as it fails: an earlier
			// attempt of the run may have made it.
			if f.submits != 0 || !slices.Equal(f.released, []string{"payout/m1/key/run/1"}) || len(f.notes) != 1 ||
				f.notes[0].Fields["status"] != "FAILED" {
				t.Errorf("submits %d, released %v, notes %+v", f.submits, f.released, f.notes)
			}
		})
	}
	t.Run("closing step fails", func(t *testing.T) {
		f := &payoutRail{reserved: activities.PayoutReserveResult{Reserved: true},
			closeErr: temporal.NewNonRetryableApplicationError("refused", activities.ErrTypeRecordRejected, nil),
			outcome:  activities.PayoutTransfer{Found: true, ID: "tr_1", Status: activities.TransferCompleted, Attempt: 1}}
		st := runPayout(t, newPayoutEnv(t, f), payoutInput())
		want := []payout.Status{payout.StatusNew, payout.StatusSubmitted, payout.StatusCompleted}
		if st.Status != payout.StatusCompleted || !slices.Equal(f.statuses, want) || len(f.settled) != 1 ||
			len(f.notes) != 1 || len(f.deliveries) != 1 {
			t.Errorf("state %+v, statuses %v, settled %v, notes %d, deliveries %d", st, f.statuses, f.settled, len(f.notes), len(f.deliveries))
		}
	})
}

// TestPayoutCancelledBeforeItsPaymentDate: a payout cancelled while it waits
// for its payment date releases its money, records FAILED and tells the
// merchant, at either shape; nothing reaches the rail.
func TestPayoutCancelledBeforeItsPaymentDate(t *testing.T) {
	for _, shape := range []int{0, workflows.CurrentPayoutShape} {
		t.Run(fmt.Sprintf("shape %d", shape), func(t *testing.T) {
			f := &payoutRail{reserved: activities.PayoutReserveResult{Reserved: true}}
			env := newPayoutEnv(t, f)
			in := payoutInput()
			in.Shape = shape
			in.Instruction.PaymentDate = env.Now().Add(72 * time.Hour)
			env.RegisterDelayedCallback(env.CancelWorkflow, time.Hour)
			st := runPayout(t, env, in)
			want := []payout.Status{payout.StatusNew, payout.StatusScheduled, payout.StatusFailed}
			if st.Status != payout.StatusFailed || st.FailureReason != "payout cancelled before its payment date" ||
				!slices.Equal(f.statuses, want) {
				t.Fatalf("state %+v, statuses %v; want FAILED, %v", st, f.statuses, want)
			}
			if len(f.released) != 1 || f.released[0] != "payout/m1/key/run/1" || f.submits != 0 ||
				len(f.notes) != 1 || f.notes[0].Fields["status"] != "FAILED" {
				t.Errorf("released %v, submits %d, notes %+v", f.released, f.submits, f.notes)
			}
		})
	}
}

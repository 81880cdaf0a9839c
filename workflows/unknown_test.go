package workflows_test

import (
	"cmp"
	"errors"
	"reflect"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/workflows"
)

// acquirerSilent is a connector error with no answer behind it: the
// refund may or may not have been made.
var acquirerSilent = errors.New("acquirer: no answer in time, outcome unknown")

// silentFor scripts an acquirer that answers none of the first calls calls.
func silentFor(calls int) func(n int) error {
	return func(n int) error {
		if n < calls {
			return acquirerSilent
		}
		return nil
	}
}

func acquirerRefuses() error {
	return temporal.NewNonRetryableApplicationError("refund: refused by the acquirer", activities.ErrTypeAcquirerRejected, nil)
}

// rowRefusedFirst is a record that refuses the first refund row's values.
func rowRefusedFirst(n int) error { return rowRefusedAt(0)(n) }

// rowRefusedAt is the record refusing the refund row written at call k
// (the row before the send is call 0).
func rowRefusedAt(k int) func(n int) error {
	return func(n int) error {
		if n == k {
			return temporal.NewNonRetryableApplicationError("refund row refused", activities.ErrTypeRecordRejected, nil)
		}
		return nil
	}
}

// TestRefundWithoutAnAnswer: a refund the acquirer never answered through
// all of the local activity's attempts is not taken for failed. It stays
// pending with its amount held, so a second refund of the whole amount is
// refused, and the same request (same key) goes again until the acquirer
// answers. A refusal is still a failed refund at once.
func TestRefundWithoutAnAnswer(t *testing.T) {
	const attempts = 8 // acquirerOpOptions
	tests := []struct {
		name         string
		refundErr    func(n int) error
		refundStatus func(n int) refund.Status
		// The first refund's entry, the second's (the whole amount), the
		// refund rows as saved, and the order at the end.
		wantFirst, wantSecond int
		wantFirstCode         string
		wantSecondCode        string
		wantSaved             []refund.Status
		wantRefunded          int64
		wantStatus            status.Payment
		// wantSends is how often the first refund goes with its key
		// when it was kept pending (attempts+1 when 0).
		wantSends int
		// saveErr scripts the refund rows' writes (all written when nil).
		saveErr func(n int) error
	}{
		{
			name:      "no answer, then the refund made",
			refundErr: silentFor(attempts),
			wantFirst: workflows.EntryPending, wantFirstCode: "0001",
			wantSecond: workflows.EntryRefused, wantSecondCode: "I0003",
			wantSaved:    []refund.Status{refund.Pending, refund.Pending, refund.Succeeded},
			wantRefunded: 100, wantStatus: status.PartiallyRefunded,
		},
		{
			name:         "no answer, then pending, then made",
			refundErr:    silentFor(attempts),
			refundStatus: func(int) refund.Status { return refund.Pending },
			wantFirst:    workflows.EntryPending, wantFirstCode: "0001",
			wantSecond: workflows.EntryRefused, wantSecondCode: "I0003",
			wantSaved:    []refund.Status{refund.Pending, refund.Pending, refund.Pending, refund.Succeeded},
			wantRefunded: 100, wantStatus: status.PartiallyRefunded,
		},
		{
			name: "no answer, then refused",
			refundErr: func(n int) error {
				if n < attempts {
					return acquirerSilent
				}
				return acquirerRefuses()
			},
			wantFirst: workflows.EntryPending, wantFirstCode: "0001",
			wantSecond: workflows.EntryRefused, wantSecondCode: "I0003",
			wantSaved:    []refund.Status{refund.Pending, refund.Pending, refund.Failed},
			wantRefunded: 0, wantStatus: status.Paid,
		},
		{
			// A worker without the connector in its configuration sent
			// nothing: the first send may have made the refund.
			name: "no answer, then the connector missing on the worker, then the refund made",
			refundErr: func(n int) error {
				switch {
				case n < attempts:
					return acquirerSilent
				case n == attempts:
					return activities.ConnectorMissingError(errors.New(`connector "sim-acquirer" not configured`))
				}
				return nil
			},
			wantFirst: workflows.EntryPending, wantFirstCode: "0001",
			wantSecond: workflows.EntryRefused, wantSecondCode: "I0003",
			wantSaved:    []refund.Status{refund.Pending, refund.Pending, refund.Succeeded},
			wantRefunded: 100, wantStatus: status.PartiallyRefunded, wantSends: attempts + 2,
		},
		{
			// The record refuses the pending row; the refund is sent again
			// all the same, and its row written once it is made.
			name:      "no answer, its pending row refused by the record, then the refund made",
			refundErr: silentFor(attempts), saveErr: rowRefusedAt(1),
			wantFirst: workflows.EntryPending, wantFirstCode: "0001",
			wantSecond: workflows.EntryRefused, wantSecondCode: "I0003",
			wantSaved:    []refund.Status{refund.Pending, refund.Succeeded},
			wantRefunded: 100, wantStatus: status.PartiallyRefunded,
		},
		{
			// The row before the send refused: the refund goes all the
			// same, as it did before it had that row.
			name:      "no answer, its row before the send refused by the record, then the refund made",
			refundErr: silentFor(attempts), saveErr: rowRefusedFirst,
			wantFirst: workflows.EntryPending, wantFirstCode: "0001",
			wantSecond: workflows.EntryRefused, wantSecondCode: "I0003",
			wantSaved:    []refund.Status{refund.Pending, refund.Succeeded},
			wantRefunded: 100, wantStatus: status.PartiallyRefunded,
		},
		{
			// Every write of its row refused: the refund made at the
			// acquirer still debits the ledger and moves the order.
			name:      "no answer, every row refused by the record, then the refund made",
			refundErr: silentFor(attempts), saveErr: func(int) error { return rowRefusedFirst(0) },
			wantFirst: workflows.EntryPending, wantFirstCode: "0001",
			wantSecond: workflows.EntryRefused, wantSecondCode: "I0003",
			wantSaved:    nil,
			wantRefunded: 100, wantStatus: status.PartiallyRefunded,
		},
		{
			name:         "answered pending, its row refused by the record, then made",
			refundStatus: func(int) refund.Status { return refund.Pending }, saveErr: rowRefusedAt(1),
			wantFirst: workflows.EntryPending, wantFirstCode: "0001",
			wantSecond: workflows.EntryRefused, wantSecondCode: "I0003",
			wantSaved:    []refund.Status{refund.Pending, refund.Succeeded},
			wantRefunded: 100, wantStatus: status.PartiallyRefunded, wantSends: 1,
		},
		{
			// Settled in the acquirer's answer, its row refused by the
			// record: the ledger, the order and the entry still hear of
			// it (before, the update failed and none of them did).
			name:      "answered succeeded, its row refused by the record",
			saveErr:   rowRefusedAt(1),
			wantFirst: workflows.EntryDone, wantFirstCode: "0000",
			wantSecond: workflows.EntryRefused, wantSecondCode: "I0003",
			wantSaved:    []refund.Status{refund.Pending},
			wantRefunded: 100, wantStatus: status.PartiallyRefunded,
		},
		{
			name: "refused at once",
			refundErr: func(n int) error {
				if n == 0 {
					return acquirerRefuses()
				}
				return nil
			},
			wantFirst: workflows.EntryRefused, wantFirstCode: "C0001",
			wantSecond: workflows.EntryDone, wantSecondCode: "0000",
			wantSaved:    []refund.Status{refund.Pending, refund.Failed, refund.Pending, refund.Succeeded},
			wantRefunded: amount, wantStatus: status.Refunded,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acq := &acquirer{risk: accepted, authorise: answer(approved(amount)), refundErr: tc.refundErr,
				refundStatus: tc.refundStatus, saveRefundErr: tc.saveErr}
			outs, final := runSteps(t, acq, "auto", []step{
				{time.Hour, workflows.UpdateRefund, workflows.RefundRequest{Entry: entry, RefundAmount: 100}},
				{time.Hour + time.Millisecond, workflows.UpdateRefund, workflows.RefundRequest{Entry: entry, RefundAmount: amount}},
			})
			if got := outs[0].result; got.Status != tc.wantFirst || outs[0].code() != tc.wantFirstCode {
				t.Errorf("first refund = %v %s, want %v %s", got.Status, outs[0].code(), tc.wantFirst, tc.wantFirstCode)
			}
			if got := outs[1].result; got.Status != tc.wantSecond || outs[1].code() != tc.wantSecondCode {
				t.Errorf("second refund = %v %s, want %v %s", got.Status, outs[1].code(), tc.wantSecond, tc.wantSecondCode)
			}
			var saved []refund.Status
			for _, r := range acq.saved {
				saved = append(saved, r.Status)
			}
			if !reflect.DeepEqual(saved, tc.wantSaved) {
				t.Errorf("saved refunds = %v, want %v", saved, tc.wantSaved)
			}
			// Every send of the first refund carries its one key, so the
			// acquirer makes it at most once.
			first := acq.refunds[0].IdempotencyKey
			var again int
			for _, r := range acq.refunds {
				if r.IdempotencyKey == first {
					again++
				}
			}
			wantSends := cmp.Or(tc.wantSends, attempts+1)
			if tc.wantFirst == workflows.EntryPending && again != wantSends {
				t.Errorf("the first refund went %d times with its key, want %d", again, wantSends)
			}
			var debited int64
			for _, d := range acq.debits {
				debited += d.Amount
			}
			last := acq.states[len(acq.states)-1]
			if last.RefundedAmount != tc.wantRefunded || debited != tc.wantRefunded || final.PaymentStatus != tc.wantStatus {
				t.Errorf("order refunded %d (ledger %d), status %v; want %d, %v",
					last.RefundedAmount, debited, final.PaymentStatus, tc.wantRefunded, tc.wantStatus)
			}
		})
	}
}

// TestVoidFailsAtTheWindowsEnd: when the void at the end of the
// authorisation window is refused or never answered, the order asks the
// acquirer what became of the charge and ends as the acquirer has it; it
// never fails.
func TestVoidFailsAtTheWindowsEnd(t *testing.T) {
	const attempts = 8 // acquirerOpOptions
	voidRefused := func(int) error {
		return temporal.NewNonRetryableApplicationError("void: refused by the acquirer", activities.ErrTypeAcquirerRejected, nil)
	}
	// The simulators' inquiry is final: a charge found is as it stands.
	standing := activities.InquiryResult{Found: true, Outcome: activities.ChargeOutcome{ChargeID: "ch_1", Approved: true}, Final: true}
	lagging := standing
	lagging.Final = false
	tests := []struct {
		name     string
		voidErr  func(n int) error
		inquire  func(n int) (activities.InquiryResult, error)
		want     status.Payment
		voids    int
		credited int64
		notice   string
		// inquiries, when set, is how often the charge is asked about.
		inquiries int
	}{
		{
			name: "void refused, the charge not captured: expired here, the hold ends with the issuer", voidErr: voidRefused,
			inquire: func(int) (activities.InquiryResult, error) { return standing, nil },
			want:    status.Expired, voids: 1, notice: workflows.NotifyExpiry,
		},
		{
			name: "void refused, the acquirer had captured", voidErr: voidRefused,
			inquire: func(int) (activities.InquiryResult, error) {
				r := standing
				r.Outcome.CapturedAmount = amount
				return r, nil
			},
			want: status.Paid, voids: 1, credited: amount, notice: workflows.NotifyCapture,
		},
		{
			// Stripe's search may show a charge captured moments ago as
			// authorised: it is asked again before the order expires.
			name: "void refused, a lagging inquiry shows it authorised, a later look captured", voidErr: voidRefused,
			inquire: func(n int) (activities.InquiryResult, error) {
				r := lagging
				if n >= 2 {
					r.Outcome.CapturedAmount = amount
				}
				return r, nil
			},
			want: status.Paid, voids: 1, credited: amount, notice: workflows.NotifyCapture,
		},
		{
			name: "void refused, a lagging inquiry shows it authorised at every look: expired", voidErr: voidRefused,
			inquire: func(int) (activities.InquiryResult, error) { return lagging, nil },
			want:    status.Expired, voids: 1, notice: workflows.NotifyExpiry, inquiries: 5,
		},
		{
			name: "no answer, the acquirer says voided", voidErr: silentFor(1000),
			inquire: func(int) (activities.InquiryResult, error) {
				r := standing
				r.Outcome.Voided = true
				return r, nil
			},
			want: status.Expired, voids: attempts, notice: workflows.NotifyExpiry,
		},
		{
			name: "no answer to the void or the inquiry, then the void goes through", voidErr: silentFor(attempts),
			inquire: func(int) (activities.InquiryResult, error) { return activities.InquiryResult{}, acquirerSilent },
			want:    status.Expired, voids: attempts + 1, notice: workflows.NotifyExpiry,
		},
		{
			name: "no answer, the charge still stands, then the void goes through", voidErr: silentFor(2 * attempts),
			inquire: func(int) (activities.InquiryResult, error) { return standing, nil },
			want:    status.Expired, voids: 2*attempts + 1, notice: workflows.NotifyExpiry,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acq := &acquirer{risk: accepted, authorise: answer(approved(0)), voidErr: tc.voidErr, inquire: tc.inquire}
			env := newEnv(t, acq)
			in := orderInput("manual")
			in.Details.NotifyURL = "https://shop.example/notify"
			run(t, env, in)
			st := finalState(t, env)
			if st.PaymentStatus != tc.want {
				t.Errorf("final status = %v, want %v", st.PaymentStatus, tc.want)
			}
			if len(acq.voids) != tc.voids {
				t.Errorf("voids = %d, want %d", len(acq.voids), tc.voids)
			}
			if tc.inquiries > 0 && len(acq.inqs) != tc.inquiries {
				t.Errorf("inquiries = %d, want %d", len(acq.inqs), tc.inquiries)
			}
			for _, q := range acq.inqs {
				if q.ChargeID != chargeID {
					t.Errorf("inquiry by charge id %q, want %q", q.ChargeID, chargeID)
				}
			}
			var credited int64
			for _, c := range acq.credits {
				credited += c.Amount
			}
			if credited != tc.credited {
				t.Errorf("ledger credited %d, want %d", credited, tc.credited)
			}
			var types []string
			for _, n := range acq.notes {
				types = append(types, n.Type)
			}
			if len(types) == 0 || types[len(types)-1] != tc.notice {
				t.Errorf("notifications = %v, want the last to be %s", types, tc.notice)
			}
		})
	}
}

// refusedFrom scripts an acquirer that answers none of the first calls
// calls and refuses the rest.
func refusedFrom(calls int) func(n int) error {
	return func(n int) error {
		if n < calls {
			return acquirerSilent
		}
		return temporal.NewNonRetryableApplicationError("refused by the acquirer", activities.ErrTypeAcquirerRejected, nil)
	}
}

// TestCaptureAndCancelWithoutAnAnswer: a merchant's capture or cancel the
// acquirer answered neither way through all of the local activity's
// attempts is not taken for refused: it is sent again with its key until
// the acquirer answers, and a refusal after an unanswered send is settled
// by asking about the charge. The entry is answered as the acquirer has it.
// A refusal of the first send is refused at once, as before.
func TestCaptureAndCancelWithoutAnAnswer(t *testing.T) {
	const attempts = 8 // acquirerOpOptions
	standing := activities.InquiryResult{Found: true, Outcome: activities.ChargeOutcome{ChargeID: "ch_1", Approved: true}}
	with := func(edit func(*activities.ChargeOutcome)) func(int) (activities.InquiryResult, error) {
		return func(int) (activities.InquiryResult, error) {
			r := standing
			edit(&r.Outcome)
			return r, nil
		}
	}
	captured := with(func(o *activities.ChargeOutcome) { o.CapturedAmount = amount })
	voided := with(func(o *activities.ChargeOutcome) { o.Voided = true })
	uncaptured := with(func(*activities.ChargeOutcome) {})
	captureStep := step{time.Hour, workflows.UpdateCapture, workflows.CaptureRequest{Entry: entry}}
	cancelStep := step{time.Hour, workflows.UpdateCancel, workflows.CancelRequest{Entry: entry}}
	tests := []struct {
		name       string
		step       step
		captureErr func(n int) error
		voidErr    func(n int) error
		inquire    func(n int) (activities.InquiryResult, error)
		wantEntry  int
		wantCode   string
		// The captures and voids sent, the inquiries made, the ledger's
		// credit and the order's final status.
		captures, voids, inquiries int
		credited                   int64
		final                      status.Payment
	}{
		{
			name: "capture unanswered, then made", step: captureStep, captureErr: silentFor(attempts),
			wantEntry: workflows.EntryDone, wantCode: "0000", captures: attempts + 1, credited: amount, final: status.Paid,
		},
		{
			name: "capture unanswered, then refused: the acquirer had captured", step: captureStep,
			captureErr: refusedFrom(attempts), inquire: captured,
			wantEntry: workflows.EntryDone, wantCode: "0000", captures: attempts + 1, inquiries: 1, credited: amount, final: status.Paid,
		},
		{
			name: "capture unanswered, then refused: not captured, the order expires at the window's end", step: captureStep,
			captureErr: refusedFrom(attempts), inquire: uncaptured,
			wantEntry: workflows.EntryRefused, wantCode: "C0001", captures: attempts + 1, inquiries: 1, voids: 1, final: status.Expired,
		},
		{
			name: "capture refused at once", step: captureStep, captureErr: refusedFrom(0),
			wantEntry: workflows.EntryRefused, wantCode: "C0001", captures: 1, voids: 1, final: status.Expired,
		},
		{
			name: "cancel unanswered, then voided", step: cancelStep, voidErr: silentFor(attempts),
			wantEntry: workflows.EntryDone, wantCode: "0000", voids: attempts + 1, final: status.Cancelled,
		},
		{
			name: "cancel unanswered, then refused: the acquirer says voided", step: cancelStep,
			voidErr: refusedFrom(attempts), inquire: voided,
			wantEntry: workflows.EntryDone, wantCode: "0000", voids: attempts + 1, inquiries: 1, final: status.Cancelled,
		},
		{
			name: "cancel unanswered, then refused: the acquirer had captured, so the order is paid", step: cancelStep,
			voidErr: refusedFrom(attempts), inquire: captured,
			wantEntry: workflows.EntryRefused, wantCode: "I0018", voids: attempts + 1, inquiries: 1, credited: amount, final: status.Paid,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acq := &acquirer{risk: accepted, authorise: answer(approved(0)), captureErr: tc.captureErr, voidErr: tc.voidErr,
				inquire: tc.inquire}
			outs, final := runSteps(t, acq, "manual", []step{tc.step})
			if got := outs[0].result; got.Status != tc.wantEntry || outs[0].code() != tc.wantCode {
				t.Errorf("entry = %v %s (%v), want %v %s", got.Status, outs[0].code(), outs[0].err, tc.wantEntry, tc.wantCode)
			}
			var credited int64
			for _, c := range acq.credits {
				credited += c.Amount
			}
			if len(acq.captures) != tc.captures || len(acq.voids) != tc.voids || len(acq.inqs) != tc.inquiries ||
				credited != tc.credited || final.PaymentStatus != tc.final {
				t.Errorf("captures %d, voids %d, inquiries %d, credited %d, final %v; want %d, %d, %d, %d, %v",
					len(acq.captures), len(acq.voids), len(acq.inqs), credited, final.PaymentStatus,
					tc.captures, tc.voids, tc.inquiries, tc.credited, tc.final)
			}
			// Every send of the operation carries its one key.
			for _, c := range acq.captures {
				if c.IdempotencyKey != acq.captures[0].IdempotencyKey {
					t.Errorf("capture keys %q and %q", c.IdempotencyKey, acq.captures[0].IdempotencyKey)
				}
			}
			// The charge is asked about by its id, which Stripe reads as it
			// stands now (its search by key may lag behind a capture).
			for _, q := range acq.inqs {
				if q.ChargeID != chargeID {
					t.Errorf("inquiry by charge id %q, want %q", q.ChargeID, chargeID)
				}
			}
		})
	}
}

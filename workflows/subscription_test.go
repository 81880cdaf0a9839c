package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/internal/domain/subscription"
	"github.com/paygate/paygate/workflows"
)

// billing is the fake side of a subscription under test: the charge orders
// it was asked for and the records it wrote.
type billing struct {
	mu sync.Mutex
	// decline says which attempts the card declines; deleted which find
	// the stored card deleted (I0025).
	decline func(cycle, attempt int) bool
	deleted func(cycle, attempt int) bool
	// unknown says which attempts end with the charge's outcome unknown.
	unknown func(cycle, attempt int) bool
	// goneFrom, when set, is when the stored card is deleted, as the
	// subscription's look before a charge finds it (looks counts them).
	goneFrom time.Time
	looks    int
	// lost says which charge orders fail without reporting to their
	// subscription (a database away for a day, ops terminating them).
	lost    func(cycle, attempt int) bool
	charges []charge
	updates []activities.UpdateSubscriptionInput
	started bool
	ids     int
}

// charge is one charge order the subscription made.
type charge struct {
	cycle, attempt int
	at             time.Time
	amount         int64
	orderNo        string
	approved       bool
}

// newSubscriptionEnv is a time-skipping environment in which charge orders
// are a fake Order workflow that answers as decline says and reports to its
// subscription as the real one does.
func newSubscriptionEnv(t *testing.T, b *billing) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.Subscription, workflow.RegisterOptions{Name: workflows.SubscriptionWorkflowType})
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in workflows.OrderInput) (workflows.PaymentResult, error) {
		r := in.Recurring
		approved := b.decline == nil || !b.decline(r.Cycle, r.Attempt)
		var code string
		if b.deleted != nil && b.deleted(r.Cycle, r.Attempt) {
			approved, code = false, "I0025"
		}
		unknown := b.unknown != nil && b.unknown(r.Cycle, r.Attempt)
		if unknown {
			approved, code = false, "C0001"
		}
		b.mu.Lock()
		b.charges = append(b.charges, charge{cycle: r.Cycle, attempt: r.Attempt, at: workflow.Now(ctx), amount: in.Amount,
			orderNo: in.OrderNo, approved: approved})
		b.mu.Unlock()
		res := workflows.PaymentResult{TransactionID: in.TransactionID, OrderNo: in.OrderNo, PaymentStatus: status.Paid}
		if !approved {
			res.PaymentStatus = status.Failed
		}
		if b.lost != nil && b.lost(r.Cycle, r.Attempt) {
			return res, errors.New("order failed: its record could not be written")
		}
		err := workflow.SignalExternalWorkflow(ctx, r.WorkflowID, "", workflows.SignalSubscriptionCharge,
			workflows.SubscriptionChargeResult{Cycle: r.Cycle, Attempt: r.Attempt, TransactionID: in.TransactionID,
				OrderNo: in.OrderNo, Approved: approved, ResultCode: code, Unknown: unknown}).Get(ctx, nil)
		return res, err
	}, workflow.RegisterOptions{Name: workflows.OrderWorkflowType})
	env.RegisterActivity(&activities.Activities{})
	env.OnActivity(acts.NextTransactionID, mock.Anything).Return(func(context.Context) (activities.NextTransactionIDResult, error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.ids++
		return activities.NextTransactionIDResult{TransactionID: fmt.Sprintf("9%018d", b.ids)}, nil
	}).Maybe()
	env.OnActivity(acts.StoredCardGone, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.StoredCardInput) (bool, error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.looks++
		if in.TokenID != "tk_1" {
			t.Errorf("looked at stored card %q, want tk_1", in.TokenID)
		}
		return !b.goneFrom.IsZero() && !env.Now().Before(b.goneFrom), nil
	}).Maybe()
	env.OnActivity(acts.RecordSubscription, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.RecordSubscriptionInput) error {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.started = true
			return nil
		}).Maybe()
	env.OnActivity(acts.UpdateSubscription, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.UpdateSubscriptionInput) error {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.updates = append(b.updates, in)
			return nil
		}).Maybe()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: workflows.SubscriptionWorkflowID(merchantID, "R1"), TaskQueue: workflows.TaskQueue})
	return env
}

// firstPaid is the first payment of the subscriptions under test: the last
// day of January, to exercise month ends.
var firstPaid = time.Date(2027, time.January, 31, 10, 0, 0, 0, time.UTC)

func usd(minor int64) money.Amount { return money.Amount{Minor: minor, Currency: "USD"} }

func subscriptionInput(terms subscription.Terms) workflows.SubscriptionInput {
	return workflows.SubscriptionInput{
		RecurringID: "R1", MerchantID: merchantID, AccountID: accountID, FirstTransactionID: "1",
		FirstPaid: firstPaid, Terms: terms, CyclesPerRun: 1000,
		Card: workflows.CardRef{Token: "tok_1", Masked: "424242******4242", Stored: true, TokenID: "tk_1"},
	}
}

func TestSubscriptionCharges(t *testing.T) {
	day := 24 * time.Hour
	monthly := subscription.Terms{ContractName: "Gold", Amount: usd(1000), PromoAmount: usd(100), Interval: subscription.Month,
		IntervalCount: 1, BillingCycles: 13, PromotionCycles: 3}
	tests := []struct {
		name       string
		terms      subscription.Terms
		decline    func(cycle, attempt int) bool
		deleted    func(cycle, attempt int) bool
		unknown    func(cycle, attempt int) bool
		goneFrom   time.Time
		cancelAt   time.Duration // after the first payment; 0: no cancel
		wantStatus subscription.Status
		// wantCharges lists every charge made: cycle, attempt, offset of
		// its time from the first payment, amount.
		wantCharges []charge
		wantCount   int // when wantCharges is nil: how many charges
		wantLast    time.Time
	}{
		{
			name: "monthly for a year from the 31st, promotion then contract amount", terms: monthly,
			wantStatus: subscription.Finished,
			wantCharges: []charge{
				{cycle: 2, at: time.Date(2027, 2, 28, 10, 0, 0, 0, time.UTC), amount: 100},
				{cycle: 3, at: time.Date(2027, 3, 31, 10, 0, 0, 0, time.UTC), amount: 100},
				{cycle: 4, at: time.Date(2027, 4, 30, 10, 0, 0, 0, time.UTC), amount: 1000},
				{cycle: 5, at: time.Date(2027, 5, 31, 10, 0, 0, 0, time.UTC), amount: 1000},
				{cycle: 6, at: time.Date(2027, 6, 30, 10, 0, 0, 0, time.UTC), amount: 1000},
				{cycle: 7, at: time.Date(2027, 7, 31, 10, 0, 0, 0, time.UTC), amount: 1000},
				{cycle: 8, at: time.Date(2027, 8, 31, 10, 0, 0, 0, time.UTC), amount: 1000},
				{cycle: 9, at: time.Date(2027, 9, 30, 10, 0, 0, 0, time.UTC), amount: 1000},
				{cycle: 10, at: time.Date(2027, 10, 31, 10, 0, 0, 0, time.UTC), amount: 1000},
				{cycle: 11, at: time.Date(2027, 11, 30, 10, 0, 0, 0, time.UTC), amount: 1000},
				{cycle: 12, at: time.Date(2027, 12, 31, 10, 0, 0, 0, time.UTC), amount: 1000},
				{cycle: 13, at: time.Date(2028, 1, 31, 10, 0, 0, 0, time.UTC), amount: 1000},
			},
		},
		{
			name: "daily for a year until contract_end",
			terms: subscription.Terms{ContractName: "Daily", Amount: usd(50), PromoAmount: usd(50), Interval: subscription.Day,
				IntervalCount: 1, End: firstPaid.Add(365 * day)},
			wantStatus: subscription.Finished, wantCount: 365, wantLast: firstPaid.Add(365 * day),
		},
		{
			name: "a failed charge is retried after 1 and 3 days and then succeeds", terms: monthly,
			decline:    func(cycle, attempt int) bool { return cycle == 2 && attempt < 2 },
			cancelAt:   70 * day,
			wantStatus: subscription.Cancelled,
			wantCharges: []charge{
				{cycle: 2, at: time.Date(2027, 2, 28, 10, 0, 0, 0, time.UTC), amount: 100},
				{cycle: 2, attempt: 1, at: time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC), amount: 100},
				{cycle: 2, attempt: 2, at: time.Date(2027, 3, 3, 10, 0, 0, 0, time.UTC), amount: 100, approved: true},
				{cycle: 3, at: time.Date(2027, 3, 31, 10, 0, 0, 0, time.UTC), amount: 100, approved: true},
			},
		},
		{
			name: "dunning exhausted suspends the subscription", terms: monthly,
			decline:    func(cycle, _ int) bool { return cycle == 3 },
			wantStatus: subscription.Suspended,
			wantCharges: []charge{
				{cycle: 2, at: time.Date(2027, 2, 28, 10, 0, 0, 0, time.UTC), amount: 100, approved: true},
				{cycle: 3, at: time.Date(2027, 3, 31, 10, 0, 0, 0, time.UTC), amount: 100},
				{cycle: 3, attempt: 1, at: time.Date(2027, 4, 1, 10, 0, 0, 0, time.UTC), amount: 100},
				{cycle: 3, attempt: 2, at: time.Date(2027, 4, 3, 10, 0, 0, 0, time.UTC), amount: 100},
				{cycle: 3, attempt: 3, at: time.Date(2027, 4, 7, 10, 0, 0, 0, time.UTC), amount: 100},
			},
		},
		{
			name: "a deleted card suspends the subscription without retries", terms: monthly,
			deleted:    func(cycle, _ int) bool { return cycle == 3 },
			wantStatus: subscription.Suspended,
			wantCharges: []charge{
				{cycle: 2, at: time.Date(2027, 2, 28, 10, 0, 0, 0, time.UTC), amount: 100, approved: true},
				{cycle: 3, at: time.Date(2027, 3, 31, 10, 0, 0, 0, time.UTC), amount: 100},
			},
		},
		{
			// A retry under a new key could charge the period twice.
			name: "a charge whose outcome stayed unknown suspends the subscription, no retry", terms: monthly,
			unknown:    func(cycle, _ int) bool { return cycle == 3 },
			wantStatus: subscription.Suspended,
			wantCharges: []charge{
				{cycle: 2, at: time.Date(2027, 2, 28, 10, 0, 0, 0, time.UTC), amount: 100, approved: true},
				{cycle: 3, at: time.Date(2027, 3, 31, 10, 0, 0, 0, time.UTC), amount: 100},
			},
		},
		{
			// Erased with its shopper, say: no order records the
			// shopper's details again only to be refused I0025.
			name: "a card deleted between two cycles: no charge order, the subscription suspended", terms: monthly,
			goneFrom:   time.Date(2027, 3, 15, 0, 0, 0, 0, time.UTC),
			wantStatus: subscription.Suspended,
			wantCharges: []charge{
				{cycle: 2, at: time.Date(2027, 2, 28, 10, 0, 0, 0, time.UTC), amount: 100},
			},
		},
		{
			name: "cancel in the middle of a retry stops every later charge", terms: monthly,
			decline: func(cycle, _ int) bool { return cycle == 2 },
			// 28 February is day 28; the first retry is on 1 March (day
			// 29), the second on 3 March (day 31): cancel on day 30.
			cancelAt:   30 * day,
			wantStatus: subscription.Cancelled,
			wantCharges: []charge{
				{cycle: 2, at: time.Date(2027, 2, 28, 10, 0, 0, 0, time.UTC), amount: 100},
				{cycle: 2, attempt: 1, at: time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC), amount: 100},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &billing{decline: tt.decline, deleted: tt.deleted, unknown: tt.unknown, goneFrom: tt.goneFrom}
			env := newSubscriptionEnv(t, b)
			env.SetStartTime(firstPaid)
			var notices []activities.RecordNotificationInput
			env.OnActivity(acts.RecordNotification, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in activities.RecordNotificationInput) error {
					b.mu.Lock()
					defer b.mu.Unlock()
					notices = append(notices, in)
					return nil
				}).Maybe()
			env.RegisterWorkflowWithOptions(func(workflow.Context, workflows.RedeliverInput) (workflows.RedeliverResult, error) {
				return workflows.RedeliverResult{}, nil
			}, workflow.RegisterOptions{Name: workflows.RedeliverWorkflowType})
			var cancelled workflows.SubscriptionState
			if tt.cancelAt > 0 {
				env.RegisterDelayedCallback(func() {
					env.UpdateWorkflow(workflows.UpdateCancelSubscription, "", &testsuite.TestUpdateCallback{
						OnReject: func(err error) { t.Errorf("cancel rejected: %v", err) },
						OnAccept: func() {},
						OnComplete: func(v any, err error) {
							if err != nil {
								t.Errorf("cancel: %v", err)
								return
							}
							cancelled = v.(workflows.SubscriptionState)
						},
					})
				}, tt.cancelAt)
			}
			in := subscriptionInput(tt.terms)
			in.Details.NotifyURL = "https://merchant.example/notify"
			env.ExecuteWorkflow(workflows.SubscriptionWorkflowType, in)
			if err := env.GetWorkflowError(); err != nil {
				t.Fatalf("workflow error: %v", err)
			}
			// A suspension no charge order told of is told by the
			// subscription: a card gone, a charge unknown.
			if tell := !tt.goneFrom.IsZero() || tt.unknown != nil; tell {
				if len(notices) != 1 || notices[0].NotifyID != "R1-end" || notices[0].Fields["change"] != "suspend" ||
					notices[0].Fields["recurring_status"] != "3" {
					t.Errorf("notices %+v, want one suspend notice R1-end", notices)
				}
			} else if len(notices) != 0 {
				t.Errorf("notices %+v, want none", notices)
			}
			var state workflows.SubscriptionState
			if err := env.GetWorkflowResult(&state); err != nil {
				t.Fatal(err)
			}
			if state.Status != tt.wantStatus {
				t.Errorf("status = %d, want %d", state.Status, tt.wantStatus)
			}
			if tt.cancelAt > 0 && cancelled.Status != subscription.Cancelled {
				t.Errorf("cancel answered status %d, want cancelled", cancelled.Status)
			}
			if tt.wantCharges != nil {
				if len(b.charges) != len(tt.wantCharges) {
					t.Fatalf("%d charges, want %d: %+v", len(b.charges), len(tt.wantCharges), b.charges)
				}
				for i, want := range tt.wantCharges {
					got := b.charges[i]
					if tt.decline == nil && tt.deleted == nil && tt.unknown == nil {
						want.approved = true
					}
					if got.cycle != want.cycle || got.attempt != want.attempt || !got.at.Equal(want.at) ||
						got.amount != want.amount || got.approved != want.approved {
						t.Errorf("charge %d = cycle %d attempt %d at %s amount %d approved %t, want cycle %d attempt %d at %s amount %d approved %t",
							i, got.cycle, got.attempt, got.at, got.amount, got.approved,
							want.cycle, want.attempt, want.at, want.amount, want.approved)
					}
				}
			} else {
				if len(b.charges) != tt.wantCount {
					t.Fatalf("%d charges, want %d", len(b.charges), tt.wantCount)
				}
				if last := b.charges[len(b.charges)-1].at; !last.Equal(tt.wantLast) {
					t.Errorf("last charge at %s, want %s", last, tt.wantLast)
				}
			}
			if tt.cancelAt > 0 {
				for _, c := range b.charges {
					if c.at.After(firstPaid.Add(tt.cancelAt)) {
						t.Errorf("charge after the cancel: %+v", c)
					}
				}
			}
			if !b.started {
				t.Error("subscription never recorded")
			}
			last := b.updates[len(b.updates)-1]
			if subscription.Status(last.Status) != tt.wantStatus {
				t.Errorf("last recorded status %d, want %d", last.Status, tt.wantStatus)
			}
			if h := state.History; !tt.goneFrom.IsZero() && (len(h) == 0 || h[len(h)-1].ResultCode != "I0025" || h[len(h)-1].OrderNo != "") {
				t.Errorf("last charge result %+v, want I0025 with no order", h)
			}
			if b.looks < len(b.charges) {
				t.Errorf("%d looks at the stored card for %d charges, want one before each", b.looks, len(b.charges))
			}
		})
	}
}

// TestSubscriptionContinuesAsNew: a run charges CyclesPerRun cycles and
// then continues as new with its progress, so the history stays bounded.
func TestSubscriptionContinuesAsNew(t *testing.T) {
	b := &billing{}
	env := newSubscriptionEnv(t, b)
	env.SetStartTime(firstPaid)
	in := subscriptionInput(subscription.Terms{ContractName: "Weekly", Amount: usd(700), PromoAmount: usd(700),
		Interval: subscription.Week, IntervalCount: 1})
	in.CyclesPerRun = 3
	env.ExecuteWorkflow(workflows.SubscriptionWorkflowType, in)
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("workflow error = %v, want continue-as-new", err)
	}
	if len(b.charges) != 3 {
		t.Fatalf("%d charges in the first run, want 3", len(b.charges))
	}
	// The next run starts from the progress the first one carried.
	b2 := &billing{}
	env2 := newSubscriptionEnv(t, b2)
	env2.SetStartTime(firstPaid.Add(3 * 7 * 24 * time.Hour))
	in.Progress = workflows.SubscriptionProgress{Cycle: 4, Charges: 4, Recorded: true}
	in.CyclesPerRun = 2
	env2.ExecuteWorkflow(workflows.SubscriptionWorkflowType, in)
	if len(b2.charges) != 2 || b2.charges[0].cycle != 5 || !b2.charges[0].at.Equal(firstPaid.Add(4*7*24*time.Hour)) {
		t.Fatalf("second run charges = %+v, want cycles 5 and 6 from week 4", b2.charges)
	}
	if b2.started {
		t.Error("a continued run recorded the subscription again")
	}
}

// TestSubscriptionCancelledWhileAChargeIsPrepared: a cancel that comes
// while a cycle's charge is being prepared (its transaction id drawn) stops
// that charge: nothing reaches the card after the cancel, and the
// subscription ends cancelled.
func TestSubscriptionCancelledWhileAChargeIsPrepared(t *testing.T) {
	b := &billing{}
	env := newSubscriptionEnv(t, b)
	env.SetStartTime(firstPaid)
	var cancelled *workflows.SubscriptionState
	sent := false
	env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
		if sent || info.ActivityType.Name != "NextTransactionID" {
			return
		}
		sent = true
		env.UpdateWorkflow(workflows.UpdateCancelSubscription, "", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("cancel rejected: %v", err) }, OnAccept: func() {},
			OnComplete: func(v any, err error) {
				if err != nil {
					t.Errorf("cancel: %v", err)
					return
				}
				st := v.(workflows.SubscriptionState)
				cancelled = &st
			},
		})
	})
	env.ExecuteWorkflow(workflows.SubscriptionWorkflowType, subscriptionInput(subscription.Terms{ContractName: "Gold",
		Amount: usd(1000), PromoAmount: usd(1000), Interval: subscription.Month, IntervalCount: 1, BillingCycles: 4}))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	var st workflows.SubscriptionState
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if !sent || cancelled == nil || cancelled.Status != subscription.Cancelled || st.Status != subscription.Cancelled {
		t.Fatalf("cancel sent %v, answered %+v, final %d; want cancelled", sent, cancelled, st.Status)
	}
	if len(b.charges) != 0 {
		t.Errorf("charges after the cancel: %+v", b.charges)
	}
}

// TestSubscriptionChargeOrderClosedWithoutReporting: a charge order that
// fails without reporting (its record written or not) no longer leaves the
// subscription waiting for ever with its cancels unanswered: the record
// tells the result, and an order with none after a day suspends the
// subscription rather than charge the period again.
func TestSubscriptionChargeOrderClosedWithoutReporting(t *testing.T) {
	tests := []struct {
		name       string
		recorded   *activities.ChargeOrderResult // nil: still pending
		wantStatus subscription.Status
		wantCycles int // charges made, all cycles
	}{
		{"its record says paid: the next cycles follow", &activities.ChargeOrderResult{TransactionID: "9000000000000000001", Approved: true},
			subscription.Finished, 3},
		{"its record stays pending: suspended, nothing charged again", nil, subscription.Suspended, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &billing{lost: func(cycle, _ int) bool { return cycle == 2 }}
			env := newSubscriptionEnv(t, b)
			env.SetStartTime(firstPaid)
			env.OnActivity(acts.FindChargeOrder, mock.Anything, mock.Anything).Return(
				func(context.Context, activities.FindChargeOrderInput) (activities.ChargeOrderResult, error) {
					if tc.recorded == nil {
						return activities.ChargeOrderResult{}, errors.New("charge order not final yet")
					}
					return *tc.recorded, nil
				})
			env.ExecuteWorkflow(workflows.SubscriptionWorkflowType, subscriptionInput(subscription.Terms{ContractName: "Gold",
				Amount: usd(1000), PromoAmount: usd(1000), Interval: subscription.Month, IntervalCount: 1, BillingCycles: 4}))
			if !env.IsWorkflowCompleted() {
				t.Fatal("the subscription did not end")
			}
			if err := env.GetWorkflowError(); err != nil {
				t.Fatalf("workflow error: %v", err)
			}
			var st workflows.SubscriptionState
			if err := env.GetWorkflowResult(&st); err != nil {
				t.Fatal(err)
			}
			if st.Status != tc.wantStatus || len(b.charges) != tc.wantCycles {
				t.Errorf("status %d after %d charges %+v, want %d after %d", st.Status, len(b.charges), b.charges, tc.wantStatus, tc.wantCycles)
			}
		})
	}
}

// subscriptionChange is a merchant's change sent to a subscription under
// test, after the first payment.
type subscriptionChange struct {
	after  time.Duration
	update string
	amend  workflows.SubscriptionAmendment
}

// TestSubscriptionChanges follows the interface's subscription lines as
// docs/decisions.md reads them: "signed endpoints to ... pause, resume and
// change its amount or next date (recorded, notified)". Dates that pass
// while paused are skipped, billing_cycle still counts charges, and a
// changed date starts a failing cycle over without reusing an order_no.
func TestSubscriptionChanges(t *testing.T) {
	day := 24 * time.Hour
	at := func(m time.Month, d int) time.Time { return time.Date(2027, m, d, 10, 0, 0, 0, time.UTC) }
	four := subscription.Terms{ContractName: "Gold", Amount: usd(1000), PromoAmount: usd(100), Interval: subscription.Month,
		IntervalCount: 1, BillingCycles: 4}
	tests := []struct {
		name        string
		decline     func(cycle, attempt int) bool
		changes     []subscriptionChange
		wantCharges []charge
		// wantNotices are the notifications' change and recurring_status.
		wantNotices [][2]string
		wantStatus  subscription.Status
	}{
		{
			name: "paused over two dates: they are skipped, and three charges still follow",
			changes: []subscriptionChange{
				{after: 10 * day, update: workflows.UpdatePauseSubscription},
				{after: 70 * day, update: workflows.UpdateResumeSubscription},
			},
			wantCharges: []charge{
				{cycle: 2, at: at(4, 30), amount: 1000, approved: true, orderNo: "R1-c2"},
				{cycle: 3, at: at(5, 31), amount: 1000, approved: true, orderNo: "R1-c3"},
				{cycle: 4, at: at(6, 30), amount: 1000, approved: true, orderNo: "R1-c4"},
			},
			wantNotices: [][2]string{{"pause", "4"}, {"resume", "1"}},
			wantStatus:  subscription.Finished,
		},
		{
			name: "paused twice over: the second pause changes nothing",
			changes: []subscriptionChange{
				{after: 10 * day, update: workflows.UpdatePauseSubscription},
				{after: 11 * day, update: workflows.UpdatePauseSubscription},
				{after: 12 * day, update: workflows.UpdateResumeSubscription},
			},
			wantCharges: []charge{
				{cycle: 2, at: at(2, 28), amount: 1000, approved: true, orderNo: "R1-c2"},
				{cycle: 3, at: at(3, 31), amount: 1000, approved: true, orderNo: "R1-c3"},
				{cycle: 4, at: at(4, 30), amount: 1000, approved: true, orderNo: "R1-c4"},
			},
			wantNotices: [][2]string{{"pause", "4"}, {"resume", "1"}},
			wantStatus:  subscription.Finished,
		},
		{
			name: "amount and date amended: every later charge follows both",
			changes: []subscriptionChange{
				{after: 10 * day, update: workflows.UpdateAmendSubscription,
					amend: workflows.SubscriptionAmendment{Amount: usd(2500), Next: at(3, 15)}},
			},
			wantCharges: []charge{
				{cycle: 2, at: at(3, 15), amount: 2500, approved: true, orderNo: "R1-c2"},
				{cycle: 3, at: at(4, 15), amount: 2500, approved: true, orderNo: "R1-c3"},
				{cycle: 4, at: at(5, 15), amount: 2500, approved: true, orderNo: "R1-c4"},
			},
			wantNotices: [][2]string{{"amend", "1"}},
			wantStatus:  subscription.Finished,
		},
		{
			name:    "date amended during a retry: the cycle starts over there under a new order_no",
			decline: func(cycle, attempt int) bool { return cycle == 2 && attempt == 0 },
			changes: []subscriptionChange{
				{after: 28*day + 6*time.Hour, update: workflows.UpdateAmendSubscription,
					amend: workflows.SubscriptionAmendment{Next: at(3, 10)}},
			},
			wantCharges: []charge{
				{cycle: 2, at: at(2, 28), amount: 1000, orderNo: "R1-c2"},
				{cycle: 2, attempt: 1, at: at(3, 10), amount: 1000, approved: true, orderNo: "R1-c2-r1"},
				{cycle: 3, at: at(4, 10), amount: 1000, approved: true, orderNo: "R1-c3"},
				{cycle: 4, at: at(5, 10), amount: 1000, approved: true, orderNo: "R1-c4"},
			},
			wantNotices: [][2]string{{"amend", "1"}},
			wantStatus:  subscription.Finished,
		},
		{
			// The retry keeps its day and charges the new amount; the
			// cycle does not start over with an attempt at once.
			name:    "amount amended during a retry: the dunning goes on",
			decline: func(cycle, attempt int) bool { return cycle == 2 && attempt == 0 },
			changes: []subscriptionChange{
				{after: 28*day + 6*time.Hour, update: workflows.UpdateAmendSubscription,
					amend: workflows.SubscriptionAmendment{Amount: usd(2500)}},
			},
			wantCharges: []charge{
				{cycle: 2, at: at(2, 28), amount: 1000, orderNo: "R1-c2"},
				{cycle: 2, attempt: 1, at: at(3, 1), amount: 2500, approved: true, orderNo: "R1-c2-r1"},
				{cycle: 3, at: at(3, 31), amount: 2500, approved: true, orderNo: "R1-c3"},
				{cycle: 4, at: at(4, 30), amount: 2500, approved: true, orderNo: "R1-c4"},
			},
			wantNotices: [][2]string{{"amend", "1"}},
			wantStatus:  subscription.Finished,
		},
		{
			name: "cancelled while paused: nothing more is charged",
			changes: []subscriptionChange{
				{after: 10 * day, update: workflows.UpdatePauseSubscription},
				{after: 40 * day, update: workflows.UpdateCancelSubscription},
			},
			wantNotices: [][2]string{{"pause", "4"}},
			wantStatus:  subscription.Cancelled,
		},
		{
			name: "resumed without a pause: nothing changes, nothing is notified",
			changes: []subscriptionChange{
				{after: 10 * day, update: workflows.UpdateResumeSubscription},
			},
			wantCharges: []charge{
				{cycle: 2, at: at(2, 28), amount: 1000, approved: true, orderNo: "R1-c2"},
				{cycle: 3, at: at(3, 31), amount: 1000, approved: true, orderNo: "R1-c3"},
				{cycle: 4, at: at(4, 30), amount: 1000, approved: true, orderNo: "R1-c4"},
			},
			wantStatus: subscription.Finished,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &billing{decline: tt.decline}
			env := newSubscriptionEnv(t, b)
			env.SetStartTime(firstPaid)
			var (
				mu      sync.Mutex
				notices []map[string]string
				answers []workflows.SubscriptionState
			)
			env.OnActivity(acts.RecordNotification, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in activities.RecordNotificationInput) error {
					mu.Lock()
					defer mu.Unlock()
					notices = append(notices, in.Fields)
					return nil
				}).Maybe()
			env.RegisterWorkflowWithOptions(func(workflow.Context, workflows.RedeliverInput) (workflows.RedeliverResult, error) {
				return workflows.RedeliverResult{}, nil
			}, workflow.RegisterOptions{Name: workflows.RedeliverWorkflowType})
			for _, c := range tt.changes {
				env.RegisterDelayedCallback(func() {
					var args []any
					if c.update == workflows.UpdateAmendSubscription {
						args = append(args, c.amend)
					}
					env.UpdateWorkflow(c.update, "", &testsuite.TestUpdateCallback{
						OnReject: func(err error) { t.Errorf("%s rejected: %v", c.update, err) },
						OnAccept: func() {},
						OnComplete: func(v any, err error) {
							if err != nil {
								t.Errorf("%s: %v", c.update, err)
								return
							}
							answers = append(answers, v.(workflows.SubscriptionState))
						},
					}, args...)
				}, c.after)
			}
			in := subscriptionInput(four)
			in.Terms.PromotionCycles = 0
			in.Terms.PromoAmount = usd(1000)
			in.Details.NotifyURL = "https://merchant.example/notify"
			env.ExecuteWorkflow(workflows.SubscriptionWorkflowType, in)
			if err := env.GetWorkflowError(); err != nil {
				t.Fatalf("workflow error: %v", err)
			}
			var state workflows.SubscriptionState
			if err := env.GetWorkflowResult(&state); err != nil {
				t.Fatal(err)
			}
			if state.Status != tt.wantStatus {
				t.Errorf("status = %d, want %d", state.Status, tt.wantStatus)
			}
			if len(answers) != len(tt.changes) {
				t.Errorf("%d changes answered, want %d", len(answers), len(tt.changes))
			}
			if len(b.charges) != len(tt.wantCharges) {
				t.Fatalf("%d charges, want %d: %+v", len(b.charges), len(tt.wantCharges), b.charges)
			}
			for i, want := range tt.wantCharges {
				if got := b.charges[i]; got != want {
					t.Errorf("charge %d = %+v, want %+v", i, got, want)
				}
			}
			if len(notices) != len(tt.wantNotices) {
				t.Fatalf("%d notifications, want %d: %v", len(notices), len(tt.wantNotices), notices)
			}
			for i, want := range tt.wantNotices {
				n := notices[i]
				if n["change"] != want[0] || n["recurring_status"] != want[1] || n["notify_type"] != "subscription" ||
					n["notify_id"] != fmt.Sprintf("R1-s%02d", i+1) || n["recurring_id"] != "R1" {
					t.Errorf("notification %d = %v, want change %s status %s", i, n, want[0], want[1])
				}
			}
			changes := 0
			for _, u := range b.updates {
				if u.Change != nil {
					changes++
					if u.Change.Seq != changes || u.Plan == nil || u.Plan.Changes != changes {
						t.Errorf("recorded change %d = %+v plan %+v", changes, u.Change, u.Plan)
					}
				}
			}
			if changes != len(tt.wantNotices) {
				t.Errorf("%d changes recorded, want %d", changes, len(tt.wantNotices))
			}
		})
	}
}

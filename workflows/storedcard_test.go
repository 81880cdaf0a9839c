package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/internal/domain/subscription"
	"github.com/paygate/paygate/workflows"
)

// TestOrderStoredCards: an approved payment keeps its card when asked
// (token_flag=YES) or when it starts a subscription; a stored card is
// charged without its security code and never kept or deleted by an order;
// a subscription's charge skips the shopper's risk rules and reports to its
// subscription.
func TestOrderStoredCards(t *testing.T) {
	monthly := &subscription.Terms{ContractName: "Gold", Amount: money.Amount{Minor: 999, Currency: currency},
		PromoAmount: money.Amount{Minor: amount, Currency: currency}, Interval: subscription.Month, IntervalCount: 1}
	stored := func(in *workflows.OrderInput) {
		in.Card.Stored, in.Card.TokenID = true, "tk_stored"
	}
	tests := []struct {
		name      string
		edit      func(in *workflows.OrderInput)
		authorise func(n int) (activities.ChargeOutcome, error)
		inquire   func(n int) (activities.InquiryResult, error)
		recordErr func(n int) error

		wantToken      string
		wantKept       int
		wantStoredAuth bool
		wantRisk       int
		wantDeletes    int
		wantSubscribed bool
		wantSignal     bool
		// wantUnknown: the signal says the charge's outcome is unknown.
		wantUnknown bool
	}{
		{name: "token_flag YES keeps the card", edit: func(in *workflows.OrderInput) { in.Details.TokenFlag = "YES" },
			authorise: answer(approved(amount)), wantToken: "tk_kept", wantKept: 1, wantRisk: 1},
		{name: "token_flag is read without regard to case", edit: func(in *workflows.OrderInput) { in.Details.TokenFlag = "yes" },
			authorise: answer(approved(amount)), wantToken: "tk_kept", wantKept: 1, wantRisk: 1},
		{name: "without token_flag nothing is kept", edit: func(in *workflows.OrderInput) {},
			authorise: answer(approved(amount)), wantRisk: 1},
		{name: "token_flag NO keeps nothing", edit: func(in *workflows.OrderInput) { in.Details.TokenFlag = "NO" },
			authorise: answer(approved(amount)), wantRisk: 1},
		{name: "a declined payment keeps nothing", edit: func(in *workflows.OrderInput) { in.Details.TokenFlag = "YES" },
			authorise: answer(declined("card_declined")), wantRisk: 1},
		{name: "a stored card is charged without its CVV and not kept again",
			edit: func(in *workflows.OrderInput) { stored(in); in.Details.TokenFlag = "YES" }, authorise: answer(approved(amount)),
			wantToken: "tk_stored", wantStoredAuth: true, wantRisk: 1},
		{name: "a subscription keeps the card and starts", edit: func(in *workflows.OrderInput) { in.Subscription = monthly },
			authorise: answer(approved(amount)), wantToken: "tk_kept", wantKept: 1, wantRisk: 1, wantSubscribed: true},
		{name: "a declined subscription payment starts nothing", edit: func(in *workflows.OrderInput) { in.Subscription = monthly },
			authorise: answer(declined("card_declined")), wantRisk: 1},
		{name: "a subscription's charge skips risk and reports its result",
			edit: func(in *workflows.OrderInput) {
				stored(in)
				in.Recurring = &workflows.RecurringCharge{RecurringID: "R1", WorkflowID: "subscription/m/R1", Cycle: 3, Attempt: 1}
			},
			authorise: answer(approved(amount)), wantToken: "tk_stored", wantStoredAuth: true, wantSignal: true},
		{name: "a subscription's charge whose outcome stayed unknown says so",
			edit: func(in *workflows.OrderInput) {
				stored(in)
				in.Recurring = &workflows.RecurringCharge{RecurringID: "R1", WorkflowID: "subscription/m/R1", Cycle: 3, Attempt: 1}
			},
			authorise: func(int) (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, timeout() },
			inquire:   func(int) (activities.InquiryResult, error) { return activities.InquiryResult{}, nil },
			wantToken: "tk_stored", wantStoredAuth: true, wantSignal: true, wantUnknown: true},
		{name: "an unrecordable order on a stored card leaves the card in the vault",
			edit: stored,
			recordErr: func(int) error {
				return temporal.NewNonRetryableApplicationError("bad", activities.ErrTypeRecordRejected, nil)
			}},
		{name: "an unrecordable order on a new card deletes it",
			edit: func(in *workflows.OrderInput) {},
			recordErr: func(int) error {
				return temporal.NewNonRetryableApplicationError("bad", activities.ErrTypeRecordRejected, nil)
			},
			wantDeletes: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acq := &acquirer{risk: accepted, authorise: tt.authorise, inquire: tt.inquire, recordErr: tt.recordErr}
			env := newEnv(t, acq)
			var mu sync.Mutex
			var kept []activities.KeepCardInput
			env.OnActivity(acts.KeepCard, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in activities.KeepCardInput) (activities.KeepCardResult, error) {
					mu.Lock()
					defer mu.Unlock()
					kept = append(kept, in)
					return activities.KeepCardResult{TokenID: "tk_kept"}, nil
				}).Maybe()
			var subs []workflows.SubscriptionInput
			env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in workflows.SubscriptionInput) error {
				mu.Lock()
				defer mu.Unlock()
				subs = append(subs, in)
				return nil
			}, workflow.RegisterOptions{Name: workflows.SubscriptionWorkflowType})
			var signals []workflows.SubscriptionChargeResult
			env.OnSignalExternalWorkflow(mock.Anything, "subscription/m/R1", "", workflows.SignalSubscriptionCharge, mock.Anything).Return(
				func(_, _, _, _ string, arg any) error {
					mu.Lock()
					defer mu.Unlock()
					signals = append(signals, arg.(workflows.SubscriptionChargeResult))
					return nil
				}).Maybe()
			start := time.Date(2027, time.January, 31, 9, 0, 0, 0, time.UTC)
			env.SetStartTime(start)
			in := orderInput("auto")
			tt.edit(&in)
			res := run(t, env, in)

			if res.TokenID != tt.wantToken {
				t.Errorf("token_id = %q, want %q", res.TokenID, tt.wantToken)
			}
			if len(kept) != tt.wantKept {
				t.Fatalf("KeepCard called %d times, want %d", len(kept), tt.wantKept)
			}
			if tt.wantKept > 0 && (kept[0].CardToken != cardToken || kept[0].TransactionID != txID || kept[0].AccountID != accountID) {
				t.Errorf("KeepCard input = %+v", kept[0])
			}
			if len(acq.auths) > 0 && acq.auths[0].StoredCredential != tt.wantStoredAuth {
				t.Errorf("StoredCredential = %t, want %t", acq.auths[0].StoredCredential, tt.wantStoredAuth)
			}
			if len(acq.risks) != tt.wantRisk {
				t.Errorf("risk checked %d times, want %d", len(acq.risks), tt.wantRisk)
			}
			if len(acq.deletes) != tt.wantDeletes {
				t.Errorf("card deleted %d times, want %d", len(acq.deletes), tt.wantDeletes)
			}
			if tt.wantSubscribed {
				if len(subs) != 1 {
					t.Fatalf("%d subscriptions started, want 1", len(subs))
				}
				s := subs[0]
				if s.RecurringID != "R"+txID || !s.Card.Stored || s.Card.TokenID != "tk_kept" || s.Progress.Cycle != 1 ||
					s.Details.Subscription != nil || s.Details.TokenFlag != "" {
					t.Errorf("subscription input = %+v", s)
				}
				want := workflows.RecurringResult{ContractName: "Gold", RecurringID: "R" + txID, Period: "1 month",
					Next: time.Date(2027, time.February, 28, 9, 0, 0, 0, time.UTC), Status: int(subscription.Active)}
				if res.Recurring == nil || *res.Recurring != want {
					t.Errorf("recurring = %+v, want %+v", res.Recurring, want)
				}
			} else if len(subs) != 0 || res.Recurring != nil {
				t.Errorf("subscription started: %+v, result %+v", subs, res.Recurring)
			}
			if tt.wantSignal {
				want := workflows.SubscriptionChargeResult{Cycle: 3, Attempt: 1, TransactionID: txID, OrderNo: orderNo,
					Approved: true, ResultCode: "0000", ResultMessage: "Success"}
				if tt.wantUnknown {
					want.Approved, want.ResultCode, want.ResultMessage, want.Unknown = false, "C0001", "Acquirer error", true
				}
				if len(signals) != 1 || signals[0] != want {
					t.Errorf("signals = %+v, want %+v", signals, want)
				}
			} else if len(signals) != 0 {
				t.Errorf("signalled %+v", signals)
			}
			if res.PaymentStatus == status.Failed && res.TokenID != "" && !in.Card.Stored {
				t.Errorf("a failed payment answered a token")
			}
		})
	}
}

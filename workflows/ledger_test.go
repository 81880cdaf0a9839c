package workflows_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/capture"
	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/workflows"
)

// TestOrderPostsToTheLedger: an order that becomes paid credits its captured
// amount to the merchant's deposit under "order/<transaction_id>/paid", once;
// each refund the acquirer settles debits it under
// "refund/<refund_reference_id>"; nothing else posts.
func TestOrderPostsToTheLedger(t *testing.T) {
	posting := func(ref string, amount int64) activities.LedgerOrderInput {
		return activities.LedgerOrderInput{Reference: ref, OrderKey: txID, MerchantID: merchantID, AccountID: accountID,
			Currency: currency, Amount: amount}
	}
	paid := "order/" + txID + "/paid"
	const hour = time.Hour
	tests := []struct {
		name         string
		captureMode  capture.Mode
		authorise    func(int) (activities.ChargeOutcome, error)
		refundStatus func(int) refund.Status
		pollStatus   func(int) refund.Status
		steps        []step
		credits      []activities.LedgerOrderInput
		debits       []activities.LedgerOrderInput
	}{
		{
			name: "sale", captureMode: capture.Auto, authorise: answer(approved(amount)),
			credits: []activities.LedgerOrderInput{posting(paid, amount)},
		},
		{
			name: "declined", captureMode: capture.Auto, authorise: answer(declined("card_declined")),
		},
		{
			name: "authorised, never captured", captureMode: capture.Manual, authorise: answer(approved(0)),
		},
		{
			name: "partial capture", captureMode: capture.Manual, authorise: answer(approved(0)),
			steps:   []step{{hour, workflows.UpdateCapture, workflows.CaptureRequest{Entry: entry, CaptureAmount: 10000}}},
			credits: []activities.LedgerOrderInput{posting(paid, 10000)},
		},
		{
			name: "sale then two refunds", captureMode: capture.Auto, authorise: answer(approved(amount)),
			steps: []step{
				{hour, workflows.UpdateRefund, workflows.RefundRequest{Entry: entry, RefundAmount: 100}},
				{2 * hour, workflows.UpdateRefund, workflows.RefundRequest{Entry: entry, RefundAmount: amount - 100}},
			},
			credits: []activities.LedgerOrderInput{posting(paid, amount)},
			debits: []activities.LedgerOrderInput{
				posting("refund/"+txID+"-01", 100), posting("refund/"+txID+"-02", amount-100),
			},
		},
		{
			name: "a pending refund posts when it settles", captureMode: capture.Auto, authorise: answer(approved(amount)),
			refundStatus: func(int) refund.Status { return refund.Pending },
			pollStatus: func(n int) refund.Status {
				if n < 2 {
					return refund.Pending
				}
				return refund.Succeeded
			},
			steps:   []step{{hour, workflows.UpdateRefund, workflows.RefundRequest{Entry: entry, RefundAmount: 500}}},
			credits: []activities.LedgerOrderInput{posting(paid, amount)},
			debits:  []activities.LedgerOrderInput{posting("refund/"+txID+"-01", 500)},
		},
		{
			name: "a refund the acquirer fails posts nothing", captureMode: capture.Auto, authorise: answer(approved(amount)),
			refundStatus: func(int) refund.Status { return refund.Pending },
			pollStatus:   func(int) refund.Status { return refund.Failed },
			steps:        []step{{hour, workflows.UpdateRefund, workflows.RefundRequest{Entry: entry, RefundAmount: 500}}},
			credits:      []activities.LedgerOrderInput{posting(paid, amount)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acq := &acquirer{risk: accepted, authorise: tc.authorise, refundStatus: tc.refundStatus, pollStatus: tc.pollStatus}
			runSteps(t, acq, tc.captureMode, tc.steps)
			if !reflect.DeepEqual(acq.credits, tc.credits) {
				t.Errorf("credits = %+v, want %+v", acq.credits, tc.credits)
			}
			if !reflect.DeepEqual(acq.debits, tc.debits) {
				t.Errorf("debits = %+v, want %+v", acq.debits, tc.debits)
			}
		})
	}
}

// TestLedgerPostingFallsBackToAnActivity: a posting is first tried as a
// local activity, three quick attempts; a ledger that fails them gets the
// posting as a regular activity, retried until it is made, once. A posting
// the ledger refuses for its values is not tried again.
func TestLedgerPostingFallsBackToAnActivity(t *testing.T) {
	down := errors.New("ledger unavailable")
	refused := temporal.NewNonRetryableApplicationError("refused", activities.ErrTypeLedgerRefused, nil)
	tests := []struct {
		name      string
		ledgerErr func(n int) error
		wantCalls int
		wantPosts int
	}{
		{name: "the local attempt posts", wantCalls: 1, wantPosts: 1},
		{name: "the second local attempt posts", ledgerErr: func(n int) error {
			if n == 0 {
				return down
			}
			return nil
		}, wantCalls: 2, wantPosts: 1},
		{name: "a ledger down through the local attempts gets the regular activity", ledgerErr: func(n int) error {
			if n < 4 {
				return down
			}
			return nil
		}, wantCalls: 5, wantPosts: 1},
		{name: "a refused posting is not retried", ledgerErr: func(int) error { return refused }, wantCalls: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acq := &acquirer{risk: accepted, authorise: answer(approved(amount)), ledgerErr: tc.ledgerErr}
			runSteps(t, acq, capture.Auto, nil)
			if acq.ledgerCalls != tc.wantCalls || len(acq.credits) != tc.wantPosts {
				t.Errorf("ledger called %d times with %d postings, want %d and %d", acq.ledgerCalls, len(acq.credits), tc.wantCalls, tc.wantPosts)
			}
		})
	}
}

package workflows_test

import (
	"reflect"
	"testing"
	"time"

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
		return activities.LedgerOrderInput{Reference: ref, MerchantID: merchantID, AccountID: accountID, Currency: currency, Amount: amount}
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

package simacquirer

import (
	"testing"

	"github.com/paygate/paygate/internal/domain/refund"
)

// TestRefundStatusMapsTheAcquirersWords: the workflow sees only our refund
// statuses; whatever else the acquirer says counts as failed, as it always
// has. (The mapping moved here from the activities when connectors began
// answering in the connector vocabulary.)
func TestRefundStatusMapsTheAcquirersWords(t *testing.T) {
	tests := []struct {
		name     string
		acquirer string
		want     refund.Status
	}{
		{"succeeded", RefundSucceeded, refund.Succeeded},
		{"pending", RefundPending, refund.Pending},
		{"failed", RefundFailed, refund.Failed},
		{"empty", "", refund.Failed},
		{"unknown word", "processing", refund.Failed},
		{"other case", "SUCCEEDED", refund.Failed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := refundOf(Refund{RefundID: "re_1", ChargeID: "ch_1", Amount: 250, Currency: "EUR", Status: tc.acquirer})
			if got.Status != tc.want || got.ID != "re_1" || got.ChargeID != "ch_1" || got.Amount != 250 || got.Currency != "EUR" {
				t.Errorf("refundOf(%q) = %+v, want status %q", tc.acquirer, got, tc.want)
			}
		})
	}
}

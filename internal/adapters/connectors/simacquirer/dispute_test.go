package simacquirer

import (
	"encoding/json"
	"testing"
)

// TestDisputeOfReadsTheFee: the acquirer's chargeback fee, once it took the
// money back, is the dispute's fee; a dispute that took nothing reports
// none (an inquiry), which is not a fee of zero.
func TestDisputeOfReadsTheFee(t *testing.T) {
	tests := []struct {
		name, body string
		fee        int64
		known      bool
	}{
		{"a chargeback", `{"dispute_id":"dp_1","amount":5000,"currency":"JPY","stage":"chargeback","status":"needs_response","fee":1500}`, 1500, true},
		{"an inquiry", `{"dispute_id":"dp_1","amount":5000,"currency":"JPY","stage":"inquiry","status":"needs_response"}`, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var d simDispute
			if err := json.Unmarshal([]byte(tc.body), &d); err != nil {
				t.Fatal(err)
			}
			if got := disputeOf(d); got.Fee != tc.fee || got.FeeKnown != tc.known {
				t.Errorf("fee %d known %v, want %d %v", got.Fee, got.FeeKnown, tc.fee, tc.known)
			}
		})
	}
}

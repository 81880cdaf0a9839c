package workflows

import (
	"testing"

	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/routing"
)

// TestChargesWithRecord: from shape 5 only a direct card order whose charge
// goes to its one connector is charged by its record's activity; every
// other kind keeps its own steps, as at shape 4.
func TestChargesWithRecord(t *testing.T) {
	card := OrderInput{Shape: shapeChargeWithRecord, Kind: KindCard, TransactionID: "1"}
	tests := []struct {
		name string
		edit func(*OrderInput)
		want bool
	}{
		{"a direct card order", func(*OrderInput) {}, true},
		{"a stored card's charge", func(in *OrderInput) { in.Card.TokenID = "tok_1"; in.Card.Stored = true }, true},
		{"with the merchant's own 3-D Secure result", func(in *OrderInput) { in.ExternalThreeDS = &ThreeDSData{ECI: "05"} }, true},
		{"with an empty route", func(in *OrderInput) { in.Route = &routing.Plan{} }, true},
		{"shape 4", func(in *OrderInput) { in.Shape = shapeFoldedSave }, false},
		{"3-D Secure by the gateway", func(in *OrderInput) { in.ThreeDS = true }, false},
		{"a hosted page", func(in *OrderInput) { in.Kind = KindCheckout }, false},
		{"an APM order", func(in *OrderInput) { in.Kind = KindAPM }, false},
		{"APM data on a card order", func(in *OrderInput) { in.APM = &APMOrder{} }, false},
		{"a subscription's charge", func(in *OrderInput) { in.Recurring = &RecurringCharge{RecurringID: "r1", Cycle: 2} }, false},
		{"a routed order", func(in *OrderInput) { in.Route = &routing.Plan{Connectors: []string{"sim-bank", "sim-acquirer"}} }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := card
			tc.edit(&in)
			w := &orderWorkflow{in: in}
			if got := w.chargesWithRecord(); got != tc.want {
				t.Errorf("chargesWithRecord = %t, want %t", got, tc.want)
			}
		})
	}
	// A charge after 3-D Secure carries its authentication: never the
	// record's.
	w := &orderWorkflow{in: card}
	w.st.ThreeDS.Data = &connector.ThreeDSData{AuthenticationID: "auth_1"}
	if w.chargesWithRecord() {
		t.Error("chargesWithRecord with a 3-D Secure result in the state = true, want false")
	}
}

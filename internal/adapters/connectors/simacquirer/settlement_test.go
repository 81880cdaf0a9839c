package simacquirer

import (
	"testing"
	"time"

	sim "github.com/paygate/paygate/internal/dev/simulator"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/recon"
)

// TestSettlement reads the simulator's report of the day after a sale:
// the capture, less the contracted fee, in the matching engine's terms.
func TestSettlement(t *testing.T) {
	srv, client := newEnv(t, sim.Options{}, 5*time.Second)
	c := &Connector{client: client}
	ch, err := c.Charge(t.Context(), connector.ChargeRequest{IdempotencyKey: "k-1", Reference: "1379868670095785984",
		Card: connector.Card{Number: cardVisa, ExpiryMonth: "12", ExpiryYear: "2030", CVV: "123"}, Amount: 10000, Currency: "EUR", Capture: true})
	if err != nil || !ch.Approved() {
		t.Fatalf("sale = %+v, %v", ch, err)
	}
	day := srv.Charges()[0].CapturedAt.UTC().Truncate(24 * time.Hour)
	lines, err := c.Settlement(t.Context(), day.AddDate(0, 0, 1))
	want := recon.Line{No: 1, Reference: ch.ID, OrderKey: "1379868670095785984", Type: recon.Capture, Gross: 10000, Fee: 320, Net: 9680,
		Currency: "EUR", Batch: "B" + day.AddDate(0, 0, 1).Format("20060102")}
	if err != nil || len(lines) != 1 || lines[0] != want {
		t.Errorf("settlement = %+v, %v; want [%+v]", lines, err, want)
	}
	if none, err := c.Settlement(t.Context(), day); err != nil || len(none) != 0 {
		t.Errorf("the day of the sale settles %+v, %v; want nothing (T+1)", none, err)
	}
}

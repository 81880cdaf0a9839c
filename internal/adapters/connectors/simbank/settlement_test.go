package simbank

import (
	"fmt"
	"testing"
	"time"

	bank "github.com/paygate/paygate/internal/dev/simbank"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/recon"
)

// TestSettlement reads the bank's CSV report of the day after two sales,
// one of whose amount seeds a duplicate line: decimals back in minor
// units, the bank's fee, each line as sent.
func TestSettlement(t *testing.T) {
	srv, c := newEnv(t, bank.Options{}, 5*time.Second)
	var ids []string
	for i, amount := range []int64{10000, 10093} {
		ch, err := c.Charge(t.Context(), connector.ChargeRequest{IdempotencyKey: fmt.Sprintf("k-%d", i), Reference: fmt.Sprintf("13798686700957859%02d", i),
			Card: connector.Card{Number: "4242424242424242", ExpiryMonth: "12", ExpiryYear: "2030", CVV: "123"}, Amount: amount, Currency: "EUR", Capture: true})
		if err != nil || !ch.Approved() {
			t.Fatalf("sale %d = %+v, %v", amount, ch, err)
		}
		ids = append(ids, ch.ID)
	}
	day := srv.Payments()[0].CapturedAt.UTC().Truncate(24 * time.Hour)
	next := day.AddDate(0, 0, 1)
	lines, err := c.Settlement(t.Context(), next)
	if err != nil {
		t.Fatal(err)
	}
	batch := "SB" + next.Format("20060102")
	want := []recon.Line{
		{No: 1, Reference: ids[0], OrderKey: "1379868670095785900", Type: recon.Capture, Gross: 10000, Fee: 175, Net: 9825, Currency: "EUR", Batch: batch},
		{No: 2, Reference: ids[1], OrderKey: "1379868670095785901", Type: recon.Capture, Gross: 10093, Fee: 176, Net: 9917, Currency: "EUR", Batch: batch},
		{No: 3, Reference: ids[1], OrderKey: "1379868670095785901", Type: recon.Capture, Gross: 10093, Fee: 176, Net: 9917, Currency: "EUR", Batch: batch},
	}
	if len(lines) != len(want) {
		t.Fatalf("lines %+v, want %+v", lines, want)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d = %+v, want %+v", i+1, lines[i], want[i])
		}
	}
	if none, err := c.Settlement(t.Context(), day); err != nil || len(none) != 0 {
		t.Errorf("the day of the sales settles %+v, %v; want nothing (T+1)", none, err)
	}
}

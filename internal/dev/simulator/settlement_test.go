package simulator

import (
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/recon"
)

// TestSettlementSeedsDiscrepancies: the next day's report settles the
// day's captures less the contracted fee, with the discrepancy each
// amount's last two digits seed; read through the matching engine, every
// seeded one is found with its class.
func TestSettlementSeedsDiscrepancies(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	amounts := []int64{10000, 10091, 10092, 10093, 10094, 10095}
	for i, amount := range amounts {
		a := devCall(t, "POST", ts.URL+"/v1/charges", chargeBody(fmt.Sprintf("k-%d", i), "4242424242424242", amount, true))
		if a.status != 200 {
			t.Fatalf("charge %d: %d %s", amount, a.status, a.body)
		}
	}
	// The day the captures were made (not the clock's now, which may
	// have passed midnight since).
	today := srv.Charges()[0].CapturedAt.UTC().Truncate(24 * time.Hour)
	if got := srv.Settlement(today); len(got.Lines) != 0 {
		t.Errorf("today's report settles %d lines of today's captures, want none (T+1)", len(got.Lines))
	}
	tomorrow := today.AddDate(0, 0, 1)
	rep := decode[SettlementReport](t, devCall(t, "GET", ts.URL+"/v1/settlements/"+tomorrow.Format(time.DateOnly), nil))
	if len(rep.Lines) != 7 { // 6 captures, one never settled, one twice, one unknown beside
		t.Fatalf("%d lines, want 7: %+v", len(rep.Lines), rep.Lines)
	}
	if l := rep.Lines[0]; l.Gross != 10000 || l.Fee != 30+290 || l.Net != 10000-320 || l.Currency != "EUR" || l.Type != "capture" {
		t.Errorf("first line %+v, want 100.00 less 3.20", l)
	}
	var expected []recon.Expected
	for _, c := range srv.Charges() {
		expected = append(expected, recon.Expected{OrderKey: c.Reference, Reference: c.ChargeID, Type: recon.Capture,
			Amount: c.CapturedAmount, Currency: c.Currency, At: c.CapturedAt})
	}
	var lines []recon.Line
	for _, l := range rep.Lines {
		lines = append(lines, recon.Line{No: l.No, Reference: l.Reference, OrderKey: l.OrderKey, Type: recon.LineType(l.Type),
			Gross: l.Gross, Fee: l.Fee, Net: l.Net, Currency: l.Currency, Batch: l.Batch})
	}
	got := recon.Reconcile(tomorrow.Add(48*time.Hour), lines, expected,
		recon.Config{SettleWithin: 24 * time.Hour, Fees: recon.FeeSchedule{Fixed: 30, BasisPoints: 290}}).Counts()
	want := map[recon.Class]int{recon.Matched: 3, recon.MissingAtAcquirer: 1, recon.AmountMismatch: 1, recon.Duplicate: 1,
		recon.FeeOutside: 1, recon.MissingHere: 1}
	if !maps.Equal(got, want) {
		t.Errorf("reconciled %v, want %v", got, want)
	}
	if a := devCall(t, "GET", ts.URL+"/v1/settlements/yesterday", nil); a.status != 400 {
		t.Errorf("a bad date answered %d", a.status)
	}
}

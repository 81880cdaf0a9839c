package simulator

import (
	"fmt"
	"maps"
	"slices"
	"sync"
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

// TestSettlementCarriesChargebacks: a chargeback is taken back (with the
// chargeback fee) in the report of its day's settlement, an inquiry only
// once lost, and a chargeback won is given back in the report of the day it
// was won.
func TestSettlementCarriesChargebacks(t *testing.T) {
	day := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := day
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	_, ts := newTestServer(t, Options{Now: clock})
	charge := func(key string, amount int64) Charge {
		return decode[Charge](t, call(t, "POST", ts.URL+"/v1/charges", chargeBody(key, "4242424242424242", amount, true)))
	}
	raise := func(c Charge, stage string) Dispute {
		return decode[Dispute](t, devCall(t, "POST", ts.URL+"/_sim/disputes", map[string]any{"charge_id": c.ChargeID, "stage": stage}))
	}
	decide := func(d Dispute, outcome string) {
		if a := devCall(t, "POST", ts.URL+"/_sim/disputes/"+d.DisputeID+"/decide", map[string]string{"outcome": outcome}); a.status != 200 {
			t.Fatalf("decide %s: %d %s", outcome, a.status, a.body)
		}
	}
	won, lost := charge("cb-1", 5000), charge("cb-2", 3000)
	chargeback, inquiry := raise(won, DisputeChargeback), raise(lost, DisputeInquiry)
	mu.Lock()
	now = day.AddDate(0, 0, 1)
	mu.Unlock()
	decide(chargeback, DisputeWon)
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	decide(inquiry, DisputeLost)

	type line struct {
		typ, ref        string
		gross, fee, net int64
	}
	tests := []struct {
		name string
		date time.Time
		want []line
	}{
		{"the day after the captures: both settled, the chargeback taken back with its fee", day.AddDate(0, 0, 1), []line{
			{"capture", won.ChargeID, 5000, 30 + 145, 5000 - 175}, {"capture", lost.ChargeID, 3000, 30 + 87, 3000 - 117},
			{"chargeback", chargeback.DisputeID, 5000, 1500, -6500}}},
		{"the day after the outcomes: the won chargeback given back, the lost inquiry taken", day.AddDate(0, 0, 2), []line{
			{"chargeback", chargeback.DisputeID, -5000, 0, 5000}, {"chargeback", inquiry.DisputeID, 3000, 1500, -4500}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := decode[SettlementReport](t, devCall(t, "GET", ts.URL+"/v1/settlements/"+tt.date.Format(time.DateOnly), nil))
			var got []line
			for _, l := range rep.Lines {
				got = append(got, line{l.Type, l.Reference, l.Gross, l.Fee, l.Net})
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("lines\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

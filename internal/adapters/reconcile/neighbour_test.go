package reconcile_test

import (
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/reconcile"
	"github.com/paygate/paygate/internal/domain/recon"
	"github.com/paygate/paygate/models"
)

// TestSettlementOnADayBeside: a line on the report of a day beside the one
// its capture is owed on settles it, by the acquirer's reference, either
// way: early (the acquirer captured at 23:59:59.8, the record says
// 00:00:00.3 the next day) and late (the acquirer settled a day after its
// contract). Each capture is matched once, on the day of its line; the
// late one's exception on its own day is closed; a day run again keeps
// that. Before, each made two exceptions that nothing paired.
func TestSettlementOnADayBeside(t *testing.T) {
	db := testDB(t)
	ctx := t.Context()
	paid := func(tx, ref string, at time.Time) { simBankPaid(t, db, tx, ref, at) }
	const early, late = "1379868670095785901", "1379868670095785902"
	// Owed, by the record: early on the report of 11-12 (captured 11-11),
	// late on the report of 11-11 (captured 11-10).
	paid(early, "ch_early", time.Date(2026, 11, 11, 0, 0, 0, 300_000_000, time.UTC))
	paid(late, "ch_late", time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC))
	line := func(no int, tx, ref string) recon.Line {
		return recon.Line{No: no, Reference: ref, OrderKey: tx, Type: recon.Capture, Gross: 1000, Net: 1000, Currency: proofCurrency}
	}
	reports := map[string][]recon.Line{
		"2026-11-11": {line(1, early, "ch_early")}, // early: a day before its own
		"2026-11-12": {line(1, late, "ch_late")},   // late: a day after its own
	}
	report := &switchedReport{}
	svc := simBankOver(db, report)
	reconcileDay := func(d string) reconcile.Summary {
		t.Helper()
		day, _ := time.Parse(time.DateOnly, d)
		report.lines = reports[d]
		sum, err := svc.Reconcile(ctx, "sim-bank", day)
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	type seen struct{ day, key, class, status, owedKey string }
	items := func() []seen {
		t.Helper()
		var out []seen
		for _, it := range simBankItems(t, db) {
			out = append(out, seen{it.Day.Format(time.DateOnly), it.ItemKey, it.Class, it.Status, it.OwedKey})
		}
		return out
	}
	exceptions := func(d string) int {
		t.Helper()
		var run models.ReconRun
		if err := db.Where("connector = ? AND day = ?", "sim-bank", d).First(&run).Error; err != nil {
			t.Fatal(err)
		}
		return run.Exceptions
	}

	if sum := reconcileDay("2026-11-11"); sum.Exceptions != 1 {
		t.Errorf("11-11: %d exceptions, want the late capture's only", sum.Exceptions)
	}
	if sum := reconcileDay("2026-11-12"); sum.Exceptions != 0 {
		t.Errorf("11-12: %d exceptions, want none", sum.Exceptions)
	}
	want := []seen{
		{"2026-11-11", "line/1", "matched", "none", early},
		{"2026-11-11", "owed/capture/" + early, "matched", "none", early},
		{"2026-11-11", "owed/capture/" + late, "matched", "none", late},
		{"2026-11-12", "line/1", "matched", "none", late},
	}
	check := func(when string) {
		t.Helper()
		got := items()
		if len(got) != len(want) {
			t.Fatalf("%s: items %+v, want %+v", when, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: item %d = %+v, want %+v", when, i, got[i], want[i])
			}
		}
		if n := exceptions("2026-11-11"); n != 0 {
			t.Errorf("%s: 11-11 counts %d exceptions, want none", when, n)
		}
	}
	check("both days reconciled")
	reconcileDay("2026-11-11")
	reconcileDay("2026-11-12")
	check("both days run again")

	// A late line a cent short: an amount mismatch whose owed settlement
	// is its own day's; finance's write-off finds it there.
	const short = "1379868670095785903"
	paid(short, "ch_short", time.Date(2026, 11, 11, 12, 0, 0, 0, time.UTC))
	reconcileDay("2026-11-12") // owed there, missing at the acquirer
	cent := line(1, short, "ch_short")
	cent.Gross, cent.Net = 999, 999
	reports["2026-11-13"] = []recon.Line{cent}
	reconcileDay("2026-11-13")
	var it models.ReconItem
	if err := db.Where("connector = ? AND day = ? AND item_key = ?", "sim-bank", "2026-11-13", "line/1").First(&it).Error; err != nil {
		t.Fatal(err)
	}
	if it.Class != string(recon.AmountMismatch) || it.OwedKey != short {
		t.Fatalf("the short line is %s of %q, want an amount mismatch of %s", it.Class, it.OwedKey, short)
	}
	if _, err := svc.Act(ctx, it.ID, recon.WriteOff, "a cent short", "finance@example.com"); err != nil {
		t.Errorf("write-off of a line settling the day before's capture: %v", err)
	}

	// Written off on its own day, then its line a day late: the line is a
	// duplicate of what the write-off posted, for finance to book as the
	// gateway's cash (matched, its posting was taken for a repeat of the
	// write-off and the cash never booked).
	const off = "1379868670095785904"
	paid(off, "ch_off", time.Date(2026, 11, 12, 12, 0, 0, 0, time.UTC))
	reports["2026-11-13"] = nil
	reconcileDay("2026-11-13")
	var owedOff models.ReconItem
	if err := db.Where("connector = ? AND day = ? AND item_key = ?", "sim-bank", "2026-11-13", "owed/capture/"+off).First(&owedOff).Error; err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Act(ctx, owedOff.ID, recon.WriteOff, "never paid", "finance@example.com"); err != nil {
		t.Fatal(err)
	}
	reports["2026-11-14"] = []recon.Line{line(1, off, "ch_off")}
	reconcileDay("2026-11-14")
	var late14 models.ReconItem
	if err := db.Where("connector = ? AND day = ? AND item_key = ?", "sim-bank", "2026-11-14", "line/1").First(&late14).Error; err != nil {
		t.Fatal(err)
	}
	if late14.Class != string(recon.Duplicate) || late14.Status != models.ReconOpen || late14.OwedKey != "" ||
		!strings.Contains(late14.Detail, "which finance wrote off (2026-11-13)") {
		t.Errorf("the late line of a written-off capture: %s %s owed %q (%s); want an open duplicate of the write-off",
			late14.Class, late14.Status, late14.OwedKey, late14.Detail)
	}
	if err := db.First(&owedOff, owedOff.ID).Error; err != nil || owedOff.Status != models.ReconWrittenOff {
		t.Errorf("the written-off item is %s, %v; want it as finance left it", owedOff.Status, err)
	}
}

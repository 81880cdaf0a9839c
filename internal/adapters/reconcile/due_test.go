package reconcile_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/reconcile"
	"github.com/paygate/paygate/internal/domain/recon"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

// switchedReport is a settlement report that is what its field holds at
// each read.
type switchedReport struct{ lines []recon.Line }

func (r *switchedReport) Settlement(context.Context, time.Time) ([]recon.Line, error) {
	return r.lines, nil
}

// simBankOver is a reconciliation of sim-bank, which settles T+1, reading
// its reports from report.
func simBankOver(db *gorm.DB, report *switchedReport) *reconcile.Service {
	return &reconcile.Service{DB: db, Ledger: ledger.New(db),
		Connectors: map[string]reconcile.Connector{"sim-bank": {Source: report, Terms: reconcile.Terms{Days: 1}}}}
}

// simBankPaid records order tx of proofAccount, paid 10.00 at sim-bank
// under the acquirer's reference ref at at.
func simBankPaid(t *testing.T, db *gorm.DB, tx, ref string, at time.Time) {
	t.Helper()
	o := models.Order{TransactionID: tx, WorkflowID: "order/" + tx, MerchantID: proofMerchant, AccountID: proofAccount,
		OrderNo: "NB-" + tx[len(tx)-2:], Currency: proofCurrency, Amount: 1000, CapturedAmount: 1000, PaymentStatus: status.Paid,
		OrderStatus: status.OrderStatusOf(status.Paid), CaptureMode: models.CaptureAuto, RequestFingerprint: "fp",
		Connector: "sim-bank", ConnectorRef: ref, CreatedAt: at, UpdatedAt: at}
	if err := db.Create(&o).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("UPDATE order_status_changes SET at = ? WHERE transaction_id = ?", at, tx).Error; err != nil {
		t.Fatal(err)
	}
}

// simBankItems lists sim-bank's items by day and item key.
func simBankItems(t *testing.T, db *gorm.DB) []models.ReconItem {
	t.Helper()
	var its []models.ReconItem
	if err := db.Where("connector = ?", "sim-bank").Order("day, item_key").Find(&its).Error; err != nil {
		t.Fatal(err)
	}
	return its
}

// TestRefusedReportKeepsTheDay: a report that cannot be read (a line
// numbered twice) stores no items, keeps the day's earlier run and says
// why on it, and leaves the day due; a readable report clears the reason.
func TestRefusedReportKeepsTheDay(t *testing.T) {
	db := testDB(t)
	ctx := t.Context()
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	stray := recon.Line{No: 1, Reference: "ch_x", OrderKey: "nobody", Type: recon.Capture, Gross: 100, Net: 100, Currency: "EUR"}
	twice := []recon.Line{stray, {No: 1, Reference: "ch_y", OrderKey: "nobody", Type: recon.Capture, Gross: 200, Net: 200, Currency: "EUR"}}
	report := &switchedReport{}
	svc := simBankOver(db, report)
	runOf := func(d time.Time) models.ReconRun {
		t.Helper()
		var run models.ReconRun
		if err := db.Where("connector = ? AND day = ?", "sim-bank", d).First(&run).Error; err != nil {
			t.Fatal(err)
		}
		return run
	}
	due := func() []string {
		t.Helper()
		days, err := svc.DaysDue(ctx, "sim-bank", day.AddDate(0, 0, -1), day.AddDate(0, 0, 1))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range days {
			out = append(out, d.Format(time.DateOnly))
		}
		return out
	}
	const refused = "line number 1 comes twice"

	// Never run before: a run of nothing, with the reason.
	report.lines = twice
	if _, err := svc.Reconcile(ctx, "sim-bank", day.AddDate(0, 0, -1)); !errors.Is(err, recon.ErrBadReport) {
		t.Fatalf("err = %v, want ErrBadReport", err)
	}
	if run := runOf(day.AddDate(0, 0, -1)); run.Lines != 0 || !strings.Contains(run.Error, refused) {
		t.Errorf("run of a refused first report %+v, want no lines and the reason", run)
	}

	// Run before: its items and counts stay.
	report.lines = []recon.Line{stray}
	if _, err := svc.Reconcile(ctx, "sim-bank", day); err != nil {
		t.Fatal(err)
	}
	report.lines = twice
	if _, err := svc.Reconcile(ctx, "sim-bank", day); !errors.Is(err, recon.ErrBadReport) {
		t.Fatalf("err = %v, want ErrBadReport", err)
	}
	run := runOf(day)
	if run.Lines != 1 || run.Exceptions != 1 || !strings.Contains(run.Error, refused) {
		t.Errorf("run after a refused report %+v, want the first run's one line and exception, and the reason", run)
	}
	var items []models.ReconItem
	if err := db.Where("connector = ? AND day = ?", "sim-bank", day).Find(&items).Error; err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Gross != 100 {
		t.Errorf("items %+v, want the first run's one line", items)
	}
	if got := strings.Join(due(), ","); got != "2026-11-19,2026-11-20,2026-11-21" {
		t.Errorf("days due %s, want both refused days and the day never run", got)
	}

	report.lines = []recon.Line{stray}
	if _, err := svc.Reconcile(ctx, "sim-bank", day); err != nil {
		t.Fatal(err)
	}
	if run := runOf(day); run.Error != "" {
		t.Errorf("run after a readable report says %q", run.Error)
	}
	if got := strings.Join(due(), ","); got != "2026-11-19,2026-11-21" {
		t.Errorf("days due %s, want the day read again no longer due", got)
	}
}

// TestDayWhosePostingStoppedIsDue: a day is due until the ledger holds
// every matched line's money, also when its posting never began (the
// workflow failed between matching and posting), and stays so when the day
// is matched again; before, only lines the ledger had refused counted.
func TestDayWhosePostingStoppedIsDue(t *testing.T) {
	db := testDB(t)
	ctx := t.Context()
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	svc := &reconcile.Service{DB: db, Ledger: ledger.New(db), Connectors: map[string]reconcile.Connector{}}
	matched := models.ReconItem{Connector: "sim-bank", Day: day, ItemKey: "line/1", Source: models.ReconSourceLine, LineNo: 1,
		OrderKey: "T1", Type: string(recon.Capture), Gross: 1000, Fee: 30, Net: 970, Currency: "EUR", Class: string(recon.Matched),
		Status: models.ReconNone, MerchantID: proofMerchant, AccountID: proofAccount}
	save := func(posted, unposted int) {
		t.Helper()
		run := &models.ReconRun{Connector: "sim-bank", Day: day, Lines: 1, Owed: 1, Posted: posted, Unposted: unposted, RanAt: time.Now()}
		if err := models.SaveReconRun(ctx, db, run, []models.ReconItem{matched}); err != nil {
			t.Fatal(err)
		}
	}
	isDue := func() bool {
		t.Helper()
		days, err := svc.DaysDue(ctx, "sim-bank", day, day)
		if err != nil {
			t.Fatal(err)
		}
		return len(days) == 1
	}
	save(0, 0)
	if !isDue() {
		t.Fatal("a day whose matched line was never posted is not due")
	}
	var item models.ReconItem
	if err := db.Where("connector = ? AND day = ? AND item_key = ?", "sim-bank", day, "line/1").First(&item).Error; err != nil {
		t.Fatal(err)
	}
	if err := models.MarkReconPostedAll(ctx, db, []models.ReconPosting{{ID: item.ID, Posted: "order/T1/settled"}}); err != nil {
		t.Fatal(err)
	}
	if err := models.CountReconPosting(ctx, db, "sim-bank", day); err != nil {
		t.Fatal(err)
	}
	if isDue() {
		t.Fatal("a day whose money the ledger holds is still due")
	}
	// Matched again: the counts are the posting's, not reset to nothing.
	save(0, 0)
	var run models.ReconRun
	if err := db.Where("connector = ? AND day = ?", "sim-bank", day).First(&run).Error; err != nil {
		t.Fatal(err)
	}
	if run.Posted != 1 || isDue() {
		t.Errorf("day matched again: run %+v, due %v; want its one posted line kept and the day not due", run, isDue())
	}
}

// TestWrittenOffLineOfNoMoney: a line of no money written off is marked
// posted with nothing to post, and its day is not due for it; the ledger
// takes no empty entry, so it kept a post error and the day was run again
// every day of the backfill window.
func TestWrittenOffLineOfNoMoney(t *testing.T) {
	db := testDB(t)
	ctx := t.Context()
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	report := &switchedReport{lines: []recon.Line{{No: 1, Reference: "adj_1", OrderKey: "nobody", Type: recon.FeeAdjustment, Currency: "EUR"}}}
	svc := simBankOver(db, report)
	if _, err := svc.Reconcile(ctx, "sim-bank", day); err != nil {
		t.Fatal(err)
	}
	var item models.ReconItem
	if err := db.Where("connector = ? AND day = ? AND item_key = ?", "sim-bank", day, "line/1").First(&item).Error; err != nil {
		t.Fatal(err)
	}
	done, err := svc.Act(ctx, item.ID, recon.WriteOff, "a zero adjustment", "finance@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if done.Posted != reconcile.NothingPosted || done.PostError != "" || done.Status != models.ReconWrittenOff {
		t.Errorf("written off: posted %q, error %q, status %s; want nothing to post", done.Posted, done.PostError, done.Status)
	}
	if days, err := svc.DaysDue(ctx, "sim-bank", day, day); err != nil || len(days) != 0 {
		t.Errorf("days due %v, %v; want none", days, err)
	}
}

package payoutrerun_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/adapters/payoutrerun"
	"github.com/paygate/paygate/internal/dev/devenv"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/models/migrations"
)

func TestPlanPayouts(t *testing.T) {
	failed := models.Payout{ID: "payout/M1/r-failed", RequestID: "r-failed", Status: "FAILED", Run: 1}
	completed := models.Payout{ID: "payout/M1/r-done", RequestID: "r-done", Status: "COMPLETED", Run: 1}
	submitted := models.Payout{ID: "payout/M1/r-sub", RequestID: "r-sub", Status: "SUBMITTED", Run: 2}
	odd := models.Payout{ID: "payout/M1/r-odd", RequestID: "r-odd", Status: "LOST", Run: 1}
	found := []models.Payout{failed, completed, submitted, odd}
	tests := []struct {
		name       string
		ids        []string
		wantID     string
		wantRerun  bool
		wantReason string
	}{
		{name: "failed is re-run", ids: []string{"payout/M1/r-failed"}, wantID: failed.ID, wantRerun: true},
		{name: "failed by request id is re-run", ids: []string{"r-failed"}, wantID: failed.ID, wantRerun: true},
		{name: "completed is skipped", ids: []string{"payout/M1/r-done"}, wantID: completed.ID, wantReason: "completed"},
		{name: "in flight is skipped", ids: []string{"r-sub"}, wantID: submitted.ID, wantReason: "in flight (SUBMITTED)"},
		{name: "unknown id is skipped", ids: []string{"payout/M1/nope"}, wantID: "payout/M1/nope", wantReason: "not found"},
		{name: "unknown status is skipped", ids: []string{"r-odd"}, wantID: odd.ID, wantReason: `unknown status "LOST"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			items := payoutrerun.PlanPayouts(models.PayoutSelection{IDs: tc.ids}, found)
			if len(items) != 1 {
				t.Fatalf("items = %+v, want one", items)
			}
			it := items[0]
			if it.PayoutID != tc.wantID || it.Rerun != tc.wantRerun || it.Reason != tc.wantReason {
				t.Errorf("item = {%s rerun=%t %q}, want {%s rerun=%t %q}", it.PayoutID, it.Rerun, it.Reason, tc.wantID, tc.wantRerun, tc.wantReason)
			}
		})
	}
	t.Run("an id named twice is planned once", func(t *testing.T) {
		items := payoutrerun.PlanPayouts(models.PayoutSelection{IDs: []string{"r-failed", failed.ID, "x", "x"}}, found)
		if len(items) != 2 || items[0].PayoutID != failed.ID || items[1].PayoutID != "x" {
			t.Errorf("items = %+v, want the failed payout then x", items)
		}
	})
}

func TestCheck(t *testing.T) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		sel  models.PayoutSelection
		ok   bool
	}{
		{name: "empty", sel: models.PayoutSelection{}},
		{name: "ids", sel: models.PayoutSelection{IDs: []string{"a"}}, ok: true},
		{name: "ids and filter", sel: models.PayoutSelection{IDs: []string{"a"}, MerchantID: "M1"}},
		{name: "merchant", sel: models.PayoutSelection{MerchantID: "M1"}, ok: true},
		{name: "known failure type", sel: models.PayoutSelection{FailureType: "RAIL_UNAVAILABLE"}, ok: true},
		{name: "unknown failure type", sel: models.PayoutSelection{FailureType: "OOPS"}},
		{name: "from after to", sel: models.PayoutSelection{From: at, To: at.Add(-time.Hour)}},
		{name: "range", sel: models.PayoutSelection{From: at, To: at.Add(time.Hour)}, ok: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := payoutrerun.Check(tc.sel); (err == nil) != tc.ok {
				t.Errorf("Check = %v, want ok=%t", err, tc.ok)
			}
		})
	}
}

// testDB returns a migrated database of its own on a real Postgres server,
// dropped when the test ends.
func testDB(t *testing.T) *gorm.DB {
	t.Helper()
	ctx := t.Context()
	logger := slog.New(slog.DiscardHandler)
	pg, err := devenv.EnsurePostgres(ctx, devenv.PostgresOptions{DataDir: filepath.Join("..", "..", "..", ".data", "postgres")}, logger)
	if err != nil {
		t.Skipf("no postgres server: %v", err)
	}
	t.Cleanup(func() { _ = pg.Stop() })
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "paygate_rerun_" + hex.EncodeToString(b)
	if err := devenv.CreateDatabase(ctx, pg.AdminURL, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := devenv.DropDatabase(context.Background(), pg.AdminURL, name); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	db, err := models.Open(ctx, pg.DatabaseURL(name), logger)
	if err != nil {
		t.Fatal(err)
	}
	if err := models.ProtectForTest(db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			_ = sqlDB.Close()
		}
	})
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrations.Up(ctx, sqlDB, nil); err != nil {
		t.Fatal(err)
	}
	return db
}

// insertPayouts inserts n payouts of merchant M1 in status, updated an hour
// apart from 2026-11-01.
func insertPayouts(t *testing.T, db *gorm.DB, prefix, status string, n int) []models.Payout {
	t.Helper()
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	ps := make([]models.Payout, n)
	for i := range ps {
		req := fmt.Sprintf("%s-%04d", prefix, i)
		ps[i] = models.Payout{
			ID: "payout/M1/" + req, MerchantID: "M1", AccountID: "A1", RequestID: req,
			TransactionID: fmt.Sprintf("%s%015d", prefix[:4], i), ShortReferenceID: fmt.Sprintf("%s%06d", prefix[:4], i),
			Status: status, PaymentCurrency: "EUR", PaymentAmount: 10000 + int64(i), SourceCurrency: "EUR",
			Request: []byte("{}"), Run: 1, CreatedAt: base, UpdatedAt: base.Add(time.Duration(i) * time.Minute),
		}
		if status == "FAILED" {
			ps[i].FailureType, ps[i].FailureReason = "RAIL_UNAVAILABLE", "The payout rail was not available"
		}
	}
	if err := db.CreateInBatches(ps, 500).Error; err != nil {
		t.Fatal(err)
	}
	return ps
}

// fakeWorkflow stands in for flows.StartPayoutRun and the workflow's first
// record: a start moves the payout to NEW with the next run number.
type fakeWorkflow struct {
	db      *gorm.DB
	mu      sync.Mutex
	started map[string]int
	onStart func(n int)
}

func (f *fakeWorkflow) start(ctx context.Context, p *models.Payout) (string, error) {
	f.mu.Lock()
	f.started[p.ID]++
	n := 0
	for _, c := range f.started {
		n += c
	}
	f.mu.Unlock()
	if err := models.UpdatePayout(ctx, f.db, p.ID, models.PayoutUpdate{Status: "NEW", Run: p.Run + 1}, time.Now()); err != nil {
		return "", err
	}
	if f.onStart != nil {
		f.onStart(n)
	}
	return "run-" + p.ID, nil
}

func statuses(t *testing.T, db *gorm.DB) map[string]int {
	t.Helper()
	var rows []struct {
		Status string
		N      int
	}
	if err := db.Raw("SELECT status, count(*) AS n FROM payouts GROUP BY status").Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out
}

func TestRunStartsFailedAndSkipsTheRest(t *testing.T) {
	db := testDB(t)
	failed := insertPayouts(t, db, "fail", "FAILED", 3)
	done := insertPayouts(t, db, "done", "COMPLETED", 1)
	fw := &fakeWorkflow{db: db, started: map[string]int{}}
	svc := payoutrerun.New(db, fw.start, nil)
	ctx := t.Context()
	sel := models.PayoutSelection{IDs: []string{failed[0].ID, failed[1].RequestID, done[0].ID, "payout/M1/nope"}}

	items, err := svc.Plan(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	dry, err := svc.Run(ctx, payoutrerun.Request{Selection: sel, DryRun: true, By: "alice", Source: "cli"}, items, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(fw.started) != 0 || statuses(t, db)["FAILED"] != 3 {
		t.Fatalf("dry-run started %v, statuses %v; want nothing changed", fw.started, statuses(t, db))
	}
	if r := dry.Rerun; !r.DryRun || r.Status != models.RerunFinished || r.Total != 4 || r.Planned != 2 || r.Skipped != 2 {
		t.Errorf("dry-run record = %+v, want finished, 4 total, 2 planned, 2 skipped", r)
	}

	// Recorded is told the batch's id before any payout starts.
	recorded, startedBefore := int64(0), -1
	res, err := svc.Run(ctx, payoutrerun.Request{Selection: sel, By: "alice", Source: "cli",
		Recorded: func(id int64) { recorded, startedBefore = id, len(fw.started) }}, items, nil)
	if err != nil {
		t.Fatal(err)
	}
	if recorded != res.Rerun.ID || startedBefore != 0 {
		t.Errorf("Recorded told %d with %d payouts started, want %d before any", recorded, startedBefore, res.Rerun.ID)
	}
	if r := res.Rerun; r.Status != models.RerunFinished || r.Started != 2 || r.Skipped != 2 || r.Errors != 0 {
		t.Errorf("record = %+v, want finished, 2 started, 2 skipped", r)
	}
	if fw.started[failed[0].ID] != 1 || fw.started[failed[1].ID] != 1 || len(fw.started) != 2 {
		t.Errorf("started %v, want the two failed payouts once each", fw.started)
	}
	_, rows, err := models.FindPayoutRerun(ctx, db, res.Rerun.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{failed[0].ID: "started", failed[1].ID: "started", done[0].ID: "skipped", "payout/M1/nope": "skipped"}
	for _, row := range rows {
		if want[row.PayoutID] != row.Outcome {
			t.Errorf("row %s = %s (%s), want %s", row.PayoutID, row.Outcome, row.Reason, want[row.PayoutID])
		}
	}

	// The same selection again: the payouts now in flight are skipped.
	items, err = svc.Plan(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Rerun {
			t.Errorf("%s planned again; want skipped (%q)", it.PayoutID, it.Reason)
		}
	}
	list, err := svc.List(ctx, 10)
	if err != nil || len(list) != 2 || list[0].ID != res.Rerun.ID || list[1].RequestedBy != "alice" {
		t.Errorf("List = %+v, %v; want the two batches, newest first", list, err)
	}
}

// TestShowListsTheBatchItems: Show answers a batch with one item per payout
// it took, each with what happened to it (the run id of a started re-run,
// the reason of a skip, the error of a failed start), and ErrRerunNotFound
// for a batch that does not exist.
func TestShowListsTheBatchItems(t *testing.T) {
	db := testDB(t)
	failed := insertPayouts(t, db, "fail", "FAILED", 2)
	done := insertPayouts(t, db, "done", "COMPLETED", 1)
	fw := &fakeWorkflow{db: db, started: map[string]int{}}
	errRefused := errors.New("temporal refused the start")
	start := func(ctx context.Context, p *models.Payout) (string, error) {
		if p.ID == failed[1].ID {
			return "", errRefused
		}
		return fw.start(ctx, p)
	}
	svc := payoutrerun.New(db, start, nil)
	ctx := t.Context()
	sel := models.PayoutSelection{IDs: []string{failed[0].ID, failed[1].ID, done[0].ID, "payout/M1/nope"}}
	items, err := svc.Plan(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Run(ctx, payoutrerun.Request{Selection: sel, By: "dora", Source: "cli"}, items, nil)
	if err != nil {
		t.Fatal(err)
	}

	got, err := svc.Show(ctx, res.Rerun.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r := got.Rerun; r.ID != res.Rerun.ID || r.RequestedBy != "dora" || r.Started != 1 || r.Skipped != 2 || r.Errors != 1 {
		t.Errorf("batch = %+v, want dora's with 1 started, 2 skipped, 1 error", r)
	}
	type row struct{ payout, merchant, failure, outcome, reason, runID string }
	want := []row{
		{failed[0].ID, "M1", "RAIL_UNAVAILABLE", models.ItemStarted, "", "run-" + failed[0].ID},
		{failed[1].ID, "M1", "RAIL_UNAVAILABLE", models.ItemError, errRefused.Error(), ""},
		{done[0].ID, "M1", "", models.ItemSkipped, payoutrerun.ReasonCompleted, ""},
		{"payout/M1/nope", "", "", models.ItemSkipped, payoutrerun.ReasonNotFound, ""},
	}
	if len(got.Items) != len(want) {
		t.Fatalf("items = %+v, want %d", got.Items, len(want))
	}
	byID := map[string]models.PayoutRerunItem{}
	for _, it := range got.Items {
		byID[it.PayoutID] = it
	}
	for _, w := range want {
		it := byID[w.payout]
		g := row{it.PayoutID, it.MerchantID, it.FailureType, it.Outcome, it.Reason, it.RunID}
		if g != w {
			t.Errorf("item %s = %+v, want %+v", w.payout, g, w)
		}
	}
	if it := byID[failed[0].ID]; it.Run != 2 || it.PaymentAmount != failed[0].PaymentAmount || it.PaymentCurrency != "EUR" {
		t.Errorf("started item = %+v, want run 2 of %d EUR", it, failed[0].PaymentAmount)
	}

	if _, err := svc.Show(ctx, res.Rerun.ID+100); !errors.Is(err, models.ErrRerunNotFound) {
		t.Errorf("Show(missing) = %v, want ErrRerunNotFound", err)
	}
}

// TestInterruptedBatchResumes cancels a batch after K starts, then resumes
// it: every failed payout is started exactly once in all.
func TestInterruptedBatchResumes(t *testing.T) {
	const n, k = 20, 7
	db := testDB(t)
	insertPayouts(t, db, "fail", "FAILED", n)
	ctx, cancel := context.WithCancel(t.Context())
	fw := &fakeWorkflow{db: db, started: map[string]int{}, onStart: func(c int) {
		if c == k {
			cancel()
		}
	}}
	svc := payoutrerun.New(db, fw.start, nil)
	svc.Concurrency = 1
	sel := models.PayoutSelection{MerchantID: "M1", FailureType: "RAIL_UNAVAILABLE"}
	items, err := svc.Plan(ctx, sel)
	if err != nil || len(items) != n {
		t.Fatalf("plan = %d items, %v; want %d", len(items), err, n)
	}
	first, err := svc.Run(ctx, payoutrerun.Request{Selection: sel, By: "bob", Source: "cli"}, items, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want cancelled", err)
	}
	if first.Rerun.Status != models.RerunRunning || first.Rerun.Started != k {
		t.Fatalf("interrupted record = %+v, want running with %d started", first.Rerun, k)
	}

	rerun, left, err := svc.Resume(t.Context(), first.Rerun.ID)
	if err != nil {
		t.Fatal(err)
	}
	var progress []int
	res, err := svc.Run(t.Context(), payoutrerun.Request{Resume: rerun.ID}, left, func(done, total int) { progress = append(progress, done) })
	if err != nil {
		t.Fatal(err)
	}
	if len(progress) != n-k {
		t.Errorf("resume did %d starts, want %d", len(progress), n-k)
	}
	for id, c := range fw.started {
		if c != 1 {
			t.Errorf("%s started %d times, want once", id, c)
		}
	}
	if len(fw.started) != n || statuses(t, db)["NEW"] != n {
		t.Errorf("started %d, statuses %v; want all %d", len(fw.started), statuses(t, db), n)
	}
	if r := res.Rerun; r.ID != first.Rerun.ID || r.Status != models.RerunFinished || r.Started != n || r.Total != n {
		t.Errorf("resumed record = %+v, want the same batch finished with %d started", r, n)
	}
}

// TestThousandFailedPlannedQuickly: 1,000 failed payouts are selected by
// filter, planned and recorded as a dry-run in well under the time a
// finance user waits.
func TestThousandFailedPlannedQuickly(t *testing.T) {
	db := testDB(t)
	insertPayouts(t, db, "fail", "FAILED", 1000)
	svc := payoutrerun.New(db, func(context.Context, *models.Payout) (string, error) {
		t.Error("dry-run started a payout")
		return "", nil
	}, nil)
	start := time.Now()
	sel := models.PayoutSelection{From: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)}
	items, err := svc.Plan(t.Context(), sel)
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Run(t.Context(), payoutrerun.Request{Selection: sel, DryRun: true, By: "carol", Source: "api"}, items, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rerun.Planned != 1000 || res.Rerun.Total != 1000 {
		t.Errorf("record = %+v, want 1000 planned", res.Rerun)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("plan and dry-run of 1000 took %s", d)
	}
}

// TestRerunOfAStalePlanSkipsWhatChanged: a plan can be minutes old (the
// CLI waits for its "y"). A payout re-run elsewhere since then and failed
// again would start with that run's number, whose reservation is already
// released, and could pay with nothing held; it is skipped with the reason,
// for finance to plan again, and the unchanged ones start.
func TestRerunOfAStalePlanSkipsWhatChanged(t *testing.T) {
	tests := []struct {
		name   string
		change func(ctx context.Context, db *gorm.DB, p models.Payout) error
		want   string // the changed payout's outcome
		reason string
	}{
		{"re-run elsewhere and failed again", func(ctx context.Context, db *gorm.DB, p models.Payout) error {
			return models.UpdatePayout(ctx, db, p.ID, models.PayoutUpdate{Status: "FAILED", Run: p.Run + 1}, time.Now())
		}, models.ItemSkipped, "changed since the plan: now FAILED at run 2, planned FAILED at run 1"},
		// Joined by the start, as a resumed batch joins the run it started
		// before it was cut short.
		{"re-run elsewhere and still running", func(ctx context.Context, db *gorm.DB, p models.Payout) error {
			return models.UpdatePayout(ctx, db, p.ID, models.PayoutUpdate{Status: "SUBMITTED", Run: p.Run + 1}, time.Now())
		}, models.ItemStarted, ""},
		{"unchanged", func(context.Context, *gorm.DB, models.Payout) error { return nil }, models.ItemStarted, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := testDB(t)
			failed := insertPayouts(t, db, "fail", "FAILED", 2)
			fw := &fakeWorkflow{db: db, started: map[string]int{}}
			svc := payoutrerun.New(db, fw.start, nil)
			ctx := t.Context()
			sel := models.PayoutSelection{IDs: []string{failed[0].ID, failed[1].ID}}
			items, err := svc.Plan(ctx, sel)
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.change(ctx, db, failed[0]); err != nil {
				t.Fatal(err)
			}
			res, err := svc.Run(ctx, payoutrerun.Request{Selection: sel, By: "alice", Source: "cli"}, items, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]models.PayoutRerunItem{}
			for _, row := range res.Items {
				got[row.PayoutID] = row
			}
			if r := got[failed[0].ID]; r.Outcome != tc.want || r.Reason != tc.reason {
				t.Errorf("the changed payout: %s (%q), want %s (%q)", r.Outcome, r.Reason, tc.want, tc.reason)
			}
			if got[failed[1].ID].Outcome != models.ItemStarted || fw.started[failed[1].ID] != 1 {
				t.Errorf("the unchanged payout: %+v, started %d times; want started once", got[failed[1].ID], fw.started[failed[1].ID])
			}
			if want := map[bool]int{true: 1, false: 0}[tc.want == models.ItemStarted]; fw.started[failed[0].ID] != want {
				t.Errorf("the changed payout started %d times, want %d", fw.started[failed[0].ID], want)
			}
			if r := res.Rerun; r.Status != models.RerunFinished {
				t.Errorf("batch %+v, want finished", r)
			}
		})
	}
}

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
	"github.com/paygate/paygate/models"
)

// TestChargebackOnAnotherDaysReport: an acquirer that lists a chargeback
// again on a later report (or on an earlier day's report run late) has not
// taken the money twice. The day reconciled first keeps the line matched;
// the other's is a duplicate for finance, and each day run again says the
// same. Before, both were matched and each posted the cash under its own
// line's reference.
func TestChargebackOnAnotherDaysReport(t *testing.T) {
	db := testDB(t)
	ctx := t.Context()
	const tx = "1379868670095785951"
	simBankPaid(t, db, tx, "ch_cb", time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC))
	debit := recon.Line{Reference: "dp_9", OrderKey: tx, Type: recon.Chargeback, Gross: 1000, Fee: 15, Net: -1015, Currency: proofCurrency}
	reinstated := recon.Line{Reference: "dp_9", OrderKey: tx, Type: recon.Chargeback, Gross: -1000, Net: 1000, Currency: proofCurrency}
	numbered := func(no int, l recon.Line) recon.Line {
		l.No = no
		return l
	}
	reports := map[string][]recon.Line{
		"2026-11-19": {numbered(1, debit)},
		"2026-11-20": {numbered(3, debit)},
		"2026-11-21": {numbered(1, debit), numbered(2, reinstated)},
	}
	report := &switchedReport{}
	svc := simBankOver(db, report)
	type seen struct{ day, key, class, status, detail string }
	items := func() []seen {
		t.Helper()
		var out []seen
		for _, it := range simBankItems(t, db) {
			out = append(out, seen{it.Day.Format(time.DateOnly), it.ItemKey, it.Class, it.Status, it.Detail})
		}
		return out
	}
	const mine = "the acquirer's own line, of an order here"
	want := []seen{
		{"2026-11-19", "line/1", "duplicate", models.ReconOpen, "already settled by line 3 of 2026-11-20"},
		{"2026-11-20", "line/3", "matched", models.ReconNone, mine},
		{"2026-11-21", "line/1", "duplicate", models.ReconOpen, "already settled by line 3 of 2026-11-20"},
		{"2026-11-21", "line/2", "matched", models.ReconNone, mine},
	}
	// 11-20 first, then the day after, then the day before run late; then
	// each again, in another order.
	for _, d := range []string{"2026-11-20", "2026-11-21", "2026-11-19", "2026-11-21", "2026-11-19", "2026-11-20"} {
		day, _ := time.Parse(time.DateOnly, d)
		report.lines = reports[d]
		if _, err := svc.Reconcile(ctx, "sim-bank", day); err != nil {
			t.Fatalf("reconcile %s: %v", d, err)
		}
	}
	got := items()
	if len(got) != len(want) {
		t.Fatalf("items = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("item %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestReconcileWaitsForTheConnectorsLock: a day is reconciled while no other
// day of its connector is (models.LockReconConnector), since each reads
// what its neighbours matched. A second reconciliation waits for the first
// and then runs.
func TestReconcileWaitsForTheConnectorsLock(t *testing.T) {
	db := testDB(t)
	ctx := t.Context()
	report := &switchedReport{}
	svc := simBankOver(db, report)
	unlock, err := models.LockReconConnector(ctx, db, "sim-bank")
	if err != nil {
		t.Fatal(err)
	}
	// Another connector's lock is its own.
	other, err := models.LockReconConnector(ctx, db, "stripe")
	if err != nil {
		t.Fatal(err)
	}
	other()
	done := make(chan error, 1)
	go func() {
		_, err := svc.Reconcile(ctx, "sim-bank", time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC))
		done <- err
	}()
	waitForLockWaiter(t, db, done, "reconciled")
	var runs int64
	if err := db.Model(&models.ReconRun{}).Count(&runs).Error; err != nil || runs != 0 {
		t.Fatalf("runs saved while waiting = %d (%v), want 0", runs, err)
	}
	unlock()
	if err := <-done; err != nil {
		t.Fatalf("reconcile after the lock was released: %v", err)
	}
	if err := db.Model(&models.ReconRun{}).Count(&runs).Error; err != nil || runs != 1 {
		t.Fatalf("runs = %d (%v), want 1", runs, err)
	}
	// The reconciliation let the lock go.
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	again, err := models.LockReconConnector(lctx, db, "sim-bank")
	if err != nil {
		t.Fatalf("the lock after the reconciliation: %v", err)
	}
	again()
}

// TestAcquirersOwnFeeIsBooked: a line of the acquirer's own fee that names
// no payment (Stripe's stripe_fee, tax_fee) is the gateway's cost: matched
// and posted to the connector's house account as fee expense, where it was
// an exception finance wrote off by hand, one by one.
func TestAcquirersOwnFeeIsBooked(t *testing.T) {
	db := testDB(t)
	ctx := t.Context()
	report := &switchedReport{lines: []recon.Line{{No: 1, Reference: "txn_4", Type: recon.FeeAdjustment, Net: -200, Currency: proofCurrency}}}
	svc := simBankOver(db, report)
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	sum, err := svc.Reconcile(ctx, "sim-bank", day)
	if err != nil || sum.Exceptions != 0 {
		t.Fatalf("reconciled %+v, %v; want no exception", sum, err)
	}
	if posted, err := svc.Post(ctx, "sim-bank", day, nil); err != nil || posted.Posted != 1 || posted.Unposted != 0 {
		t.Fatalf("posted %+v, %v; want the fee", posted, err)
	}
	its := simBankItems(t, db)
	if len(its) != 1 || its[0].Class != string(recon.Matched) || its[0].Status != models.ReconNone ||
		its[0].Posted != "fee_adjustment/sim-bank/2026-11-20/1" {
		t.Errorf("items = %+v, want the fee matched and posted", its)
	}
	var expense models.LedgerAccount
	if err := db.Where("merchant_id = ? AND account_id = ? AND currency = ? AND kind = ?", ledger.HouseMerchant, "sim-bank", proofCurrency,
		models.LedgerFeeExpense).Take(&expense).Error; err != nil {
		t.Fatal(err)
	}
	if expense.Balance != -200 {
		t.Errorf("the house's fee expense = %d, want -200", expense.Balance)
	}
	if v, err := ledger.New(db).Check(ctx); err != nil || len(v) != 0 {
		t.Errorf("ledger check: %v, %v", v, err)
	}
}

// waitForLockWaiter returns once a session of the test's database waits for
// an advisory lock; done reporting first (what should wait, did not) fails
// the test.
func waitForLockWaiter(t *testing.T, db *gorm.DB, done <-chan error, what string) {
	t.Helper()
	for {
		var waiting int64
		if err := db.Raw(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
AND wait_event_type = 'Lock' AND wait_event = 'advisory'`).Scan(&waiting).Error; err != nil {
			t.Fatal(err)
		}
		if waiting == 1 {
			return
		}
		select {
		case err := <-done:
			t.Fatalf("%s while another held the connector's lock (err %v)", what, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// simBankExceptionLocked reconciles a sim-bank day whose one line matches
// no order and then takes sim-bank's reconciliation lock, as a day being
// reconciled would: the service, its one open exception and the lock's
// release.
func simBankExceptionLocked(t *testing.T, db *gorm.DB) (*reconcile.Service, []models.ReconItem, func()) {
	t.Helper()
	report := &switchedReport{lines: []recon.Line{{No: 1, Reference: "ch_x", OrderKey: "nobody", Type: recon.Capture, Gross: 100, Net: 100,
		Currency: proofCurrency}}}
	svc := simBankOver(db, report)
	if _, err := svc.Reconcile(t.Context(), "sim-bank", time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	its := simBankItems(t, db)
	if len(its) != 1 || its[0].Status != models.ReconOpen {
		t.Fatalf("items = %+v, want one open exception", its)
	}
	unlock, err := models.LockReconConnector(t.Context(), db, "sim-bank")
	if err != nil {
		t.Fatal(err)
	}
	return svc, its, unlock
}

// TestActWaitsForTheConnectorsLock: finance's action on an exception waits
// while a day of its connector is being reconciled, which may settle the
// item by a line of a day beside (a write-off then would settle it twice),
// and reads the item as the reconciliation left it.
func TestActWaitsForTheConnectorsLock(t *testing.T) {
	db := testDB(t)
	ctx := t.Context()
	svc, its, unlock := simBankExceptionLocked(t, db)
	done := make(chan error, 1)
	go func() {
		_, err := svc.Act(ctx, its[0].ID, recon.Resolve, "the acquirer's test charge", "finance@example.com")
		done <- err
	}()
	waitForLockWaiter(t, db, done, "acted")
	if its := simBankItems(t, db); its[0].Status != models.ReconOpen {
		t.Fatalf("the item while the action waits = %s, want open", its[0].Status)
	}
	unlock()
	if err := <-done; err != nil {
		t.Fatalf("act after the lock was released: %v", err)
	}
	if its := simBankItems(t, db); its[0].Status != models.ReconResolved {
		t.Errorf("the item after the action = %s, want resolved", its[0].Status)
	}
}

// TestActGivesUpWhileTheConnectorIsBusy: an action that waits longer than
// ActWait for its connector's reconciliation is not taken, says so
// (ErrConnectorBusy), leaves the item as it was and the lock with its
// holder; once the reconciliation ends the same action is taken.
func TestActGivesUpWhileTheConnectorIsBusy(t *testing.T) {
	db := testDB(t)
	ctx := t.Context()
	svc, its, unlock := simBankExceptionLocked(t, db)
	svc.ActWait = 200 * time.Millisecond
	_, err := svc.Act(ctx, its[0].ID, recon.Resolve, "the acquirer's test charge", "finance@example.com")
	svc.ActWait = 0
	if !errors.Is(err, reconcile.ErrConnectorBusy) || !strings.Contains(err.Error(), "sim-bank") {
		t.Fatalf("act while the connector is reconciled: %v, want ErrConnectorBusy naming sim-bank", err)
	}
	if its := simBankItems(t, db); its[0].Status != models.ReconOpen {
		t.Fatalf("the item after the action gave up = %s, want open", its[0].Status)
	}
	// The action that gave up holds nothing and waits no more: the one
	// advisory lock is the holder's.
	var locks, waiting int64
	if err := db.Raw(`SELECT count(*) FILTER (WHERE granted), count(*) FILTER (WHERE NOT granted) FROM pg_locks
WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Row().Scan(&locks, &waiting); err != nil {
		t.Fatal(err)
	}
	if locks != 1 || waiting != 0 {
		t.Fatalf("advisory locks after the action gave up: %d granted, %d waiting; want the holder's alone", locks, waiting)
	}
	// The holder still has the lock: another taker is told so.
	if again, err := models.LockReconConnectorWithin(ctx, db, "sim-bank", 50*time.Millisecond); !errors.Is(err, models.ErrReconLockBusy) {
		if err == nil {
			again()
		}
		t.Fatalf("take the held lock: %v, want ErrReconLockBusy", err)
	}
	unlock()
	if _, err := svc.Act(ctx, its[0].ID, recon.Resolve, "the acquirer's test charge", "finance@example.com"); err != nil {
		t.Fatalf("act after the reconciliation ended: %v", err)
	}
	if its := simBankItems(t, db); its[0].Status != models.ReconResolved {
		t.Errorf("the item after the action = %s, want resolved", its[0].Status)
	}
}

package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/dev/testdb"

	"go.temporal.io/sdk/testsuite"
	"gorm.io/gorm"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/adapters/connectors/simacquirer"
	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/reconcile"
	sim "github.com/paygate/paygate/internal/dev/simulator"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/recon"
	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// testDB returns a migrated database of its own, dropped when the test
// ends.
func testDB(t testing.TB) *gorm.DB { return testdb.Open(t, "paygate_recon_") }

const (
	proofMerchant = "M-RECON"
	proofAccount  = "A-RECON"
	proofCurrency = "EUR"
	cardApproved  = "4242424242424242"
)

// seed is what an order's index seeds, about 1% each: a discrepancy at
// the acquirer (by the capture amount's last two digits, the simulator's
// seeds), or a refund before the settlement.
type seed int

const (
	seedNone seed = iota
	seedNever
	seedCentShort
	seedTwice
	seedFeeAbove
	seedUnknown
	seedRefund
)

func seedOf(i int) seed {
	switch i % 100 {
	case 11:
		return seedNever
	case 22:
		return seedCentShort
	case 33:
		return seedTwice
	case 44:
		return seedFeeAbove
	case 55:
		return seedUnknown
	case 66:
		return seedRefund
	}
	return seedNone
}

// amountOf is order i's amount: varied, its last two digits the seed's
// (91 to 95) or, for the others, never one of those.
func amountOf(i int) int64 {
	a := 1000 + int64(i*3701%90000)
	cents := map[seed]int64{seedNever: 91, seedCentShort: 92, seedTwice: 93, seedFeeAbove: 94, seedUnknown: 95}
	if c, ok := cents[seedOf(i)]; ok {
		return a - a%100 + c
	}
	if c := a % 100; c >= 91 && c <= 95 {
		a -= 10
	}
	return a
}

// proofOrder is one order of the proof as the test made it.
type proofOrder struct {
	tx, charge string
	amount     int64
	refund     int64
	seed       seed
	day        int
}

// TestReconciliationProof: 10,000 orders over three simulated days at the
// simulated acquirer, each kind of discrepancy seeded at about 1% and 1%
// refunded before the settlement. Reconciling the three settlement days
// through the ReconcileDay workflow finds every seeded discrepancy with
// its class and flags nothing else; re-running a day changes nothing; the
// ledger's invariants hold after every step and its balances are what the
// seeds say to the cent; finance's write-offs clear what the acquirer never
// paid, audited.
func TestReconciliationProof(t *testing.T) {
	const orders = 10000
	if testing.Short() {
		t.Skip("the proof makes 10,000 charges")
	}
	db := testDB(t)
	ctx := t.Context()
	if err := db.Create(&models.Merchant{ID: proofMerchant, Name: "Recon proof"}).Error; err != nil {
		t.Fatal(err)
	}
	var clock atomic.Pointer[time.Time]
	start := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	clock.Store(&start)
	srv := sim.NewServer(sim.Options{Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return *clock.Load() }})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	conn, err := simacquirer.New(simacquirer.Config{BaseURL: ts.URL, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	l := ledger.New(db)
	terms := reconcile.Terms{Days: 1, Fees: recon.FeeSchedule{Fixed: 30, BasisPoints: 290}}
	svc := &reconcile.Service{DB: db, Ledger: l, Connectors: map[string]reconcile.Connector{simacquirer.Name: {Source: conn, Terms: terms}},
		Now: func() time.Time { return *clock.Load() }}

	all := make([]proofOrder, orders)
	for d := range 3 {
		at := start.AddDate(0, 0, d)
		clock.Store(&at)
		from, to := d*orders/3, (d+1)*orders/3
		if d == 2 {
			to = orders
		}
		makeOrders(t, ctx, db, conn, l, all, from, to, d, at)
		assertLedger(t, l, fmt.Sprintf("after the orders of day %d", d+1))
	}

	for d := 1; d <= 3; d++ {
		day := start.AddDate(0, 0, d)
		at := day.Add(6 * time.Hour)
		clock.Store(&at)
		first := runDay(t, db, svc, day)
		assertLedger(t, l, "after settlement day "+day.Format(time.DateOnly))
		entries := countEntries(t, db)
		again := runDay(t, db, svc, day)
		if fmt.Sprint(first.Summary) != fmt.Sprint(again.Summary) || again.Posted != first.Posted {
			t.Errorf("day %s re-run: %+v, first %+v", day.Format(time.DateOnly), again, first)
		}
		if n := countEntries(t, db); n != entries {
			t.Errorf("day %s re-run posted %d entries more", day.Format(time.DateOnly), n-entries)
		}
	}

	// Every seeded discrepancy is found with its class, nothing else.
	want := map[string]string{} // order key and class, by "class/key"
	for _, o := range all {
		switch o.seed {
		case seedNever:
			want["missing_at_acquirer/"+o.tx] = o.tx
		case seedCentShort:
			want["amount_mismatch/"+o.tx] = o.tx
		case seedTwice:
			want["duplicate/"+o.tx] = o.tx
		case seedFeeAbove:
			want["fee_outside_schedule/"+o.tx] = o.tx
		case seedUnknown:
			want["missing_here/unknown-"+o.tx] = o.tx
		}
	}
	exc, err := models.ReconExceptions(ctx, db, models.ReconExceptionFilter{Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]models.ReconItem{}
	for _, it := range exc {
		got[it.Class+"/"+it.OrderKey] = it
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			t.Errorf("seeded %s not found", k)
		}
	}
	for k, it := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("flagged %s (%s), not seeded", k, it.Detail)
		}
	}
	if len(exc) != len(want) {
		t.Errorf("%d exceptions, want %d", len(exc), len(want))
	}

	// The ledger to the cent: pending (and the receivable) hold the
	// captures the acquirer never paid or paid short; the deposit the
	// rest, less the acquirer's fee (passed through) and the refunds.
	var pending, available, fees int64
	for _, o := range all {
		fee := terms.Fees.Fee(o.amount)
		switch o.seed {
		case seedNever, seedCentShort:
			pending += o.amount
		case seedFeeAbove:
			available += o.amount - fee - 50
			fees += fee + 50
		default:
			available += o.amount - o.refund - fee
			fees += fee
		}
	}
	b, err := l.Balance(ctx, proofMerchant, proofAccount, proofCurrency)
	if err != nil {
		t.Fatal(err)
	}
	if b.Pending != pending || b.Available != available {
		t.Errorf("balance = %+v, want pending %d, available %d", b, pending, available)
	}
	kinds := ledgerKinds(t, db)
	if kinds[models.LedgerAcquirerClearing] != -pending || kinds[models.LedgerFeeExpense] != -fees || kinds[models.LedgerFeeIncome] != fees {
		t.Errorf("clearing %d, fee expense %d, fee income %d; want %d, %d, %d", kinds[models.LedgerAcquirerClearing],
			kinds[models.LedgerFeeExpense], kinds[models.LedgerFeeIncome], -pending, -fees, fees)
	}

	// What finance may not do: write off a fee the ledger already holds as
	// taken, or act on what needs nobody.
	for _, it := range exc {
		if it.Class == string(recon.FeeOutside) {
			if _, err := svc.Act(ctx, it.ID, recon.WriteOff, "no", "finance@example.com"); !errors.Is(err, reconcile.ErrNotAllowed) {
				t.Errorf("write off a fee outside the schedule: %v, want ErrNotAllowed", err)
			}
			break
		}
	}
	var matched models.ReconItem
	if err := db.Where("class = ?", recon.Matched).Take(&matched).Error; err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Act(ctx, matched.ID, recon.Resolve, "no", "finance@example.com"); !errors.Is(err, reconcile.ErrNotAllowed) {
		t.Errorf("resolve a matched item: %v, want ErrNotAllowed", err)
	}

	// Finance writes off what the acquirer never paid or paid short,
	// claims the duplicates back and resolves the rest with a note.
	var writtenOff int64
	for _, it := range exc {
		action := recon.Resolve
		switch recon.Class(it.Class) {
		case recon.MissingAtAcquirer:
			action, writtenOff = recon.WriteOff, writtenOff+it.Gross
		case recon.AmountMismatch:
			action, writtenOff = recon.WriteOff, writtenOff+1
		case recon.Duplicate:
			action = recon.Claim
		}
		done, err := svc.Act(ctx, it.ID, action, "proof", "finance@example.com")
		if err != nil {
			t.Fatalf("%s item %d: %v", action, it.ID, err)
		}
		if done.Status != string(action) || action == recon.WriteOff && done.Posted == "" {
			t.Errorf("%s item %d = status %s posted %q", action, it.ID, done.Status, done.Posted)
		}
	}
	assertLedger(t, l, "after the write-offs")
	if b, err := l.Balance(ctx, proofMerchant, proofAccount, proofCurrency); err != nil || b.Pending != 0 {
		t.Errorf("balance after the write-offs = %+v, %v; want nothing pending", b, err)
	}
	if w := ledgerKinds(t, db)[models.LedgerWriteOff]; w != -writtenOff {
		t.Errorf("write-off %d, want %d", w, -writtenOff)
	}
	var audited int64
	if err := db.Model(&models.ReconAction{}).Where("actor = ? AND note = ?", "finance@example.com", "proof").Count(&audited).Error; err != nil {
		t.Fatal(err)
	}
	if audited != int64(len(exc)) {
		t.Errorf("%d actions audited, want %d", audited, len(exc))
	}
	if open, err := models.ReconExceptions(ctx, db, models.ReconExceptionFilter{}); err != nil || len(open) != 0 {
		t.Errorf("open exceptions after finance acted: %d, %v", len(open), err)
	}
	var closed models.ReconItem
	if err := db.Where("status = ?", models.ReconWrittenOff).Take(&closed).Error; err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Act(ctx, closed.ID, recon.Resolve, "again", "finance@example.com"); !errors.Is(err, models.ErrReconItemClosed) {
		t.Errorf("act on a closed exception: %v, want ErrReconItemClosed", err)
	}
}

// makeOrders charges orders from to to (a sale each) at the simulator on
// day d, records them as the order workflow does (the order, its move to
// paid, the ledger's credit) and refunds the seeded ones in part.
func makeOrders(t *testing.T, ctx context.Context, db *gorm.DB, conn *simacquirer.Connector, l *ledger.Ledger,
	all []proofOrder, from, to, d int, at time.Time) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, to-from)
	next := atomic.Int64{}
	next.Store(int64(from))
	for range 8 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= to {
					return
				}
				o := proofOrder{tx: fmt.Sprintf("90%017d", i), amount: amountOf(i), seed: seedOf(i), day: d}
				ch, err := conn.Charge(ctx, connector.ChargeRequest{IdempotencyKey: "k-" + o.tx, Reference: o.tx,
					Card:   connector.Card{Number: cardApproved, ExpiryMonth: "12", ExpiryYear: "2030", CVV: "123"},
					Amount: o.amount, Currency: proofCurrency, Capture: true})
				if err != nil || !ch.Approved() {
					errs <- fmt.Errorf("order %d: %+v, %v", i, ch, err)
					return
				}
				o.charge = ch.ID
				if err := recordOrder(ctx, db, l, o, at); err != nil {
					errs <- err
					return
				}
				if o.seed == seedRefund {
					o.refund = o.amount / 2
					if err := refundOrder(ctx, db, conn, l, o, at); err != nil {
						errs <- err
						return
					}
				}
				all[i] = o
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func recordOrder(ctx context.Context, db *gorm.DB, l *ledger.Ledger, o proofOrder, at time.Time) error {
	rec := models.Order{TransactionID: o.tx, WorkflowID: "order/" + o.tx, MerchantID: proofMerchant, AccountID: proofAccount,
		OrderNo: "P-" + o.tx, Currency: proofCurrency, Amount: o.amount, CapturedAmount: o.amount, PaymentStatus: status.Paid,
		OrderStatus: status.OrderStatusOf(status.Paid), CaptureMode: models.CaptureAuto, RequestFingerprint: "fp",
		Connector: simacquirer.Name, ConnectorRef: o.charge, CreatedAt: at, UpdatedAt: at}
	if err := db.WithContext(ctx).Create(&rec).Error; err != nil {
		return fmt.Errorf("record order %s: %w", o.tx, err)
	}
	_, err := l.CreditOrder(ctx, ledger.OrderPosting{Reference: "order/" + o.tx + "/paid", OrderKey: o.tx, MerchantID: proofMerchant,
		AccountID: proofAccount, Currency: proofCurrency, Amount: o.amount})
	return err
}

func refundOrder(ctx context.Context, db *gorm.DB, conn *simacquirer.Connector, l *ledger.Ledger, o proofOrder, at time.Time) error {
	key := o.tx + "-01"
	rf, err := conn.Refund(ctx, connector.RefundRequest{ChargeID: o.charge, IdempotencyKey: "r-" + key, Amount: o.refund, Currency: proofCurrency})
	if err != nil {
		return fmt.Errorf("refund %s: %w", key, err)
	}
	r := models.Refund{RefundReferenceID: key, TransactionID: o.tx, MerchantID: proofMerchant, AccountID: proofAccount, OrderNo: "P-" + o.tx,
		Currency: proofCurrency, Status: refund.Succeeded, Amount: o.refund, AcquirerRef: rf.ID, SettledAt: &at, CreatedAt: at, UpdatedAt: at}
	if err := models.SaveRefund(ctx, db, &r); err != nil {
		return err
	}
	_, err = l.DebitRefund(ctx, ledger.OrderPosting{Reference: "refund/" + key, OrderKey: o.tx, MerchantID: proofMerchant,
		AccountID: proofAccount, Currency: proofCurrency, Amount: o.refund})
	return err
}

// runDay reconciles a settlement day through the ReconcileDay workflow,
// with the real activities.
func runDay(t *testing.T, db *gorm.DB, svc *reconcile.Service, day time.Time) workflows.ReconDayResult {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	// The activities do real work on Postgres: a day of 3,300 lines takes seconds.
	env.SetTestTimeout(5 * time.Minute)
	env.RegisterActivity(&activities.ReconActivities{Recon: svc})
	env.ExecuteWorkflow(workflows.ReconcileDay, activities.ReconDayInput{Connector: simacquirer.Name, Day: day.Format(time.DateOnly)})
	var out workflows.ReconDayResult
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatalf("reconcile %s: %v", day.Format(time.DateOnly), err)
	}
	if out.Error != "" || out.Posted.Unposted != 0 {
		t.Fatalf("reconcile %s: %+v", day.Format(time.DateOnly), out)
	}
	return out
}

func assertLedger(t *testing.T, l *ledger.Ledger, when string) {
	t.Helper()
	v, err := l.Check(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(v) > 0 {
		t.Fatalf("%s the ledger breaks %+v", when, v)
	}
}

func countEntries(t *testing.T, db *gorm.DB) int64 {
	t.Helper()
	var n int64
	if err := db.Model(&models.JournalEntry{}).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// ledgerKinds sums every ledger account by kind.
func ledgerKinds(t *testing.T, db *gorm.DB) map[string]int64 {
	t.Helper()
	var rows []struct {
		Kind string
		Sum  int64
	}
	if err := db.Raw("SELECT kind, sum(balance) AS sum FROM ledger_accounts GROUP BY kind").Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, r := range rows {
		out[r.Kind] = r.Sum
	}
	return out
}

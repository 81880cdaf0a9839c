package reconcile_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/reconcile"
	"github.com/paygate/paygate/internal/domain/recon"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

// reportSource is an acquirer's report held in memory: the scale run
// measures the gateway's side, not an HTTP transfer of a big report.
type reportSource struct{ lines []recon.Line }

func (r reportSource) Settlement(context.Context, time.Time) ([]recon.Line, error) {
	return r.lines, nil
}

// scaleDay makes n captures of one day, recorded and credited to the
// ledger in bulk, and the acquirer's report that settles them all the
// next day. It returns the service and the settlement day.
func scaleDay(tb testing.TB, db *gorm.DB, n int) (*reconcile.Service, time.Time) {
	tb.Helper()
	ctx := tb.Context()
	day := time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC)
	at := day.Add(9 * time.Hour)
	terms := reconcile.Terms{Days: 1, Fees: recon.FeeSchedule{Fixed: 30, BasisPoints: 290}}
	if err := db.Create(&models.Merchant{ID: proofMerchant, Name: "Scale"}).Error; err != nil {
		tb.Fatal(err)
	}
	orders := make([]models.Order, 0, n)
	lines := make([]recon.Line, 0, n)
	var total int64
	for i := range n {
		tx := fmt.Sprintf("91%017d", i)
		amount := amountOf(i) - amountOf(i)%100 // no seeded discrepancy
		total += amount
		ref := "ch_" + strconv.Itoa(i)
		orders = append(orders, models.Order{TransactionID: tx, WorkflowID: "order/" + tx, MerchantID: proofMerchant,
			AccountID: proofAccount, OrderNo: "S-" + tx, Currency: proofCurrency, Amount: amount, CapturedAmount: amount,
			PaymentStatus: status.Paid, OrderStatus: status.OrderStatusOf(status.Paid), CaptureMode: models.CaptureAuto,
			RequestFingerprint: "fp", Connector: "sim-acquirer", ConnectorRef: ref, CreatedAt: at, UpdatedAt: at})
		fee := terms.Fees.Fee(amount)
		lines = append(lines, recon.Line{No: i + 1, Reference: ref, OrderKey: tx, Type: recon.Capture, Gross: amount, Fee: fee,
			Net: amount - fee, Currency: proofCurrency, Batch: "B1"})
	}
	if err := db.CreateInBatches(&orders, 1000).Error; err != nil {
		tb.Fatal(err)
	}
	// The credits as the orders' postings make them, in bulk: one
	// posting opens the accounts, SQL writes the rest.
	l := ledger.New(db)
	if _, err := l.CreditOrder(ctx, ledger.OrderPosting{Reference: "order/" + orders[0].TransactionID + "/paid",
		OrderKey: orders[0].TransactionID, MerchantID: proofMerchant, AccountID: proofAccount, Currency: proofCurrency,
		Amount: orders[0].CapturedAmount}); err != nil {
		tb.Fatal(err)
	}
	err := db.Exec(`
WITH e AS (
  INSERT INTO journal_entries (kind, reference, merchant_id, account_id, order_key, description, created_at)
  SELECT 'order_paid', 'order/' || o.transaction_id || '/paid', o.merchant_id, o.account_id, o.transaction_id, 'order paid', @at
  FROM orders o WHERE o.merchant_id = @m AND o.transaction_id <> @first
  RETURNING id, order_key
), a AS (
  SELECT max(id) FILTER (WHERE kind = 'pending') AS pending, max(id) FILTER (WHERE kind = 'acquirer_clearing') AS clearing
  FROM ledger_accounts WHERE merchant_id = @m AND account_id = @a AND currency = @c
)
INSERT INTO journal_lines (entry_id, ledger_account_id, currency, amount)
SELECT e.id, x.account, @c, x.amount FROM e JOIN orders o ON o.transaction_id = e.order_key CROSS JOIN a
CROSS JOIN LATERAL (VALUES (a.pending, o.captured_amount), (a.clearing, -o.captured_amount)) AS x(account, amount)`,
		map[string]any{"at": at, "m": proofMerchant, "a": proofAccount, "c": proofCurrency, "first": orders[0].TransactionID}).Error
	if err != nil {
		tb.Fatal(err)
	}
	if err := db.Exec(`UPDATE ledger_accounts SET balance = CASE kind WHEN 'pending' THEN CAST(@t AS bigint) ELSE -CAST(@t AS bigint) END
WHERE merchant_id = @m AND account_id = @a AND currency = @c AND kind IN ('pending','acquirer_clearing')`,
		map[string]any{"t": total, "m": proofMerchant, "a": proofAccount, "c": proofCurrency}).Error; err != nil {
		tb.Fatal(err)
	}
	assertLedgerTB(tb, l)
	return &reconcile.Service{DB: db, Ledger: l, Connectors: map[string]reconcile.Connector{"sim-acquirer": {Source: reportSource{lines}, Terms: terms}}},
		day.AddDate(0, 0, 1)
}

func assertLedgerTB(tb testing.TB, l *ledger.Ledger) {
	tb.Helper()
	v, err := l.Check(tb.Context())
	if err != nil {
		tb.Fatal(err)
	}
	if len(v) > 0 {
		tb.Fatalf("the ledger breaks %+v", v)
	}
}

// reconcileWhole reconciles and posts the day, and checks the outcome:
// every line matched and posted, nothing pending, the ledger sound.
func reconcileWhole(tb testing.TB, svc *reconcile.Service, day time.Time, n int) {
	tb.Helper()
	sum, err := svc.Reconcile(tb.Context(), "sim-acquirer", day)
	if err != nil {
		tb.Fatal(err)
	}
	posted, err := svc.Post(tb.Context(), "sim-acquirer", day, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if sum.Lines != n || sum.Exceptions != 0 || sum.Classes[string(recon.Matched)] != n || posted.Posted != n || posted.Unposted != 0 {
		tb.Fatalf("reconciled %+v, posted %+v; want %d lines matched and posted", sum, posted, n)
	}
	b, err := svc.Ledger.Balance(tb.Context(), proofMerchant, proofAccount, proofCurrency)
	if err != nil || b.Pending != 0 {
		tb.Fatalf("balance %+v, %v; want nothing pending", b, err)
	}
	assertLedgerTB(tb, svc.Ledger)
}

// TestReconcileDayAtScaleSmoke is the scale run's smoke in make test: a
// day of 2,000 captures matched, stored and posted whole.
func TestReconcileDayAtScaleSmoke(t *testing.T) {
	const n = 2000
	svc, day := scaleDay(t, testDB(t), n)
	reconcileWhole(t, svc, day, n)
}

// BenchmarkReconcileDay reconciles one settlement day of
// PAYGATE_RECON_LINES captures (100,000 unless set; make bench-recon):
// fetch, match, store every line and owed settlement, post every line to
// the ledger. It reports the day's seconds, lines a second, and the ratio
// to the pure matching of the same day in the same process.
func BenchmarkReconcileDay(b *testing.B) {
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("PAYGATE_RECON_LINES")); err == nil && v > 0 {
		n = v
	}
	for b.Loop() {
		b.StopTimer()
		db := testDB(b)
		svc, day := scaleDay(b, db, n)
		lines, _ := svc.Connectors["sim-acquirer"].Source.Settlement(b.Context(), day)
		owed, err := models.SettlementsOwed(b.Context(), db, "sim-acquirer", day.AddDate(0, 0, -1), day)
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		recon.Reconcile(day.AddDate(0, 0, 1), lines, owed, recon.Config{SettleWithin: 24 * time.Hour, Fees: svc.Connectors["sim-acquirer"].Terms.Fees})
		engine := time.Since(t0)
		b.StartTimer()
		t1 := time.Now()
		reconcileWhole(b, svc, day, n)
		whole := time.Since(t1)
		b.ReportMetric(whole.Seconds(), "s/day")
		b.ReportMetric(float64(n)/whole.Seconds(), "lines/s")
		b.ReportMetric(whole.Seconds()/engine.Seconds(), "x-engine")
		b.Logf("%d lines: whole day %s (match, store, post, check), pure matching %s", n, whole.Round(time.Millisecond), engine.Round(time.Millisecond))
	}
}

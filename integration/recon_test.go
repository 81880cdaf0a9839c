package integration

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/adapters/connectors/simacquirer"
	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/reconcile"
	"github.com/paygate/paygate/internal/dev/simulator"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/recon"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// TestReconcileOnTemporal: on the real Temporal server and Postgres, a
// settlement day is reconciled by the ReconcileSettlementDay workflow, run
// twice: forty captures of a day long past at an acquirer simulator of this
// test's own (its clock on that day, so no other test's orders are in the
// day), two of them seeded to settle a cent short and never, two charged
// back that day; the first run posts the rest to the ledger but for the
// chargeback whose dispute is not held yet, the second finds the same and
// posts only that chargeback, once its dispute is held; the disputes'
// money at the acquirer is in dispute clearing and the ledger's invariants
// hold. The workflow runs on a task queue
// of its own, with a worker whose only connector is that simulator.
func TestReconcileOnTemporal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day := time.Date(2020, 3, 2, 10, 0, 0, 0, time.UTC)
	const simSecret = "recon-rig"
	sim := simulator.NewServer(simulator.Options{Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return day }, Secret: simSecret})
	simHTTP := httptest.NewServer(sim.Handler())
	t.Cleanup(simHTTP.Close)
	conn, err := simacquirer.New(simacquirer.Config{BaseURL: simHTTP.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	db, l := env.gw.DB, ledger.New(env.gw.DB)
	merchantID := "rc" + randomHex(3)
	if err := db.Create(&models.Merchant{ID: merchantID, Name: "Recon"}).Error; err != nil {
		t.Fatal(err)
	}
	var short, never int64
	// Two captures are charged back that day; the dispute of one is held
	// before the first run, the other's only after it (its callback late).
	disputed := map[int]ledger.DisputeHold{3: {}, 5: {}}
	for i := range 40 {
		amount := int64(2000 + i*100)
		switch i {
		case 7:
			amount += 92 // a cent short
			short = amount
		case 9:
			amount += 91 // never settled
			never = amount
		}
		tx := fmt.Sprintf("77%s%011d", randomHex(3), i)
		ch, err := conn.Charge(ctx, connector.ChargeRequest{IdempotencyKey: "k-" + tx, Reference: tx, Amount: amount, Currency: "USD", Capture: true,
			Card: connector.Card{Number: "4242424242424242", ExpiryMonth: "12", ExpiryYear: "2030", CVV: "123"}})
		if err != nil || !ch.Approved() {
			t.Fatalf("charge %d: %+v, %v", i, ch, err)
		}
		o := models.Order{TransactionID: tx, WorkflowID: "order/" + tx, MerchantID: merchantID, AccountID: merchantID + "01",
			OrderNo: "R-" + tx, Currency: "USD", Amount: amount, CapturedAmount: amount, PaymentStatus: status.Paid,
			OrderStatus: status.OrderStatusOf(status.Paid), CaptureMode: models.CaptureAuto, RequestFingerprint: "fp",
			Connector: simacquirer.Name, ConnectorRef: ch.ID, CreatedAt: day, UpdatedAt: day}
		if err := db.Create(&o).Error; err != nil {
			t.Fatal(err)
		}
		if _, err := l.CreditOrder(ctx, ledger.OrderPosting{Reference: "order/" + tx + "/paid", OrderKey: tx, MerchantID: merchantID,
			AccountID: merchantID + "01", Currency: "USD", Amount: amount}); err != nil {
			t.Fatal(err)
		}
		if _, ok := disputed[i]; ok {
			raiseChargeback(t, simHTTP.URL, simSecret, ch.ID)
			disputed[i] = ledger.DisputeHold{Reference: simacquirer.Name + ":dp-" + tx, OrderKey: tx, MerchantID: merchantID,
				AccountID: merchantID + "01", Currency: "USD", Amount: amount, Fee: 1500}
		}
	}
	// The merchant's deposit covers the first dispute's hold.
	if _, err := l.TopUp(ctx, ledger.TopUp{Reference: "topup-" + merchantID, MerchantID: merchantID, AccountID: merchantID + "01",
		Currency: "USD", Amount: 10000}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.HoldDispute(ctx, disputed[3]); err != nil {
		t.Fatal(err)
	}

	queue := "paygate-recon-" + randomHex(4)
	svc := &reconcile.Service{DB: db, Ledger: l, Connectors: map[string]reconcile.Connector{simacquirer.Name: {Source: conn,
		Terms: reconcile.Terms{Days: 1, Fees: recon.FeeSchedule{Fixed: 30, BasisPoints: 290}}}}}
	w := sdkworker.New(env.temporal, queue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(workflows.ReconcileDay, workflow.RegisterOptions{Name: workflows.ReconcileDayWorkflowType})
	w.RegisterActivity(&activities.ReconActivities{Recon: svc})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	settle := "2020-03-03"
	run := func() workflows.ReconDayResult {
		t.Helper()
		wr, err := env.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "recon-it-" + randomHex(4), TaskQueue: queue},
			workflows.ReconcileDayWorkflowType, activities.ReconDayInput{Connector: simacquirer.Name, Day: settle})
		if err != nil {
			t.Fatal(err)
		}
		var res workflows.ReconDayResult
		if err := wr.Get(ctx, &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := run()
	// 38 captures and the 2 chargebacks match.
	want := map[string]int{"matched": 40, "amount_mismatch": 1, "missing_at_acquirer": 1}
	for class, n := range want {
		if first.Summary.Classes[class] != n {
			t.Errorf("classes %v, want %v", first.Summary.Classes, want)
			break
		}
	}
	// The chargeback of the dispute not held yet waits.
	if first.Summary.Lines != 41 || first.Summary.Owed != 40 || first.Summary.Exceptions != 2 || first.Posted.Posted != 39 || first.Posted.Unposted != 1 {
		t.Errorf("first run %+v", first)
	}
	b, err := l.Balance(ctx, merchantID, merchantID+"01", "USD")
	if err != nil || b.Pending != short+never {
		t.Errorf("balance %+v, %v; want pending %d (the short and the never settled)", b, err, short+never)
	}
	if _, err := l.HoldDispute(ctx, disputed[5]); err != nil {
		t.Fatal(err)
	}
	entries := countJournal(t, merchantID)
	again := run()
	if fmt.Sprint(again.Summary) != fmt.Sprint(first.Summary) || again.Posted.Posted != 40 || again.Posted.Unposted != 0 ||
		countJournal(t, merchantID) != entries+1 {
		t.Errorf("the day again: %+v, first %+v", again, first)
	}
	// The acquirer's side of the two disputes: what it took back, owed us
	// until their outcomes.
	var clearing int64
	if err := db.Model(&models.LedgerAccount{}).Where("merchant_id = ? AND kind = ?", merchantID, models.LedgerDisputeClearing).
		Select("coalesce(sum(balance), 0)").Scan(&clearing).Error; err != nil || clearing != -(disputed[3].Amount+disputed[5].Amount) {
		t.Errorf("dispute clearing %d, %v; want %d", clearing, err, -(disputed[3].Amount + disputed[5].Amount))
	}
	if v, err := l.Check(ctx); err != nil || len(v) != 0 {
		t.Errorf("ledger check: %+v, %v", v, err)
	}
}

// raiseChargeback has the acquirer simulator at base (its secret secret)
// charge back the capture chargeID, as its test rig does.
func raiseChargeback(t *testing.T, base, secret, chargeID string) {
	t.Helper()
	body := strings.NewReader(`{"charge_id":"` + chargeID + `","stage":"chargeback"}`)
	req, err := http.NewRequest(http.MethodPost, base+"/_sim/disputes", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("raise a chargeback of %s: HTTP %d", chargeID, resp.StatusCode)
	}
}

// countJournal counts a merchant's ledger entries.
func countJournal(t *testing.T, merchantID string) int64 {
	t.Helper()
	var n int64
	if err := env.gw.DB.Model(&models.JournalEntry{}).Where("merchant_id = ?", merchantID).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

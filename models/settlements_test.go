package models_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/recon"
	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

// TestSettlementsOwed: a connector's captures of a window (an order's move
// to paid) and the refunds of its orders it settled in the window; nothing
// of another connector, of an order not captured, or outside the window.
func TestSettlementsOwed(t *testing.T) {
	db, err := models.Open(t.Context(), migratedDB(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := models.ProtectForTest(db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s, err := db.DB(); err == nil {
			_ = s.Close()
		}
	})
	day := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	in, before := day.Add(10*time.Hour), day.Add(-time.Hour)
	type ord struct {
		tx, connector string
		ps            status.Payment
		captured      int64
		at            time.Time
	}
	for _, o := range []ord{
		{"9000000000000000001", "sim-bank", status.Paid, 1000, in},
		{"9000000000000000002", "sim-acquirer", status.Paid, 2000, in},
		{"9000000000000000003", "sim-bank", status.Authorised, 0, in},
		{"9000000000000000004", "sim-bank", status.Paid, 4000, before},
	} {
		rec := models.Order{TransactionID: o.tx, WorkflowID: "order/s/" + o.tx, MerchantID: "m-s", AccountID: "a-s", OrderNo: "S-" + o.tx,
			Currency: "EUR", Amount: 5000, CapturedAmount: o.captured, PaymentStatus: o.ps, OrderStatus: status.OrderStatusOf(o.ps),
			CaptureMode: models.CaptureAuto, RequestFingerprint: "fp", Connector: o.connector, ConnectorRef: "ch_" + o.tx[16:],
			CreatedAt: o.at, UpdatedAt: o.at}
		if err := db.WithContext(t.Context()).Create(&rec).Error; err != nil {
			t.Fatal(err)
		}
	}
	settled := in.Add(time.Hour)
	for _, r := range []models.Refund{
		{RefundReferenceID: "9000000000000000001-01", Status: refund.Succeeded, Amount: 300, AcquirerRef: "re_1", SettledAt: &settled},
		{RefundReferenceID: "9000000000000000001-02", Status: refund.Pending, Amount: 100, AcquirerRef: "re_2"},
	} {
		r.TransactionID, r.MerchantID, r.AccountID, r.OrderNo, r.Currency = "9000000000000000001", "m-s", "a-s", "S-9000000000000000001", "EUR"
		r.CreatedAt, r.UpdatedAt = in, settled
		if err := models.SaveRefund(t.Context(), db, &r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := models.SettlementsOwed(t.Context(), db, "sim-bank", day, day.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []recon.Expected{
		{OrderKey: "9000000000000000001", Reference: "ch_001", Type: recon.Capture, Amount: 1000, Currency: "EUR", At: in,
			Key: "9000000000000000001", MerchantID: "m-s", AccountID: "a-s"},
		{OrderKey: "9000000000000000001", Reference: "re_1", Type: recon.Refund, Amount: 300, Currency: "EUR", At: settled,
			Key: "9000000000000000001-01", MerchantID: "m-s", AccountID: "a-s"},
	}
	if len(got) != len(want) {
		t.Fatalf("owed %+v, want %+v", got, want)
	}
	for i := range want {
		g := got[i]
		g.At = g.At.UTC()
		if g != want[i] {
			t.Errorf("owed %d = %+v, want %+v", i, g, want[i])
		}
	}
}

package models_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

// TestOrderResultSavesReopen: an outcome written with the order's reopen
// state saves both in one statement, under SaveOrderReopen's condition: a
// row another run holds keeps its state (the outcome is written all the
// same), and a stale write changes nothing.
func TestOrderResultSavesReopen(t *testing.T) {
	db, err := models.Open(t.Context(), migratedDB(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	now := time.Now().UTC()
	tests := []struct {
		name        string
		heldBy      string // a run that took the row's state before; "" for none
		version     int64  // the row's state_version before the write
		wantStatus  status.Payment
		wantTakenBy string // the run TakeOrderReopen is asked for after
		wantInput   string
		noSave      bool // the outcome is written without a state to save
	}{
		{"a free row saves both", "", 0, status.Paid, "run-2", `{"saved": "by run-1"}`, false},
		{"a row held by another run keeps its state", "run-9", 0, status.Paid, "run-9", `{"saved": "before"}`, false},
		{"a stale write changes nothing", "", 5, status.Pending, "run-2", `{"saved": "before"}`, false},
		{"an outcome alone leaves the state as it was", "", 0, status.Paid, "run-2", `{"saved": "before"}`, true},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := "77700000000000000" + string(rune('0'+i)) + "1"
			err := db.Exec(`INSERT INTO orders (transaction_id, workflow_id, merchant_id, account_id, order_no, currency, amount,
				payment_status, order_status, result_code, result_message, capture_mode, request_fingerprint, details, state_version,
				created_at, updated_at) VALUES (?, ?, 'm1', 'a1', ?, 'USD', 100, ?, ?, '', '', 'auto', '', '{}', ?, ?, ?)`,
				id, "order/"+id, "reopen-"+id, status.Pending, status.OrderPending, tc.version, now, now).Error
			if err != nil {
				t.Fatal(err)
			}
			if ok, err := models.SaveOrderReopen(ctx, db, id, "run-0", []byte(`{"saved": "before"}`), now); err != nil || !ok {
				t.Fatalf("save before: %v, %v", ok, err)
			}
			if tc.heldBy != "" {
				if _, err := models.TakeOrderReopen(ctx, db, id, tc.heldBy); err != nil {
					t.Fatal(err)
				}
			}
			result := models.OrderResult{PaymentStatus: status.Paid, OrderStatus: status.OrderSuccess,
				ResultCode: "0000", ResultMessage: "Success", CapturedAmount: 100, Version: 1,
				RiskReasons: []models.RiskReason{{Name: "velocity", Status: "PASS"}},
				Reopen:      &models.ReopenSave{Run: "run-1", Input: []byte(`{"saved": "by run-1"}`), At: now}}
			if tc.noSave {
				result.Reopen = nil
			}
			err = models.UpdateOrderResult(ctx, db, id, result)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				PaymentStatus  status.Payment
				CapturedAmount int64
				RiskReasons    string
			}
			err = db.Raw(`SELECT payment_status, captured_amount, risk_reasons::text AS risk_reasons FROM orders WHERE transaction_id = ?`, id).Scan(&got).Error
			if err != nil {
				t.Fatal(err)
			}
			if got.PaymentStatus != tc.wantStatus {
				t.Errorf("payment_status = %d, want %d", got.PaymentStatus, tc.wantStatus)
			}
			if tc.wantStatus == status.Paid && (got.RiskReasons != `[{"name": "velocity", "status": "PASS"}]` || got.CapturedAmount != 100) {
				t.Errorf("outcome = %+v", got)
			}
			taken, err := models.TakeOrderReopen(ctx, db, id, tc.wantTakenBy)
			if err != nil || string(taken.Input) != tc.wantInput {
				t.Errorf("taken by %s = %q, %v; want %q", tc.wantTakenBy, taken.Input, err, tc.wantInput)
			}
		})
	}
}

package models_test

import (
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

// TestWriteOfATaskRunAgainStands: a worker that died after a write
// committed, before its workflow task completed, leaves the task to be run
// again later, and that run's writes stand, whatever versions the first
// run wrote: the history keeps only the second run's results. A retry
// within one task, and a write of an earlier task (a zombie worker's),
// change nothing.
func TestWriteOfATaskRunAgainStands(t *testing.T) {
	db, err := models.Open(t.Context(), migratedDB(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	now := time.Now().UTC()
	// The first run of a task that started at 20 wrote version 3 and said
	// the payment failed.
	const firstVersion, firstTask = 3, 20
	tests := []struct {
		name          string
		version, task int64
		wantWritten   bool
	}{
		{"the task run again, later", firstVersion, 25, true},
		{"the task run again, its first run having gone further", firstVersion - 1, 25, true},
		{"a newer version of the same task", firstVersion + 1, firstTask, true},
		{"a retry within the same task", firstVersion, firstTask, false},
		{"an earlier task of the same version", firstVersion, 12, false},
		{"an earlier task of a newer version", firstVersion + 1, 12, false},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := "7780000000000000" + strconv.Itoa(10+i) + "1"
			err := db.Exec(`INSERT INTO orders (transaction_id, workflow_id, merchant_id, account_id, order_no, currency, amount,
				payment_status, order_status, result_code, result_message, capture_mode, request_fingerprint, details, state_version,
				written_task, created_at, updated_at) VALUES (?, ?, 'm1', 'a1', ?, 'USD', 100, ?, ?, 'E0001', 'failed', 'auto', '', '{}', ?, ?, ?, ?)`,
				id, "order/"+id, "task-"+id, status.Failed, status.OrderFailure, firstVersion, firstTask, now, now).Error
			if err != nil {
				t.Fatal(err)
			}
			wantStatus, wantCode := status.Failed, "E0001"
			if tc.wantWritten {
				wantStatus, wantCode = status.Paid, "0000"
			}

			t.Run("outcome", func(t *testing.T) {
				err := models.UpdateOrderResult(ctx, db, id, models.OrderResult{PaymentStatus: status.Paid, OrderStatus: status.OrderSuccess,
					ResultCode: "0000", ResultMessage: "Success", CapturedAmount: 100, Version: tc.version, Task: tc.task})
				if err != nil {
					t.Fatal(err)
				}
				got, err := models.FindOrderByID(ctx, db, id)
				if err != nil {
					t.Fatal(err)
				}
				if got.PaymentStatus != wantStatus || got.ResultCode != wantCode {
					t.Errorf("order holds %v %q, want %v %q", got.PaymentStatus, got.ResultCode, wantStatus, wantCode)
				}
			})

			t.Run("state", func(t *testing.T) {
				// The outcome's write above moved the row when it was to be
				// written; put the first run's write back.
				if err := db.Exec(`UPDATE orders SET payment_status = ?, captured_amount = 0, state_version = ?, written_task = ? WHERE transaction_id = ?`,
					status.Failed, firstVersion, firstTask, id).Error; err != nil {
					t.Fatal(err)
				}
				err := models.UpdateOrderState(ctx, db, id, models.OrderState{PaymentStatus: status.Paid, OrderStatus: status.OrderSuccess,
					CapturedAmount: 100, Version: tc.version, Task: tc.task})
				if err != nil {
					t.Fatal(err)
				}
				got, err := models.FindOrderByID(ctx, db, id)
				if err != nil {
					t.Fatal(err)
				}
				if got.PaymentStatus != wantStatus {
					t.Errorf("order holds %v, want %v", got.PaymentStatus, wantStatus)
				}
			})

			t.Run("refund", func(t *testing.T) {
				row := func(st refund.Status, version, task int64) *models.Refund {
					return &models.Refund{RefundReferenceID: id + "-01", TransactionID: id, MerchantID: "m1", AccountID: "a1",
						OrderNo: "task-" + id, Currency: "USD", Amount: 40, Status: st, ResultCode: "x", ResultMessage: "x",
						Version: version, WrittenTask: task}
				}
				if err := models.SaveRefund(ctx, db, row(refund.Pending, firstVersion, firstTask)); err != nil {
					t.Fatal(err)
				}
				if err := models.SaveRefund(ctx, db, row(refund.Succeeded, tc.version, tc.task)); err != nil {
					t.Fatal(err)
				}
				var got models.Refund
				if err := db.Where("refund_reference_id = ?", id+"-01").Take(&got).Error; err != nil {
					t.Fatal(err)
				}
				want := refund.Pending
				if tc.wantWritten {
					want = refund.Succeeded
				}
				if got.Status != want {
					t.Errorf("refund holds %v, want %v", got.Status, want)
				}
			})
		})
	}
}

// TestNotificationOfATaskRunAgain: a notification made again by a later
// run of its workflow task takes that run's body, until a delivery was
// tried; the same run's retry, an earlier run, or a row with no task
// (older releases, payouts) leave it as it is.
func TestNotificationOfATaskRunAgain(t *testing.T) {
	db, err := models.Open(t.Context(), migratedDB(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	tests := []struct {
		name      string
		firstTask int64
		attempts  int // deliveries tried before it is made again
		task      int64
		want      string // order_status the row's body holds after
	}{
		{"a later run replaces the body", 20, 0, 25, "1"},
		{"a retry within the task keeps it", 20, 0, 20, "0"},
		{"an earlier run keeps it", 20, 0, 12, "0"},
		{"a body tried once is kept", 20, 1, 25, "0"},
		{"a row without a task is kept", 0, 0, 0, "0"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := "77810000000000" + strconv.Itoa(1000+i) + "-n01"
			made := func(orderStatus string, task int64) *models.Notification {
				return &models.Notification{NotifyID: id, TransactionID: "7781000000000000001", MerchantID: "m1", AccountID: "a1",
					OrderNo: "n-" + id, Seq: 1, NotifyType: "payment", URL: "http://127.0.0.1/notify",
					Fields: map[string]string{"order_status": orderStatus}, Status: notify.Pending, WrittenTask: task}
			}
			if err := models.InsertNotification(ctx, db, made("0", tc.firstTask)); err != nil {
				t.Fatal(err)
			}
			if tc.attempts > 0 {
				if err := db.Exec(`UPDATE notifications SET attempts = ? WHERE notify_id = ?`, tc.attempts, id).Error; err != nil {
					t.Fatal(err)
				}
			}
			if err := models.InsertNotification(ctx, db, made("1", tc.task)); err != nil {
				t.Fatal(err)
			}
			got, err := models.FindNotification(ctx, db, id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Fields["order_status"] != tc.want {
				t.Errorf("body holds order_status %q, want %q", got.Fields["order_status"], tc.want)
			}
		})
	}
}

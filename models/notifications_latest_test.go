package models_test

import (
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/models"
)

// TestLatestNotificationsIsTheLastMade: an order's query shows the last
// notification made about it, though a dispute numbers its notices from 1
// again; a subscription's notice, stored under its first order, is not
// that order's.
func TestLatestNotificationsIsTheLastMade(t *testing.T) {
	db, err := models.Open(t.Context(), migratedDB(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	made := []struct {
		id, tx, typ string
		seq         int
		after       time.Duration
	}{
		{"A-n01", "1000000000000000001", notify.TypePayment, 1, 0},
		{"A-n02", "1000000000000000001", notify.TypeCapture, 2, time.Minute},
		{"dp-A-01", "1000000000000000001", notify.TypeDispute, 1, time.Hour},
		{"sub-A-s01", "1000000000000000001", notify.TypeSubscription, 3, 2 * time.Hour},
		{"B-n01", "1000000000000000002", notify.TypePayment, 1, 0},
		{"B-n02", "1000000000000000002", notify.TypeRefund, 2, 0},
		{"C-s01", "1000000000000000003", notify.TypeSubscription, 1, 0},
	}
	for _, m := range made {
		n := &models.Notification{NotifyID: m.id, TransactionID: m.tx, MerchantID: "M", AccountID: "A", OrderNo: "O", Seq: m.seq,
			NotifyType: m.typ, URL: "https://shop.example/notify", Fields: map[string]string{}, Status: notify.Pending,
			CreatedAt: at.Add(m.after)}
		if err := models.InsertNotification(t.Context(), db, n); err != nil {
			t.Fatal(err)
		}
	}
	latest, err := models.LatestNotifications(t.Context(), db, []string{"1000000000000000001", "1000000000000000002", "1000000000000000003"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, tx, want string
	}{
		{"a dispute's first notice after the order's second", "1000000000000000001", "dp-A-01"},
		{"made at the same moment: the higher seq", "1000000000000000002", "B-n02"},
		{"only a subscription's notice: none of the order's", "1000000000000000003", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := latest[tc.tx].NotifyID; got != tc.want {
				t.Errorf("latest of %s = %q, want %q", tc.tx, got, tc.want)
			}
		})
	}
}

// TestFindNotificationsInTheOrderMade: a resend delivers an order's
// notifications as they were made, a dispute's after the payment's it
// followed, though each kind numbers its own from 1.
func TestFindNotificationsInTheOrderMade(t *testing.T) {
	db, err := models.Open(t.Context(), migratedDB(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, m := range []struct {
		id, typ string
		seq     int
		after   time.Duration
	}{
		{"dp-A-02", notify.TypeDispute, 2, 3 * time.Hour},
		{"dp-A-01", notify.TypeDispute, 1, time.Hour},
		{"A-n02", notify.TypeCapture, 2, time.Minute},
		{"A-n01", notify.TypePayment, 1, 0},
	} {
		n := &models.Notification{NotifyID: m.id, TransactionID: "1000000000000000001", MerchantID: "M", AccountID: "A", OrderNo: "O",
			Seq: m.seq, NotifyType: m.typ, URL: "https://shop.example/notify", Fields: map[string]string{}, Status: notify.Pending,
			CreatedAt: at.Add(m.after)}
		if err := models.InsertNotification(t.Context(), db, n); err != nil {
			t.Fatal(err)
		}
	}
	got, err := models.FindNotifications(t.Context(), db, models.NotificationSelection{OrderNos: []string{"O"}}, 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range got {
		ids = append(ids, n.NotifyID)
	}
	if want := []string{"A-n01", "A-n02", "dp-A-01", "dp-A-02"}; !slices.Equal(ids, want) {
		t.Errorf("order of delivery = %v, want %v", ids, want)
	}
}

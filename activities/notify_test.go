package activities

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/dev/testdb"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/models"
)

// oneAccount is the account every notification here belongs to.
type oneAccount struct{}

func (oneAccount) Load(context.Context, string, string) (*merchant.Account, error) {
	return merchant.NewTestAccount(models.Account{ID: "A1", MerchantID: "M1", Active: true}, "a-sign-key"), nil
}

// TestNewerNotificationSupersedes runs DeliverNotification on Postgres
// against a receiver that acknowledges everything. A payout's notification
// for which a newer one of the same transaction was made (a re-run's) is
// not sent: it is marked failed, superseded, so that a first run's FAILED
// still being retried never reaches the merchant after the re-run's
// COMPLETED. An order's and a subscription's notifications each tell of
// their own event and are all sent.
func TestNewerNotificationSupersedes(t *testing.T) {
	db := testdb.Open(t, "paygate_notifysupersede_")
	var mu sync.Mutex
	var posted []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		mu.Lock()
		posted = append(posted, form.Get("notify_id"))
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	a := &Activities{Records: models.Records{DB: db}, Accounts: oneAccount{}, Notifier: srv.Client(),
		Logger: slog.New(slog.DiscardHandler)}
	ctx := t.Context()
	record := func(id, tx, kind string, seq int) {
		t.Helper()
		err := a.RecordNotification(ctx, RecordNotificationInput{NotifyID: id, TransactionID: tx, MerchantID: "M1", AccountID: "A1",
			Seq: seq, Type: kind, URL: srv.URL, Fields: map[string]string{"notify_id": id, notify.NotifyTypeField: kind}})
		if err != nil {
			t.Fatal(err)
		}
	}
	record("P1-r01", "1000000000000000001", NotifyTypePayout, 1)
	record("P1-r02", "1000000000000000001", NotifyTypePayout, 2)
	record("R1-s01", "1000000000000000002", notify.TypeSubscription, 1)
	record("R1-s02", "1000000000000000002", notify.TypeSubscription, 2)
	record("O1-01", "1000000000000000003", notify.TypePayment, 1)
	record("O1-02", "1000000000000000003", notify.TypeRefund, 2)
	record("O1-03", "1000000000000000003", notify.TypeRefund, 3)

	tests := []struct {
		id         string
		superseded string
		status     notify.Status
		lastError  string
	}{
		{"P1-r01", "P1-r02", notify.Failed, "superseded by P1-r02: not sent"},
		{"P1-r02", "", notify.Delivered, ""},
		{"R1-s01", "", notify.Delivered, ""},
		{"R1-s02", "", notify.Delivered, ""},
		{"O1-01", "", notify.Delivered, ""},
		{"O1-02", "", notify.Delivered, ""},
		{"O1-03", "", notify.Delivered, ""},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			res, err := a.DeliverNotification(ctx, DeliverInput{NotifyID: tc.id, Attempt: 2})
			if err != nil || res.SupersededBy != tc.superseded || res.Delivered != (tc.superseded == "") {
				t.Fatalf("DeliverNotification = %+v, %v; want superseded by %q", res, err, tc.superseded)
			}
			n, err := models.FindNotification(ctx, db, tc.id)
			if err != nil || n.Status != tc.status || n.LastError != tc.lastError {
				t.Errorf("row %+v, %v; want %s %q", n, err, tc.status, tc.lastError)
			}
		})
	}
	want := []string{"P1-r02", "R1-s01", "R1-s02", "O1-01", "O1-02", "O1-03"}
	if !slices.Equal(posted, want) {
		t.Errorf("posted %v, want %v", posted, want)
	}
}

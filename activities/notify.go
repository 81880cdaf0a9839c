package activities

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/adapters/notifyclient"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
)

// SignKeys gives the activities an account's signing key.
type SignKeys interface {
	Load(ctx context.Context, merchantID, accountID string) (*merchant.Account, error)
}

// RecordNotificationInput is a notification as the workflow makes it.
type RecordNotificationInput struct {
	NotifyID      string
	TransactionID string
	MerchantID    string
	AccountID     string
	OrderNo       string
	Seq           int
	Type          string
	URL           string
	Fields        map[string]string
	// Task is the workflow task making it (models.Notification.WrittenTask).
	Task int64 `json:",omitempty"`
}

// RecordNotification stores a notification before its first delivery.
func (a *Activities) RecordNotification(ctx context.Context, in RecordNotificationInput) error {
	return a.Records.InsertNotification(ctx, in.record())
}

// record is the notification's row as first stored.
func (in RecordNotificationInput) record() *models.Notification {
	return &models.Notification{
		NotifyID:      in.NotifyID,
		TransactionID: in.TransactionID,
		MerchantID:    in.MerchantID,
		AccountID:     in.AccountID,
		OrderNo:       in.OrderNo,
		Seq:           in.Seq,
		NotifyType:    in.Type,
		URL:           in.URL,
		Fields:        in.Fields,
		WrittenTask:   in.Task,
		Status:        notify.Pending,
	}
}

// DeliverInput names a notification and the attempt number.
type DeliverInput struct {
	NotifyID string
	Attempt  int
}

// DeliverResult is one attempt's outcome. A receiver that did not
// acknowledge is a result, not an error: the workflow owns the schedule.
type DeliverResult struct {
	Delivered  bool
	StatusCode int
	Error      string
	// SupersededBy names a newer notification about the same payout: this
	// one was not sent and is marked failed, so that an older word never
	// reaches the merchant after a newer one.
	SupersededBy string `json:",omitempty"`
}

// superseded are the kinds of notification a newer one of the same
// transaction replaces: a payout's says where the payout (its latest
// run's outcome) stands. An order's and a subscription's each tell of
// their own event (a refund, a pause, an amendment) and are all sent.
var superseded = map[string]bool{NotifyTypePayout: true}

// maxErrorText bounds what is kept of a failed attempt's error.
const maxErrorText = 300

// DeliverNotification posts a notification once: the stored fields, signed
// with encryption_data and Standard Webhooks headers. Any 2xx acknowledges.
func (a *Activities) DeliverNotification(ctx context.Context, in DeliverInput) (DeliverResult, error) {
	n, err := a.Records.FindNotification(ctx, in.NotifyID)
	if err != nil {
		return DeliverResult{}, err
	}
	if n.Status == notify.Delivered {
		return DeliverResult{Delivered: true, StatusCode: n.LastStatusCode}, nil
	}
	if superseded[n.NotifyType] {
		// A payout re-run's COMPLETED sent before the first run's FAILED,
		// still being retried, would otherwise be followed by it.
		newer, err := a.Records.NewerNotification(ctx, n)
		if err != nil {
			return DeliverResult{}, err
		}
		if newer != "" {
			if err := a.Records.SupersedeNotification(ctx, n.NotifyID, newer); err != nil {
				return DeliverResult{}, err
			}
			a.Logger.Info("notification superseded: not sent", "notify_id", n.NotifyID, "by", newer)
			return DeliverResult{SupersededBy: newer}, nil
		}
	}
	account, err := a.Accounts.Load(ctx, n.MerchantID, n.AccountID)
	if err != nil {
		return DeliverResult{}, fmt.Errorf("deliver %s: %w", n.NotifyID, err)
	}
	fields := notify.Fields{}
	for k, v := range n.Fields {
		fields[k] = v
	}
	switch {
	case notify.HeadersOnly(n.NotifyType):
		// Signed by the webhook signature headers alone (notify.Sign).
	case n.NotifyType == NotifyTypePayout:
		// A payout notification is signed with the payout result recipe:
		// the payout recipe (docs/design.md §3) and then what became of it.
		fields["encryption_data"] = signing.SignPayoutResult(account.SignKey(), fields.Get)
	default:
		fields["encryption_data"] = signing.SignPaymentResult(account.SignKey(), signing.PaymentResultFrom(fields.Get))
	}
	body := notify.Body(fields)

	res := a.post(ctx, n.URL, n.NotifyID, account.SignKey(), body)
	at := time.Now()
	attempt := &models.NotificationAttempt{NotifyID: n.NotifyID, Attempt: in.Attempt, At: at,
		StatusCode: res.StatusCode, LatencyMS: res.latency.Milliseconds(), Error: res.Error}
	if err := a.Records.RecordAttempt(ctx, attempt, res.Delivered); err != nil {
		return DeliverResult{}, err
	}
	if a.Metrics != nil {
		outcome := "delivered"
		switch {
		case res.Delivered:
		case res.StatusCode != 0:
			outcome = "refused"
		default:
			outcome = "error"
		}
		a.Metrics.NotificationAttempt(outcome)
	}
	if !res.Delivered {
		a.Logger.Info("notification not acknowledged", "notify_id", n.NotifyID, "attempt", in.Attempt,
			"status_code", res.StatusCode, "error", res.Error)
	}
	return res.DeliverResult, nil
}

type postResult struct {
	DeliverResult
	latency time.Duration
}

func (a *Activities) post(ctx context.Context, url, id, key string, body []byte) postResult {
	start := time.Now()
	fail := func(err error) postResult {
		msg := err.Error()
		if len(msg) > maxErrorText {
			msg = msg[:maxErrorText]
		}
		return postResult{DeliverResult: DeliverResult{Error: msg}, latency: time.Since(start)}
	}
	if err := notifyclient.CheckURL(url); err != nil {
		return fail(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fail(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", "Paygate-Notifications/1")
	for k, v := range notify.Sign(key, id, time.Now(), body) {
		req.Header[k] = v
	}
	resp, err := a.Notifier.Do(req)
	if err != nil {
		if errors.Is(err, notifyclient.ErrForbiddenAddress) {
			return fail(fmt.Errorf("notify_url refused: %w", notifyclient.ErrForbiddenAddress))
		}
		return fail(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	r := postResult{DeliverResult: DeliverResult{StatusCode: resp.StatusCode}, latency: time.Since(start)}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		r.Delivered = true
	} else {
		r.Error = fmt.Sprintf("HTTP %d", resp.StatusCode)
	}
	return r
}

// MarkNotificationInput sets a notification's final state.
type MarkNotificationInput struct {
	NotifyID string
	Status   notify.Status
}

// MarkNotification records that a notification was given up (or resent).
func (a *Activities) MarkNotification(ctx context.Context, in MarkNotificationInput) error {
	return a.Records.SetNotificationStatus(ctx, in.NotifyID, in.Status)
}

// LoadNotificationsInput selects notifications to deliver again.
type LoadNotificationsInput struct {
	NotifyIDs []string
}

// ResetNotifications marks the notifications pending again before a
// redelivery and returns the ids that exist, in delivery order.
func (a *Activities) ResetNotifications(ctx context.Context, in LoadNotificationsInput) ([]string, error) {
	rows, err := a.Records.FindNotifications(ctx, models.NotificationSelection{NotifyIDs: in.NotifyIDs}, len(in.NotifyIDs))
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(rows))
	for _, r := range rows {
		if err := a.Records.ResetNotification(ctx, r.NotifyID, time.Now()); err != nil {
			return nil, err
		}
		ids = append(ids, r.NotifyID)
	}
	return ids, nil
}

package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/paygate/paygate/internal/domain/notify"
)

// Notification statuses under their older names.
//
// Deprecated: use notify.Pending, notify.Delivered and notify.Failed.
const (
	NotifyPending   = notify.Pending
	NotifyDelivered = notify.Delivered
	NotifyFailed    = notify.Failed
)

// Notification is one event to deliver to a merchant's notify_url. Its
// fields are fixed once a delivery was tried, so every delivery of one
// notify_id carries the same body (until then a later run of the workflow
// task that made it may make it anew: InsertNotification).
type Notification struct {
	NotifyID      string            `gorm:"primaryKey;size:40"`
	TransactionID string            `gorm:"size:19;not null;index"`
	MerchantID    string            `gorm:"size:32;not null"`
	AccountID     string            `gorm:"size:32;not null;index:idx_notifications_account_created,priority:1"`
	OrderNo       string            `gorm:"size:64;not null"`
	Seq           int               `gorm:"not null"`
	NotifyType    string            `gorm:"size:16;not null"`
	URL           string            `gorm:"size:1024;not null"`
	Fields        map[string]string `gorm:"serializer:json;type:jsonb;not null"`
	// WrittenTask is the workflow task that made it (Order.WrittenTask).
	WrittenTask int64 `gorm:"not null;default:0"`

	Status         notify.Status `gorm:"size:16;not null;index"`
	Attempts       int           `gorm:"not null;default:0"`
	LastAttemptAt  *time.Time
	LastStatusCode int    `gorm:"not null;default:0"`
	LastError      string `gorm:"size:500"`
	DeliveredAt    *time.Time

	CreatedAt time.Time `gorm:"index:idx_notifications_account_created,priority:2"`
	UpdatedAt time.Time
}

// NotificationAttempt is one delivery attempt.
type NotificationAttempt struct {
	ID         uint      `gorm:"primaryKey"`
	NotifyID   string    `gorm:"size:40;not null;index"`
	Attempt    int       `gorm:"not null"`
	At         time.Time `gorm:"not null"`
	StatusCode int       `gorm:"not null"`
	LatencyMS  int64     `gorm:"not null"`
	Error      string    `gorm:"size:500"`
}

// InsertNotification records a new notification; a retry does nothing. A
// later run of the workflow task that made it (its worker died before the
// task completed) makes it anew, perhaps of another outcome, and its body
// replaces the first run's: no delivery of it was sent, as deliveries are
// activities that start only once the task has completed.
func InsertNotification(ctx context.Context, db *gorm.DB, n *Notification) error {
	err := db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "notify_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"notify_type", "url", "fields", "written_task", "updated_at"}),
		Where: clause.Where{Exprs: []clause.Expression{clause.Expr{
			SQL: "excluded.written_task > 0 AND notifications.written_task < excluded.written_task AND notifications.attempts = 0"}}},
	}).Create(n).Error
	if err != nil {
		return fmt.Errorf("insert notification %s: %w", n.NotifyID, err)
	}
	return nil
}

// FindNotification loads a notification.
func FindNotification(ctx context.Context, db *gorm.DB, notifyID string) (*Notification, error) {
	var n Notification
	err := db.WithContext(ctx).Where("notify_id = ?", notifyID).Take(&n).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find notification %s: %w", notifyID, err)
	}
	return &n, nil
}

// RecordAttempt stores an attempt and moves the notification's state: a
// delivered notification stays delivered.
func RecordAttempt(ctx context.Context, db *gorm.DB, a *NotificationAttempt, delivered bool) error {
	return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(a).Error; err != nil {
			return fmt.Errorf("record attempt of %s: %w", a.NotifyID, err)
		}
		updates := map[string]any{
			"attempts":         gorm.Expr("attempts + 1"),
			"last_attempt_at":  a.At,
			"last_status_code": a.StatusCode,
			"last_error":       a.Error,
			"updated_at":       time.Now(),
		}
		if delivered {
			updates["status"] = NotifyDelivered
			updates["delivered_at"] = a.At
		}
		err := tx.Model(&Notification{}).Where("notify_id = ?", a.NotifyID).Updates(updates).Error
		if err != nil {
			return fmt.Errorf("update notification %s: %w", a.NotifyID, err)
		}
		return nil
	})
}

// NewerNotification returns the id of the latest notification of the
// same kind about the same transaction made after n (a higher seq), or ""
// when there is none.
func NewerNotification(ctx context.Context, db *gorm.DB, n *Notification) (string, error) {
	var ids []string
	err := db.WithContext(ctx).Model(&Notification{}).
		Where("transaction_id = ? AND notify_type = ? AND seq > ?", n.TransactionID, n.NotifyType, n.Seq).
		Order("seq DESC").Limit(1).Pluck("notify_id", &ids).Error
	if err != nil {
		return "", fmt.Errorf("newer notification than %s: %w", n.NotifyID, err)
	}
	if len(ids) == 0 {
		return "", nil
	}
	return ids[0], nil
}

// SupersedeNotification marks a notification not yet delivered failed,
// with why it is not sent: a newer one about the same thing (by) says what
// it said, and more recently.
func SupersedeNotification(ctx context.Context, db *gorm.DB, notifyID, by string) error {
	err := db.WithContext(ctx).Model(&Notification{}).
		Where("notify_id = ? AND status <> ?", notifyID, NotifyDelivered).
		Updates(map[string]any{"status": NotifyFailed, "last_error": "superseded by " + by + ": not sent", "updated_at": time.Now()}).Error
	if err != nil {
		return fmt.Errorf("supersede notification %s: %w", notifyID, err)
	}
	return nil
}

// SetNotificationStatus sets the status, never taking a delivered
// notification back to pending or failed.
func SetNotificationStatus(ctx context.Context, db *gorm.DB, notifyID string, status notify.Status) error {
	err := db.WithContext(ctx).Model(&Notification{}).
		Where("notify_id = ? AND status <> ?", notifyID, NotifyDelivered).
		Updates(map[string]any{"status": status, "updated_at": time.Now()}).Error
	if err != nil {
		return fmt.Errorf("set notification %s %s: %w", notifyID, status, err)
	}
	return nil
}

// NotificationSelection picks notifications to deliver again.
type NotificationSelection struct {
	MerchantID string
	AccountID  string
	OrderNos   []string
	NotifyIDs  []string
	From, To   time.Time // created in [From, To) when set
}

// FindNotifications returns the selected notifications in delivery order
// (per order, as they were made), at most limit.
func FindNotifications(ctx context.Context, db *gorm.DB, s NotificationSelection, limit int) ([]Notification, error) {
	q := db.WithContext(ctx).Model(&Notification{})
	if s.MerchantID != "" {
		q = q.Where("merchant_id = ?", s.MerchantID)
	}
	if s.AccountID != "" {
		q = q.Where("account_id = ?", s.AccountID)
	}
	if len(s.OrderNos) > 0 {
		q = q.Where("order_no IN ?", s.OrderNos)
	}
	if len(s.NotifyIDs) > 0 {
		q = q.Where("notify_id IN ?", s.NotifyIDs)
	}
	if !s.From.IsZero() {
		q = q.Where("created_at >= ?", s.From)
	}
	if !s.To.IsZero() {
		q = q.Where("created_at < ?", s.To)
	}
	var out []Notification
	// In the order they were made: each kind numbers its own from 1.
	if err := q.Order("transaction_id, created_at NULLS FIRST, seq, notify_id").Limit(limit).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("find notifications: %w", err)
	}
	return out, nil
}

// LatestNotifications returns, per transaction id, the newest notification
// about the order: of its own changes or of a dispute of it. Newest is the
// last made: each kind numbers its notifications from 1 (a dispute's
// first notice is seq 1 after the order's payment notice), so seq only
// breaks a tie. A subscription's notices are stored under its first
// order's transaction id but tell of the subscription, not that order.
func LatestNotifications(ctx context.Context, db *gorm.DB, transactionIDs []string) (map[string]Notification, error) {
	out := map[string]Notification{}
	if len(transactionIDs) == 0 {
		return out, nil
	}
	var rows []Notification
	err := db.WithContext(ctx).Raw(`SELECT DISTINCT ON (transaction_id) * FROM notifications
		WHERE transaction_id IN ? AND notify_type <> ?
		ORDER BY transaction_id, created_at DESC NULLS LAST, seq DESC, notify_id DESC`, transactionIDs, notify.TypeSubscription).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("latest notifications: %w", err)
	}
	for _, r := range rows {
		out[r.TransactionID] = r
	}
	return out, nil
}

// ResetNotification makes a notification pending again, for a redelivery.
func ResetNotification(ctx context.Context, db *gorm.DB, notifyID string, at time.Time) error {
	err := db.WithContext(ctx).Model(&Notification{}).Where("notify_id = ?", notifyID).
		Updates(map[string]any{"status": notify.Pending, "updated_at": at}).Error
	if err != nil {
		return fmt.Errorf("reset notification %s: %w", notifyID, err)
	}
	return nil
}

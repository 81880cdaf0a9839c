package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Subscription statuses, as recurring_status answers them (docs/design.md §4).
const (
	SubscriptionCancelled = 0
	SubscriptionActive    = 1
	SubscriptionFinished  = 2
	SubscriptionSuspended = 3
)

// Subscription is the record of one subscription workflow
// subscription/{merchant_id}/{recurring_id}. The workflow writes it; the API
// reads it.
type Subscription struct {
	RecurringID        string `gorm:"primaryKey;size:32"`
	WorkflowID         string `gorm:"size:200;not null;uniqueIndex:idx_subscriptions_workflow_id"`
	MerchantID         string `gorm:"size:32;not null"`
	AccountID          string `gorm:"size:32;not null;index:idx_subscriptions_account"`
	FirstTransactionID string `gorm:"size:19;not null"`
	TokenID            string `gorm:"size:64;not null"`
	ContractName       string `gorm:"size:64;not null"`
	// Terms are the validated subscription.Terms (JSON).
	Terms  []byte `gorm:"type:jsonb;not null"`
	Period string `gorm:"size:32;not null"`
	Status int    `gorm:"not null"`
	// Charges counts the successful charges, the first payment included.
	Charges        int `gorm:"not null;default:1"`
	FailedAttempts int `gorm:"not null;default:0"`
	NextChargeAt   *time.Time
	// Plan is what the merchant changed since it began (subscription.Plan,
	// JSON); nil when nothing was.
	Plan      []byte    `gorm:"type:jsonb"`
	CreatedAt time.Time `gorm:"not null"`
	UpdatedAt time.Time `gorm:"not null"`
}

// SubscriptionChange is one change a merchant made to a subscription
// (pause, resume, amend) and how it stood after it.
type SubscriptionChange struct {
	RecurringID  string `gorm:"primaryKey;size:32"`
	Seq          int    `gorm:"primaryKey;autoIncrement:false"`
	Action       string `gorm:"size:16;not null"`
	Status       int    `gorm:"not null"`
	Amount       int64  `gorm:"not null"`
	Currency     string `gorm:"size:3;not null"`
	NextChargeAt *time.Time
	At           time.Time `gorm:"not null"`
}

// ErrSubscriptionNotFound: no subscription of the account has that id.
var ErrSubscriptionNotFound = errors.New("subscription not found")

// InsertSubscription records a new subscription; a row already there (a
// retried activity) is left as it is.
func InsertSubscription(ctx context.Context, db *gorm.DB, s *Subscription) error {
	if err := db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(s).Error; err != nil {
		return fmt.Errorf("insert subscription %s: %w", s.RecurringID, err)
	}
	return nil
}

// SubscriptionUpdate is what a subscription's progress changes.
type SubscriptionUpdate struct {
	Status         int
	Charges        int
	FailedAttempts int
	NextChargeAt   *time.Time
	At             time.Time
	// Plan, when set, replaces the recorded plan.
	Plan []byte
	// Change, when set, is the merchant's change that made this progress;
	// it is kept once however often the write is retried.
	Change *SubscriptionChange
}

// UpdateSubscription writes a subscription's progress, and the change that
// made it, in one transaction.
func UpdateSubscription(ctx context.Context, db *gorm.DB, recurringID string, u SubscriptionUpdate) error {
	set := map[string]any{
		"status": u.Status, "charges": u.Charges, "failed_attempts": u.FailedAttempts,
		"next_charge_at": u.NextChargeAt, "updated_at": u.At,
	}
	if u.Plan != nil {
		set["plan"] = u.Plan
	}
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&Subscription{}).Where("recurring_id = ?", recurringID).Updates(set).Error; err != nil {
			return err
		}
		if u.Change == nil {
			return nil
		}
		u.Change.RecurringID = recurringID
		return tx.Clauses(clause.OnConflict{DoNothing: true}).Create(u.Change).Error
	})
	if err != nil {
		return fmt.Errorf("update subscription %s: %w", recurringID, err)
	}
	return nil
}

// SubscriptionChanges returns the changes made to a subscription, oldest
// first.
func SubscriptionChanges(ctx context.Context, db *gorm.DB, recurringID string) ([]SubscriptionChange, error) {
	var out []SubscriptionChange
	if err := db.WithContext(ctx).Where("recurring_id = ?", recurringID).Order("seq").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("subscription changes %s: %w", recurringID, err)
	}
	return out, nil
}

// FindSubscription returns the account's subscription recurringID.
func FindSubscription(ctx context.Context, db *gorm.DB, merchantID, accountID, recurringID string) (*Subscription, error) {
	var s Subscription
	err := db.WithContext(ctx).Where("recurring_id = ? AND merchant_id = ? AND account_id = ?", recurringID, merchantID, accountID).Take(&s).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrSubscriptionNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find subscription: %w", err)
	}
	return &s, nil
}

// FindSubscriptionByID returns a subscription by its recurring_id alone,
// for an order that names it.
func FindSubscriptionByID(ctx context.Context, db *gorm.DB, recurringID string) (*Subscription, error) {
	var s Subscription
	err := db.WithContext(ctx).Where("recurring_id = ?", recurringID).Take(&s).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrSubscriptionNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find subscription: %w", err)
	}
	return &s, nil
}

// SetOrderRecurring names on an order the subscription and cycle it is.
func SetOrderRecurring(ctx context.Context, db *gorm.DB, transactionID, recurringID string, cycle int) error {
	err := db.WithContext(ctx).Model(&Order{}).Where("transaction_id = ?", transactionID).
		Updates(map[string]any{"recurring_id": recurringID, "recurring_cycle": cycle}).Error
	if err != nil {
		return fmt.Errorf("set order recurring %s: %w", transactionID, err)
	}
	return nil
}

// FindSubscriptionsByID returns the subscriptions of the ids, by id.
func FindSubscriptionsByID(ctx context.Context, db *gorm.DB, ids []string) (map[string]Subscription, error) {
	var subs []Subscription
	if err := db.WithContext(ctx).Where("recurring_id IN ?", ids).Find(&subs).Error; err != nil {
		return nil, fmt.Errorf("find subscriptions: %w", err)
	}
	out := make(map[string]Subscription, len(subs))
	for _, s := range subs {
		out[s.RecurringID] = s
	}
	return out, nil
}

// RecordSubscription records a subscription and names it on its first
// payment's order (cycle 1), in one transaction; a retry finds the row and
// changes nothing.
func RecordSubscription(ctx context.Context, db *gorm.DB, s *Subscription) error {
	return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := InsertSubscription(ctx, tx, s); err != nil {
			return err
		}
		return SetOrderRecurring(ctx, tx, s.FirstTransactionID, s.RecurringID, 1)
	})
}

package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// CompatibleRefundUsage is what one account refunded on one day in one
// currency through requests signed with encryption_data (the compatible
// scheme), counted against Account.CompatibleRefundDailyLimit.
type CompatibleRefundUsage struct {
	AccountID string    `gorm:"primaryKey;size:32"`
	Day       time.Time `gorm:"primaryKey;type:date"`
	Currency  string    `gorm:"primaryKey;size:3"`
	Amount    int64     `gorm:"not null"`
}

// TableName keeps the table's name singular, as the migration makes it.
func (CompatibleRefundUsage) TableName() string { return "compatible_refund_usage" }

// ReserveCompatibleRefund adds amount to the account's compatible refunds
// of day in currency if the total stays within limit, in one statement, so
// that racing refunds cannot pass the limit together. It reports whether
// the amount was reserved.
func ReserveCompatibleRefund(ctx context.Context, db *gorm.DB, accountID string, day time.Time, currency string, amount, limit int64) (bool, error) {
	if amount > limit {
		return false, nil
	}
	var total []int64
	err := db.WithContext(ctx).Raw(`INSERT INTO compatible_refund_usage (account_id, day, currency, amount) VALUES (?, ?, ?, ?)
		ON CONFLICT (account_id, day, currency) DO UPDATE SET amount = compatible_refund_usage.amount + EXCLUDED.amount
		WHERE compatible_refund_usage.amount + EXCLUDED.amount <= ?
		RETURNING amount`, accountID, day.UTC().Format(time.DateOnly), currency, amount, limit).Scan(&total).Error
	if err != nil {
		return false, fmt.Errorf("reserve compatible refund: %w", err)
	}
	return len(total) == 1, nil
}

// ReleaseCompatibleRefund gives back a reservation whose refund was refused.
func ReleaseCompatibleRefund(ctx context.Context, db *gorm.DB, accountID string, day time.Time, currency string, amount int64) error {
	err := db.WithContext(ctx).Exec(`UPDATE compatible_refund_usage SET amount = GREATEST(amount - ?, 0)
		WHERE account_id = ? AND day = ? AND currency = ?`, amount, accountID, day.UTC().Format(time.DateOnly), currency).Error
	if err != nil {
		return fmt.Errorf("release compatible refund: %w", err)
	}
	return nil
}

// SignatureUse remembers a compatible signature of an operation that moves
// money with the first body it came with. The compatible recipes do not
// cover every field (a batch's covers the ids only), so the same signature
// with another body is either the merchant's next operation on the same
// orders or someone replaying what they saw: it is counted and reported.
type SignatureUse struct {
	AccountID        string    `gorm:"primaryKey;size:32"`
	SignatureHash    string    `gorm:"primaryKey;size:64"`
	Operation        string    `gorm:"size:64;not null"`
	BodyFingerprint  string    `gorm:"size:64;not null"`
	OtherContentUses int64     `gorm:"not null;default:0"`
	FirstSeen        time.Time `gorm:"not null"`
	LastSeen         time.Time `gorm:"not null;index"`
}

// SignatureSeen records a use of a compatible signature and returns the
// first use as it stands after this one: its operation, and how many times
// the signature came with a body other than the first.
func SignatureSeen(ctx context.Context, db *gorm.DB, accountID, signatureHash, operation, bodyFingerprint string, at time.Time) (SignatureUse, error) {
	var use SignatureUse
	err := db.WithContext(ctx).Raw(`INSERT INTO signature_uses (account_id, signature_hash, operation, body_fingerprint, first_seen, last_seen)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (account_id, signature_hash) DO UPDATE SET last_seen = EXCLUDED.last_seen,
			other_content_uses = signature_uses.other_content_uses +
				CASE WHEN signature_uses.body_fingerprint = EXCLUDED.body_fingerprint THEN 0 ELSE 1 END
		RETURNING account_id, signature_hash, operation, body_fingerprint, other_content_uses, first_seen, last_seen`,
		accountID, signatureHash, operation, bodyFingerprint, at, at).Scan(&use).Error
	if err != nil {
		return SignatureUse{}, fmt.Errorf("record signature use: %w", err)
	}
	return use, nil
}

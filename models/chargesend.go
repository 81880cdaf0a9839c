package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ChargeSend notes that a routed order's charge was sent to a connector
// under its idempotency key (migration 0026).
type ChargeSend struct {
	IdempotencyKey string    `gorm:"primaryKey;size:200"`
	Connector      string    `gorm:"size:32;not null"`
	SentAt         time.Time `gorm:"not null"`
}

// NoteChargeSend notes the charge under key before it is sent; earlier
// tells that a send under the key was noted before (by an earlier attempt,
// or a worker that died after sending).
func NoteChargeSend(ctx context.Context, db *gorm.DB, key, connector string, at time.Time) (earlier bool, err error) {
	res := db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).
		Create(&ChargeSend{IdempotencyKey: key, Connector: connector, SentAt: at})
	if res.Error != nil {
		return false, fmt.Errorf("note charge %s: %w", key, res.Error)
	}
	return res.RowsAffected == 0, nil
}

// ChargeSent reports whether a send under key was noted.
func ChargeSent(ctx context.Context, db *gorm.DB, key string) (bool, error) {
	var n int64
	if err := db.WithContext(ctx).Model(&ChargeSend{}).Where("idempotency_key = ?", key).Count(&n).Error; err != nil {
		return false, fmt.Errorf("charge %s sent: %w", key, err)
	}
	return n > 0, nil
}

// ForgetChargeSend removes the note of key: its send did nothing (the
// connector was down) and no other is on its way.
func ForgetChargeSend(ctx context.Context, db *gorm.DB, key string) error {
	if err := db.WithContext(ctx).Where("idempotency_key = ?", key).Delete(&ChargeSend{}).Error; err != nil {
		return fmt.Errorf("forget charge %s: %w", key, err)
	}
	return nil
}

// ChargeSendsKept is how long a note of a sent charge is kept: a payment
// decides on its charge within hours (its inquiries included), so an older
// note is never read again.
const ChargeSendsKept = 7 * 24 * time.Hour

// PruneChargeSends deletes the notes of charges sent before cutoff and
// says how many.
func PruneChargeSends(ctx context.Context, db *gorm.DB, cutoff time.Time) (int64, error) {
	res := db.WithContext(ctx).Where("sent_at < ?", cutoff).Delete(&ChargeSend{})
	if res.Error != nil {
		return 0, fmt.Errorf("prune charge notes: %w", res.Error)
	}
	return res.RowsAffected, nil
}

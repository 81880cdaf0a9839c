package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm/clause"
)

// PaymentAttempt is one charge of a routed order at one of its connectors
// (migration 0017): which connector, its reference, what the attempt came
// to, how long it took and why that connector was tried. Written once per
// attempt; a retried write finds the row there.
type PaymentAttempt struct {
	ID            int64  `gorm:"primaryKey"`
	TransactionID string `gorm:"size:19;not null;uniqueIndex:idx_payment_attempts_tx_attempt,priority:1"`
	Attempt       int    `gorm:"not null;uniqueIndex:idx_payment_attempts_tx_attempt,priority:2"`
	Connector     string `gorm:"size:32;not null"`
	ConnectorRef  string `gorm:"size:100;not null;default:''"`
	// Outcome is routing.Outcome's word (approved, hard_decline,
	// soft_decline, down, refused, unknown), or not_sent when the charge
	// stopped before it reached the connector (the card gone from the
	// vault, a stored card deleted).
	Outcome       string    `gorm:"size:16;not null"`
	DeclineReason string    `gorm:"size:32;not null;default:''"`
	LatencyMS     int64     `gorm:"not null;default:0"`
	Why           string    `gorm:"size:200;not null;default:''"`
	At            time.Time `gorm:"not null"`
}

// RecordPaymentAttempt writes a once; a second write of the same attempt
// changes nothing.
func (r Records) RecordPaymentAttempt(ctx context.Context, a *PaymentAttempt) error {
	err := r.DB.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(a).Error
	if err != nil {
		return fmt.Errorf("record payment attempt %s #%d: %w", a.TransactionID, a.Attempt, err)
	}
	return nil
}

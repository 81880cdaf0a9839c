package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// StoredCard is a card a merchant's account keeps for later payments
// (token_flag=YES, subscriptions). The card stays sealed in the vault under
// VaultToken; TokenID is what the merchant holds, usable by this account only.
type StoredCard struct {
	TokenID             string    `gorm:"primaryKey;size:64"`
	MerchantID          string    `gorm:"size:32;not null"`
	AccountID           string    `gorm:"size:32;not null;index:idx_stored_cards_account"`
	VaultToken          string    `gorm:"size:64;not null"`
	CardMasked          string    `gorm:"size:19;not null"`
	CardBrand           string    `gorm:"size:16;not null;default:''"`
	CardFingerprint     string    `gorm:"size:64;not null"`
	SourceTransactionID string    `gorm:"size:19;not null;uniqueIndex:idx_stored_cards_source"`
	CreatedAt           time.Time `gorm:"not null"`
	DeletedAt           *time.Time
}

// Errors of FindStoredCard.
var (
	// ErrStoredCardNotFound: the account has no stored card of that token_id
	// (another account's token is not found either).
	ErrStoredCardNotFound = errors.New("stored card not found")
	// ErrStoredCardDeleted: the merchant deleted the token.
	ErrStoredCardDeleted = errors.New("stored card deleted")
)

// KeepCard records c, or returns the card already kept for the same source
// order (a retried activity), so keeping is idempotent.
func KeepCard(ctx context.Context, db *gorm.DB, c *StoredCard) (*StoredCard, error) {
	if err := db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(c).Error; err != nil {
		return nil, fmt.Errorf("keep card of %s: %w", c.SourceTransactionID, err)
	}
	var kept StoredCard
	if err := db.WithContext(ctx).Where("source_transaction_id = ?", c.SourceTransactionID).Take(&kept).Error; err != nil {
		return nil, fmt.Errorf("keep card of %s: %w", c.SourceTransactionID, err)
	}
	return &kept, nil
}

// FindStoredCard returns the account's stored card tokenID.
func FindStoredCard(ctx context.Context, db *gorm.DB, merchantID, accountID, tokenID string) (*StoredCard, error) {
	var c StoredCard
	err := db.WithContext(ctx).Where("token_id = ? AND merchant_id = ? AND account_id = ?", tokenID, merchantID, accountID).Take(&c).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return nil, ErrStoredCardNotFound
	case err != nil:
		return nil, fmt.Errorf("find stored card: %w", err)
	case c.DeletedAt != nil:
		return &c, ErrStoredCardDeleted
	}
	return &c, nil
}

// StoredCardDeleted reports whether the stored card tokenID was deleted. A
// token that is not there is not deleted: the order that names it made it.
func StoredCardDeleted(ctx context.Context, db *gorm.DB, tokenID string) (bool, error) {
	var n int64
	if err := db.WithContext(ctx).Model(&StoredCard{}).Where("token_id = ? AND deleted_at IS NOT NULL", tokenID).
		Count(&n).Error; err != nil {
		return false, fmt.Errorf("stored card %s: %w", tokenID, err)
	}
	return n > 0, nil
}

// DeleteStoredCard marks the account's token deleted: no later payment may
// use it. Deleting a deleted token again is not an error; the card's vault
// entry stays for the records of the orders that used it.
func DeleteStoredCard(ctx context.Context, db *gorm.DB, merchantID, accountID, tokenID string, at time.Time) error {
	res := db.WithContext(ctx).Model(&StoredCard{}).
		Where("token_id = ? AND merchant_id = ? AND account_id = ?", tokenID, merchantID, accountID).
		Update("deleted_at", gorm.Expr("COALESCE(deleted_at, ?)", at))
	if res.Error != nil {
		return fmt.Errorf("delete stored card: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrStoredCardNotFound
	}
	return nil
}

// SetOrderToken records on an order the stored card it made or used.
func SetOrderToken(ctx context.Context, db *gorm.DB, transactionID, tokenID string) error {
	if err := db.WithContext(ctx).Model(&Order{}).Where("transaction_id = ?", transactionID).
		Update("token_id", tokenID).Error; err != nil {
		return fmt.Errorf("set order token %s: %w", transactionID, err)
	}
	return nil
}

package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/paygate/paygate/models"
)

// KeepCardInput is a paid order's card, to be kept for its account.
type KeepCardInput struct {
	TransactionID string
	MerchantID    string
	AccountID     string
	CardToken     string
	CardMasked    string
	CardBrand     string
	Fingerprint   string
}

// KeepCardResult is the stored card's token_id.
type KeepCardResult struct {
	TokenID string
}

// StoredTokenID is the token_id under which a vault entry is kept. It is
// derived from the vault token, itself a keyed hash, so it is stable across
// retries and cannot be guessed from the order.
func StoredTokenID(vaultToken string) string {
	sum := sha256.Sum256([]byte("stored-card\x00" + vaultToken))
	return "tk_" + hex.EncodeToString(sum[:])[:40]
}

// KeepCard keeps a paid order's card for the order's account and records
// its token_id on the order. Keeping the same order's card again returns
// the same token_id.
func (a *Activities) KeepCard(ctx context.Context, in KeepCardInput) (KeepCardResult, error) {
	kept, err := a.Records.KeepCard(ctx, &models.StoredCard{
		TokenID:             StoredTokenID(in.CardToken),
		MerchantID:          in.MerchantID,
		AccountID:           in.AccountID,
		VaultToken:          in.CardToken,
		CardMasked:          in.CardMasked,
		CardBrand:           in.CardBrand,
		CardFingerprint:     in.Fingerprint,
		SourceTransactionID: in.TransactionID,
		CreatedAt:           time.Now().UTC(),
	})
	if err != nil {
		return KeepCardResult{}, storeError(err)
	}
	if err := a.Records.SetOrderToken(ctx, in.TransactionID, kept.TokenID); err != nil {
		return KeepCardResult{}, storeError(err)
	}
	return KeepCardResult{TokenID: kept.TokenID}, nil
}

// StoredCardInput names a stored card by its token_id.
type StoredCardInput struct {
	TokenID string
}

// StoredCardGone reports whether the stored card was deleted (by the
// merchant, or with its shopper's data), so that a subscription makes no
// charge order, which would record the shopper's details again, for a card
// it can no longer charge.
func (a *Activities) StoredCardGone(ctx context.Context, in StoredCardInput) (bool, error) {
	return a.Records.StoredCardDeleted(ctx, in.TokenID)
}

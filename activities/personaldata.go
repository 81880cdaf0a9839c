package activities

import (
	"context"
	"time"
)

// SealLegacyInput bounds one batch of sealing.
type SealLegacyInput struct {
	Limit int
}

// SealLegacyResult counts the rows a batch sealed; a count below the limit
// means none of that kind is left.
type SealLegacyResult struct {
	Orders  int
	Payouts int
}

// SealLegacyPersonalData seals the personal data of orders and payouts
// written in clear before it was sealed (migration 0015).
func (a *Activities) SealLegacyPersonalData(ctx context.Context, in SealLegacyInput) (SealLegacyResult, error) {
	orders, err := a.Records.SealLegacyOrders(ctx, in.Limit)
	if err != nil {
		return SealLegacyResult{}, err
	}
	payouts, err := a.Records.SealLegacyPayouts(ctx, in.Limit)
	if err != nil {
		return SealLegacyResult{}, err
	}
	if orders+payouts > 0 {
		a.Logger.Info("sealed personal data written in clear", "orders", orders, "payouts", payouts)
	}
	return SealLegacyResult{Orders: orders, Payouts: payouts}, nil
}

// EraseExpiredInput is one batch of the retention run: closed orders and
// final payouts last changed before Before.
type EraseExpiredInput struct {
	Before time.Time
	Limit  int
}

// EraseExpiredResult counts what a batch erased and names its audit record
// (0 when it erased nothing).
type EraseExpiredResult struct {
	Orders    int
	Payouts   int
	ErasureID uint
}

// EraseExpiredPersonalData erases the personal data of one batch of closed
// orders and payouts older than the retention period.
func (a *Activities) EraseExpiredPersonalData(ctx context.Context, in EraseExpiredInput) (EraseExpiredResult, error) {
	rec, err := a.Records.EraseExpired(ctx, in.Before, in.Limit, time.Now())
	if err != nil {
		return EraseExpiredResult{}, err
	}
	if rec.ID != 0 {
		a.Logger.Info("personal data erased after the retention period", "erasure", rec.ID,
			"before", in.Before, "orders", rec.Orders, "payouts", rec.Payouts, "stored_cards", rec.StoredCards, "vault_cards", rec.VaultCards)
	}
	return EraseExpiredResult{Orders: rec.Orders, Payouts: rec.Payouts, ErasureID: rec.ID}, nil
}

package models

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/domain/optimise"
)

// Records is the record as the API reaches it: each method is the models
// function of the same name over DB. The API declares the interface it
// needs (api.Records) and never holds the database itself.
type Records struct{ DB *gorm.DB }

// FindOrderByNo is models.FindOrderByNo over the records' database.
func (r Records) FindOrderByNo(ctx context.Context, accountID, orderNo string) (*Order, error) {
	return FindOrderByNo(ctx, r.DB, accountID, orderNo)
}

// FindSubscriptionByID is models.FindSubscriptionByID over the records' database.
func (r Records) FindSubscriptionByID(ctx context.Context, recurringID string) (*Subscription, error) {
	return FindSubscriptionByID(ctx, r.DB, recurringID)
}

// FindOrderByID is models.FindOrderByID over the records' database.
func (r Records) FindOrderByID(ctx context.Context, transactionID string) (*Order, error) {
	return FindOrderByID(ctx, r.DB, transactionID)
}

// ReserveCompatibleRefund is models.ReserveCompatibleRefund over the records' database.
func (r Records) ReserveCompatibleRefund(ctx context.Context, accountID string, day time.Time, currency string, amount, limit int64) (bool, error) {
	return ReserveCompatibleRefund(ctx, r.DB, accountID, day, currency, amount, limit)
}

// ReleaseCompatibleRefund is models.ReleaseCompatibleRefund over the records' database.
func (r Records) ReleaseCompatibleRefund(ctx context.Context, accountID string, day time.Time, currency string, amount int64) error {
	return ReleaseCompatibleRefund(ctx, r.DB, accountID, day, currency, amount)
}

// SignatureSeen is models.SignatureSeen over the records' database.
func (r Records) SignatureSeen(ctx context.Context, accountID, signatureHash, operation, bodyFingerprint string, at time.Time) (SignatureUse, error) {
	return SignatureSeen(ctx, r.DB, accountID, signatureHash, operation, bodyFingerprint, at)
}

// FindPayout is models.FindPayout over the records' database.
func (r Records) FindPayout(ctx context.Context, id string) (*Payout, error) {
	return FindPayout(ctx, r.DB, id)
}

// FindOrders is models.FindOrders over the records' database.
func (r Records) FindOrders(ctx context.Context, merchantID, accountID string, orderNos, transactionIDs []string) ([]Order, error) {
	return FindOrders(ctx, r.DB, merchantID, accountID, orderNos, transactionIDs)
}

// FindOrdersBetween is models.FindOrdersBetween over the records' database.
func (r Records) FindOrdersBetween(ctx context.Context, merchantID, accountID string, from, to time.Time, after string, limit int) ([]Order, error) {
	return FindOrdersBetween(ctx, r.DB, merchantID, accountID, from, to, after, limit)
}

// LatestNotifications is models.LatestNotifications over the records' database.
func (r Records) LatestNotifications(ctx context.Context, transactionIDs []string) (map[string]Notification, error) {
	return LatestNotifications(ctx, r.DB, transactionIDs)
}

// FindSubscriptionsByID is models.FindSubscriptionsByID over the records' database.
func (r Records) FindSubscriptionsByID(ctx context.Context, ids []string) (map[string]Subscription, error) {
	return FindSubscriptionsByID(ctx, r.DB, ids)
}

// FindStoredCard is models.FindStoredCard over the records' database.
func (r Records) FindStoredCard(ctx context.Context, merchantID, accountID, tokenID string) (*StoredCard, error) {
	return FindStoredCard(ctx, r.DB, merchantID, accountID, tokenID)
}

// DeleteStoredCard is models.DeleteStoredCard over the records' database.
func (r Records) DeleteStoredCard(ctx context.Context, merchantID, accountID, tokenID string, at time.Time) error {
	return DeleteStoredCard(ctx, r.DB, merchantID, accountID, tokenID, at)
}

// MethodTallies is models.MethodTallies over the records' database.
func (r Records) MethodTallies(ctx context.Context, q MethodTallyQuery) ([]optimise.Tally, error) {
	return MethodTallies(ctx, r.DB, q)
}

// FindOrderByTransaction is models.FindOrderByTransaction over the records' database.
func (r Records) FindOrderByTransaction(ctx context.Context, merchantID, accountID, transactionID string) (*Order, error) {
	return FindOrderByTransaction(ctx, r.DB, merchantID, accountID, transactionID)
}

// RefundBlockingDispute is models.RefundBlockingDispute over the records' database.
func (r Records) RefundBlockingDispute(ctx context.Context, transactionID string) (*Dispute, error) {
	return RefundBlockingDispute(ctx, r.DB, transactionID)
}

// FindRefunds is models.FindRefunds over the records' database.
func (r Records) FindRefunds(ctx context.Context, merchantID, accountID string, transactionIDs, refundIDs []string) ([]Refund, error) {
	return FindRefunds(ctx, r.DB, merchantID, accountID, transactionIDs, refundIDs)
}

// FindSubscription is models.FindSubscription over the records' database.
func (r Records) FindSubscription(ctx context.Context, merchantID, accountID, recurringID string) (*Subscription, error) {
	return FindSubscription(ctx, r.DB, merchantID, accountID, recurringID)
}

// FindOrdersChanged is models.FindOrdersChanged over the records' database.
func (r Records) FindOrdersChanged(ctx context.Context, merchantID, accountID string, after *OrderChange, limit int) ([]Order, error) {
	return FindOrdersChanged(ctx, r.DB, merchantID, accountID, after, limit)
}

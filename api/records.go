package api

import (
	"context"
	"time"

	"github.com/paygate/paygate/models"
)

// Records is the one way the handlers reach the record (models.Records is
// the one over Postgres); nil turns off what needs it.
type Records interface {
	FindOrderByTransaction(ctx context.Context, merchantID, accountID, transactionID string) (*models.Order, error)
	FindRefunds(ctx context.Context, merchantID, accountID string, transactionIDs, refundIDs []string) ([]models.Refund, error)
	RefundBlockingDispute(ctx context.Context, transactionID string) (*models.Dispute, error)
	MethodTallies
	FindOrderByNo(ctx context.Context, accountID, orderNo string) (*models.Order, error)
	FindSubscription(ctx context.Context, merchantID, accountID, recurringID string) (*models.Subscription, error)
	FindSubscriptionByID(ctx context.Context, recurringID string) (*models.Subscription, error)
	FindOrderByID(ctx context.Context, transactionID string) (*models.Order, error)
	ReserveCompatibleRefund(ctx context.Context, accountID string, day time.Time, currency string, amount, limit int64) (bool, error)
	ReleaseCompatibleRefund(ctx context.Context, accountID string, day time.Time, currency string, amount int64) error
	SignatureSeen(ctx context.Context, accountID, signatureHash, operation, bodyFingerprint string, at time.Time) (models.SignatureUse, error)
	FindPayout(ctx context.Context, id string) (*models.Payout, error)
	FindOrders(ctx context.Context, merchantID, accountID string, orderNos, transactionIDs []string) ([]models.Order, error)
	FindOrdersBetween(ctx context.Context, merchantID, accountID string, from, to time.Time, after string, limit int) ([]models.Order, error)
	FindOrdersChanged(ctx context.Context, merchantID, accountID string, after *models.OrderChange, limit int) ([]models.Order, error)
	LatestNotifications(ctx context.Context, transactionIDs []string) (map[string]models.Notification, error)
	FindSubscriptionsByID(ctx context.Context, ids []string) (map[string]models.Subscription, error)
	FindStoredCard(ctx context.Context, merchantID, accountID, tokenID string) (*models.StoredCard, error)
	DeleteStoredCard(ctx context.Context, merchantID, accountID, tokenID string, at time.Time) error
}

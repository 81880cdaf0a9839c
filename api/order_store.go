package api

import (
	"context"

	"github.com/paygate/paygate/models"
)

// OrderStore reads the order and refund records the batch and refund query
// endpoints need.
type OrderStore interface {
	FindOrderByTransaction(ctx context.Context, merchantID, accountID, transactionID string) (*models.Order, error)
	FindRefunds(ctx context.Context, merchantID, accountID string, transactionIDs, refundIDs []string) ([]models.Refund, error)
}

package api

import (
	"context"

	"gorm.io/gorm"

	"github.com/paygate/paygate/models"
)

// OrderStore reads the order and refund records the batch and refund query
// endpoints need.
type OrderStore interface {
	FindOrderByTransaction(ctx context.Context, merchantID, accountID, transactionID string) (*models.Order, error)
	FindRefunds(ctx context.Context, merchantID, accountID string, transactionIDs, refundIDs []string) ([]models.Refund, error)
}

// DBStore is the OrderStore over Postgres.
type DBStore struct{ DB *gorm.DB }

// FindOrderByTransaction loads an account's order by transaction id;
// models.ErrNotFound when there is none.
func (d DBStore) FindOrderByTransaction(ctx context.Context, merchantID, accountID, transactionID string) (*models.Order, error) {
	return models.FindOrderByTransaction(ctx, d.DB, merchantID, accountID, transactionID)
}

// FindRefunds loads an account's refunds by order and by refund reference.
func (d DBStore) FindRefunds(ctx context.Context, merchantID, accountID string, transactionIDs, refundIDs []string) ([]models.Refund, error) {
	return models.FindRefunds(ctx, d.DB, merchantID, accountID, transactionIDs, refundIDs)
}

package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/internal/domain/status"
)

// Refund statuses under their older names.
//
// Deprecated: use refund.Pending, refund.Succeeded and refund.Failed.
const (
	RefundPending   = refund.Pending
	RefundSucceeded = refund.Succeeded
	RefundFailed    = refund.Failed
)

// Refund is one refund of an order. Its id is <transaction_id>-NN.
type Refund struct {
	RefundReferenceID string        `gorm:"primaryKey;size:32"`
	TransactionID     string        `gorm:"size:19;not null;index"`
	MerchantID        string        `gorm:"size:32;not null"`
	AccountID         string        `gorm:"size:32;not null;index"`
	OrderNo           string        `gorm:"size:64;not null"`
	Currency          string        `gorm:"size:3;not null"`
	Amount            int64         `gorm:"not null"`
	Reason            string        `gorm:"size:500"`
	Status            refund.Status `gorm:"size:16;not null"`
	ResultCode        string        `gorm:"size:8;not null"`
	ResultMessage     string        `gorm:"size:300;not null"`
	AcquirerRef       string        `gorm:"type:text"`
	// Version and WrittenTask order the workflow's writes, as
	// Order.StateVersion and Order.WrittenTask do.
	Version     int64 `gorm:"not null;default:0"`
	WrittenTask int64 `gorm:"not null;default:0"`
	CreatedAt   time.Time
	SettledAt   *time.Time
	UpdatedAt   time.Time
}

// SaveRefund inserts or updates a refund; retries write the same row, and an
// older write never overwrites a newer one (laterWrite).
func SaveRefund(ctx context.Context, db *gorm.DB, r *Refund) error {
	err := db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "refund_reference_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"status", "result_code", "result_message", "acquirer_ref", "settled_at",
			"version", "written_task", "updated_at"}),
		Where: clause.Where{Exprs: []clause.Expression{clause.Expr{
			SQL: laterWrite("refunds.written_task", "refunds.version", "excluded.written_task", "excluded.version")}}},
	}).Create(r).Error
	if err != nil {
		return fmt.Errorf("save refund %s: %w", r.RefundReferenceID, err)
	}
	return nil
}

// FindRefunds loads an account's refunds by order transaction ids and by
// refund reference ids.
func FindRefunds(ctx context.Context, db *gorm.DB, merchantID, accountID string, transactionIDs, refundIDs []string) ([]Refund, error) {
	var out []Refund
	q := db.WithContext(ctx).Where("merchant_id = ? AND account_id = ?", merchantID, accountID)
	switch {
	case len(transactionIDs) > 0 && len(refundIDs) > 0:
		q = q.Where("transaction_id IN ? OR refund_reference_id IN ?", transactionIDs, refundIDs)
	case len(transactionIDs) > 0:
		q = q.Where("transaction_id IN ?", transactionIDs)
	case len(refundIDs) > 0:
		q = q.Where("refund_reference_id IN ?", refundIDs)
	default:
		return nil, nil
	}
	if err := q.Order("refund_reference_id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("find refunds: %w", err)
	}
	return out, nil
}

// FindOrderByTransaction loads an account's order by transaction id.
func FindOrderByTransaction(ctx context.Context, db *gorm.DB, merchantID, accountID, transactionID string) (*Order, error) {
	var o Order
	err := db.WithContext(ctx).Where("merchant_id = ? AND account_id = ? AND transaction_id = ?", merchantID, accountID, transactionID).Take(&o).Error
	if err == gorm.ErrRecordNotFound {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find order %s: %w", transactionID, err)
	}
	return &o, nil
}

// OrderState is what an operation on an order changes.
type OrderState struct {
	PaymentStatus  status.Payment
	OrderStatus    status.Order
	CapturedAmount int64
	RefundedAmount int64
	Version        int64
	// Task is the workflow task making the write (Order.WrittenTask).
	Task int64
}

// UpdateOrderState writes an order's status and amounts, unless the record
// already holds a newer write of the workflow.
func UpdateOrderState(ctx context.Context, db *gorm.DB, transactionID string, s OrderState) error {
	res := db.WithContext(ctx).Model(&Order{}).Where("transaction_id = ? AND "+writtenBefore, transactionID, s.Task, s.Task, s.Version).Updates(map[string]any{
		"payment_status":  s.PaymentStatus,
		"order_status":    s.OrderStatus,
		"captured_amount": s.CapturedAmount,
		"refunded_amount": s.RefundedAmount,
		"state_version":   s.Version,
		"written_task":    s.Task,
		"updated_at":      time.Now(),
	})
	if res.Error != nil {
		return fmt.Errorf("update order %s: %w", transactionID, res.Error)
	}
	return staleOrMissing(ctx, db, transactionID, res.RowsAffected)
}

// FindOrderByID loads an order by transaction id alone, for callbacks that
// name only our reference.
func FindOrderByID(ctx context.Context, db *gorm.DB, transactionID string) (*Order, error) {
	var o Order
	err := db.WithContext(ctx).Where("transaction_id = ?", transactionID).Take(&o).Error
	if err == gorm.ErrRecordNotFound {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find order %s: %w", transactionID, err)
	}
	return &o, nil
}

package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/adapters/connectors/simacquirer"
	"github.com/paygate/paygate/models"
)

// CaptureInput captures an authorised charge at the acquirer.
type CaptureInput struct {
	ChargeID       string
	IdempotencyKey string
	Amount         int64
}

// CaptureOutcome is the acquirer's answer to a capture.
type CaptureOutcome struct {
	CapturedAmount int64
}

// CaptureCharge captures at the acquirer. An invalid state there is a
// non-retryable AcquirerRejected error.
func (a *Activities) CaptureCharge(ctx context.Context, in CaptureInput) (CaptureOutcome, error) {
	c, err := a.Acquirer.Capture(ctx, in.ChargeID, in.IdempotencyKey, in.Amount)
	if err != nil {
		return CaptureOutcome{}, acquirerError("capture "+in.ChargeID, err)
	}
	return CaptureOutcome{CapturedAmount: c.CapturedAmount}, nil
}

// VoidInput releases an authorisation at the acquirer.
type VoidInput struct {
	ChargeID       string
	IdempotencyKey string
}

// VoidCharge voids an uncaptured charge.
func (a *Activities) VoidCharge(ctx context.Context, in VoidInput) error {
	if _, err := a.Acquirer.Void(ctx, in.ChargeID, in.IdempotencyKey); err != nil {
		return acquirerError("void "+in.ChargeID, err)
	}
	return nil
}

// RefundInput refunds part of a captured charge.
type RefundInput struct {
	ChargeID       string
	IdempotencyKey string
	Amount         int64
}

// RefundOutcome is the acquirer's view of a refund.
type RefundOutcome struct {
	RefundID string
	Status   string // succeeded, pending or failed
}

// RefundCharge asks the acquirer for a refund; it may answer pending.
func (a *Activities) RefundCharge(ctx context.Context, in RefundInput) (RefundOutcome, error) {
	r, err := a.Acquirer.Refund(ctx, in.ChargeID, in.IdempotencyKey, in.Amount)
	if err != nil {
		return RefundOutcome{}, acquirerError("refund "+in.ChargeID, err)
	}
	return RefundOutcome{RefundID: r.RefundID, Status: r.Status}, nil
}

// RefundStatusInput names a refund at the acquirer.
type RefundStatusInput struct {
	RefundID string
}

// RefundStatus reads a refund's current status at the acquirer.
func (a *Activities) RefundStatus(ctx context.Context, in RefundStatusInput) (RefundOutcome, error) {
	r, err := a.Acquirer.GetRefund(ctx, in.RefundID)
	if err != nil {
		return RefundOutcome{}, acquirerError("refund status "+in.RefundID, err)
	}
	return RefundOutcome{RefundID: r.RefundID, Status: r.Status}, nil
}

func acquirerError(what string, err error) error {
	if errors.Is(err, simacquirer.ErrConflict) || errors.Is(err, simacquirer.ErrRejected) || errors.Is(err, simacquirer.ErrNotFound) {
		return temporal.NewNonRetryableApplicationError(what+": refused by the acquirer", ErrTypeAcquirerRejected, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// SaveOrderStateInput is an order's state after an operation.
type SaveOrderStateInput struct {
	TransactionID  string
	Version        int64
	PaymentStatus  int
	OrderStatus    int
	CapturedAmount int64
	RefundedAmount int64
}

// SaveOrderState writes an order's status and amounts.
func (a *Activities) SaveOrderState(ctx context.Context, in SaveOrderStateInput) error {
	return models.UpdateOrderState(ctx, a.DB, in.TransactionID, models.OrderState{
		PaymentStatus:  in.PaymentStatus,
		OrderStatus:    in.OrderStatus,
		CapturedAmount: in.CapturedAmount,
		RefundedAmount: in.RefundedAmount,
		Version:        in.Version,
	})
}

// SaveRefundInput is a refund as the workflow knows it.
type SaveRefundInput struct {
	RefundReferenceID string
	TransactionID     string
	MerchantID        string
	AccountID         string
	OrderNo           string
	Currency          string
	Amount            int64
	Reason            string
	Status            string
	ResultCode        string
	ResultMessage     string
	AcquirerRef       string
	Settled           bool
	Version           int64
}

// SaveRefund inserts or updates the refund's row.
func (a *Activities) SaveRefund(ctx context.Context, in SaveRefundInput) error {
	r := &models.Refund{
		RefundReferenceID: in.RefundReferenceID,
		TransactionID:     in.TransactionID,
		MerchantID:        in.MerchantID,
		AccountID:         in.AccountID,
		OrderNo:           in.OrderNo,
		Currency:          in.Currency,
		Amount:            in.Amount,
		Reason:            in.Reason,
		Status:            in.Status,
		ResultCode:        in.ResultCode,
		ResultMessage:     in.ResultMessage,
		AcquirerRef:       in.AcquirerRef,
		Version:           in.Version,
	}
	if in.Settled {
		now := time.Now()
		r.SettledAt = &now
	}
	return models.SaveRefund(ctx, a.DB, r)
}

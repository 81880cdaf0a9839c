package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

// CaptureInput captures an authorised charge at the acquirer.
type CaptureInput struct {
	// Connector names the order's connector; empty means the default.
	Connector      string
	ChargeID       string
	IdempotencyKey string
	Amount         int64
	Currency       string
}

// CaptureOutcome is the acquirer's answer to a capture.
type CaptureOutcome struct {
	CapturedAmount int64
}

// CaptureCharge captures at the acquirer. An invalid state there is a
// non-retryable AcquirerRejected error.
func (a *Activities) CaptureCharge(ctx context.Context, in CaptureInput) (CaptureOutcome, error) {
	conn, err := a.connector(in.Connector)
	if err != nil {
		return CaptureOutcome{}, err
	}
	c, err := conn.Capture(ctx, connector.CaptureRequest{ChargeID: in.ChargeID, IdempotencyKey: in.IdempotencyKey,
		Amount: in.Amount, Currency: in.Currency})
	if err != nil {
		return CaptureOutcome{}, acquirerError("capture "+in.ChargeID, err)
	}
	return CaptureOutcome{CapturedAmount: c.CapturedAmount}, nil
}

// VoidInput releases an authorisation at the acquirer.
type VoidInput struct {
	// Connector names the order's connector; empty means the default.
	Connector      string
	ChargeID       string
	IdempotencyKey string
}

// VoidCharge voids an uncaptured charge.
func (a *Activities) VoidCharge(ctx context.Context, in VoidInput) error {
	conn, err := a.connector(in.Connector)
	if err != nil {
		return err
	}
	if _, err := conn.Void(ctx, connector.VoidRequest{ChargeID: in.ChargeID, IdempotencyKey: in.IdempotencyKey}); err != nil {
		return acquirerError("void "+in.ChargeID, err)
	}
	return nil
}

// RefundInput refunds part of a captured charge.
type RefundInput struct {
	// Connector names the order's connector; empty means the default.
	Connector      string
	ChargeID       string
	IdempotencyKey string
	Amount         int64
	Currency       string
}

// RefundOutcome is the acquirer's view of a refund, in our words.
type RefundOutcome struct {
	RefundID string
	Status   refund.Status
}

// RefundCharge asks the acquirer for a refund; it may answer pending.
func (a *Activities) RefundCharge(ctx context.Context, in RefundInput) (RefundOutcome, error) {
	conn, err := a.connector(in.Connector)
	if err != nil {
		return RefundOutcome{}, err
	}
	// The connector gives the status in our words (refund.Status): what it
	// calls neither pending nor done is failed, and the workflow settles
	// such a refund as failed and notifies it.
	r, err := conn.Refund(ctx, connector.RefundRequest{ChargeID: in.ChargeID, IdempotencyKey: in.IdempotencyKey,
		Amount: in.Amount, Currency: in.Currency})
	if err != nil {
		return RefundOutcome{}, acquirerError("refund "+in.ChargeID, err)
	}
	return RefundOutcome{RefundID: r.ID, Status: r.Status}, nil
}

// RefundStatusInput names a refund at the acquirer.
type RefundStatusInput struct {
	// Connector names the order's connector; empty means the default.
	Connector string
	RefundID  string
}

// RefundStatus reads a refund's current status at the acquirer.
func (a *Activities) RefundStatus(ctx context.Context, in RefundStatusInput) (RefundOutcome, error) {
	conn, err := a.connector(in.Connector)
	if err != nil {
		return RefundOutcome{}, err
	}
	r, err := conn.GetRefund(ctx, in.RefundID)
	if err != nil {
		return RefundOutcome{}, acquirerError("refund status "+in.RefundID, err)
	}
	return RefundOutcome{RefundID: r.ID, Status: r.Status}, nil
}

// acquirerError makes a connector's refusal (conflict, rejected, not found,
// not offered) non-retryable; anything else is returned for the retry policy.
func acquirerError(what string, err error) error {
	if errors.Is(err, connector.ErrConflict) || errors.Is(err, connector.ErrRejected) || errors.Is(err, connector.ErrNotFound) ||
		errors.Is(err, connector.ErrUnsupported) {
		return temporal.NewNonRetryableApplicationError(what+": refused by the acquirer", ErrTypeAcquirerRejected, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// SaveOrderStateInput is an order's state after an operation.
type SaveOrderStateInput struct {
	TransactionID  string
	Version        int64
	PaymentStatus  status.Payment
	OrderStatus    status.Order
	CapturedAmount int64
	RefundedAmount int64
	// Task is the workflow task making the write (models.Order.WrittenTask);
	// 0 in histories of the releases before it.
	Task int64 `json:",omitempty"`
}

// SaveOrderState writes an order's status and amounts.
func (a *Activities) SaveOrderState(ctx context.Context, in SaveOrderStateInput) error {
	return a.Records.UpdateOrderState(ctx, in.TransactionID, models.OrderState{
		PaymentStatus:  in.PaymentStatus,
		OrderStatus:    in.OrderStatus,
		CapturedAmount: in.CapturedAmount,
		RefundedAmount: in.RefundedAmount,
		Version:        in.Version,
		Task:           in.Task,
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
	Status            refund.Status
	ResultCode        string
	ResultMessage     string
	AcquirerRef       string
	Settled           bool
	Version           int64
	// Task is the workflow task making the write (models.Order.WrittenTask).
	Task int64 `json:",omitempty"`
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
		WrittenTask:       in.Task,
	}
	if in.Settled {
		now := time.Now()
		r.SettledAt = &now
	}
	return a.Records.SaveRefund(ctx, r)
}

// Accepted does nothing, on purpose: a workflow runs it as an activity to
// end its workflow task (workflows.endTask). An update's handler does so
// (workflows.acceptFirst) so that Temporal holds the update before the
// handler's first local activity reaches the acquirer or the record; a routed
// order does so before charging its next connector, so that the last charge
// is in the history. The worker runs it eagerly, in the answer to that task's
// completion.
func (a *Activities) Accepted(ctx context.Context) error { return nil }

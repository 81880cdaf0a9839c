package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/internal/domain/subscription"
	"github.com/paygate/paygate/models"
)

// NextTransactionIDResult is a new transaction id.
type NextTransactionIDResult struct {
	TransactionID string
}

// NextTransactionID hands out a transaction id for an order a workflow
// makes (a subscription's charge). As a (local) activity its result is kept
// in the history, so a replay reuses it.
func (a *Activities) NextTransactionID(ctx context.Context) (NextTransactionIDResult, error) {
	if a.IDs == nil {
		return NextTransactionIDResult{}, errors.New("no transaction-id generator configured")
	}
	return NextTransactionIDResult{TransactionID: a.IDs.Next()}, nil
}

// RecordSubscriptionInput is a new subscription, as its workflow records it.
type RecordSubscriptionInput struct {
	RecurringID        string
	WorkflowID         string
	MerchantID         string
	AccountID          string
	FirstTransactionID string
	TokenID            string
	Terms              subscription.Terms
	At                 time.Time
}

// RecordSubscription records a subscription and names it on its first
// payment's order (cycle 1); a retry finds the row and changes nothing.
func (a *Activities) RecordSubscription(ctx context.Context, in RecordSubscriptionInput) error {
	terms, err := json.Marshal(in.Terms)
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRecordRejected, err)
	}
	return storeError(a.Records.RecordSubscription(ctx, &models.Subscription{
		RecurringID: in.RecurringID, WorkflowID: in.WorkflowID, MerchantID: in.MerchantID, AccountID: in.AccountID,
		FirstTransactionID: in.FirstTransactionID, TokenID: in.TokenID, ContractName: in.Terms.ContractName,
		Terms: terms, Period: in.Terms.Period(), Status: int(subscription.Active), Charges: 1,
		CreatedAt: in.At, UpdatedAt: in.At,
	}))
}

// UpdateSubscriptionInput is a subscription's progress, to be recorded.
type UpdateSubscriptionInput struct {
	RecurringID    string
	Status         int
	Charges        int
	FailedAttempts int
	NextChargeAt   *time.Time
	At             time.Time
	// Plan is what the merchant changed; nil while nothing was.
	Plan *subscription.Plan `json:",omitempty"`
	// Change is the merchant's change that made this progress, if one did.
	Change *SubscriptionChangeEntry `json:",omitempty"`
}

// SubscriptionChangeEntry is a merchant's change of a subscription, as its
// record keeps it.
type SubscriptionChangeEntry struct {
	Seq    int
	Action string
	// Amount is what the next charge charges after the change.
	Amount money.Amount
}

// UpdateSubscription records a subscription's progress, and the change
// that made it.
func (a *Activities) UpdateSubscription(ctx context.Context, in UpdateSubscriptionInput) error {
	u := models.SubscriptionUpdate{
		Status: in.Status, Charges: in.Charges, FailedAttempts: in.FailedAttempts, NextChargeAt: in.NextChargeAt, At: in.At,
	}
	if in.Plan != nil {
		plan, err := json.Marshal(in.Plan)
		if err != nil {
			return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRecordRejected, err)
		}
		u.Plan = plan
	}
	if c := in.Change; c != nil {
		u.Change = &models.SubscriptionChange{Seq: c.Seq, Action: c.Action, Status: in.Status,
			Amount: c.Amount.Minor, Currency: c.Amount.Currency, NextChargeAt: in.NextChargeAt, At: in.At}
	}
	return storeError(a.Records.UpdateSubscription(ctx, in.RecurringID, u))
}

// FindChargeOrderInput names a subscription's charge order.
type FindChargeOrderInput struct {
	MerchantID string
	AccountID  string
	OrderNo    string
}

// ChargeOrderResult is a charge order's recorded result.
type ChargeOrderResult struct {
	TransactionID string
	Approved      bool
	ResultCode    string
	ResultMessage string
}

// errChargeNotFinal: the order has no final result yet; the activity is
// retried until it has.
var errChargeNotFinal = errors.New("charge order not final yet")

// FindChargeOrder reads the result of a charge order made before. It fails
// (and is retried) while the order is missing or still pending.
func (a *Activities) FindChargeOrder(ctx context.Context, in FindChargeOrderInput) (ChargeOrderResult, error) {
	o, err := a.Records.FindOrderByNo(ctx, in.AccountID, in.OrderNo)
	if err != nil {
		return ChargeOrderResult{}, fmt.Errorf("find charge order %s: %w", in.OrderNo, err)
	}
	if o.PaymentStatus == status.Pending {
		return ChargeOrderResult{}, fmt.Errorf("%s: %w", in.OrderNo, errChargeNotFinal)
	}
	return ChargeOrderResult{TransactionID: o.TransactionID, ResultCode: o.ResultCode, ResultMessage: o.ResultMessage,
		Approved: o.PaymentStatus == status.Paid || o.PaymentStatus == status.Authorised}, nil
}

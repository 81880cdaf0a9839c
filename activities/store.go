package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/adapters/vault"
	"github.com/paygate/paygate/internal/domain/capture"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

// RecordOrderInput is a new order as the workflow first records it.
type RecordOrderInput struct {
	TransactionID      string
	WorkflowID         string
	MerchantID         string
	AccountID          string
	OrderNo            string
	Currency           string
	Amount             int64
	PaymentStatus      status.Payment
	OrderStatus        status.Order
	ResultCode         string
	ResultMessage      string
	CaptureMode        capture.Mode
	CardMasked         string
	CardBrand          string
	CardToken          string
	CardFingerprint    string
	RequestFingerprint string
	Details            order.Details
	// TokenID is the stored card the order charges, if it charges one.
	TokenID string
	// RecurringID and RecurringCycle name the subscription charge this
	// order is, if it is one.
	RecurringID    string
	RecurringCycle int
	// Risk, when set, is the risk check of a new order, run once the row is
	// written: one local activity instead of two in the payment's first
	// workflow task.
	Risk *RiskInput `json:",omitempty"`
}

// RecordOrderResult tells whether the order_no was already taken by an older
// order of the account, and carries the risk verdict when the input asked
// for the check and the order is new.
type RecordOrderResult struct {
	ExistingTransactionID string
	Risk                  *risk.Result `json:",omitempty"`
}

// storeError classifies a failed record write for the workflow's retry
// policy. A write Postgres refused for its values, and a transaction id that
// is another order's, are non-retryable with their own types, so that the
// workflow ends the order with a final code instead of retrying a write that
// cannot succeed (and failing when the retries run out). Anything else, such
// as a lost connection, is returned as it is and retried.
func storeError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, models.ErrTransactionIDConflict):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeTransactionIDConflict, err)
	case models.IsDataError(err):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRecordRejected, err)
	}
	return err
}

// RecordOrder inserts the order row; a retry finds it there and does nothing.
// A row Postgres refuses is a RecordRejected error, a transaction id that is
// another order's a TransactionIDConflict error; neither is retried.
func (a *Activities) RecordOrder(ctx context.Context, in RecordOrderInput) (RecordOrderResult, error) {
	existing, err := a.Records.InsertOrder(ctx, orderRow(in))
	if err != nil {
		return RecordOrderResult{}, storeError(err)
	}
	if existing != "" || in.Risk == nil {
		return RecordOrderResult{ExistingTransactionID: existing}, nil
	}
	// A failed check fails the whole activity; its retry finds the row
	// written and checks again, answering the verdict an earlier check
	// wrote on the row, if one did (CheckRisk).
	verdict, err := a.CheckRisk(ctx, *in.Risk)
	if err != nil {
		return RecordOrderResult{}, err
	}
	return RecordOrderResult{Risk: &verdict}, nil
}

// orderRow is the order row RecordOrder writes.
func orderRow(in RecordOrderInput) *models.Order {
	return &models.Order{
		TransactionID:      in.TransactionID,
		WorkflowID:         in.WorkflowID,
		MerchantID:         in.MerchantID,
		AccountID:          in.AccountID,
		OrderNo:            in.OrderNo,
		Currency:           in.Currency,
		Amount:             in.Amount,
		PaymentStatus:      in.PaymentStatus,
		OrderStatus:        in.OrderStatus,
		ResultCode:         in.ResultCode,
		ResultMessage:      in.ResultMessage,
		CaptureMode:        in.CaptureMode,
		CardMasked:         in.CardMasked,
		CardBrand:          in.CardBrand,
		CardToken:          in.CardToken,
		CardFingerprint:    in.CardFingerprint,
		RequestFingerprint: in.RequestFingerprint,
		Details:            in.Details,
		TokenID:            in.TokenID,
		RecurringID:        in.RecurringID,
		RecurringCycle:     in.RecurringCycle,
	}
}

// RecordAndChargeInput is a new card order's record with its risk check
// (Record.Risk is set), and the first attempt of its charge.
type RecordAndChargeInput struct {
	Record RecordOrderInput
	Charge AuthoriseInput
}

// RecordAndChargeResult is RecordOrder's result and, when the order was
// charged, the first attempt's.
type RecordAndChargeResult struct {
	Record RecordOrderResult
	// Charge is nil when the charge was not tried: the order_no is an
	// older order's, or the risk check stopped the order.
	Charge *ChargeAttempt `json:",omitempty"`
}

// ChargeAttempt is how one Authorise attempt ended, as data: a charge
// that failed is the workflow's to handle (ask the acquirer, try again),
// not a reason to record the order again.
type ChargeAttempt struct {
	// Outcome is the acquirer's answer, approved or declined.
	Outcome *ChargeOutcome `json:",omitempty"`
	// ErrType and ErrMessage are a non-retryable error's (an acquirer
	// that did not answer in time, refused the request, is down; a card
	// not in the vault or deleted).
	ErrType    string `json:",omitempty"`
	ErrMessage string `json:",omitempty"`
	// Retry: the attempt failed in a way Authorise's retry policy retries
	// (a database or network error before the acquirer answered).
	Retry bool `json:",omitempty"`
}

// recordStepTimeout bounds RecordAndCharge's record and risk check, as the
// workflow's own timeout bounds RecordOrder's: the activity's own timeout
// is this and the charge's.
const recordStepTimeout = 10 * time.Second

// RecordAndCharge records a new card order and runs its risk check
// (RecordOrder), then, when the verdict lets the order be charged, makes the
// charge's first attempt (Authorise) in the same local activity: one step
// of the workflow fewer on every payment (shape 5). A failed record or
// check fails the activity, which is retried as RecordOrder is; a failed
// charge does not: the attempt's end is returned, and the workflow takes
// it as its first Authorise's. After a worker died mid-charge, the
// workflow task runs again and this activity with it, as its first
// attempt: it records nothing twice, answers the verdict the order was
// first given (CheckRisk) and sends the charge again with the same
// idempotency key, as Authorise run again would. A later attempt of the
// activity (the one before failed or timed out) charges nothing: it leaves
// the charge to the workflow's Authorise.
func (a *Activities) RecordAndCharge(ctx context.Context, in RecordAndChargeInput) (RecordAndChargeResult, error) {
	return a.recordAndCharge(ctx, in, !activity.IsActivity(ctx) || activity.GetInfo(ctx).Attempt <= 1)
}

// recordAndCharge is RecordAndCharge's attempt; first tells whether it is
// the activity's first.
func (a *Activities) recordAndCharge(ctx context.Context, in RecordAndChargeInput, first bool) (RecordAndChargeResult, error) {
	// The card is read from the vault beside the record and the check, so
	// that the charge waits for neither: in the record's pipeline where it
	// can go (recordPiped), else in a goroutine of its own. The channel
	// holds the answer for an order that is not charged after all.
	var (
		opened   chan openedCard
		recorded RecordOrderResult
		piped    bool
		err      error
	)
	if first {
		opened = make(chan openedCard, 1)
		recorded, piped, err = a.recordPiped(ctx, in, opened)
	}
	if first && !piped {
		go func() {
			// A panic here would end the worker, not the attempt.
			defer func() {
				if r := recover(); r != nil {
					opened <- openedCard{err: fmt.Errorf("open card: panic: %v", r)}
				}
			}()
			c, err := a.Vault.Detokenize(ctx, in.Charge.CardToken)
			opened <- openedCard{card: c, err: err}
		}()
	}
	if !piped {
		rctx, cancel := context.WithTimeout(ctx, recordStepTimeout)
		recorded, err = a.RecordOrder(rctx, in.Record)
		cancel()
	}
	if err != nil {
		return RecordAndChargeResult{}, err
	}
	if recorded.Risk == nil || !order.RiskPasses(*recorded.Risk) {
		return RecordAndChargeResult{Record: recorded}, nil
	}
	if !first {
		// An attempt after this activity failed or timed out: the charge
		// is left to chargeAt's Authorise, whose first attempt checks a
		// stored card's deletion and whose retries end in an inquiry, as
		// at shape 4. An earlier attempt of this activity may have sent
		// it; the same idempotency key finds it.
		return RecordAndChargeResult{Record: recorded, Charge: &ChargeAttempt{Retry: true}}, nil
	}
	outcome, err := a.authorise(ctx, in.Charge, opened)
	return RecordAndChargeResult{Record: recorded, Charge: a.attemptOf(in.Charge, outcome, err)}, nil
}

// pipelinedVault is a vault whose statements can go to Postgres in a
// pipeline of the record's (vault.Vault).
type pipelinedVault interface {
	QueueDetokenize(ctx context.Context, p *models.Pipeline, token string) (open func() (vault.Card, error), ok bool)
	QueueDropCVV(ctx context.Context, p *models.Pipeline, token string) (done func() error, ok bool)
}

// The vault sends its statements in the record's pipelines; a rename would
// silently send them alone.
var _ pipelinedVault = (*vault.Vault)(nil)

// recordPiped is a first attempt's record and risk check with the card's
// read, sent to Postgres together: the order's insert, the velocity count
// and the card's read go in one round trip (a pipeline, each statement
// committed before the next begins, so the count sees every order recorded
// before it as RecordOrder's does), then the verdict is kept. The card is
// sent on opened. piped is false, and nothing done, where the order does
// not carry its risk settings or the record and the vault are not one
// database: RecordOrder then does the work.
func (a *Activities) recordPiped(ctx context.Context, in RecordAndChargeInput, opened chan<- openedCard) (recorded RecordOrderResult, piped bool, err error) {
	pv, ok := a.Vault.(pipelinedVault)
	if !ok || a.Records.DB == nil || in.Record.Risk == nil || in.Record.Risk.Settings == nil {
		return RecordOrderResult{}, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, recordStepTimeout)
	defer cancel()
	p := a.Records.Pipeline()
	openCard, ok := pv.QueueDetokenize(ctx, p, in.Charge.CardToken)
	if !ok {
		return RecordOrderResult{}, false, nil
	}
	q, err := a.questionOf(ctx, *in.Record.Risk)
	if err != nil {
		opened <- openedCard{err: err}
		return RecordOrderResult{}, true, err
	}
	row := orderRow(in.Record)
	inserted, insert := models.QueueInsertOrder(ctx, p, row)
	counts, count := models.QueueCountVelocity(ctx, p, q.velocity)
	// A pipeline that failed as a whole leaves its error on every step.
	_ = p.Send(ctx)
	c, cerr := openCard()
	opened <- openedCard{card: c, err: cerr}
	switch {
	case insert.Err != nil:
		return RecordOrderResult{}, true, storeError(fmt.Errorf("insert order %s: %w", row.TransactionID, insert.Err))
	case !*inserted:
		// A repeat of the order, or another order's order_no or
		// transaction id: RecordOrder's to judge, as the first time.
		recorded, err := a.RecordOrder(ctx, in.Record)
		return recorded, true, err
	case count.Err != nil:
		return RecordOrderResult{}, true, fmt.Errorf("risk check: %w", count.Err)
	}
	verdict, err := a.riskVerdict(ctx, q, *counts)
	if err != nil {
		return RecordOrderResult{}, true, err
	}
	return RecordOrderResult{Risk: &verdict}, true, nil
}

// attemptOf is an Authorise attempt's end as data.
func (a *Activities) attemptOf(in AuthoriseInput, outcome ChargeOutcome, err error) *ChargeAttempt {
	if err == nil {
		return &ChargeAttempt{Outcome: &outcome}
	}
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.NonRetryable() {
		return &ChargeAttempt{ErrType: appErr.Type(), ErrMessage: appErr.Message()}
	}
	if a.Logger != nil {
		a.Logger.Warn("charge attempt failed: the workflow tries again", "reference", in.Reference, "error", err)
	}
	return &ChargeAttempt{Retry: true, ErrMessage: err.Error()}
}

// FinishOrderInput is the outcome of a payment attempt, to be recorded.
type FinishOrderInput struct {
	TransactionID string
	// Version is the workflow's write counter; see models.Order.StateVersion.
	Version int64
	// Task is the workflow task making the write (models.Order.WrittenTask).
	Task           int64 `json:",omitempty"`
	PaymentStatus  status.Payment
	OrderStatus    status.Order
	ResultCode     string
	ResultMessage  string
	CapturedAmount int64
	Risk           risk.Result
	Connector      string
	ConnectorRef   string
	AuthCode       string
	Is3DS          bool
	ThreeDSResult  string
	// DropCVVToken, when set, names the card whose security code is
	// forgotten before the outcome is written (DropCVV): the authorisation
	// is over, and one local activity does both.
	DropCVVToken string `json:",omitempty"`
	// Reopen, when set, is what the order's next run starts from, saved in
	// the same statement as the outcome (SaveOrderReopen's save, folded in).
	Reopen *SaveReopenInput `json:",omitempty"`
}

// FinishOrder records the outcome on the order row. A write Postgres refuses
// is a RecordRejected error, which is not retried.
//
// The security code is forgotten beside the write, not before it: the two
// touch different rows, each is safe to repeat, and a retry of the activity
// repeats both; the answer then waits for one round trip to Postgres, not
// two.
func (a *Activities) FinishOrder(ctx context.Context, in FinishOrderInput) error {
	if piped, err := a.finishPiped(ctx, in); piped {
		return err
	}
	dropped := make(chan error, 1)
	if in.DropCVVToken != "" {
		go func() {
			// A panic here would end the worker, not the attempt.
			defer func() {
				if r := recover(); r != nil {
					dropped <- fmt.Errorf("drop security code: panic: %v", r)
				}
			}()
			dropped <- a.Vault.DropCVV(ctx, in.DropCVVToken)
		}()
	} else {
		dropped <- nil
	}
	return finishErr(a.finishOrder(ctx, in), <-dropped)
}

// finishPiped is FinishOrder's write and the security code's drop sent to
// Postgres together, in one round trip; piped is false, and nothing done,
// where there is no code to drop or the record and the vault are not one
// database.
func (a *Activities) finishPiped(ctx context.Context, in FinishOrderInput) (piped bool, err error) {
	pv, ok := a.Vault.(pipelinedVault)
	if in.DropCVVToken == "" || !ok || a.Records.DB == nil {
		return false, nil
	}
	p := a.Records.Pipeline()
	dropped, ok := pv.QueueDropCVV(ctx, p, in.DropCVVToken)
	if !ok {
		return false, nil
	}
	written := models.QueueUpdateOrderResult(ctx, p, in.TransactionID, orderResultOf(in))
	// A pipeline that failed as a whole leaves its error on every step.
	_ = p.Send(ctx)
	return true, finishErr(storeError(written()), dropped())
}

// finishErr is FinishOrder's end from the outcome's write's and the
// security code's drop's.
func finishErr(err, derr error) error {
	switch {
	case derr != nil && err != nil:
		// The drop's failure is retried whatever the write's was, so the
		// write's error is told but not wrapped: a write Postgres refused
		// must not stop the retry that drops the code.
		return fmt.Errorf("finish order: %w (and the outcome's write: %v)", derr, err)
	case derr != nil:
		return fmt.Errorf("finish order: %w", derr)
	}
	return err
}

// finishOrder writes the outcome of FinishOrder.
func (a *Activities) finishOrder(ctx context.Context, in FinishOrderInput) error {
	return storeError(a.Records.UpdateOrderResult(ctx, in.TransactionID, orderResultOf(in)))
}

// orderResultOf is the outcome FinishOrder writes.
func orderResultOf(in FinishOrderInput) models.OrderResult {
	reasons := make([]models.RiskReason, 0, len(in.Risk.Reasons))
	for _, r := range in.Risk.Reasons {
		reasons = append(reasons, models.RiskReason{Name: r.Name, Status: r.Status})
	}
	var reopen *models.ReopenSave
	if r := in.Reopen; r != nil {
		reopen = &models.ReopenSave{Run: r.Run, Input: r.Input, At: time.Now()}
	}
	return models.OrderResult{
		Reopen:         reopen,
		PaymentStatus:  in.PaymentStatus,
		OrderStatus:    in.OrderStatus,
		ResultCode:     in.ResultCode,
		ResultMessage:  in.ResultMessage,
		CapturedAmount: in.CapturedAmount,
		RiskAction:     in.Risk.Action,
		RiskScore:      in.Risk.Score,
		RiskReasons:    reasons,
		Connector:      in.Connector,
		ConnectorRef:   in.ConnectorRef,
		AuthCode:       in.AuthCode,
		Is3DS:          in.Is3DS,
		ThreeDSResult:  in.ThreeDSResult,
		Version:        in.Version,
		Task:           in.Task,
	}
}

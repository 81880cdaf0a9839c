// Package flows starts the gateway's workflows on Temporal and talks to
// them for the API: the Temporal client adapters its handlers are handed
// behind their interfaces.
package flows

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/workflows"
)

var (
	// ErrOrderMismatch is returned when an order_no is reused with other content.
	ErrOrderMismatch = errors.New("order_no already used with different content")
	// ErrOrderClosed is returned when the order's workflow has already
	// completed; its answer is then read from the record.
	ErrOrderClosed = errors.New("order workflow already closed")
)

// TemporalOrders runs order workflows on Temporal.
type TemporalOrders struct {
	Client client.Client
	// Wait bounds how long a request waits for the payment result; the
	// order goes on and a repeat of the request gets its answer.
	Wait time.Duration
	// Answers, where a worker runs in this process on Client, makes
	// Authorise start orders eagerly on it and wait for their answers here
	// (authoriseEagerly); nil sends every payment by Update-with-Start.
	Answers LocalAnswers
	// EagerWait bounds the wait for an eager answer (DefaultEagerWait when
	// zero).
	EagerWait time.Duration
}

// defaultWait bounds a call when Wait is unset.
const defaultWait = 60 * time.Second

// bounded is ctx bounded by the wait for a workflow's answer.
func (t *TemporalOrders) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	wait := t.Wait
	if wait <= 0 {
		wait = defaultWait
	}
	return context.WithTimeout(ctx, wait)
}

// Authorise starts the order's workflow, or finds the running one, and waits
// for its payment result in one round trip (Update-with-Start), or, with
// Answers, starts it eagerly on this process's worker (authoriseEagerly).
func (t *TemporalOrders) Authorise(ctx context.Context, in workflows.OrderInput) (workflows.PaymentResult, error) {
	ctx, cancel := t.bounded(ctx)
	defer cancel()
	id := workflows.OrderWorkflowID(in.MerchantID, in.AccountID, in.OrderNo)
	opts := orderStart(id, enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		workflows.SearchMerchantID.ValueSet(in.MerchantID),
		workflows.SearchAccountID.ValueSet(in.AccountID),
		workflows.SearchOrderNo.ValueSet(in.OrderNo),
		workflows.SearchTransactionID.ValueSet(in.TransactionID),
		workflows.SearchPaymentStatus.ValueSet(int64(status.Pending)),
		workflows.SearchConnector.ValueSet(cmp.Or(in.Connector, workflows.DefaultConnector)),
	)
	if t.Answers != nil {
		return t.authoriseEagerly(ctx, id, opts, in)
	}
	start := t.Client.NewWithStartWorkflowOperation(opts, workflows.OrderWorkflowType, in)
	handle, err := t.Client.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateName:   workflows.UpdateAuthorise,
			Args:         []any{workflows.AuthoriseRequest{RequestFingerprint: in.RequestFingerprint}},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	return paymentResultOf(ctx, handle, err)
}

// orderStart is how an update starts an order's workflow when none is open
// and finds it when one is: the payment's (reuse REJECT_DUPLICATE: an
// order_no pays once) and an operation's reopen (ALLOW_DUPLICATE).
func orderStart(id string, reuse enumspb.WorkflowIdReusePolicy, attrs ...temporal.SearchAttributeUpdate) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                workflows.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    reuse,
		TypedSearchAttributes:    temporal.NewSearchAttributes(attrs...),
	}
}

// paymentResultOf waits for the payment result of an update that was sent
// (err: or not), its errors classified.
func paymentResultOf(ctx context.Context, handle client.WorkflowUpdateHandle, err error) (workflows.PaymentResult, error) {
	if err != nil {
		return workflows.PaymentResult{}, classify(err)
	}
	var res workflows.PaymentResult
	if err := handle.Get(ctx, &res); err != nil {
		return workflows.PaymentResult{}, classify(err)
	}
	return res, nil
}

// classify turns the error of a payment update into ErrOrderMismatch,
// ErrOrderClosed or a wrapped error.
func classify(err error) error {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Type() == workflows.ErrTypeOrderMismatch {
		return ErrOrderMismatch
	}
	if errors.As(err, &appErr) && appErr.Type() == workflows.ErrTypeOrderClosed {
		// A reopened run with nothing to carry on from.
		return ErrOrderClosed
	}
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return ErrOrderClosed
	}
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return ErrOrderClosed
	}
	return fmt.Errorf("authorise update: %w", err)
}

// SignalThreeDS wakes the order for the ACS's outcome of an authentication.
func (t *TemporalOrders) SignalThreeDS(ctx context.Context, workflowID string, r workflows.ThreeDSResult) error {
	return openOnly(t.Client.SignalWorkflow(ctx, workflowID, "", workflows.SignalThreeDSResult, r))
}

// SignalAPM wakes the order for the provider's status of a payment.
func (t *TemporalOrders) SignalAPM(ctx context.Context, workflowID string, r workflows.APMResult) error {
	return openOnly(t.Client.SignalWorkflow(ctx, workflowID, "", workflows.SignalAPMResult, r))
}

// openOnly drops the error of a signal to an order whose workflow has
// closed: it ended, or closed when idle, and an order waiting for its
// shopper is never idle, so nothing there waits for the word. The callback
// is answered as taken, and its sender does not send it again.
func openOnly(err error) error {
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return nil
	}
	return err
}

// State asks the order's workflow for its state.
func (t *TemporalOrders) State(ctx context.Context, workflowID string) (workflows.OrderState, error) {
	v, err := t.Client.QueryWorkflow(ctx, workflowID, "", workflows.QueryOrderState)
	if err != nil {
		return workflows.OrderState{}, err
	}
	var st workflows.OrderState
	err = v.Get(&st)
	return st, err
}

// Pay gives a checkout order the shopper's card and waits for the result.
func (t *TemporalOrders) Pay(ctx context.Context, workflowID string, req workflows.PayRequest) (workflows.PaymentResult, error) {
	return t.update(ctx, workflowID, workflows.UpdatePay, req)
}

// PayAPM starts a checkout order's payment with the APM the shopper chose
// and waits for where the shopper goes next.
func (t *TemporalOrders) PayAPM(ctx context.Context, workflowID string, req workflows.PayAPMRequest) (workflows.PaymentResult, error) {
	return t.update(ctx, workflowID, workflows.UpdatePayAPM, req)
}

// CancelCheckout ends a checkout the shopper left.
func (t *TemporalOrders) CancelCheckout(ctx context.Context, workflowID string) (workflows.PaymentResult, error) {
	return t.update(ctx, workflowID, workflows.UpdateShopperCancel, struct{}{})
}

// update sends a shopper's update to a checkout order and waits for the
// payment result.
func (t *TemporalOrders) update(ctx context.Context, workflowID, name string, arg any) (workflows.PaymentResult, error) {
	ctx, cancel := t.bounded(ctx)
	defer cancel()
	h, err := t.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: workflowID, UpdateName: name, Args: []any{arg}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	return paymentResultOf(ctx, h, err)
}

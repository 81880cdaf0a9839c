package api

import (
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
}

// Authorise starts the order's workflow, or finds the running one, and waits
// for its payment result in one round trip (Update-with-Start).
func (t *TemporalOrders) Authorise(ctx context.Context, in workflows.OrderInput) (workflows.PaymentResult, error) {
	wait := t.Wait
	if wait <= 0 {
		wait = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	id := workflows.OrderWorkflowID(in.MerchantID, in.AccountID, in.OrderNo)
	start := t.Client.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                workflows.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			workflows.SearchMerchantID.ValueSet(in.MerchantID),
			workflows.SearchAccountID.ValueSet(in.AccountID),
			workflows.SearchOrderNo.ValueSet(in.OrderNo),
			workflows.SearchTransactionID.ValueSet(in.TransactionID),
			workflows.SearchPaymentStatus.ValueSet(int64(status.Pending)),
		),
	}, workflows.OrderWorkflowType, in)
	handle, err := t.Client.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateName:   workflows.UpdateAuthorise,
			Args:         []any{workflows.AuthoriseRequest{RequestFingerprint: in.RequestFingerprint}},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	if err != nil {
		return workflows.PaymentResult{}, classify(err)
	}
	var res workflows.PaymentResult
	if err := handle.Get(ctx, &res); err != nil {
		return workflows.PaymentResult{}, classify(err)
	}
	return res, nil
}

func classify(err error) error {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Type() == workflows.ErrTypeOrderMismatch {
		return ErrOrderMismatch
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

package flows

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/workflows"
)

// ErrEntryRefused is returned when the order refuses an entry before
// anything is recorded: the update's validator rejected it, or the order's
// workflow no longer takes operations.
type ErrEntryRefused struct {
	Code    string // result code ID, such as I0019
	Message string // the reason
}

func (e *ErrEntryRefused) Error() string { return "entry refused: " + e.Code + ":" + e.Message }

// ErrOutcomeUnknown is returned when an operation was sent but its answer did
// not come within the wait: it may still complete. A capture, cancel or
// review sent again with the same content attaches to the same update; a
// refund must not be sent again, but looked up.
var ErrOutcomeUnknown = errors.New("operation sent, outcome not known in time")

// updateIDLength is how many hex digits of the content hash an update id keeps.
const updateIDLength = 32

// Capture sends a capture update. Identical requests share one update.
func (t *TemporalOrders) Capture(ctx context.Context, workflowID string, req workflows.CaptureRequest) (workflows.OperationResult, error) {
	return t.operate(ctx, workflowID, workflows.UpdateCapture, contentUpdateID(workflows.UpdateCapture, req), req)
}

// Cancel sends a cancel update. Identical requests share one update.
func (t *TemporalOrders) Cancel(ctx context.Context, workflowID string, req workflows.CancelRequest) (workflows.OperationResult, error) {
	return t.operate(ctx, workflowID, workflows.UpdateCancel, contentUpdateID(workflows.UpdateCancel, req), req)
}

// Review sends a review update. Identical requests share one update.
func (t *TemporalOrders) Review(ctx context.Context, workflowID string, req workflows.ReviewRequest) (workflows.OperationResult, error) {
	return t.operate(ctx, workflowID, workflows.UpdateReview, contentUpdateID(workflows.UpdateReview, req), req)
}

// Refund sends a refund update. Every refund request is a new refund, so the
// update id is left to the SDK (a fresh one per request).
func (t *TemporalOrders) Refund(ctx context.Context, workflowID string, req workflows.RefundRequest) (workflows.OperationResult, error) {
	return t.operate(ctx, workflowID, workflows.UpdateRefund, "", req)
}

// operate runs one update on the order's workflow and waits, at most Wait,
// for its result.
func (t *TemporalOrders) operate(ctx context.Context, workflowID, name, updateID string, arg any) (workflows.OperationResult, error) {
	ctx, cancel := t.bounded(ctx)
	defer cancel()
	handle, err := t.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   workflowID,
		UpdateName:   name,
		UpdateID:     updateID,
		Args:         []any{arg},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return workflows.OperationResult{}, classifyOperation(ctx, name, err)
	}
	var res workflows.OperationResult
	if err := handle.Get(ctx, &res); err != nil {
		return workflows.OperationResult{}, classifyOperation(ctx, name, err)
	}
	return res, nil
}

// contentUpdateID derives an update id from the request's content, so that
// identical requests (concurrent or repeated) are one update with one answer.
func contentUpdateID(name string, req any) string {
	b, err := json.Marshal(req)
	if err != nil {
		// The request types are plain structs; this cannot happen. An empty
		// id makes the SDK pick a fresh one, which is still correct.
		return ""
	}
	sum := sha256.Sum256(b)
	return name + "-" + hex.EncodeToString(sum[:])[:updateIDLength]
}

// classifyOperation turns the error of an update into ErrEntryRefused,
// ErrOutcomeUnknown or a wrapped system error. ctx is the bounded context of
// the call.
func classifyOperation(ctx context.Context, name string, err error) error {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Type() == workflows.ErrTypeEntryRefused {
		id := codes.InvalidState.ID
		var detail string
		if appErr.HasDetails() && appErr.Details(&detail) == nil && detail != "" {
			id = detail
		}
		return &ErrEntryRefused{Code: id, Message: appErr.Message()}
	}
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		// The order's workflow has ended (or never ran): the order is final.
		return &ErrEntryRefused{Code: codes.InvalidState.ID, Message: codes.InvalidState.Message}
	}
	var timedOut *client.WorkflowUpdateServiceTimeoutOrCanceledError
	if errors.As(err, &timedOut) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return fmt.Errorf("%s update: %w: %w", name, ErrOutcomeUnknown, err)
	}
	return fmt.Errorf("%s update: %w", name, err)
}

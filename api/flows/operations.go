package flows

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
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
	return t.operate(ctx, workflowID, req.Entry, workflows.UpdateCapture, contentUpdateID(workflows.UpdateCapture, req), req)
}

// Cancel sends a cancel update. Identical requests share one update.
func (t *TemporalOrders) Cancel(ctx context.Context, workflowID string, req workflows.CancelRequest) (workflows.OperationResult, error) {
	return t.operate(ctx, workflowID, req.Entry, workflows.UpdateCancel, contentUpdateID(workflows.UpdateCancel, req), req)
}

// Review sends a review update. Identical requests share one update.
func (t *TemporalOrders) Review(ctx context.Context, workflowID string, req workflows.ReviewRequest) (workflows.OperationResult, error) {
	return t.operate(ctx, workflowID, req.Entry, workflows.UpdateReview, contentUpdateID(workflows.UpdateReview, req), req)
}

// Refund sends a refund update. Every refund request is a new refund: its
// update id is drawn once per request, so that the request's own retries
// (reopenRetries) are still one update.
func (t *TemporalOrders) Refund(ctx context.Context, workflowID string, req workflows.RefundRequest) (workflows.OperationResult, error) {
	return t.operate(ctx, workflowID, req.Entry, workflows.UpdateRefund, freshUpdateID(workflows.UpdateRefund), req)
}

// reopenRetries is how often an operation is sent again when the order's
// workflow closed between the update's arrival and its delivery: the next
// attempt reopens it.
const reopenRetries = 3

// operate runs one update on the order's workflow and waits, at most Wait,
// for its result. An order whose workflow closed when idle is reopened by
// the same call (Update-with-Start): the new run takes the order's state
// from the record (workflows: reopen).
func (t *TemporalOrders) operate(ctx context.Context, workflowID string, entry workflows.EntryRef, name, updateID string, arg any) (workflows.OperationResult, error) {
	ctx, cancel := t.bounded(ctx)
	defer cancel()
	for attempt := 1; ; attempt++ {
		res, err := t.operateOnce(ctx, workflowID, entry, name, updateID, arg)
		if err == nil {
			return res, nil
		}
		if attempt == reopenRetries || !closedMeanwhile(err) || ctx.Err() != nil {
			return workflows.OperationResult{}, classifyOperation(ctx, name, err)
		}
	}
}

func (t *TemporalOrders) operateOnce(ctx context.Context, workflowID string, entry workflows.EntryRef, name, updateID string, arg any) (workflows.OperationResult, error) {
	start := t.Client.NewWithStartWorkflowOperation(orderStart(workflowID, enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		workflows.SearchOrderNo.ValueSet(entry.OrderNo),
		workflows.SearchTransactionID.ValueSet(entry.TransactionID),
	), workflows.OrderWorkflowType, workflows.OrderInput{
		TransactionID: entry.TransactionID, OrderNo: entry.OrderNo, Shape: workflows.CurrentOrderShape, Reopen: true,
	})
	handle, err := t.Client.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateName:   name,
			UpdateID:     updateID,
			Args:         []any{arg},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	if err != nil {
		return workflows.OperationResult{}, err
	}
	var res workflows.OperationResult
	if err := handle.Get(ctx, &res); err != nil {
		return workflows.OperationResult{}, err
	}
	return res, nil
}

// closedMeanwhile reports whether an update failed without being applied
// in a way that sending it again cures: the run it was sent to completed
// before taking it (the order closed when idle just as the operation
// arrived; the next attempt reopens it), or the workflow task that took it
// failed on the server (WorkflowNotReady).
func closedMeanwhile(err error) bool {
	var notFound *serviceerror.NotFound
	var notReady *serviceerror.WorkflowNotReady
	return errors.As(err, &notFound) || errors.As(err, &notReady)
}

// freshUpdateID is a new update id for name.
func freshUpdateID(name string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return name + "-" + hex.EncodeToString(b[:])
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

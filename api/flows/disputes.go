package flows

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/workflows"
)

// TemporalDisputes wakes disputes' workflows.
type TemporalDisputes struct {
	Client client.Client
	// NotifySchedule is the retry schedule of the merchant's dispute
	// notifications, the one its other notifications follow.
	NotifySchedule notify.Schedule
}

// Word wakes the dispute's workflow, starting it on the acquirer's first
// word: one workflow per connector and dispute id, never started twice. A
// word for a dispute whose workflow has ended changes nothing.
func (t *TemporalDisputes) Word(ctx context.Context, connector, disputeID string) error {
	id := workflows.DisputeWorkflowID(connector, disputeID)
	_, err := t.Client.SignalWithStartWorkflow(ctx, id, workflows.SignalDisputeWord, nil, client.StartWorkflowOptions{
		ID: id, TaskQueue: workflows.TaskQueue, WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, workflows.DisputeWorkflowType, workflows.DisputeInput{Connector: connector, DisputeID: disputeID, NotifySchedule: t.NotifySchedule})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("wake dispute %s: %w", id, err)
	}
	return nil
}

// ErrDisputeNotAnswerable: the dispute does not wait for the merchant's
// answer (it is under review, decided, or its workflow has ended).
var ErrDisputeNotAnswerable = errors.New("the dispute does not wait for an answer")

// ErrAnswerRefused: the acquirer refused the answer; the dispute, as the
// workflow then read it from the acquirer, says whether it still waits
// for one (the evidence was refused) or has moved on.
var ErrAnswerRefused = fmt.Errorf("%w: the acquirer refused it", ErrDisputeNotAnswerable)

// answerWait bounds how long a merchant's answer is sent again while
// Temporal did not take it (TemporalBusy).
const answerWait = 30 * time.Second

// Answer sends the merchant's answer (workflows.UpdateDisputeEvidence or
// UpdateAcceptDispute) and waits for the dispute's state after it. An
// answer Temporal did not take is sent again under the same update id, so
// it is applied once.
func (t *TemporalDisputes) Answer(ctx context.Context, connector, disputeID, update string) (workflows.DisputeState, error) {
	updateID := freshUpdateID(update)
	var st workflows.DisputeState
	err := RetryBusy(ctx, answerWait, func(ctx context.Context) error {
		h, err := t.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
			WorkflowID: workflows.DisputeWorkflowID(connector, disputeID), UpdateName: update, UpdateID: updateID,
			WaitForStage: client.WorkflowUpdateStageCompleted,
		})
		if err != nil {
			return err
		}
		return h.Get(ctx, &st)
	})
	var notFound *serviceerror.NotFound
	var appErr *temporal.ApplicationError
	switch {
	case errors.As(err, &appErr) && appErr.Type() == workflows.ErrTypeEntryRefused && appErr.Message() == workflows.AnswerRefusedByAcquirer:
		return st, ErrAnswerRefused
	case errors.As(err, &notFound), errors.As(err, &appErr) && appErr.Type() == workflows.ErrTypeEntryRefused:
		return st, ErrDisputeNotAnswerable
	case err != nil:
		return st, fmt.Errorf("%s %s: %w", update, disputeID, err)
	}
	return st, nil
}

package flows

import (
	"context"
	"errors"
	"fmt"

	"github.com/paygate/paygate/workflows"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// ErrSubscriptionClosed: the subscription's workflow has ended.
var ErrSubscriptionClosed = errors.New("subscription closed")

// TemporalSubscriptions cancels, pauses, resumes and amends subscriptions
// through Temporal updates.
type TemporalSubscriptions struct {
	Client client.Client
}

// Cancel sends the cancel update and waits for its answer.
func (t *TemporalSubscriptions) Cancel(ctx context.Context, merchantID, recurringID string) (workflows.SubscriptionState, error) {
	return t.update(ctx, merchantID, recurringID, workflows.UpdateCancelSubscription)
}

// Pause sends the pause update and waits for its answer.
func (t *TemporalSubscriptions) Pause(ctx context.Context, merchantID, recurringID string) (workflows.SubscriptionState, error) {
	return t.update(ctx, merchantID, recurringID, workflows.UpdatePauseSubscription)
}

// Resume sends the resume update and waits for its answer.
func (t *TemporalSubscriptions) Resume(ctx context.Context, merchantID, recurringID string) (workflows.SubscriptionState, error) {
	return t.update(ctx, merchantID, recurringID, workflows.UpdateResumeSubscription)
}

// Amend sends the amendment and waits for its answer.
func (t *TemporalSubscriptions) Amend(ctx context.Context, merchantID, recurringID string, a workflows.SubscriptionAmendment) (workflows.SubscriptionState, error) {
	return t.update(ctx, merchantID, recurringID, workflows.UpdateAmendSubscription, a)
}

func (t *TemporalSubscriptions) update(ctx context.Context, merchantID, recurringID, name string, args ...any) (workflows.SubscriptionState, error) {
	h, err := t.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   workflows.SubscriptionWorkflowID(merchantID, recurringID),
		UpdateName:   name,
		Args:         args,
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	var state workflows.SubscriptionState
	if err == nil {
		err = h.Get(ctx, &state)
	}
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return state, ErrSubscriptionClosed
	}
	if err != nil {
		return state, fmt.Errorf("%s %s: %w", name, recurringID, err)
	}
	return state, nil
}

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

// TemporalSubscriptions cancels subscriptions through Temporal updates.
type TemporalSubscriptions struct {
	Client client.Client
}

// Cancel sends the cancel update and waits for its answer.
func (t *TemporalSubscriptions) Cancel(ctx context.Context, merchantID, recurringID string) (workflows.SubscriptionState, error) {
	h, err := t.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   workflows.SubscriptionWorkflowID(merchantID, recurringID),
		UpdateName:   workflows.UpdateCancelSubscription,
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
		return state, fmt.Errorf("cancel subscription %s: %w", recurringID, err)
	}
	return state, nil
}

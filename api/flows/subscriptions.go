package flows

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/paygate/paygate/workflows"
)

// ErrSubscriptionClosed: the subscription's workflow has ended.
var ErrSubscriptionClosed = errors.New("subscription closed")

// TemporalSubscriptions cancels, pauses, resumes and amends subscriptions
// through Temporal updates.
type TemporalSubscriptions struct {
	Client client.Client
	// Wait bounds how long a change is sent again while Temporal answers
	// that it is busy or timed out (subscriptionWait when 0).
	Wait time.Duration
}

// subscriptionWait bounds the resending of one change when Wait is unset.
const subscriptionWait = 30 * time.Second

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

// update sends one change and waits for its answer. A change Temporal could
// not take or answer in time (busy, unavailable, a service timeout) is sent
// again under the same update id, so that it is applied once however often
// it is sent, until the wait runs out.
func (t *TemporalSubscriptions) update(ctx context.Context, merchantID, recurringID, name string, args ...any) (workflows.SubscriptionState, error) {
	wait := t.Wait
	if wait <= 0 {
		wait = subscriptionWait
	}
	opts := client.UpdateWorkflowOptions{
		WorkflowID:   workflows.SubscriptionWorkflowID(merchantID, recurringID),
		UpdateID:     name + "-" + uuid.NewString(),
		UpdateName:   name,
		Args:         args,
		WaitForStage: client.WorkflowUpdateStageCompleted,
	}
	var state workflows.SubscriptionState
	err := RetryBusy(ctx, wait, func(ctx context.Context) error {
		var err error
		state, err = t.updateOnce(ctx, opts)
		return err
	})
	if err != nil && !errors.Is(err, ErrSubscriptionClosed) {
		err = fmt.Errorf("%s %s: %w", name, recurringID, err)
	}
	return state, err
}

func (t *TemporalSubscriptions) updateOnce(ctx context.Context, opts client.UpdateWorkflowOptions) (workflows.SubscriptionState, error) {
	h, err := t.Client.UpdateWorkflow(ctx, opts)
	var state workflows.SubscriptionState
	if err == nil {
		err = h.Get(ctx, &state)
	}
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return state, ErrSubscriptionClosed
	}
	return state, err
}

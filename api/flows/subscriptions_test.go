package flows

import (
	"cmp"
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/domain/subscription"
	"github.com/paygate/paygate/workflows"
)

// subscriptionUpdates is a Temporal client whose updates answer, in turn,
// the errors in errs and then state.
type subscriptionUpdates struct {
	client.Client
	errs  []error
	state workflows.SubscriptionState
	sent  []client.UpdateWorkflowOptions
}

func (c *subscriptionUpdates) UpdateWorkflow(_ context.Context, o client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	c.sent = append(c.sent, o)
	var err error
	if len(c.errs) > 0 {
		err, c.errs = c.errs[0], c.errs[1:]
	}
	return subscriptionAnswer{state: c.state, err: err}, nil
}

type subscriptionAnswer struct {
	client.WorkflowUpdateHandle
	state workflows.SubscriptionState
	err   error
}

func (a subscriptionAnswer) Get(_ context.Context, v any) error {
	if a.err != nil {
		return a.err
	}
	*(v.(*workflows.SubscriptionState)) = a.state
	return nil
}

// TestSubscriptionChangeSentAgain: a change Temporal did not take or answer
// in time is sent again under the same update id (applied once), while one
// the workflow answered, or a workflow that has ended, is not.
func TestSubscriptionChangeSentAgain(t *testing.T) {
	busy := serviceerror.NewResourceExhausted(0, "busy")
	unavailable := serviceerror.NewUnavailable("update aborted")
	timedOut := client.NewWorkflowUpdateServiceTimeoutOrCanceledError(serviceerror.NewDeadlineExceeded("timeout"))
	refused := temporal.NewApplicationError("record failed", "")
	cancelled := workflows.SubscriptionState{RecurringID: "R1", Status: subscription.Cancelled}
	cases := []struct {
		name      string
		errs      []error
		wait      time.Duration
		wantSends int
		wantErr   error
	}{
		{name: "answered at once", wantSends: 1},
		{name: "busy, unavailable and timed out, then answered", errs: []error{busy, unavailable, timedOut}, wantSends: 4},
		{name: "the workflow refused it", errs: []error{refused}, wantSends: 1, wantErr: refused},
		{name: "the subscription has ended", errs: []error{serviceerror.NewNotFound("workflow execution already completed")}, wantSends: 1, wantErr: ErrSubscriptionClosed},
		{name: "unavailable past the wait", errs: []error{unavailable, unavailable, unavailable, unavailable, unavailable, unavailable, unavailable, unavailable},
			// Sent at 0, 100 and 300 ms; the next would be at 700 ms.
			wait: 500 * time.Millisecond, wantSends: 3, wantErr: unavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &subscriptionUpdates{errs: tc.errs, state: cancelled}
			s := &TemporalSubscriptions{Client: c, Wait: cmp.Or(tc.wait, 5*time.Second)}
			got, err := s.Cancel(context.Background(), "10086", "R1")
			if tc.wantErr == nil && err != nil || !errors.Is(err, tc.wantErr) {
				t.Fatalf("Cancel: %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr == nil && (got.RecurringID != "R1" || got.Status != subscription.Cancelled) {
				t.Errorf("state %+v, want %+v", got, cancelled)
			}
			if len(c.sent) != tc.wantSends {
				t.Fatalf("sent %d times, want %d", len(c.sent), tc.wantSends)
			}
			for _, o := range c.sent {
				if o.UpdateID != c.sent[0].UpdateID || o.UpdateName != workflows.UpdateCancelSubscription ||
					o.WorkflowID != workflows.SubscriptionWorkflowID("10086", "R1") {
					t.Errorf("sent %+v, first %+v", o, c.sent[0])
				}
			}
			if c.sent[0].UpdateID == "" {
				t.Error("no update id: a change sent again would be applied twice")
			}
		})
	}
}

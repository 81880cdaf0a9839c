package flows

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/workflows"
)

// signalStarter is a Temporal client that records the signal-with-start it
// is asked for and answers err; every other method is absent.
type signalStarter struct {
	client.Client
	err      error
	id       string
	signal   string
	workflow any
	input    workflows.DisputeInput
}

func (c *signalStarter) SignalWithStartWorkflow(_ context.Context, id, signal string, _ any, _ client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	c.id, c.signal, c.workflow = id, signal, wf
	if len(args) == 1 {
		c.input, _ = args[0].(workflows.DisputeInput)
	}
	return nil, c.err
}

// TestDisputeWord: the acquirer's word starts or wakes the dispute's
// workflow with the gateway's notification schedule (a dispute's
// notifications are retried as the merchant's others are), and a workflow
// already running is no error.
func TestDisputeWord(t *testing.T) {
	schedule := notify.Schedule{Initial: 200 * time.Millisecond, Max: 2 * time.Second, Horizon: 30 * time.Minute}
	down := errors.New("connection refused")
	cases := []struct {
		name    string
		err     error
		wantErr error
	}{
		{name: "first word starts the workflow"},
		{name: "a later word wakes it", err: serviceerror.NewWorkflowExecutionAlreadyStarted("running", "", "")},
		{name: "Temporal unreachable", err: down, wantErr: down},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &signalStarter{err: tc.err}
			d := &TemporalDisputes{Client: c, NotifySchedule: schedule}
			err := d.Word(context.Background(), "sim-acquirer", "dp_1")
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("Word: %v, want %v", err, tc.wantErr)
			}
			want := workflows.DisputeInput{Connector: "sim-acquirer", DisputeID: "dp_1", NotifySchedule: schedule}
			if c.input != want {
				t.Errorf("input %+v, want %+v", c.input, want)
			}
			if c.id != workflows.DisputeWorkflowID("sim-acquirer", "dp_1") || c.signal != workflows.SignalDisputeWord || c.workflow != workflows.DisputeWorkflowType {
				t.Errorf("signal-with-start %s %s %v", c.id, c.signal, c.workflow)
			}
		})
	}
}

// answerClient answers UpdateWorkflow with errs in turn, then with state.
type answerClient struct {
	client.Client
	errs  []error
	state workflows.DisputeState
	ids   []string
}

func (c *answerClient) UpdateWorkflow(_ context.Context, o client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	c.ids = append(c.ids, o.UpdateID)
	if n := len(c.ids); n <= len(c.errs) && c.errs[n-1] != nil {
		return nil, c.errs[n-1]
	}
	return answerHandle{state: c.state}, nil
}

type answerHandle struct {
	client.WorkflowUpdateHandle
	state workflows.DisputeState
}

func (h answerHandle) Get(_ context.Context, v any) error {
	*(v.(*workflows.DisputeState)) = h.state
	return nil
}

// TestDisputeAnswerSentAgain: an answer Temporal did not take is sent again
// under the same update id; a refusal is not.
func TestDisputeAnswerSentAgain(t *testing.T) {
	notReady := serviceerror.NewWorkflowNotReady("Unable to perform workflow execution update due to unexpected workflow task failure.")
	cases := []struct {
		name      string
		errs      []error
		wantCalls int
		wantErr   error // nil: answered
	}{
		{name: "taken at once", wantCalls: 1},
		{name: "the update's workflow task failed, then taken", errs: []error{notReady}, wantCalls: 2},
		{name: "refused: the dispute does not wait", errs: []error{temporal.NewApplicationError("no", workflows.ErrTypeEntryRefused)},
			wantCalls: 1, wantErr: ErrDisputeNotAnswerable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &answerClient{errs: tc.errs, state: workflows.DisputeState{Submitted: true}}
			st, err := (&TemporalDisputes{Client: c}).Answer(context.Background(), "sim-acquirer", "dp_1", workflows.UpdateDisputeEvidence)
			if len(c.ids) != tc.wantCalls {
				t.Fatalf("%d calls, want %d", len(c.ids), tc.wantCalls)
			}
			for _, id := range c.ids {
				if id == "" || id != c.ids[0] {
					t.Errorf("update ids %v: want one id for every attempt", c.ids)
				}
			}
			if !errors.Is(err, tc.wantErr) || tc.wantErr == nil && (err != nil || !st.Submitted) {
				t.Errorf("answer = %+v, %v; want %v", st, err, tc.wantErr)
			}
		})
	}
}

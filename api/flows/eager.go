package flows

import (
	"cmp"
	"context"
	"strings"
	"sync/atomic"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/workflows"
)

// LocalAnswers is where a request waits for the answer of an order it
// started eagerly on the worker in its own process (localanswer.Board).
type LocalAnswers interface {
	Expect(workflowID string) (answer <-chan order.Result, forget func())
}

// DefaultEagerWait bounds the wait for an eagerly started order's answer in
// this process before the request asks Temporal by the authorise update.
const DefaultEagerWait = 5 * time.Second

// authoriseEagerly starts the order's workflow with its first workflow task
// handed back in the start's answer to the worker in this process
// (Temporal's eager workflow start), and takes the payment's answer from
// that worker's local activity (workflows: answerLocally): the task's trip
// through Temporal's matching and the update's admission and answer are
// left out of the payment's path. Where the task did not come back (no
// slot free on the worker here, or the order was already running) or no
// answer came within EagerWait, the request asks by the authorise update,
// as a request without eager start does.
func (t *TemporalOrders) authoriseEagerly(ctx context.Context, id string, opts client.StartWorkflowOptions, in workflows.OrderInput) (workflows.PaymentResult, error) {
	in.AnswerLocally = true
	answer, forget := t.Answers.Expect(id)
	defer forget()
	opts.EnableEagerStart = true
	// A closed order answers from its record (ErrOrderClosed), as the
	// update-with-start's refused start does.
	opts.WorkflowExecutionErrorWhenAlreadyStarted = true
	probe := &eagerProbe{}
	if _, err := t.Client.ExecuteWorkflow(context.WithValue(ctx, eagerProbeKey{}, probe), opts, workflows.OrderWorkflowType, in); err != nil {
		return workflows.PaymentResult{}, classify(err)
	}
	if probe.taken.Load() {
		wait := time.NewTimer(cmp.Or(t.EagerWait, DefaultEagerWait))
		defer wait.Stop()
		select {
		case res := <-answer:
			return res, nil
		case <-wait.C:
		case <-ctx.Done():
			return workflows.PaymentResult{}, classify(ctx.Err())
		}
	}
	handle, err := t.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   id,
		UpdateName:   workflows.UpdateAuthorise,
		Args:         []any{workflows.AuthoriseRequest{RequestFingerprint: in.RequestFingerprint}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	return paymentResultOf(ctx, handle, err)
}

// eagerProbe learns whether a start's answer carried the workflow's first
// task for this process's worker: the SDK hands it over without saying.
type eagerProbe struct{ taken atomic.Bool }

type eagerProbeKey struct{}

// EagerProbe is the gRPC interceptor of the Temporal client's connection
// that tells authoriseEagerly whether its start came back with the
// workflow's first task. Every other call passes through untouched.
func EagerProbe(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if err == nil && strings.HasSuffix(method, "/StartWorkflowExecution") {
		if p, ok := ctx.Value(eagerProbeKey{}).(*eagerProbe); ok {
			if r, ok := reply.(*workflowservice.StartWorkflowExecutionResponse); ok && r.GetEagerWorkflowTask() != nil {
				p.taken.Store(true)
			}
		}
	}
	return err
}

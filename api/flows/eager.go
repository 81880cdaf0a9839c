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
// that worker's local activity (workflows: answerLocally) once Temporal has
// recorded the task that made it (EagerInterceptor): the task's trip
// through Temporal's matching and the update's admission and answer are
// left out of the payment's path. Where the task did not come back (no
// slot free on the worker here, or the order was already running) or no
// answer came within EagerWait, the request asks by the authorise update;
// that costs a round trip more than Update-with-Start.
func (t *TemporalOrders) authoriseEagerly(ctx context.Context, id string, opts client.StartWorkflowOptions, in workflows.OrderInput) (workflows.PaymentResult, error) {
	in.AnswerLocally = true
	answer, forget := t.Answers.Expect(id)
	defer forget()
	opts.EnableEagerStart = true
	// A closed order answers from its record (ErrOrderClosed), as the
	// update-with-start's refused start does.
	opts.WorkflowExecutionErrorWhenAlreadyStarted = true
	probed, taken := WithEagerProbe(ctx)
	if _, err := t.Client.ExecuteWorkflow(probed, opts, workflows.OrderWorkflowType, in); err != nil {
		return workflows.PaymentResult{}, classify(err)
	}
	if taken() {
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

// WithEagerProbe returns ctx for a start with eager start requested, and
// a function that says, once the start has returned, whether its answer
// brought the workflow's first task to this process (EagerInterceptor must
// be on the client's connection).
func WithEagerProbe(ctx context.Context) (context.Context, func() bool) {
	p := &eagerProbe{}
	return context.WithValue(ctx, eagerProbeKey{}, p), p.taken.Load
}

// EagerTasks is told of the first workflow tasks that starts brought back
// to this process and of each workflow task Temporal recorded
// (localanswer.Board).
type EagerTasks interface {
	TaskStarted(workflowID string, token []byte, attempt int32)
	TaskRecorded(token []byte)
}

// EagerInterceptor is the gRPC interceptor of the Temporal client's
// connection that follows eager starts: it tells authoriseEagerly whether
// its start came back with the workflow's first task, tells tasks of every
// workflow task this process's worker gets (from a start, a poll or the
// answer to a completion) and of every completion Temporal accepted, so
// that an answer is handed over only once recorded. Calls pass through
// untouched.
func EagerInterceptor(tasks EagerTasks) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if err != nil {
			return err
		}
		switch {
		case strings.HasSuffix(method, "/StartWorkflowExecution"):
			p, probed := ctx.Value(eagerProbeKey{}).(*eagerProbe)
			r, ok1 := reply.(*workflowservice.StartWorkflowExecutionResponse)
			q, ok2 := req.(*workflowservice.StartWorkflowExecutionRequest)
			if probed && ok1 && ok2 && r.GetEagerWorkflowTask() != nil {
				tasks.TaskStarted(q.GetWorkflowId(), r.GetEagerWorkflowTask().GetTaskToken(), r.GetEagerWorkflowTask().GetAttempt())
				p.taken.Store(true)
			}
		case strings.HasSuffix(method, "/PollWorkflowTaskQueue"):
			// A later task of an order started here, if its answer comes
			// after the first (an inquiry after an acquirer's timeout).
			// A query's task (a legacy query) is answered, never recorded.
			if r, ok := reply.(*workflowservice.PollWorkflowTaskQueueResponse); ok && len(r.GetTaskToken()) > 0 && r.GetQuery() == nil {
				tasks.TaskStarted(r.GetWorkflowExecution().GetWorkflowId(), r.GetTaskToken(), r.GetAttempt())
			}
		case strings.HasSuffix(method, "/RespondWorkflowTaskCompleted"):
			// A large completion comes in pages under one token; only
			// the last page's acceptance records the task.
			if q, ok := req.(*workflowservice.RespondWorkflowTaskCompletedRequest); ok && !q.GetIntermediatePage() {
				tasks.TaskRecorded(q.GetTaskToken())
			}
			if r, ok := reply.(*workflowservice.RespondWorkflowTaskCompletedResponse); ok && r.GetWorkflowTask() != nil {
				next := r.GetWorkflowTask()
				tasks.TaskStarted(next.GetWorkflowExecution().GetWorkflowId(), next.GetTaskToken(), next.GetAttempt())
			}
		}
		return nil
	}
}

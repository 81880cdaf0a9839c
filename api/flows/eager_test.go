package flows

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	querypb "go.temporal.io/api/query/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
)

// eagerTasks records what EagerInterceptor tells it.
type eagerTasks struct{ calls []string }

func (e *eagerTasks) TaskStarted(id string, token []byte, attempt int32) {
	e.calls = append(e.calls, fmt.Sprintf("started %s %s attempt %d", id, token, attempt))
}
func (e *eagerTasks) TaskRecorded(token []byte) { e.calls = append(e.calls, "recorded "+string(token)) }

func TestEagerInterceptor(t *testing.T) {
	const (
		service = "/temporal.api.workflowservice.v1.WorkflowService/"
		start   = service + "StartWorkflowExecution"
		respond = service + "RespondWorkflowTaskCompleted"
	)
	startReq := &workflowservice.StartWorkflowExecutionRequest{WorkflowId: "order-1", RequestEagerExecution: true}
	withTask := &workflowservice.StartWorkflowExecutionResponse{EagerWorkflowTask: &workflowservice.PollWorkflowTaskQueueResponse{TaskToken: []byte("tok-1"), Attempt: 1}}
	tests := []struct {
		name      string
		method    string
		req       any
		answer    any // what the server answers
		err       error
		probed    bool
		wantTaken bool
		wantCalls []string
	}{
		{name: "a start answered with its first task", method: start, req: startReq, answer: withTask, probed: true,
			wantTaken: true, wantCalls: []string{"started order-1 tok-1 attempt 1"}},
		{name: "a start answered without it", method: start, req: startReq, answer: &workflowservice.StartWorkflowExecutionResponse{}, probed: true},
		{name: "a start that failed", method: start, req: startReq, answer: withTask, err: errors.New("unavailable"), probed: true},
		{name: "a start nobody probes", method: start, req: startReq, answer: withTask},
		{name: "a task's completion accepted", method: respond, req: &workflowservice.RespondWorkflowTaskCompletedRequest{TaskToken: []byte("tok-1")},
			answer: &workflowservice.RespondWorkflowTaskCompletedResponse{}, wantCalls: []string{"recorded tok-1"}},
		{name: "a task's completion refused", method: respond, req: &workflowservice.RespondWorkflowTaskCompletedRequest{TaskToken: []byte("tok-1")},
			answer: &workflowservice.RespondWorkflowTaskCompletedResponse{}, err: errors.New("not found")},
		{name: "a polled task", method: service + "PollWorkflowTaskQueue", req: &workflowservice.PollWorkflowTaskQueueRequest{},
			answer:    &workflowservice.PollWorkflowTaskQueueResponse{TaskToken: []byte("tok-2"), Attempt: 1, WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: "order-1"}},
			wantCalls: []string{"started order-1 tok-2 attempt 1"}},
		{name: "a polled task run again", method: service + "PollWorkflowTaskQueue", req: &workflowservice.PollWorkflowTaskQueueRequest{},
			answer:    &workflowservice.PollWorkflowTaskQueueResponse{TaskToken: []byte("tok-2"), Attempt: 2, WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: "order-1"}},
			wantCalls: []string{"started order-1 tok-2 attempt 2"}},
		{name: "a polled query", method: service + "PollWorkflowTaskQueue", req: &workflowservice.PollWorkflowTaskQueueRequest{},
			answer: &workflowservice.PollWorkflowTaskQueueResponse{TaskToken: []byte("tok-q"), Query: &querypb.WorkflowQuery{QueryType: "order-state"},
				WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: "order-1"}}},
		{name: "a completion's page before its last", method: respond, req: &workflowservice.RespondWorkflowTaskCompletedRequest{TaskToken: []byte("tok-1"), IntermediatePage: true},
			answer: &workflowservice.RespondWorkflowTaskCompletedResponse{}},
		{name: "an empty poll", method: service + "PollWorkflowTaskQueue", req: &workflowservice.PollWorkflowTaskQueueRequest{},
			answer: &workflowservice.PollWorkflowTaskQueueResponse{}},
		{name: "a completion answered with the next task", method: respond, req: &workflowservice.RespondWorkflowTaskCompletedRequest{TaskToken: []byte("tok-1")},
			answer: &workflowservice.RespondWorkflowTaskCompletedResponse{WorkflowTask: &workflowservice.PollWorkflowTaskQueueResponse{
				TaskToken: []byte("tok-2"), Attempt: 1, WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: "order-1"}}},
			wantCalls: []string{"recorded tok-1", "started order-1 tok-2 attempt 1"}},
		{name: "another call", method: service + "SignalWorkflowExecution", req: &workflowservice.SignalWorkflowExecutionRequest{},
			answer: &workflowservice.SignalWorkflowExecutionResponse{}, probed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tasks := &eagerTasks{}
			ctx, taken := context.Background(), func() bool { return false }
			if tc.probed {
				ctx, taken = WithEagerProbe(ctx)
			}
			invoker := func(_ context.Context, _ string, _, reply any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
				if tc.err != nil {
					return tc.err
				}
				if r, ok := reply.(*workflowservice.StartWorkflowExecutionResponse); ok {
					r.EagerWorkflowTask = tc.answer.(*workflowservice.StartWorkflowExecutionResponse).EagerWorkflowTask
				}
				return nil
			}
			var reply any = &workflowservice.StartWorkflowExecutionResponse{}
			if tc.method != start {
				reply = tc.answer
			}
			err := EagerInterceptor(tasks)(ctx, tc.method, tc.req, reply, nil, invoker)
			if !errors.Is(err, tc.err) {
				t.Errorf("error %v, want the call's %v", err, tc.err)
			}
			if got := taken(); got != tc.wantTaken {
				t.Errorf("taken %v, want %v", got, tc.wantTaken)
			}
			if !slices.Equal(tasks.calls, tc.wantCalls) {
				t.Errorf("told %q, want %q", tasks.calls, tc.wantCalls)
			}
		})
	}
}

package flows

import (
	"context"
	"errors"
	"testing"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
)

func TestEagerProbe(t *testing.T) {
	const start = "/temporal.api.workflowservice.v1.WorkflowService/StartWorkflowExecution"
	withTask := &workflowservice.StartWorkflowExecutionResponse{EagerWorkflowTask: &workflowservice.PollWorkflowTaskQueueResponse{}}
	tests := []struct {
		name      string
		method    string
		answer    *workflowservice.StartWorkflowExecutionResponse // what the server answers
		err       error
		probed    bool
		wantTaken bool
	}{
		{name: "a start answered with its first task", method: start, answer: withTask, probed: true, wantTaken: true},
		{name: "a start answered without it", method: start, answer: &workflowservice.StartWorkflowExecutionResponse{}, probed: true},
		{name: "a start that failed", method: start, answer: withTask, err: errors.New("unavailable"), probed: true},
		{name: "another call", method: "/temporal.api.workflowservice.v1.WorkflowService/SignalWorkflowExecution", answer: withTask, probed: true},
		{name: "a start nobody probes", method: start, answer: withTask},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &eagerProbe{}
			ctx := context.Background()
			if tc.probed {
				ctx = context.WithValue(ctx, eagerProbeKey{}, p)
			}
			reply := &workflowservice.StartWorkflowExecutionResponse{}
			invoker := func(_ context.Context, _ string, _, reply any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
				if tc.err != nil {
					return tc.err
				}
				reply.(*workflowservice.StartWorkflowExecutionResponse).EagerWorkflowTask = tc.answer.EagerWorkflowTask
				return nil
			}
			err := EagerProbe(ctx, tc.method, &workflowservice.StartWorkflowExecutionRequest{}, reply, nil, invoker)
			if !errors.Is(err, tc.err) {
				t.Errorf("error %v, want the call's %v", err, tc.err)
			}
			if got := p.taken.Load(); got != tc.wantTaken {
				t.Errorf("taken %v, want %v", got, tc.wantTaken)
			}
		})
	}
}

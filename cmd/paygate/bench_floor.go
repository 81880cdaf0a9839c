package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"

	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/adapters/localanswer"
	"github.com/paygate/paygate/internal/domain/order"
)

// The floor of the payment benchmark: the least a payment's shape can cost
// on the same Temporal server. One workflow per request, started by
// update-with-start like an order, whose update answers after one local
// activity.
const (
	floorWorkflowType = "BenchFloor"
	floorUpdate       = "result"
)

// floorWorkflow runs one local activity and answers the update with it,
// or, started eagerly, hands its answer to the request in this process
// from the activity.
func floorWorkflow(ctx workflow.Context) (string, error) {
	var out string
	done := false
	if err := workflow.SetUpdateHandler(ctx, floorUpdate, func(ctx workflow.Context) (string, error) {
		if err := workflow.Await(ctx, func() bool { return done }); err != nil {
			return "", err
		}
		return out, nil
	}); err != nil {
		return "", err
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: 10 * time.Second})
	if err := workflow.ExecuteLocalActivity(lctx, floorActivity).Get(ctx, &out); err != nil {
		return "", err
	}
	done = true
	return out, workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
}

// floorActivity answers "ok", and leaves it for the request waiting for its
// workflow in this process when the floor starts eagerly, to be handed
// over once its task is recorded, as the gateway's is.
func floorActivity(ctx context.Context) (string, error) {
	floorAnswers.Stage(activity.GetInfo(ctx).WorkflowExecution.ID, order.Result{ResultCode: "ok"})
	return "ok", nil
}

// floorAnswers are the eager floor's requests waiting in this process.
var floorAnswers = localanswer.New()

// benchFloor is the floor's client and worker, in this process.
type benchFloor struct {
	c     client.Client
	w     worker.Worker
	queue string
	// eager starts each workflow with Temporal's eager start and takes its
	// answer in the process, as the gateway's API does with
	// PAYGATE_EAGER_START.
	eager bool
}

// startFloor starts a worker for the floor workflow on the Temporal server
// at addr, on a task queue of its own. Its connection compresses requests
// only with gzip, as the gateway's does or not, and it keeps pollers
// workflow-task polls open, as many as the gateway's worker.
func startFloor(ctx context.Context, addr, namespace, runID string, gzip bool, pollers int, eager bool) (*benchFloor, error) {
	quiet := sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
	opts := client.Options{HostPort: addr, Namespace: namespace, Logger: quiet,
		ConnectionOptions: client.ConnectionOptions{
			DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(flows.EagerInterceptor(floorAnswers))},
		}}
	if !gzip {
		opts.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("floor: dial temporal %s: %w", addr, err)
	}
	queue := "bench-floor-" + runID
	w := worker.New(c, queue, worker.Options{MaxConcurrentWorkflowTaskPollers: pollers})
	w.RegisterWorkflowWithOptions(floorWorkflow, workflow.RegisterOptions{Name: floorWorkflowType})
	w.RegisterActivity(floorActivity)
	if err := w.Start(); err != nil {
		c.Close()
		return nil, fmt.Errorf("floor: start worker: %w", err)
	}
	f := &benchFloor{c: c, w: w, queue: queue, eager: eager}
	// The worker's first tasks pay for its pollers starting and its caches
	// filling, which the gateway's long-running worker has long paid.
	for i := range floorWarmUp {
		if err := f.Do(ctx, -1-i); err != nil {
			f.Close()
			return nil, fmt.Errorf("floor: warm up: %w", err)
		}
	}
	return f, nil
}

// floorWarmUp is how many floor workflows run, untimed, before the floor's
// runs.
const floorWarmUp = 5

// Do runs the i-th floor workflow to its answer; i must not repeat.
func (f *benchFloor) Do(ctx context.Context, i int) error {
	id := f.queue + "-" + strconv.Itoa(i)
	if f.eager {
		return f.doEagerly(ctx, id)
	}
	op := f.c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID: id, TaskQueue: f.queue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, floorWorkflowType)
	h, err := f.c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: op,
		UpdateOptions:          client.UpdateWorkflowOptions{UpdateName: floorUpdate, WaitForStage: client.WorkflowUpdateStageCompleted},
	})
	if err != nil {
		return err
	}
	var out string
	if err := h.Get(ctx, &out); err != nil {
		return err
	}
	if out != "ok" {
		return fmt.Errorf("floor answered %q", out)
	}
	return nil
}

// doEagerly starts the floor workflow id eagerly and waits for its
// activity's answer in this process, or, when the start's answer did not
// carry the task, for the workflow's result.
func (f *benchFloor) doEagerly(ctx context.Context, id string) error {
	answer, forget := floorAnswers.Expect(id)
	defer forget()
	probed, taken := flows.WithEagerProbe(ctx)
	run, err := f.c.ExecuteWorkflow(probed, client.StartWorkflowOptions{ID: id, TaskQueue: f.queue, EnableEagerStart: true},
		floorWorkflowType)
	if err != nil {
		return err
	}
	if !taken() {
		var out string
		return run.Get(ctx, &out)
	}
	select {
	case res := <-answer:
		if res.ResultCode != "ok" {
			return fmt.Errorf("floor answered %q", res.ResultCode)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the floor's worker and client.
func (f *benchFloor) Close() {
	f.w.Stop()
	f.c.Close()
}

package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// The floor of the payment benchmark: the least a payment's shape can cost
// on the same Temporal server. One workflow per request, started by
// update-with-start like an order, whose update answers after one local
// activity.
const (
	floorWorkflowType = "BenchFloor"
	floorUpdate       = "result"
)

// floorWorkflow runs one local activity and answers the update with it.
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

func floorActivity(context.Context) (string, error) { return "ok", nil }

// benchFloor is the floor's client and worker, in this process.
type benchFloor struct {
	c     client.Client
	w     worker.Worker
	queue string
}

// startFloor starts a worker for the floor workflow on the Temporal server
// at addr, on a task queue of its own. Its connection compresses requests
// only with gzip, as the gateway's does or not, and it keeps pollers
// workflow-task polls open, as many as the gateway's worker.
func startFloor(ctx context.Context, addr, namespace, runID string, gzip bool, pollers int) (*benchFloor, error) {
	quiet := sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
	opts := client.Options{HostPort: addr, Namespace: namespace, Logger: quiet}
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
	f := &benchFloor{c: c, w: w, queue: queue}
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
	op := f.c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID: f.queue + "-" + strconv.Itoa(i), TaskQueue: f.queue,
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

// Close stops the floor's worker and client.
func (f *benchFloor) Close() {
	f.w.Stop()
	f.c.Close()
}

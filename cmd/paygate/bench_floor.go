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

	"github.com/paygate/paygate/internal/dev/loadgen"
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

// runFloor runs n floor workflows, conc at a time, on the Temporal server
// at addr with a worker of its own in this process.
func runFloor(ctx context.Context, addr, namespace, runID string, n, conc int) (loadgen.Result, error) {
	quiet := sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
	c, err := client.DialContext(ctx, client.Options{HostPort: addr, Namespace: namespace, Logger: quiet})
	if err != nil {
		return loadgen.Result{}, fmt.Errorf("floor: dial temporal %s: %w", addr, err)
	}
	defer c.Close()
	queue := "bench-floor-" + runID
	w := worker.New(c, queue, worker.Options{})
	w.RegisterWorkflowWithOptions(floorWorkflow, workflow.RegisterOptions{Name: floorWorkflowType})
	w.RegisterActivity(floorActivity)
	if err := w.Start(); err != nil {
		return loadgen.Result{}, fmt.Errorf("floor: start worker: %w", err)
	}
	defer w.Stop()
	return loadgen.Run(ctx, "floor: bare workflow, one local activity", n, conc, func(ctx context.Context, i int) error {
		op := c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
			ID: queue + "-" + strconv.Itoa(i), TaskQueue: queue,
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		}, floorWorkflowType)
		h, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
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
	}), nil
}

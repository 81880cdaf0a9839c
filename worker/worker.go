// Package worker registers the workflows and activities on a Temporal worker.
package worker

import (
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/workflows"
)

// Register puts every workflow and activity on r.
func Register(r sdkworker.Registry, acts *activities.Activities) {
	r.RegisterWorkflowWithOptions(workflows.Order, workflow.RegisterOptions{Name: workflows.OrderWorkflowType})
	r.RegisterWorkflowWithOptions(workflows.Redeliver, workflow.RegisterOptions{Name: workflows.RedeliverWorkflowType})
	r.RegisterWorkflowWithOptions(workflows.Subscription, workflow.RegisterOptions{Name: workflows.SubscriptionWorkflowType})
	r.RegisterActivity(acts)
}

// RegisterPayouts puts the payout workflow and its activities on r.
func RegisterPayouts(r sdkworker.Registry, acts *activities.PayoutActivities) {
	r.RegisterWorkflowWithOptions(workflows.Payout, workflow.RegisterOptions{Name: workflows.PayoutWorkflowType})
	r.RegisterActivity(acts)
}

// RegisterLedger puts the ledger activities the order workflow posts with
// on r.
func RegisterLedger(r sdkworker.Registry, acts *activities.LedgerActivities) {
	r.RegisterActivity(acts)
}

// New returns a worker on the gateway's task queue with everything registered.
//
// tune, when given, adjusts the options (the deployment's pollers and slots).
func New(c client.Client, acts *activities.Activities, tune ...func(*sdkworker.Options)) sdkworker.Worker {
	opts := sdkworker.Options{
		MaxConcurrentActivityExecutionSize:      200,
		MaxConcurrentLocalActivityExecutionSize: 200,
		MaxConcurrentWorkflowTaskExecutionSize:  200,
		// On a busy machine a sticky task can wait longer than the default
		// 5s; falling back to the normal queue then costs a full replay.
		StickyScheduleToStartTimeout: 30 * time.Second,
	}
	for _, t := range tune {
		t(&opts)
	}
	w := sdkworker.New(c, workflows.TaskQueue, opts)
	Register(w, acts)
	return w
}

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
func New(c client.Client, acts *activities.Activities) sdkworker.Worker {
	w := sdkworker.New(c, workflows.TaskQueue, sdkworker.Options{
		MaxConcurrentActivityExecutionSize:      200,
		MaxConcurrentLocalActivityExecutionSize: 200,
		MaxConcurrentWorkflowTaskExecutionSize:  200,
		// On a busy machine a sticky task can wait longer than the default
		// 5s; falling back to the normal queue then costs a full replay.
		StickyScheduleToStartTimeout: 30 * time.Second,
	})
	Register(w, acts)
	return w
}

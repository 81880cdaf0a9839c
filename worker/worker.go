// Package worker registers the workflows and activities on a Temporal worker.
package worker

import (
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/workflows"
)

// Activities are the activity structs of every workflow the gateway runs.
type Activities struct {
	Orders   *activities.Activities
	Payouts  *activities.PayoutActivities
	Ledger   *activities.LedgerActivities
	Recon    *activities.ReconActivities
	Disputes *activities.DisputeActivities
}

// Register puts every workflow and every activity on r: the order, its
// redelivery, the subscription, the payout, the personal-data and the
// reconciliation workflows, and the order, payout, ledger and
// reconciliation activities.
func Register(r sdkworker.Registry, acts Activities) {
	RegisterWorkflows(r)
	r.RegisterActivity(acts.Orders)
	r.RegisterActivity(acts.Payouts)
	r.RegisterActivity(acts.Ledger)
	r.RegisterActivity(acts.Recon)
	r.RegisterActivity(acts.Disputes)
}

// WorkflowRegistry is where workflows are registered: a worker, or the
// replayer of recorded histories.
type WorkflowRegistry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
}

// RegisterWorkflows puts every workflow type the gateway runs on r, each
// under its name in workflows.
func RegisterWorkflows(r WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(workflows.Order, workflow.RegisterOptions{Name: workflows.OrderWorkflowType})
	r.RegisterWorkflowWithOptions(workflows.Redeliver, workflow.RegisterOptions{Name: workflows.RedeliverWorkflowType})
	r.RegisterWorkflowWithOptions(workflows.Subscription, workflow.RegisterOptions{Name: workflows.SubscriptionWorkflowType})
	r.RegisterWorkflowWithOptions(workflows.Payout, workflow.RegisterOptions{Name: workflows.PayoutWorkflowType})
	r.RegisterWorkflowWithOptions(workflows.PersonalData, workflow.RegisterOptions{Name: workflows.PersonalDataWorkflowType})
	r.RegisterWorkflowWithOptions(workflows.ReconcileDay, workflow.RegisterOptions{Name: workflows.ReconcileDayWorkflowType})
	r.RegisterWorkflowWithOptions(workflows.ReconcileDue, workflow.RegisterOptions{Name: workflows.ReconcileDueWorkflowType})
	r.RegisterWorkflowWithOptions(workflows.ScheduledPayouts, workflow.RegisterOptions{Name: workflows.ScheduledPayoutsWorkflowType})
	r.RegisterWorkflowWithOptions(workflows.Dispute, workflow.RegisterOptions{Name: workflows.DisputeWorkflowType})
}

// WorkflowTaskPollers is the worker's default number of workflow-task
// long-polls. The SDK's default of 2 is split between the worker's sticky
// queue and the task queue, so a new order's first task waited for the one
// poll on the task queue: 16 gave 8-12% more payments a second at 8 and 32
// concurrent on the dev server (docs/benchmarks.md).
const WorkflowTaskPollers = 16

// Options returns the gateway worker's options, adjusted by tune (the
// deployment's pollers and slots).
func Options(tune ...func(*sdkworker.Options)) sdkworker.Options {
	opts := sdkworker.Options{
		MaxConcurrentActivityExecutionSize:      200,
		MaxConcurrentLocalActivityExecutionSize: 200,
		MaxConcurrentWorkflowTaskExecutionSize:  200,
		MaxConcurrentWorkflowTaskPollers:        WorkflowTaskPollers,
		// On a busy machine a sticky task can wait longer than the default
		// 5s; falling back to the normal queue then costs a full replay.
		StickyScheduleToStartTimeout: 30 * time.Second,
		// Local activities' failures are logged by us (failure_log.go).
		Interceptors: []interceptor.WorkerInterceptor{&localFailureLog{}},
	}
	for _, t := range tune {
		t(&opts)
	}
	return opts
}

// New returns a worker on the gateway's task queue with every workflow and
// activity registered (Register).
//
// tune, when given, adjusts the options (the deployment's pollers and slots).
func New(c client.Client, acts Activities, tune ...func(*sdkworker.Options)) sdkworker.Worker {
	opts := Options(tune...)
	w := sdkworker.New(c, workflows.TaskQueue, opts)
	Register(w, acts)
	return w
}

package workflows

import (
	"errors"

	"go.temporal.io/sdk/workflow"
)

// DefaultOperationsPerRun bounds the operations (captures, refunds, ...)
// one run of an order takes before it continues as new, beside Temporal's
// own suggestion: each refund adds a few dozen events to the history.
const DefaultOperationsPerRun = 500

// maxCarriedNotifications is how many of its latest notifications an
// order's next run keeps for the order-state query; all of them stay in
// Postgres.
const maxCarriedNotifications = 20

// errRunFull ends a run whose history is long: the order continues as new.
var errRunFull = errors.New("order run full: continue as new")

// runFull reports whether this run should hand over to a new one: Temporal
// suggests it, or the run has taken its share of operations.
func (w *orderWorkflow) runFull(ctx workflow.Context) bool {
	if !w.continues {
		return false
	}
	limit := w.in.OperationsPerRun
	if limit <= 0 {
		limit = DefaultOperationsPerRun
	}
	return w.operations >= limit || workflow.GetInfo(ctx).GetContinueAsNewSuggested()
}

// quiet reports whether nothing is under way that the next run could not
// take over: no update running, no refund being watched, no ledger posting
// and no notification waiting.
func (w *orderWorkflow) quiet(ctx workflow.Context) bool {
	return workflow.AllHandlersFinished(ctx) && w.inFlight == 0 && w.notificationsIdle()
}

// continueAsNew waits until the order is quiet and starts its next run
// with its state.
func (w *orderWorkflow) continueAsNew(ctx workflow.Context) error {
	if err := workflow.Await(ctx, func() bool { return w.quiet(ctx) }); err != nil {
		return err
	}
	next := w.in
	carried := w.st.Carried(maxCarriedNotifications)
	next.Resume = &carried
	workflow.GetLogger(ctx).Info("order continues as new", "transaction_id", w.in.TransactionID, "run", carried.Runs,
		"operations", w.operations)
	return workflow.NewContinueAsNewError(ctx, OrderWorkflowType, next)
}

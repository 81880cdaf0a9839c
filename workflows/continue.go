package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/status"
)

// DefaultOperationsPerRun bounds the operations (captures, refunds, ...)
// one run of an order takes before it continues as new, beside Temporal's
// own suggestion: each refund adds a few dozen events to the history.
const DefaultOperationsPerRun = 500

// maxCarriedNotifications is how many of its latest notifications an
// order's next run keeps for the order-state query; all of them stay in
// Postgres.
const maxCarriedNotifications = 20

// OrderResume is an order's state carried into its next run by
// continue-as-new: everything a paid order needs to take further
// operations and run its refund window, and nothing of its payment's steps.
type OrderResume struct {
	Status        status.Payment
	Since         time.Time
	Result        PaymentResult
	Risk          risk.Result
	Card          CardRef
	ChargeID      string
	AnsweredBy    string
	Authorised    int64
	Captured      int64
	Refunded      int64
	RefundSeq     int
	Writes        int64
	NoticeSeq     int
	Notifications []NotificationState
	Unrecorded    bool
	Runs          int
}

// errRunFull ends a run whose history is long: the order continues as new.
var errRunFull = errors.New("order run full: continue as new")

// snapshot is the order's state for its next run.
func (w *orderWorkflow) snapshot() OrderResume {
	notes := w.notifications
	if len(notes) > maxCarriedNotifications {
		notes = notes[len(notes)-maxCarriedNotifications:]
	}
	r := OrderResume{
		Status: w.status, Since: w.since, Risk: w.risk, Card: w.card, ChargeID: w.chargeID, AnsweredBy: w.answeredBy,
		Authorised: w.authorised, Captured: w.captured, Refunded: w.refunded, RefundSeq: w.refundSeq,
		Writes: w.writes, NoticeSeq: w.noticeSeq, Notifications: append([]NotificationState(nil), notes...),
		Unrecorded: w.unrecorded, Runs: w.runs + 1,
	}
	if w.result != nil {
		r.Result = *w.result
	}
	return r
}

// restore takes up the state a previous run carried.
func (w *orderWorkflow) restore(r OrderResume) {
	res := r.Result
	w.status, w.since, w.result, w.risk, w.card = r.Status, r.Since, &res, r.Risk, r.Card
	w.chargeID, w.answeredBy = r.ChargeID, r.AnsweredBy
	w.authorised, w.captured, w.refunded, w.refundSeq = r.Authorised, r.Captured, r.Refunded, r.RefundSeq
	w.writes, w.noticeSeq, w.notifications, w.unrecorded, w.runs = r.Writes, r.NoticeSeq, r.Notifications, r.Unrecorded, r.Runs
	w.tokenID, w.recurring = res.TokenID, res.Recurring
}

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
	resume := w.snapshot()
	next.Resume = &resume
	workflow.GetLogger(ctx).Info("order continues as new", "transaction_id", w.in.TransactionID, "run", resume.Runs,
		"operations", w.operations)
	return workflow.NewContinueAsNewError(ctx, OrderWorkflowType, next)
}

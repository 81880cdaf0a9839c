package workflows

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/status"
)

// shapeIdleClose (shape 3) closes a paid order's workflow once it is idle
// instead of keeping it open, on a timer, through its refund window: nothing
// pending (no update running, no refund watched, no ledger posting, no
// notification waiting) and no deadline but the refund window's end, which
// needs no timer, only a date checked when an operation arrives. The run
// saves what its next run starts from in the order's record (SaveOrderReopen);
// a capture, cancel, review or refund that arrives later reopens the order
// with Update-with-Start on the same workflow id (flows.TemporalOrders), and
// the new run takes the saved state (reopen). There is still one open run
// per order at most, so operations stay serialised by the order's lock.
const shapeIdleClose = 3

// errIdle ends a run whose order is idle and whose state is saved: the
// workflow completes and an operation reopens it.
var errIdle = errors.New("order idle: closed until an operation reopens it")

// ErrTypeOrderClosed is the application error type with which a reopened
// order answers a payment request it cannot carry on: the request is
// answered from the record.
const ErrTypeOrderClosed = "OrderClosed"

// closesIdle reports whether the order closes when idle rather than stay
// open through its refund window.
func (w *orderWorkflow) closesIdle() bool {
	return w.in.Shape >= shapeIdleClose && !w.keepOpen && !w.st.Unrecorded
}

// shapeFoldedSave (shape 4) saves a paid order's reopen state with its
// outcome, in the outcome's write (FinishOrderInput.Reopen), when the order
// will close as soon as it is paid: one local activity, one statement, one
// commit and one round trip to Postgres fewer on the payment's answer.
// closeIdle then saves nothing, if the state is still the one saved.
const shapeFoldedSave = 4

// foldedReopen is the reopen state to save with the outcome out, or nil:
// the order is not of shape 4, or is not one that closes as soon as this
// outcome is recorded (its first run, a payment answered paid, no
// notification to deliver, no subscription to tell). The state is the one
// closeIdle would save once the order has moved to out's status; anything
// that changes the order in between makes closeIdle save again.
func (w *orderWorkflow) foldedReopen(movedAt time.Time, run string, out activities.FinishOrderInput) *activities.SaveReopenInput {
	in := w.in
	if in.Shape < shapeFoldedSave || !w.closesIdle() || in.Resume != nil || in.Reopen || w.st.Result != nil ||
		out.PaymentStatus != status.Paid || in.Details.NotifyURL != "" || in.Recurring != nil || in.Subscription != nil {
		return nil
	}
	before := w.st
	defer func() { w.st = before }()
	w.st = w.st.Moved(out.PaymentStatus, movedAt)
	res := w.paymentResult(out)
	w.st.Result = &res
	input, err := json.Marshal(w.reopenInput()) //workflowcheck:ignore (as in closeIdle)
	if err != nil {
		return nil
	}
	return &activities.SaveReopenInput{TransactionID: in.TransactionID, Run: run, Input: input}
}

// reopenInput is what the order's next run starts from: its request
// without the shopper's personal data or the merchant's 3-D Secure values
// (a paid order has no more use for them, and the record keeps them apart),
// and its state.
func (w *orderWorkflow) reopenInput() OrderInput {
	next := w.in
	next.Reopen = false
	next.Details.TakePersonal()
	next.ExternalThreeDS = nil
	if next.APM != nil {
		next.APM = &APMOrder{Method: w.in.APM.Method, Country: w.in.APM.Country, BankCode: w.in.APM.BankCode}
	}
	carried := w.st.Carried(maxCarriedNotifications)
	next.Resume = &carried
	return next
}

// closeIdle saves the order's state for its next run and reports whether the
// run may complete: the order is still idle once the state is saved. When
// the state cannot be saved (another run holds the order's row), the order
// stays open as orders did before shape 3: a workflow never fails for it.
func (w *orderWorkflow) closeIdle(ctx workflow.Context) bool {
	current, writes := w.st.Status, w.st.Writes
	// JSON of these plain structs is the same on every replay (fields in
	// order, map keys sorted); workflowcheck flags encoding/json for the
	// caches its reflection fills.
	input, err := json.Marshal(w.reopenInput()) //workflowcheck:ignore
	if err != nil {
		workflow.GetLogger(ctx).Error("order state not saved for reopening: stays open", "error", err)
		w.keepOpen = true
		return false
	}
	if w.savedReopen != nil && bytes.Equal(input, w.savedReopen) {
		// The outcome's write saved this very state (shape 4), and
		// nothing ran since that could have changed it.
		w.savedReopen = nil
		return w.quiet(ctx)
	}
	var saved activities.SaveReopenResult
	err = workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, storeOptions), a.SaveOrderReopen,
		activities.SaveReopenInput{TransactionID: w.in.TransactionID, Run: workflow.GetInfo(ctx).FirstRunID, Input: input}).Get(ctx, &saved)
	if err != nil || !saved.Saved {
		workflow.GetLogger(ctx).Error("order state not saved for reopening: stays open", "error", err)
		w.keepOpen = true
		return false
	}
	// An operation taken while the state was saved changed it: the run
	// goes on and saves again when it is idle, or when it ends.
	if w.quiet(ctx) && w.st.Status == current && w.st.Writes == writes {
		return true
	}
	w.savedIdle = true
	return false
}

// reopen runs an order reopened by an operation: it takes the state the
// order's last run saved, upserts what makes it findable, and carries on.
// Until the state is loaded the operation that reopened it waits
// (lockLoaded); validators let entries through until then and the handlers
// check them once it is loaded. An order with nothing to carry on from (it
// ended final, or a run that took its state ended without saving it)
// refuses every operation and ends.
func (w *orderWorkflow) reopen(ctx workflow.Context) (PaymentResult, error) {
	closed, took := w.takeState(ctx)
	w.refusing, w.loaded = closed, true
	if closed != nil {
		if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
			return PaymentResult{}, err
		}
		if !took {
			return PaymentResult{}, nil
		}
		// The state taken is given back, so that the next operation
		// finds it (and is refused the same way) rather than a row held
		// by a run that ended.
		w.closeIdle(ctx)
		return *w.st.Result, nil
	}
	if !w.lean() {
		w.startDelivery()
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, SearchMerchantID.ValueSet(w.in.MerchantID),
		SearchAccountID.ValueSet(w.in.AccountID), SearchConnector.ValueSet(w.connectorName()),
		SearchPaymentStatus.ValueSet(int64(w.st.Status))); err != nil {
		return PaymentResult{}, err
	}
	return w.carryOn(ctx)
}

// takeState loads the saved state into the workflow. It returns the code
// every operation is refused with when the order takes none, and whether
// a saved state was taken (and must be given back).
func (w *orderWorkflow) takeState(ctx workflow.Context) (*codes.Code, bool) {
	logger := workflow.GetLogger(ctx)
	var taken activities.TakeReopenResult
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, storeOptions), a.TakeOrderReopen,
		activities.TakeReopenInput{TransactionID: w.in.TransactionID, Run: workflow.GetInfo(ctx).FirstRunID}).Get(ctx, &taken)
	closed := codes.InvalidState
	switch {
	case err != nil:
		logger.Error("reopened order: its state could not be read", "error", err)
		return &closed, false
	case len(taken.Input) == 0 && taken.HeldBy != "":
		logger.Error("reopened order: its state is held by a run that ended without saving it", "run", taken.HeldBy)
		return &closed, false
	case len(taken.Input) == 0:
		return &closed, false
	}
	var next OrderInput
	err = json.Unmarshal(taken.Input, &next) //workflowcheck:ignore (as in closeIdle)
	if err != nil || next.Resume == nil || next.Resume.Result == nil {
		logger.Error("reopened order: its saved state does not read", "error", err)
		return &closed, false
	}
	w.in, w.st = next, next.Resume.Resumed()
	d := w.st.Deadline(w.in.Kind, w.in.Windows)
	if d.Refundable && d.Remaining(w.st.Since, workflow.Now(ctx)) <= 0 {
		// The refund window has ended since the order closed: it takes
		// no more operations, as an order whose workflow ended.
		return &closed, true
	}
	return nil, true
}

// entryGate is the check every operation's validator makes first: a
// reopened order lets entries through until its state is loaded (its
// handler checks them then), and refuses them all when it has none.
func (w *orderWorkflow) entryGate() (checked bool, err error) {
	if !w.loaded {
		return true, nil
	}
	if w.refusing != nil {
		return true, refused(w.refusing)
	}
	return false, nil
}

// closedOrder is the error a reopened order with nothing to carry on from
// answers a payment request with.
func closedOrder() error {
	return temporal.NewApplicationError("order workflow closed", ErrTypeOrderClosed)
}

// lockLoaded takes the order's lock once its state is loaded: a reopened
// run's operations wait for the state they are checked against.
func (w *orderWorkflow) lockLoaded(ctx workflow.Context) error {
	if err := workflow.Await(ctx, func() bool { return w.loaded }); err != nil {
		return err
	}
	return w.lock.Lock(ctx)
}

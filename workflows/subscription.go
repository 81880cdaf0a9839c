package workflows

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/capture"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/internal/domain/subscription"
)

// SubscriptionInput starts a subscription's workflow, and carries its
// progress across continue-as-new.
type SubscriptionInput struct {
	RecurringID        string
	MerchantID         string
	AccountID          string
	FirstTransactionID string
	// FirstPaid is when the first payment was approved: the schedule's
	// anchor unless the terms start later.
	FirstPaid time.Time
	Terms     subscription.Terms
	// Card is the stored card every charge uses.
	Card CardRef
	// Details are the first payment's, without subscription and token
	// fields: the charges' shopper, notify_url and the like.
	Details        order.Details
	Connector      string
	NotifySchedule notify.Schedule
	Windows        Windows
	// Dunning is the retry schedule of a failed charge (DefaultDunning when
	// empty), fitted to the interval by Terms.DunningOffsets.
	Dunning []time.Duration `json:",omitempty"`
	// CyclesPerRun bounds the cycles one run charges before it continues
	// as new, keeping the history short (subscriptionCyclesPerRun when 0).
	CyclesPerRun int `json:",omitempty"`
	Progress     SubscriptionProgress
}

// SubscriptionProgress is where a subscription stands.
type SubscriptionProgress struct {
	// Cycle is the last cycle charged successfully (1: the first payment).
	Cycle int
	// Charges counts successful charges, the first payment included.
	Charges int
	// Recorded is set once the subscription's record exists.
	Recorded bool
	// Plan is what the merchant changed, and Paused whether it is paused.
	Plan   subscription.Plan `json:",omitzero"`
	Paused bool              `json:",omitempty"`
	// Tried counts the charge orders made for the cycle now due.
	Tried int `json:",omitempty"`
}

// SubscriptionAmendment is a merchant's change of a subscription's amount
// or next charge date (UpdateAmendSubscription).
type SubscriptionAmendment = subscription.Amendment

// SubscriptionChargeResult is a charge order's result, signalled to its
// subscription (SignalSubscriptionCharge).
type SubscriptionChargeResult = subscription.ChargeResult

// SubscriptionState is the subscription as its workflow knows it
// (QuerySubscriptionState, UpdateCancelSubscription and its result).
type SubscriptionState = subscription.State

// subscriptionCyclesPerRun is how many cycles a run charges before it
// continues as new: each cycle adds a child order, a signal and a few
// records to the history.
const subscriptionCyclesPerRun = 50

// subscriptionWorkflow is one run's state.
type subscriptionWorkflow struct {
	in        SubscriptionInput
	state     SubscriptionState
	cancelled bool
	charging  bool
	// rescheduled is set when a merchant's change moved the cycle now
	// waited for; the wait starts over from the new plan.
	rescheduled bool
	// writing is set while the record is written, so the run's writes
	// and a change's never overtake one another.
	writing bool
	results workflow.ReceiveChannel
}

// Subscription charges a subscription's billing cycles. Each charge is an
// order of its own (a child Order workflow that outlives the subscription,
// queryable, notifiable and refundable like any order) on the stored card;
// a failed charge is retried on the dunning schedule and then suspends the
// subscription. It ends finished after its last cycle, or cancelled by
// UpdateCancelSubscription; no charge starts after a cancel is answered.
func Subscription(ctx workflow.Context, in SubscriptionInput) (SubscriptionState, error) {
	if in.CyclesPerRun <= 0 {
		in.CyclesPerRun = subscriptionCyclesPerRun
	}
	if in.Progress.Cycle < 1 {
		in.Progress.Cycle, in.Progress.Charges = 1, 1
	}
	w := &subscriptionWorkflow{in: in, results: workflow.GetSignalChannel(ctx, SignalSubscriptionCharge),
		state: subscription.Start(in.RecurringID, in.Progress.Cycle, in.Progress.Charges)}
	w.state.Plan, w.state.Tried = in.Progress.Plan, in.Progress.Tried
	if in.Progress.Paused {
		w.state.Status = subscription.Paused
	}
	if err := w.registerHandlers(ctx); err != nil {
		return w.state, err
	}
	if !in.Progress.Recorded {
		if err := w.recordStart(ctx); err != nil {
			return w.state, err
		}
	}
	for cycles := 0; ; cycles++ {
		if cycles >= in.CyclesPerRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			return w.continueAsNew(ctx)
		}
		next := w.state.Cycle + 1
		if w.state.Plan.Ended(in.Terms, in.FirstPaid, next) {
			return w.end(ctx, subscription.Finished)
		}
		done, err := w.chargeCycle(ctx, next)
		if err != nil {
			return w.state, err
		}
		if done {
			return w.state, nil
		}
	}
}

func (w *subscriptionWorkflow) registerHandlers(ctx workflow.Context) error {
	err := workflow.SetQueryHandler(ctx, QuerySubscriptionState, func() (SubscriptionState, error) { return w.state, nil })
	if err != nil {
		return err
	}
	err = workflow.SetUpdateHandler(ctx, UpdateCancelSubscription, func(ctx workflow.Context) (SubscriptionState, error) {
		// From here on no charge starts; one already under way is let
		// finish, and the answer waits for it and for the record.
		w.cancelled = true
		if err := w.accepted(ctx); err != nil {
			return w.state, err
		}
		if err := workflow.Await(ctx, func() bool { return !w.charging }); err != nil {
			return w.state, err
		}
		if next, changed := w.state.Cancel(); changed {
			w.state = next
			if err := w.record(ctx, ""); err != nil {
				return w.state, err
			}
		}
		return w.state, nil
	})
	if err != nil {
		return err
	}
	err = workflow.SetUpdateHandler(ctx, UpdatePauseSubscription, func(ctx workflow.Context) (SubscriptionState, error) {
		return w.change(ctx, changePause, func() (SubscriptionState, bool) { return w.state.Pause() })
	})
	if err != nil {
		return err
	}
	err = workflow.SetUpdateHandler(ctx, UpdateResumeSubscription, func(ctx workflow.Context) (SubscriptionState, error) {
		return w.change(ctx, changeResume, func() (SubscriptionState, bool) {
			return w.state.Resume(w.in.Terms, w.in.FirstPaid, workflow.Now(ctx))
		})
	})
	if err != nil {
		return err
	}
	return workflow.SetUpdateHandler(ctx, UpdateAmendSubscription, func(ctx workflow.Context, a SubscriptionAmendment) (SubscriptionState, error) {
		return w.change(ctx, changeAmend, func() (SubscriptionState, bool) {
			return w.state.Amend(w.in.Terms, w.in.FirstPaid, a)
		})
	})
}

// accepted ends the workflow task of the merchant's change before the
// record hears of it (acceptFirst).
func (w *subscriptionWorkflow) accepted(ctx workflow.Context) error {
	return acceptFirst(ctx, workflow.GetVersion(ctx, changeAcceptedFirst, workflow.DefaultVersion, 1))
}

// The merchant's changes, as recorded and notified.
const (
	changePause  = "pause"
	changeResume = "resume"
	changeAmend  = "amend"
)

// change applies a merchant's change once no charge is under way, records
// it and notifies the merchant. A change that changes nothing (pausing a
// paused subscription) answers the state as it is.
func (w *subscriptionWorkflow) change(ctx workflow.Context, action string, apply func() (SubscriptionState, bool)) (SubscriptionState, error) {
	if err := w.accepted(ctx); err != nil {
		return w.state, err
	}
	if err := workflow.Await(ctx, func() bool { return !w.charging }); err != nil {
		return w.state, err
	}
	next, changed := apply()
	if !changed {
		return w.state, nil
	}
	// A change of the amount alone leaves the cycle's dates and its
	// dunning as they are: the charge reads the amount when it starts.
	// Restarting the cycle made an attempt at once and its dunning over.
	moved := next.Status != w.state.Status || !next.Plan.SameDates(w.state.Plan)
	w.rescheduled = moved || workflow.GetVersion(ctx, changeAmountKeepsDunning, workflow.DefaultVersion, 1) == workflow.DefaultVersion
	w.state = next
	if err := w.record(ctx, action); err != nil {
		return w.state, err
	}
	w.notifyChange(ctx, action)
	return w.state, nil
}

// chargeCycle waits for the cycle's due date and charges it, retrying on
// the dunning schedule. It reports done when the subscription has ended
// (cancelled or suspended).
func (w *subscriptionWorkflow) chargeCycle(ctx workflow.Context, cycle int) (bool, error) {
	if w.cancelled {
		return true, w.ended(ctx)
	}
	if w.state.Status == subscription.Paused {
		// Nothing is charged until the merchant resumes or cancels; the
		// resumed plan is then read afresh.
		if err := workflow.Await(ctx, func() bool { return w.cancelled || w.state.Status != subscription.Paused }); err != nil {
			return false, err
		}
		if w.cancelled {
			return true, w.ended(ctx)
		}
		return false, nil
	}
	w.rescheduled = false
	due := w.state.Plan.Due(w.in.Terms, w.in.FirstPaid, cycle)
	w.state = w.state.CycleDue(due)
	if err := w.record(ctx, ""); err != nil {
		return false, err
	}
	offsets := w.in.Terms.DunningOffsets(w.dunning())
	for attempt := 0; ; attempt++ {
		if w.waitUntil(ctx, subscription.AttemptAt(due, offsets, attempt)) {
			return true, w.ended(ctx)
		}
		if w.rescheduled || w.state.Status == subscription.Paused {
			return false, nil
		}
		w.charging = true
		res, err := w.charge(ctx, cycle, w.state.Tried)
		w.charging = false
		if errors.Is(err, errCancelledBeforeCharge) {
			return true, w.ended(ctx)
		}
		if errors.Is(err, errChargeUnknown) {
			// Suspended for ops: charging again could charge the period
			// twice, and waiting for ever left cancels unanswered.
			_, err := w.end(ctx, subscription.Suspended)
			return true, err
		}
		if err != nil {
			return false, err
		}
		next, step := w.state.Charged(cycle, attempt, res, due, offsets)
		// told: the merchant hears of a suspension no charge order told
		// of (the order that would have was not made, or said unknown).
		told := res.OrderNo == "" && res.ResultCode == codes.TokenDeleted.ID
		if res.Unknown && step == subscription.Retry &&
			workflow.GetVersion(ctx, changeSubscriptionChargeUnknown, workflow.DefaultVersion, 1) == 1 {
			// The card may have been charged: a retry under a new key
			// could charge the period twice. Suspended for ops, as a
			// charge whose order never reported.
			step, told = subscription.Suspend, true
		}
		w.state = next
		switch step {
		case subscription.NextCycle:
			return false, nil
		case subscription.Suspend:
			_, err := w.end(ctx, subscription.Suspended)
			if err == nil && told && !w.cancelled {
				w.notifySubscription(ctx, "suspend", w.in.RecurringID+"-end", w.state.Plan.Changes+1)
			}
			return true, err
		}
		if err := w.record(ctx, ""); err != nil {
			return false, err
		}
	}
}

func (w *subscriptionWorkflow) dunning() []time.Duration {
	if len(w.in.Dunning) > 0 {
		return w.in.Dunning
	}
	return subscription.DefaultDunning
}

// waitUntil sleeps until at, or until a cancel or a merchant's change
// arrives; it reports whether the subscription was cancelled.
func (w *subscriptionWorkflow) waitUntil(ctx workflow.Context, at time.Time) bool {
	if d := at.Sub(workflow.Now(ctx)); d > 0 {
		// Its only error is the workflow's own cancellation, which ends
		// the wait as well; what follows reads the flags either way.
		_, _ = workflow.AwaitWithTimeout(ctx, d, func() bool {
			return w.cancelled || w.rescheduled || w.state.Status == subscription.Paused
		})
	}
	return w.cancelled
}

// ended finishes a cancelled subscription once its cancel has been
// answered (the handler records it).
func (w *subscriptionWorkflow) ended(ctx workflow.Context) error {
	return workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
}

// end records the subscription's final status.
func (w *subscriptionWorkflow) end(ctx workflow.Context, st subscription.Status) (SubscriptionState, error) {
	if w.cancelled {
		return w.state, w.ended(ctx)
	}
	w.state = w.state.Ended(st)
	if err := w.record(ctx, ""); err != nil {
		return w.state, err
	}
	return w.state, w.ended(ctx)
}

// continueAsNew starts the next run with the progress so far.
func (w *subscriptionWorkflow) continueAsNew(ctx workflow.Context) (SubscriptionState, error) {
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return w.state, err
	}
	if w.cancelled {
		return w.state, nil
	}
	next := w.in
	next.Progress = SubscriptionProgress{Cycle: w.state.Cycle, Charges: w.state.Charges, Recorded: true,
		Plan: w.state.Plan, Paused: w.state.Status == subscription.Paused, Tried: w.state.Tried}
	return w.state, workflow.NewContinueAsNewError(ctx, SubscriptionWorkflowType, next)
}

// errCancelledBeforeCharge is charge's error when a cancel came while the
// charge was prepared, before its order started.
var errCancelledBeforeCharge = errors.New("subscription cancelled before the charge")

// charge makes the cycle's attempt as an order of its own and waits for
// its result.
func (w *subscriptionWorkflow) charge(ctx workflow.Context, cycle, attempt int) (SubscriptionChargeResult, error) {
	lctx := workflow.WithLocalActivityOptions(ctx, storeOptions)
	if w.in.Card.TokenID != "" && workflow.GetVersion(ctx, changeSubscriptionCardGone, workflow.DefaultVersion, 1) == 1 {
		// An order for a deleted card would record the shopper's details
		// (perhaps erased) again, only to be refused I0025.
		var gone bool
		if err := workflow.ExecuteLocalActivity(lctx, a.StoredCardGone, activities.StoredCardInput{TokenID: w.in.Card.TokenID}).Get(ctx, &gone); err != nil {
			return SubscriptionChargeResult{}, err
		}
		if gone {
			return SubscriptionChargeResult{Cycle: cycle, Attempt: attempt, ResultCode: codes.TokenDeleted.ID,
				ResultMessage: codes.TokenDeleted.Message}, nil
		}
	}
	var id activities.NextTransactionIDResult
	if err := workflow.ExecuteLocalActivity(lctx, a.NextTransactionID).Get(ctx, &id); err != nil {
		return SubscriptionChargeResult{}, err
	}
	if w.cancelled && workflow.GetVersion(ctx, changeCancelBeforeCharge, workflow.DefaultVersion, 1) == 1 {
		// The merchant cancelled while the charge was being prepared:
		// nothing has reached the card yet, so nothing does.
		return SubscriptionChargeResult{}, errCancelledBeforeCharge
	}
	orderNo := ChargeOrderNo(w.in.RecurringID, cycle, attempt)
	amount := w.state.Plan.AmountOf(w.in.Terms, cycle)
	details := w.in.Details
	details.OrderNo = orderNo
	details.Amount = order.Text(amount.String())
	in := OrderInput{
		TransactionID:  id.TransactionID,
		MerchantID:     w.in.MerchantID,
		AccountID:      w.in.AccountID,
		OrderNo:        orderNo,
		Amount:         amount.Minor,
		Currency:       amount.Currency,
		CaptureMode:    capture.Auto,
		Card:           w.in.Card,
		Details:        details,
		Windows:        w.in.Windows,
		NotifySchedule: w.in.NotifySchedule,
		Kind:           order.KindCard,
		Connector:      w.in.Connector,
		Shape:          CurrentOrderShape,
		Keys:           CurrentOrderKeys,
		Recurring: &RecurringCharge{RecurringID: w.in.RecurringID, Cycle: cycle, Attempt: attempt,
			WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID},
	}
	in.RequestFingerprint = "subscription:" + orderNo
	orderID := OrderWorkflowID(w.in.MerchantID, w.in.AccountID, orderNo)
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            orderID,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			SearchMerchantID.ValueSet(w.in.MerchantID),
			SearchAccountID.ValueSet(w.in.AccountID),
			SearchOrderNo.ValueSet(orderNo),
			SearchTransactionID.ValueSet(id.TransactionID),
			SearchPaymentStatus.ValueSet(int64(status.Pending)),
		),
	})
	child := workflow.ExecuteChildWorkflow(cctx, OrderWorkflowType, in)
	if err := child.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		var started *temporal.ChildWorkflowExecutionAlreadyStartedError
		if !errors.As(err, &started) {
			return SubscriptionChargeResult{}, fmt.Errorf("start charge %s: %w", orderNo, err)
		}
		// The order exists from before (a reset of this workflow): its
		// record tells its result, and it is never made twice.
		return w.recordedCharge(ctx, cycle, attempt, orderNo)
	}
	closed := false
	for {
		var res SubscriptionChargeResult
		if closed {
			w.results.Receive(ctx, &res)
		} else {
			reported := false
			sel := workflow.NewSelector(ctx)
			sel.AddReceive(w.results, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, &res); reported = true })
			sel.AddFuture(child, func(workflow.Future) { closed = true })
			sel.Select(ctx)
			if !reported {
				// The order closed. Its report, when it made one, came
				// before it closed and waits on the channel.
				for w.results.ReceiveAsync(&res) {
					if res.Cycle == cycle && res.Attempt == attempt {
						return res, nil
					}
				}
				if workflow.GetVersion(ctx, changeChargeOrderClosed, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
					continue
				}
				return w.closedCharge(ctx, cycle, attempt, orderNo)
			}
		}
		if res.Cycle == cycle && res.Attempt == attempt {
			return res, nil
		}
	}
}

// errChargeUnknown is charge's error when the cycle's order closed without
// a report and its record has no final result within a day.
var errChargeUnknown = errors.New("the charge's outcome is unknown")

// closedCharge reads the result of a charge order that closed without
// reporting it (it failed, ops terminated it, its report was lost). Its
// record is asked for a day; an order still pending then may have charged
// the card, so it is neither taken as paid nor charged again.
func (w *subscriptionWorkflow) closedCharge(ctx workflow.Context, cycle, attempt int, orderNo string) (SubscriptionChargeResult, error) {
	res, err := w.chargeOfRecord(ctx, cycle, attempt, orderNo, 24*time.Hour, 10*time.Minute)
	if err != nil {
		workflow.GetLogger(ctx).Error("subscription charge closed without a result", "order_no", orderNo, "error", err)
		return SubscriptionChargeResult{}, fmt.Errorf("%w: %s", errChargeUnknown, orderNo)
	}
	return res, nil
}

// recordedCharge reads the result of a charge order made before, waiting
// until it is final.
func (w *subscriptionWorkflow) recordedCharge(ctx workflow.Context, cycle, attempt int, orderNo string) (SubscriptionChargeResult, error) {
	return w.chargeOfRecord(ctx, cycle, attempt, orderNo, 0, time.Minute)
}

// chargeOfRecord reads a charge order's final result from its record
// (FindChargeOrder, retried while the order is missing or pending, for
// within when set, else without end, at most every maxInterval).
func (w *subscriptionWorkflow) chargeOfRecord(ctx workflow.Context, cycle, attempt int, orderNo string, within, maxInterval time.Duration) (SubscriptionChargeResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    10 * time.Second,
		ScheduleToCloseTimeout: within,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: maxInterval},
	})
	var found activities.ChargeOrderResult
	err := workflow.ExecuteActivity(actx, a.FindChargeOrder, activities.FindChargeOrderInput{
		MerchantID: w.in.MerchantID, AccountID: w.in.AccountID, OrderNo: orderNo,
	}).Get(ctx, &found)
	if err != nil {
		return SubscriptionChargeResult{}, err
	}
	return SubscriptionChargeResult{Cycle: cycle, Attempt: attempt, TransactionID: found.TransactionID, OrderNo: orderNo,
		Approved: found.Approved, ResultCode: found.ResultCode, ResultMessage: found.ResultMessage}, nil
}

// ChargeOrderNo is the order_no of a subscription's charge: the
// subscription, the cycle and, for a dunning retry, the attempt.
func ChargeOrderNo(recurringID string, cycle, attempt int) string {
	return subscription.ChargeOrderNo(recurringID, cycle, attempt)
}

// recordStart writes the subscription's record.
func (w *subscriptionWorkflow) recordStart(ctx workflow.Context) error {
	lctx := workflow.WithLocalActivityOptions(ctx, storeOptions)
	t := w.in.Terms
	err := workflow.ExecuteLocalActivity(lctx, a.RecordSubscription, activities.RecordSubscriptionInput{
		RecurringID: w.in.RecurringID, WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID,
		MerchantID: w.in.MerchantID, AccountID: w.in.AccountID, FirstTransactionID: w.in.FirstTransactionID,
		TokenID: w.in.Card.TokenID, Terms: t, At: workflow.Now(ctx),
	}).Get(ctx, nil)
	if err != nil && errorType(err) != activities.ErrTypeRecordRejected {
		return err
	}
	if err != nil {
		workflow.GetLogger(ctx).Error("subscription not recorded", "recurring_id", w.in.RecurringID, "error", err)
	}
	return nil
}

// record writes the subscription's progress, and the merchant's change
// (action) that made it when one did. A write the record refuses for its
// values is logged: the workflow goes on charging as its terms say.
func (w *subscriptionWorkflow) record(ctx workflow.Context, action string) error {
	if err := workflow.Await(ctx, func() bool { return !w.writing }); err != nil {
		return err
	}
	w.writing = true
	defer func() { w.writing = false }()
	lctx := workflow.WithLocalActivityOptions(ctx, storeOptions)
	in := activities.UpdateSubscriptionInput{RecurringID: w.in.RecurringID, Status: int(w.state.Status),
		Charges: w.state.Charges, FailedAttempts: w.state.Attempts, At: workflow.Now(ctx)}
	if !w.state.Next.IsZero() {
		next := w.state.Next
		in.NextChargeAt = &next
	}
	if w.state.Plan.Changes > 0 {
		plan := w.state.Plan
		in.Plan = &plan
	}
	if action != "" {
		in.Change = &activities.SubscriptionChangeEntry{Seq: w.state.Plan.Changes, Action: action,
			Amount: w.state.NextAmount(w.in.Terms)}
	}
	err := workflow.ExecuteLocalActivity(lctx, a.UpdateSubscription, in).Get(ctx, nil)
	w.showStatus(ctx)
	if errorType(err) == activities.ErrTypeRecordRejected {
		workflow.GetLogger(ctx).Error("subscription progress not recorded", "recurring_id", w.in.RecurringID, "error", err)
		return nil
	}
	return err
}

// showStatus keeps the SubscriptionStatus search attribute at the
// subscription's status, for ops in the Temporal UI; runs begun before it
// replay without.
func (w *subscriptionWorkflow) showStatus(ctx workflow.Context) {
	if workflow.GetVersion(ctx, changeSubscriptionSearch, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	current, _ := workflow.GetTypedSearchAttributes(ctx).GetInt64(SearchSubscriptionStatus)
	if current == int64(w.state.Status) {
		return
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, SearchSubscriptionStatus.ValueSet(int64(w.state.Status))); err != nil {
		workflow.GetLogger(ctx).Warn("subscription search attribute", "recurring_id", w.in.RecurringID, "error", err)
	}
}

// notifyChange tells the merchant's notify_url of a change it made: it is
// recorded, then delivered by a Redeliver child that outlives this run on
// the orders' durable schedule. A notification that cannot be recorded is
// logged; the change itself stands.
func (w *subscriptionWorkflow) notifyChange(ctx workflow.Context, action string) {
	w.notifySubscription(ctx, action, fmt.Sprintf("%s-s%02d", w.in.RecurringID, w.state.Plan.Changes), w.state.Plan.Changes)
}

// notifySubscription records the subscription's notification id of a
// change (action) as it now stands, seq its place among the
// subscription's notifications, and hands it to a Redeliver child.
func (w *subscriptionWorkflow) notifySubscription(ctx workflow.Context, action, id string, seq int) {
	if w.in.Details.NotifyURL == "" {
		return
	}
	amount := w.state.NextAmount(w.in.Terms)
	next := ""
	if !w.state.Next.IsZero() {
		next = w.state.Next.UTC().Format(subscription.AnswerTimeLayout)
	}
	fields := map[string]string{
		notify.NotifyTypeField: notify.TypeSubscription, "notify_id": id,
		"merchant_id": w.in.MerchantID, "account_id": w.in.AccountID, "recurring_id": w.in.RecurringID,
		"contract_name": w.in.Terms.ContractName, "change": action,
		"recurring_status": strconv.Itoa(int(w.state.Status)), "charges": strconv.Itoa(w.state.Charges),
		"contract_amount": amount.String(), "currency": amount.Currency, "recurring_deduction_time": next,
	}
	lctx := workflow.WithLocalActivityOptions(ctx, storeOptions)
	err := workflow.ExecuteLocalActivity(lctx, a.RecordNotification, activities.RecordNotificationInput{
		NotifyID: id, TransactionID: w.in.FirstTransactionID, MerchantID: w.in.MerchantID, AccountID: w.in.AccountID,
		Seq: seq, Type: notify.TypeSubscription, URL: w.in.Details.NotifyURL, Fields: fields,
	}).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Error("subscription notification not recorded", "recurring_id", w.in.RecurringID, "error", err)
		return
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:        "notify/" + id,
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
	})
	child := workflow.ExecuteChildWorkflow(cctx, RedeliverWorkflowType,
		RedeliverInput{NotifyIDs: []string{id}, Schedule: w.in.NotifySchedule})
	// Waiting for the child to start is what makes it survive this run.
	if err := child.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("subscription notification not started", "recurring_id", w.in.RecurringID, "error", err)
	}
}

package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/status"
)

// Notification types (notify_type).
const (
	NotifyPayment = notify.TypePayment
	NotifyReview  = notify.TypeReview
	NotifyCapture = notify.TypeCapture
	NotifyCancel  = notify.TypeCancel
	NotifyRefund  = notify.TypeRefund
	NotifyExpiry  = notify.TypeExpiry
)

// RedeliverWorkflowType delivers chosen notifications again, with their
// original notify_id and body.
const RedeliverWorkflowType = "Redeliver"

// deliverOptions: one attempt is one POST (10 s) plus the record; the
// workflow, not the activity, owns the retry schedule, so the activity
// retries only quickly for its own failures (database, worker crash).
var deliverOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 20 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    time.Second,
		BackoffCoefficient: 2,
		MaximumInterval:    30 * time.Second,
		MaximumAttempts:    5,
	},
}

// NotificationState is a notification as the order-state query shows it.
type NotificationState = notify.Delivery

// notice is a notification waiting in the order's queue.
type notice struct {
	id string
}

// notify makes a notification of the order's current state and queues it.
// Orders without a notify_url are not notified.
func (w *orderWorkflow) notify(ctx workflow.Context, typ string, code codes.Code, extra map[string]string) error {
	if w.in.Details.NotifyURL == "" {
		return nil
	}
	w.st.NoticeSeq++
	id := fmt.Sprintf("%s-n%02d", w.in.TransactionID, w.st.NoticeSeq)
	fields := map[string]string{
		"merchant_id":    w.in.MerchantID,
		"account_id":     w.in.AccountID,
		"transaction_id": w.in.TransactionID,
		"order_no":       w.in.OrderNo,
		"currency":       w.in.Currency,
		"amount":         money.FromMinor(w.in.Amount, w.in.Currency).String(),
		"order_status":   status.OrderStatusOf(w.st.Status).String(),
		"result_info":    code.String(),
		"payment_status": w.st.Status.String(),
		"card":           w.st.Card.Masked, // a hosted order's card comes with the shopper
		"notify_type":    typ,
		"notify_id":      id,
	}
	// Filling a map gives the same map in any order, but workflowcheck
	// flags every range over a map (maps.Copy too); DeterministicKeys
	// keeps the rule without exceptions.
	for _, k := range workflow.DeterministicKeys(extra) {
		fields[k] = extra[k]
	}
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, storeOptions), a.RecordNotification,
		activities.RecordNotificationInput{
			NotifyID: id, TransactionID: w.in.TransactionID, MerchantID: w.in.MerchantID, AccountID: w.in.AccountID,
			OrderNo: w.in.OrderNo, Seq: w.st.NoticeSeq, Type: typ, URL: w.in.Details.NotifyURL, Fields: fields,
			Task: writeTask(ctx),
		}).Get(ctx, nil)
	if err != nil {
		return err
	}
	w.notices = append(w.notices, notice{id: id})
	w.startDelivery()
	w.st.Notifications = append(w.st.Notifications, NotificationState{NotifyID: id, Type: typ, Status: notify.Pending})
	return nil
}

// startDelivery starts deliverAll once: with the order for orders before
// shape 2, at the first notification from then on. It runs in the order's
// root context, whichever handler's step asked for it.
func (w *orderWorkflow) startDelivery() {
	if w.delivering {
		return
	}
	w.delivering = true
	workflow.Go(w.root, w.deliverAll)
}

// deliverAll sends the queued notifications one after the other, so a
// merchant never gets a refund's result before the payment's.
func (w *orderWorkflow) deliverAll(ctx workflow.Context) {
	for {
		if err := workflow.Await(ctx, func() bool { return len(w.notices) > 0 }); err != nil {
			return
		}
		n := w.notices[0]
		st, attempts := deliver(ctx, n.id, w.in.NotifySchedule, 0)
		for i := range w.st.Notifications {
			if w.st.Notifications[i].NotifyID == n.id {
				w.st.Notifications[i].Status, w.st.Notifications[i].Attempts = st, attempts
			}
		}
		w.notices = w.notices[1:]
	}
}

// deliver posts one notification until a 2xx or until the schedule's
// horizon has passed; then it is marked failed. made is how many attempts
// were made before (by another workflow). It returns the final status and
// the number of attempts.
func deliver(ctx workflow.Context, id string, schedule notify.Schedule, made int) (notify.Status, int) {
	schedule = schedule.WithDefaults()
	actx := workflow.WithActivityOptions(ctx, deliverOptions)
	first := workflow.Now(ctx)
	if made > 0 {
		// The sender tried already: the next attempt waits its turn in
		// the schedule and is numbered after the sender's.
		if err := workflow.Sleep(ctx, schedule.Delay(id, made)); err != nil {
			return notify.Pending, made
		}
	}
	for attempt := made + 1; ; attempt++ {
		var res activities.DeliverResult
		err := workflow.ExecuteActivity(actx, a.DeliverNotification, activities.DeliverInput{NotifyID: id, Attempt: attempt}).Get(ctx, &res)
		if err == nil && res.Delivered {
			return notify.Delivered, attempt
		}
		if err == nil && res.SupersededBy != "" &&
			workflow.GetVersion(ctx, changeNotifySuperseded, workflow.DefaultVersion, 1) == 1 {
			// A newer notification about the same thing was made; the
			// activity marked this one failed, unsent.
			return notify.Failed, attempt
		}
		if err != nil {
			workflow.GetLogger(ctx).Warn("notification attempt failed", "notify_id", id, "attempt", attempt, "error", err)
		}
		wait := schedule.Delay(id, attempt)
		if workflow.Now(ctx).Add(wait).Sub(first) > schedule.Horizon {
			lctx := workflow.WithLocalActivityOptions(ctx, storeOptions)
			if err := workflow.ExecuteLocalActivity(lctx, a.MarkNotification,
				activities.MarkNotificationInput{NotifyID: id, Status: notify.Failed}).Get(ctx, nil); err != nil {
				workflow.GetLogger(ctx).Error("mark notification failed", "notify_id", id, "error", err)
			}
			return notify.Failed, attempt
		}
		if err := workflow.Sleep(ctx, wait); err != nil {
			return notify.Pending, attempt
		}
	}
}

// notificationsIdle reports whether every queued notification is done.
func (w *orderWorkflow) notificationsIdle() bool { return len(w.notices) == 0 }

// RedeliverInput names the notifications to deliver again.
type RedeliverInput struct {
	NotifyIDs []string
	Schedule  notify.Schedule
	// Attempted is how many attempts the sender made already (a payout
	// tries once itself before it hands its notification over); 0 for a
	// resend, which starts at once.
	Attempted int
	// Groups, when it holds more than one, is NotifyIDs split by the
	// transaction they tell of, each in delivery order: each group is
	// delivered by a Redeliver child of its own, a few at a time, so that a
	// receiver refusing one order's notifications for days holds up no
	// other order's, and no history grows with the whole selection.
	Groups [][]string `json:",omitempty"`
}

// redeliverGroupsAtOnce bounds the groups delivered at the same time: a
// resend of a day is at most a few hundred orders, sent to one merchant.
const redeliverGroupsAtOnce = 16

// RedeliverResult tells what became of each notification.
type RedeliverResult struct {
	Delivered []string
	Failed    []string
}

// Redeliver delivers notifications again, in order, with their original
// notify_id and body, on the same retry schedule as the first time.
func Redeliver(ctx workflow.Context, in RedeliverInput) (RedeliverResult, error) {
	// A worker of the code before took Groups for nothing and went on one
	// by one; its run replays so.
	if len(in.Groups) > 1 && workflow.GetVersion(ctx, changeRedeliverGroups, workflow.DefaultVersion, 1) == 1 {
		return redeliverGroups(ctx, in)
	}
	// A notification handed over after its sender's attempt (Attempted)
	// is pending, or delivered if that attempt's answer was recorded late:
	// it is not reset (that would send a delivered one again), and its
	// attempts go on from the sender's. Behind a version, as a worker of
	// the code before may have begun this run and sent at once.
	made := 0
	if in.Attempted > 0 && workflow.GetVersion(ctx, changeRedeliverAfterSender, workflow.DefaultVersion, 1) == 1 {
		made = in.Attempted
	}
	ids := in.NotifyIDs
	if made == 0 {
		lctx := workflow.WithLocalActivityOptions(ctx, storeOptions)
		if err := workflow.ExecuteLocalActivity(lctx, a.ResetNotifications,
			activities.LoadNotificationsInput{NotifyIDs: in.NotifyIDs}).Get(ctx, &ids); err != nil {
			return RedeliverResult{}, err
		}
	}
	var out RedeliverResult
	for _, id := range ids {
		st, _ := deliver(ctx, id, in.Schedule, made)
		if st == notify.Delivered {
			out.Delivered = append(out.Delivered, id)
		} else {
			out.Failed = append(out.Failed, id)
		}
	}
	return out, nil
}

// redeliverGroups delivers each group of in by a Redeliver child, at most
// redeliverGroupsAtOnce at a time, and gathers what became of each
// notification. A group whose child failed counts as failed whole.
func redeliverGroups(ctx workflow.Context, in RedeliverInput) (RedeliverResult, error) {
	parent := workflow.GetInfo(ctx).WorkflowExecution.ID
	var out RedeliverResult
	sel := workflow.NewSelector(ctx)
	running, next := 0, 0
	start := func(i int) {
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: fmt.Sprintf("%s/%04d", parent, i)})
		child := workflow.ExecuteChildWorkflow(cctx, RedeliverWorkflowType, RedeliverInput{NotifyIDs: in.Groups[i], Schedule: in.Schedule})
		running++
		sel.AddFuture(child, func(f workflow.Future) {
			running--
			var r RedeliverResult
			if err := f.Get(ctx, &r); err != nil {
				workflow.GetLogger(ctx).Error("redelivery group failed", "group", i, "error", err)
				out.Failed = append(out.Failed, in.Groups[i]...)
				return
			}
			out.Delivered = append(out.Delivered, r.Delivered...)
			out.Failed = append(out.Failed, r.Failed...)
		})
	}
	for next < len(in.Groups) || running > 0 {
		for running < redeliverGroupsAtOnce && next < len(in.Groups) {
			start(next)
			next++
		}
		sel.Select(ctx)
		if err := ctx.Err(); err != nil {
			return out, err
		}
	}
	return out, nil
}

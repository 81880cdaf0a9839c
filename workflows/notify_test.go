package workflows_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/workflows"
)

// notifiedInput is an auto-capture order with a notify_url and the default
// schedule (first retry after 30s, at most 1h apart, given up after 72h).
func notifiedInput() workflows.OrderInput {
	in := orderInput("auto")
	in.Details.NotifyURL = "https://shop.example/notify"
	in.NotifySchedule = notify.DefaultSchedule()
	return in
}

func TestNotificationDeliveredAfterTwoDaysOfFailures(t *testing.T) {
	acq := &acquirer{risk: accepted, authorise: answer(approved(amount))}
	var start time.Time
	acq.deliverOK = func(id string, attempt int, now time.Time) bool {
		if start.IsZero() {
			start = now
		}
		return now.Sub(start) >= 48*time.Hour
	}
	env := newEnv(t, acq)
	// End the order once the notification is settled: a full refund.
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(workflows.UpdateRefund, "", &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { t.Errorf("refund rejected: %v", err) }, OnComplete: func(any, error) {},
		}, workflows.RefundRequest{Entry: entry, RefundAmount: amount})
	}, 50*time.Hour)
	run(t, env, notifiedInput())

	if len(acq.notes) != 2 || acq.notes[0].Type != workflows.NotifyPayment || acq.notes[1].Type != workflows.NotifyRefund {
		t.Fatalf("notifications made = %+v, want payment then refund", acq.notes)
	}
	payment := acq.notes[0]
	if payment.NotifyID != txID+"-n01" || payment.Fields["notify_id"] != payment.NotifyID ||
		payment.Fields["order_status"] != "1" || payment.Fields["result_info"] != "0000:Success" ||
		payment.Fields["amount"] != "123.45" || payment.Fields["payment_status"] != "3000" ||
		payment.Fields["card"] != "424242******4242" || payment.URL != "https://shop.example/notify" {
		t.Errorf("payment notification = %+v", payment)
	}
	refund := acq.notes[1]
	if refund.Fields["refund_amount"] != "123.45" || refund.Fields["refund_reference_id"] != txID+"-01" ||
		refund.Fields["payment_status"] != "4000" || refund.Fields["refund_status"] != "1" {
		t.Errorf("refund notification fields = %v", refund.Fields)
	}
	// The payment's attempts all come before the refund's first.
	firstRefund := -1
	paymentAttempts := 0
	for i, d := range acq.deliveries {
		switch d.NotifyID {
		case payment.NotifyID:
			paymentAttempts++
			if firstRefund >= 0 {
				t.Errorf("payment attempt %d after the refund's first delivery", d.Attempt)
			}
		case refund.NotifyID:
			if firstRefund < 0 {
				firstRefund = i
			}
		}
	}
	// 48h of failures with delays from 15-30s doubling up to 30-60min:
	// well over 40 attempts, and never more than one an hour apart.
	if paymentAttempts < 40 {
		t.Errorf("payment delivered after %d attempts, want the retries of two days", paymentAttempts)
	}
	if len(acq.marks) != 0 {
		t.Errorf("marked %v, want nothing given up", acq.marks)
	}
	v, err := env.QueryWorkflow(workflows.QueryOrderState)
	if err != nil {
		t.Fatal(err)
	}
	var st workflows.OrderState
	if err := v.Get(&st); err != nil {
		t.Fatal(err)
	}
	if len(st.Notifications) != 2 || st.Notifications[0].Status != "delivered" || st.Notifications[0].Attempts != paymentAttempts ||
		st.Notifications[1].Status != "delivered" {
		t.Errorf("query notifications = %+v", st.Notifications)
	}
}

func TestNotificationGivenUpAfterTheHorizon(t *testing.T) {
	acq := &acquirer{risk: accepted, authorise: answer(declined("do_not_honor"))}
	var first, last time.Time
	acq.deliverOK = func(id string, attempt int, now time.Time) bool {
		if first.IsZero() {
			first = now
		}
		last = now
		return false
	}
	env := newEnv(t, acq)
	run(t, env, notifiedInput())
	if len(acq.notes) != 1 || acq.notes[0].Fields["result_info"] != "A0001:Declined" || acq.notes[0].Fields["order_status"] != "0" {
		t.Fatalf("notifications = %+v", acq.notes)
	}
	want := []activities.MarkNotificationInput{{NotifyID: txID + "-n01", Status: "failed"}}
	if !reflect.DeepEqual(acq.marks, want) {
		t.Errorf("marks = %+v, want %+v", acq.marks, want)
	}
	if span := last.Sub(first); span < 71*time.Hour || span > 72*time.Hour {
		t.Errorf("attempts spanned %v, want just under the 72h horizon", span)
	}
}

func TestNoNotificationWithoutNotifyURL(t *testing.T) {
	acq := &acquirer{risk: accepted, authorise: answer(approved(amount))}
	env := newEnv(t, acq)
	in := orderInput("auto")
	in.Details.NotifyURL = ""
	run(t, env, in)
	if len(acq.notes)+len(acq.deliveries) != 0 {
		t.Errorf("notified without a notify_url: %+v %+v", acq.notes, acq.deliveries)
	}
}

func TestRedeliverKeepsTheNotifyID(t *testing.T) {
	acq := &acquirer{}
	env := newEnv(t, acq)
	env.RegisterWorkflowWithOptions(workflows.Redeliver, workflowOptions(workflows.RedeliverWorkflowType))
	env.OnActivity(acts.ResetNotifications, anyArg, anyArg).Return([]string{"A-n01", "A-n02"}, nil)
	calls := 0
	acq.deliverOK = func(id string, attempt int, now time.Time) bool {
		calls++
		return id == "A-n01" || attempt >= 3
	}
	env.ExecuteWorkflow(workflows.RedeliverWorkflowType, workflows.RedeliverInput{NotifyIDs: []string{"A-n01", "A-n02"}, Schedule: notify.DefaultSchedule()})
	var res workflows.RedeliverResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Delivered, []string{"A-n01", "A-n02"}) || len(res.Failed) != 0 {
		t.Errorf("result = %+v", res)
	}
	var ids []string
	for _, d := range acq.deliveries {
		ids = append(ids, d.NotifyID)
	}
	if !reflect.DeepEqual(ids, []string{"A-n01", "A-n02", "A-n02", "A-n02"}) {
		t.Errorf("deliveries = %v", ids)
	}
}

// TestRedeliverAfterTheSendersAttempt: handed a notification its sender
// tried once (a payout), Redeliver does not reset it, waits the schedule's
// first delay and numbers its attempts from 2. (A run begun by a worker of
// the code before replays as it ran: testdata/redeliver-handed-over-by-an-old-worker.json.)
func TestRedeliverAfterTheSendersAttempt(t *testing.T) {
	acq := &acquirer{}
	env := newEnv(t, acq)
	env.RegisterWorkflowWithOptions(workflows.Redeliver, workflowOptions(workflows.RedeliverWorkflowType))
	resets := 0
	env.OnActivity(acts.ResetNotifications, anyArg, anyArg).Return(func(context.Context, activities.LoadNotificationsInput) ([]string, error) {
		resets++
		return []string{"P-n01"}, nil
	})
	start := env.Now()
	var at []time.Duration
	acq.deliverOK = func(id string, attempt int, now time.Time) bool {
		at = append(at, now.Sub(start))
		return attempt >= 3
	}
	schedule := notify.DefaultSchedule()
	env.ExecuteWorkflow(workflows.RedeliverWorkflowType, workflows.RedeliverInput{NotifyIDs: []string{"P-n01"}, Schedule: schedule, Attempted: 1})
	var res workflows.RedeliverResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	var attempts []int
	for _, d := range acq.deliveries {
		attempts = append(attempts, d.Attempt)
	}
	if !reflect.DeepEqual(res.Delivered, []string{"P-n01"}) || !reflect.DeepEqual(attempts, []int{2, 3}) || resets != 0 {
		t.Fatalf("result %+v, attempts %v, resets %d (a handed-over notification is not reset)", res, attempts, resets)
	}
	if first := schedule.WithDefaults().Delay("P-n01", 1); len(at) == 0 || at[0] < first {
		t.Errorf("the first attempt came %v after the start, want after the schedule's %v", at, first)
	}
}

// TestRedeliverStopsAtASupersededNotification: a notification the activity
// found superseded by a newer one (a payout's first run's FAILED once the
// re-run's COMPLETED exists) is not tried again: Redeliver counts it failed
// after that one attempt, which sent nothing, and goes on to the next.
func TestRedeliverStopsAtASupersededNotification(t *testing.T) {
	acq := &acquirer{supersededBy: map[string]string{"P-r01": "P-r02"}}
	env := newEnv(t, acq)
	env.RegisterWorkflowWithOptions(workflows.Redeliver, workflowOptions(workflows.RedeliverWorkflowType))
	env.ExecuteWorkflow(workflows.RedeliverWorkflowType, workflows.RedeliverInput{NotifyIDs: []string{"P-r01", "S-s02"},
		Schedule: notify.DefaultSchedule(), Attempted: 1})
	var res workflows.RedeliverResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range acq.deliveries {
		ids = append(ids, d.NotifyID)
	}
	if !reflect.DeepEqual(res.Failed, []string{"P-r01"}) || !reflect.DeepEqual(res.Delivered, []string{"S-s02"}) ||
		!reflect.DeepEqual(ids, []string{"P-r01", "S-s02"}) {
		t.Errorf("result %+v after attempts of %v; want P-r01 failed after one attempt, S-s02 delivered", res, ids)
	}
}

// TestRedeliverGroupsGoOnTheirOwn: a resend of several orders' notifications
// delivers each order's by a child of its own, in order within the order:
// a receiver refusing one order's first notification for days holds up
// that order's second, and not the other order's, which is delivered at
// once. Each child resets only its own notifications, as it starts.
func TestRedeliverGroupsGoOnTheirOwn(t *testing.T) {
	acq := &acquirer{}
	env := newEnv(t, acq)
	env.RegisterWorkflowWithOptions(workflows.Redeliver, workflowOptions(workflows.RedeliverWorkflowType))
	var resets [][]string
	env.OnActivity(acts.ResetNotifications, anyArg, anyArg).Return(func(_ context.Context, in activities.LoadNotificationsInput) ([]string, error) {
		resets = append(resets, in.NotifyIDs)
		return in.NotifyIDs, nil
	})
	start := env.Now()
	delivered := map[string]time.Duration{}
	acq.deliverOK = func(id string, attempt int, now time.Time) bool {
		if id == "A-n01" && now.Sub(start) < 2*time.Hour {
			return false
		}
		if _, ok := delivered[id]; !ok {
			delivered[id] = now.Sub(start)
		}
		return true
	}
	ids := []string{"A-n01", "A-n02", "B-n01"}
	env.ExecuteWorkflow(workflows.RedeliverWorkflowType, workflows.RedeliverInput{NotifyIDs: ids, Schedule: notify.DefaultSchedule(),
		Groups: [][]string{{"A-n01", "A-n02"}, {"B-n01"}}})
	var res workflows.RedeliverResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	got := append([]string(nil), res.Delivered...)
	slices.Sort(got)
	if !reflect.DeepEqual(got, ids) || len(res.Failed) != 0 {
		t.Errorf("result %+v, want all three delivered", res)
	}
	if delivered["B-n01"] > time.Minute || delivered["A-n01"] < 2*time.Hour || delivered["A-n02"] < delivered["A-n01"] {
		t.Errorf("delivered at %v: want B-n01 at once, A-n02 after A-n01 after two hours", delivered)
	}
	slices.SortFunc(resets, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	if !reflect.DeepEqual(resets, [][]string{{"A-n01", "A-n02"}, {"B-n01"}}) {
		t.Errorf("resets %v, want each group by its own child", resets)
	}
}

package integration

import (
	"context"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/paygate/paygate/workflows"
)

// TestPaymentFirstTaskEvents pins what a card payment costs Temporal: the
// events of its first workflow task, which answers the merchant. Every event
// is a write on the server's store, paid on every payment, so an event
// added here should be one the payment needs. An order started by the API
// takes its changes from its shape (workflows.CurrentOrderShape), so no
// Version marker and no TemporalChangeVersion upsert appear, and (shape 2)
// its risk check and CVV drop ride in the record's and the outcome's local
// activities.
func TestPaymentFirstTaskEvents(t *testing.T) {
	const (
		started     = "WorkflowExecutionStarted"
		scheduled   = "WorkflowTaskScheduled"
		taskStarted = "WorkflowTaskStarted"
		completed   = "WorkflowTaskCompleted"
		accepted    = "WorkflowExecutionUpdateAccepted"
		local       = "MarkerRecorded:LocalActivity"
		upsert      = "UpsertWorkflowSearchAttributes:PaymentStatus"
		timer       = "TimerStarted"
		answered    = "WorkflowExecutionUpdateCompleted"
		activity    = "ActivityTaskScheduled"
	)
	head := []string{started, scheduled, taskStarted, completed, accepted,
		// the record with its risk check, the charge, the outcome with
		// the CVV dropped (shape 2); the status; the answer.
		local, local, local, upsert}
	tests := []struct {
		name   string
		notify bool
		// answer are the events between the status and the answer, in
		// order; rest those after it, in any order (the ledger credit runs
		// beside the notification's record).
		answer, rest []string
	}{
		{
			name:   "paid, no notify_url",
			answer: []string{timer, answered},
			// the ledger credit.
			rest: []string{local},
		},
		{
			name:   "paid, notified",
			notify: true,
			answer: []string{answered},
			// the ledger credit, the notification's record, its delivery
			// as an activity and the refund window.
			rest: []string{local, local, activity, timer},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			creds := env.auto
			orderNo := newOrderNo(t)
			f := cardOrder(creds, orderNo, "4242424242424242")
			if !tt.notify {
				delete(f, "notify_url")
			}
			if _, r := authorise(t, signCard(f, creds.SignKey)); r.OrderStatus != "1" {
				t.Fatalf("order_status %s: %s", r.OrderStatus, r.ResultInfo)
			}
			got := firstTaskEvents(t, workflows.OrderWorkflowID(creds.MerchantID, creds.AccountID, orderNo))
			ordered := append(append([]string{}, head...), tt.answer...)
			n := min(len(ordered), len(got))
			rest := slices.Clone(got[n:])
			slices.Sort(rest)
			wantRest := slices.Clone(tt.rest)
			slices.Sort(wantRest)
			if !slices.Equal(got[:n], ordered) || !slices.Equal(rest, wantRest) {
				t.Errorf("first task events:\n got %s\nwant %s, then in any order %s",
					strings.Join(got, " "), strings.Join(ordered, " "), strings.Join(tt.rest, " "))
			}
		})
	}
}

// firstTaskEvents reads the workflow's history up to its second workflow
// task: the event types, with a marker's name and an upsert's attributes.
func firstTaskEvents(t *testing.T, workflowID string) []string {
	t.Helper()
	ctx := context.Background()
	iter := env.temporal.GetWorkflowHistory(ctx, workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var out []string
	tasks := 0
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetEventType() == enums.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED {
			tasks++
			if tasks == 2 {
				break
			}
		}
		out = append(out, eventName(ev))
	}
	return out
}

func eventName(ev *historypb.HistoryEvent) string {
	name := ev.GetEventType().String()
	switch {
	case ev.GetMarkerRecordedEventAttributes() != nil:
		name += ":" + ev.GetMarkerRecordedEventAttributes().GetMarkerName()
	case ev.GetUpsertWorkflowSearchAttributesEventAttributes() != nil:
		var keys []string
		for k := range ev.GetUpsertWorkflowSearchAttributesEventAttributes().GetSearchAttributes().GetIndexedFields() {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		name += ":" + strings.Join(keys, ",")
	}
	return name
}

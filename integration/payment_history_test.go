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
// activities. Shape 3 closes a paid order once idle instead of starting a
// timer for its refund window; shape 4 saves its state for reopening in its
// outcome's write.
func TestPaymentFirstTaskEvents(t *testing.T) {
	const (
		started     = "WorkflowExecutionStarted"
		scheduled   = "WorkflowTaskScheduled"
		taskStarted = "WorkflowTaskStarted"
		completed   = "WorkflowTaskCompleted"
		accepted    = "WorkflowExecutionUpdateAccepted"
		local       = "MarkerRecorded:LocalActivity"
		upsert      = "UpsertWorkflowSearchAttributes:PaymentStatus"
		closed      = "WorkflowExecutionCompleted"
		answered    = "WorkflowExecutionUpdateCompleted"
		activity    = "ActivityTaskScheduled"
	)
	// In order: the start, the update, the record with its risk check and
	// the charge, in one local activity (shape 5).
	head := []string{started, scheduled, taskStarted, completed, accepted, local}
	tests := []struct {
		name   string
		notify bool
		// rest are the events after head, in any order: the outcome's
		// write (with the CVV drop) and the ledger credit run side by
		// side, and their markers land in the order they finish.
		rest []string
	}{
		{
			name: "paid, no notify_url",
			// the outcome, the ledger credit, the status and the answer;
			// then (shape 3) no refund window's timer: the order is idle
			// and its run completes, all in the payment's one workflow
			// task. Its state for reopening was saved (shape 4) in the
			// outcome's write: no local activity of its own.
			rest: []string{local, local, upsert, answered, closed},
		},
		{
			name:   "paid, notified",
			notify: true,
			// the same but for the close, and the notification's record
			// and its delivery as an activity: the order closes once the
			// delivery is done, in a later task.
			rest: []string{local, local, upsert, answered, local, activity},
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
			n := min(len(head), len(got))
			rest := slices.Clone(got[n:])
			slices.Sort(rest)
			wantRest := slices.Clone(tt.rest)
			slices.Sort(wantRest)
			if !slices.Equal(got[:n], head) || !slices.Equal(rest, wantRest) {
				t.Errorf("first task events:\n got %s\nwant %s, then in any order %s",
					strings.Join(got, " "), strings.Join(head, " "), strings.Join(tt.rest, " "))
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
		// An activity the task scheduled (the notification's delivery)
		// may start and finish before the next task is scheduled on a
		// busy machine; its events are the activity's, not the task's.
		if t := ev.GetEventType(); t == enums.EVENT_TYPE_ACTIVITY_TASK_STARTED || t == enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED {
			continue
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

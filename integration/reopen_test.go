package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"

	"github.com/paygate/paygate/workflows"
)

// closedRun waits until the order's latest run has completed and returns
// its run id.
func closedRun(t *testing.T, workflowID string) string {
	t.Helper()
	var run string
	waitFor(t, "the order's workflow to close when idle", func() bool {
		d, err := env.temporal.DescribeWorkflowExecution(context.Background(), workflowID, "")
		if err != nil {
			t.Fatalf("describe %s: %v", workflowID, err)
		}
		info := d.GetWorkflowExecutionInfo()
		run = info.GetExecution().GetRunId()
		return info.GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_COMPLETED
	})
	return run
}

// reopenRow is what the record keeps for an order's next run.
func reopenRow(t *testing.T, txID string) (saved bool, heldBy string) {
	t.Helper()
	var rows []struct {
		Saved bool
		Run   *string
	}
	err := env.gw.DB.Raw(`SELECT reopen_input IS NOT NULL AS saved, reopen_run AS run FROM orders WHERE transaction_id = ?`, txID).Scan(&rows).Error
	if err != nil || len(rows) != 1 {
		t.Fatalf("order %s: %v", txID, err)
	}
	if rows[0].Run != nil {
		heldBy = *rows[0].Run
	}
	return rows[0].Saved, heldBy
}

// TestPaidOrderSavesItsStateWithItsOutcome: a paid order with no
// notification to deliver saves its reopen state in its outcome's write
// (shape 4): its run records three local activities (the record with the
// charge, shape 5; the outcome; the ledger's credit) and no save of its own,
// its record holds the state, and a refund reopens it from that state.
func TestPaidOrderSavesItsStateWithItsOutcome(t *testing.T) {
	t.Parallel()
	creds := env.auto
	no := newOrderNo(t)
	f := cardOrder(creds, no, "4242424242424242")
	delete(f, "notify_url")
	_, r := authorise(t, signCard(f, creds.SignKey))
	if r.OrderStatus != "1" {
		t.Fatalf("payment: %s", r.ResultInfo)
	}
	wfID := workflows.OrderWorkflowID(creds.MerchantID, creds.AccountID, no)
	first := closedRun(t, wfID)
	if saved, held := reopenRow(t, r.TransactionID); !saved || held != "" {
		t.Fatalf("record after closing: saved %v held by %q, want saved and free", saved, held)
	}
	markers := 0
	iter := env.temporal.GetWorkflowHistory(t.Context(), wfID, first, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetMarkerRecordedEventAttributes(); a != nil && a.GetMarkerName() == "LocalActivity" {
			markers++
		}
	}
	if markers != 3 {
		t.Errorf("the paid run recorded %d local activities, want 3", markers)
	}
	_, b := batch(t, creds, "/v1/refund", "refund_orders", []batchEntry{with(ref(r.TransactionID, no, "12.34"), "refund_amount", "2.34")})
	if len(b.Entries) != 1 || b.Entries[0]["refund_status"] != "1" {
		t.Fatalf("refund of the closed order = %v (%s)", b.Entries, b.ReturnMessage)
	}
	if second := closedRun(t, wfID); second == first {
		t.Errorf("the refund ran on run %s, want a new run of the order", first)
	}
	if o := findOrder(t, creds.AccountID, no); o.PaymentStatus != 4100 || o.RefundedAmount != 234 {
		t.Errorf("record: %d refunded %d, want 4100 and 234", o.PaymentStatus, o.RefundedAmount)
	}
}

// TestPaidOrderClosesAndReopens: a paid order's workflow completes once
// idle, with its state in the record; a refund reopens it on the same
// workflow id (a new run), and racing refunds on the closed order are
// still serialised: only those that fit go through, once each.
func TestPaidOrderClosesAndReopens(t *testing.T) {
	t.Parallel()
	creds := env.auto
	tx, no := paidOrder(t, creds, "100.00")
	wfID := workflows.OrderWorkflowID(creds.MerchantID, creds.AccountID, no)
	first := closedRun(t, wfID)
	if saved, held := reopenRow(t, tx); !saved || held != "" {
		t.Fatalf("record after closing: saved %v held by %q, want saved and free", saved, held)
	}

	_, r := batch(t, creds, "/v1/refund", "refund_orders", []batchEntry{with(ref(tx, no, "100.00"), "refund_amount", "30.00")})
	if len(r.Entries) != 1 || r.Entries[0]["refund_status"] != "1" || r.Entries[0]["refund_reference_id"] != tx+"-01" {
		t.Fatalf("refund of the closed order = %v (%s)", r.Entries, r.ReturnMessage)
	}
	second := closedRun(t, wfID)
	if second == first {
		t.Errorf("the refund ran on run %s, want a new run of the order", first)
	}
	if saved, held := reopenRow(t, tx); !saved || held != "" {
		t.Errorf("record after the reopened run closed: saved %v held by %q", saved, held)
	}

	// Ten refunds of 10.00 at once on the 70.00 left: each may start a
	// run, only one run is open, and seven go through.
	const n = 10
	statuses := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			entry := with(ref(tx, no, "100.00"), "refund_amount", "10.00", "refund_reason", fmt.Sprintf("part %d", i))
			_, r := batch(t, creds, "/v1/refund", "refund_orders", []batchEntry{entry})
			if len(r.Entries) == 1 {
				statuses[i] = r.Entries[0]["refund_status"] + ":" + strings.SplitN(r.Entries[0]["refund_message"], ":", 2)[0]
			}
		})
	}
	wg.Wait()
	counts := map[string]int{}
	for _, s := range statuses {
		counts[s]++
	}
	if counts["1:0000"] != 7 || counts["0:I0018"] != 3 {
		t.Errorf("racing refunds on a closed order: %v, want 7 done and 3 refused I0018", counts)
	}
	if count, sum := refundsOf(tx); count != 8 || sum != 10000 {
		t.Errorf("simulator refunds: %d summing %d, want 8 and 10000", count, sum)
	}
	closedRun(t, wfID)
	if o := findOrder(t, creds.AccountID, no); o.PaymentStatus != 4000 || o.RefundedAmount != 10000 {
		t.Errorf("record: %d refunded %d, want 4000 and 10000", o.PaymentStatus, o.RefundedAmount)
	}

	// The refunded order is refused for what it is.
	_, r = batch(t, creds, "/v1/refund", "refund_orders", []batchEntry{with(ref(tx, no, "100.00"), "refund_amount", "1.00")})
	if len(r.Entries) != 1 || r.Entries[0]["refund_status"] != "0" || !strings.HasPrefix(r.Entries[0]["refund_message"], "I0018") {
		t.Errorf("refund of a refunded order = %v", r.Entries)
	}
}

// TestWritesNameTheirTask: on a server, the order's outcome and its
// notification carry the workflow task that made them (its start, in the
// workflow's time), so that a run of that task again after a worker died
// replaces them (models.Order.WrittenTask; the unit tests of models show
// the replacing).
func TestWritesNameTheirTask(t *testing.T) {
	t.Parallel()
	creds := env.auto
	no := newOrderNo(t)
	_, r := authorise(t, signCard(cardOrder(creds, no, "4242424242424242"), creds.SignKey))
	if r.OrderStatus != "1" {
		t.Fatalf("payment: %s", r.ResultInfo)
	}
	var rows []struct {
		What string
		Task int64
	}
	err := env.gw.DB.Raw(`SELECT 'order' AS what, written_task AS task FROM orders WHERE transaction_id = ?
		UNION ALL SELECT notify_id, written_task FROM notifications WHERE transaction_id = ?`, r.TransactionID, r.TransactionID).Scan(&rows).Error
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 2 {
		t.Fatalf("rows = %+v, want the order and its notification", rows)
	}
	for _, row := range rows {
		if at := time.Unix(0, row.Task); time.Since(at) > time.Hour || time.Until(at) > time.Minute {
			t.Errorf("%s written by a task that started at %s, want about now", row.What, at)
		}
	}
}

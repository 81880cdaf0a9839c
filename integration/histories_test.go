package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/adapters/redeliver"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// TestRecordHistories saves the histories of typical orders to
// workflows/testdata, where the replay test checks that a changed workflow
// still replays them. It runs only when asked:
//
//	PAYGATE_RECORD_HISTORIES=1 go test -run TestRecordHistories ./integration
func TestRecordHistories(t *testing.T) {
	if os.Getenv("PAYGATE_RECORD_HISTORIES") == "" {
		t.Skip("set PAYGATE_RECORD_HISTORIES=1 to record workflow histories")
	}
	creds := env.auto
	save := func(name, orderNo string) {
		t.Helper()
		saveHistory(t, name, workflows.OrderWorkflowID(creds.MerchantID, creds.AccountID, orderNo))
	}
	// A declined payment ends at once; a refunded one after its refund.
	declined := newOrderNo(t)
	_, r := authorise(t, signCard(cardOrder(creds, declined, "4000000000000002"), creds.SignKey))
	if r.OrderStatus != "0" {
		t.Fatal(r.ResultInfo)
	}
	save("order-declined", declined)
	paid := newOrderNo(t)
	_, r = authorise(t, signCard(cardOrder(creds, paid, "4000000000000341"), creds.SignKey))
	// Shape 3: the paid order closes when idle, and the refund reopens it
	// as a new run; both runs are kept.
	paidRun := closedRun(t, workflows.OrderWorkflowID(creds.MerchantID, creds.AccountID, paid))
	_, b := batch(t, creds, "/v1/refund", "refund_orders", []batchEntry{with(ref(r.TransactionID, paid, "12.34"), "refund_amount", "12.34")})
	if len(b.Entries) != 1 || b.Entries[0]["refund_status"] != "1" {
		t.Fatalf("refund: %v", b.Entries)
	}
	save("order-timeout-inquiry-refunded", paid)
	saveRun(t, "order-paid-closed", workflows.OrderWorkflowID(creds.MerchantID, creds.AccountID, paid), paidRun)
	// Shape 4: a paid order with no notification saves its reopen state
	// with its outcome.
	folded := newOrderNo(t)
	foldedOrder := cardOrder(creds, folded, "4242424242424242")
	delete(foldedOrder, "notify_url")
	if _, r = authorise(t, signCard(foldedOrder, creds.SignKey)); r.OrderStatus != "1" {
		t.Fatal(r.ResultInfo)
	}
	foldedID := workflows.OrderWorkflowID(creds.MerchantID, creds.AccountID, folded)
	saveRun(t, "order-paid-folded", foldedID, closedRun(t, foldedID))

	// A payment that keeps its card (token_flag=YES), refunded so that
	// its workflow ends.
	kept := newOrderNo(t)
	f := cardOrder(creds, kept, "4242424242424242")
	f["token_flag"] = "YES"
	_, r = authorise(t, signCard(f, creds.SignKey))
	_, b = batch(t, creds, "/v1/refund", "refund_orders", []batchEntry{with(ref(r.TransactionID, kept, "12.34"), "refund_amount", "12.34")})
	if r.TokenID == "" || len(b.Entries) != 1 || b.Entries[0]["refund_status"] != "1" {
		t.Fatalf("kept card: token %q, refund %v", r.TokenID, b.Entries)
	}
	save("order-token-kept-refunded", kept)

	// A subscription charged twice and cancelled.
	sub := subscriptionAccount(t)
	first := startSubscription(t, sub, "2")
	waitForCharges(t, first.RecurringID, 2)
	if ack := cancelSubscription(t, sub, first.RecurringID); ack.RecurringStatus != "0" {
		t.Fatalf("cancel: %+v", ack)
	}
	saveHistory(t, "subscription-cancelled", workflows.SubscriptionWorkflowID(sub.MerchantID, first.RecurringID))

	// A payout completed at the rail.
	po := payoutAccount(t, 1_000_00)
	rid := newRequestID()
	if _, out := postPayout(t, "/v1/payout", payoutBody(po, rid, "10.00", ibanCompletes)); out["status"] != "COMPLETED" {
		t.Fatalf("payout: %v", out)
	}
	saveHistory(t, "payout-completed", workflows.PayoutWorkflowID(po.MerchantID, rid))

	// A payout the rail refuses for good.
	failed := newRequestID()
	if _, out := postPayout(t, "/v1/payout", payoutBody(po, failed, "10.00", ibanAlwaysFails)); out["status"] != "FAILED" {
		if out = awaitPayoutStatus(t, po, failed); out["status"] != "FAILED" {
			t.Fatalf("failing payout: %v", out)
		}
	}
	saveHistory(t, "payout-failed", workflows.PayoutWorkflowID(po.MerchantID, failed))

	// A charge of a stored card (the card kept above), refunded so that its
	// workflow ends.
	charge := newOrderNo(t)
	_, r = authorise(t, tokenOrder(creds, charge, r.TokenID))
	_, b = batch(t, creds, "/v1/refund", "refund_orders", []batchEntry{with(ref(r.TransactionID, charge, "12.34"), "refund_amount", "12.34")})
	if r.ResultInfo != "0000:Success" || len(b.Entries) != 1 || b.Entries[0]["refund_status"] != "1" {
		t.Fatalf("stored-card charge: %s, refund %v", r.ResultInfo, b.Entries)
	}
	save("order-stored-card-charge-refunded", charge)

	// A redelivery of the declined order's notification.
	ctx := context.Background()
	res, err := redeliver.New(env.temporal, env.gw.DB).Start(ctx,
		models.NotificationSelection{AccountID: creds.AccountID, OrderNos: []string{declined}}, env.cfg.NotifySchedule)
	if err != nil {
		t.Fatal(err)
	}
	saveHistory(t, "redeliver", res.WorkflowID)

	// A personal-data run that finds nothing to seal and keeps data
	// until it is erased on request.
	pd, err := env.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "personal-data-record-" + randomHex(4), TaskQueue: workflows.TaskQueue},
		workflows.PersonalDataWorkflowType, workflows.PersonalDataInput{})
	if err != nil {
		t.Fatal(err)
	}
	saveHistory(t, "personal-data", pd.GetID())
}

// saveHistory waits for the workflow to close and writes its history to
// workflows/testdata/name.json.
func saveHistory(t *testing.T, name, id string) {
	t.Helper()
	saveRun(t, name, id, "")
}

// saveRun saves the history of the workflow's run run (the latest when
// empty) once it has completed.
func saveRun(t *testing.T, name, id, run string) {
	t.Helper()
	ctx := context.Background()
	if err := env.temporal.GetWorkflow(ctx, id, run).Get(ctx, nil); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	h := &historypb.History{}
	iter := env.temporal.GetWorkflowHistory(ctx, id, run, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	// The suite's keys live only as long as its run, and the replay test
	// runs without the codec: the histories are kept decrypted.
	decryptHistory(t, id, h)
	b, err := protojson.MarshalOptions{Multiline: true}.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "workflows", "testdata", name+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRecordHistoriesRecon records the reconciliation's workflows (a day
// reconciled with nothing to settle, and a scheduled run that reconciles
// today's day of sim-bank as its child) and a day's run of the payout
// schedules.
func TestRecordHistoriesRecon(t *testing.T) {
	if os.Getenv("PAYGATE_RECORD_HISTORIES") == "" {
		t.Skip("set PAYGATE_RECORD_HISTORIES=1 to record workflow histories")
	}
	ctx := context.Background()
	day, err := env.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "recon-record-" + randomHex(4), TaskQueue: workflows.TaskQueue},
		workflows.ReconcileDayWorkflowType, activities.ReconDayInput{Connector: "sim-acquirer", Day: "2020-01-01"})
	if err != nil {
		t.Fatal(err)
	}
	saveHistory(t, "recon-day", day.GetID())
	due, err := env.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "recon-due-record-" + randomHex(4), TaskQueue: workflows.TaskQueue},
		workflows.ReconcileDueWorkflowType, workflows.ReconDueInput{Connector: "sim-bank"})
	if err != nil {
		t.Fatal(err)
	}
	saveHistory(t, "recon-due", due.GetID())
	sp, err := env.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "scheduled-payouts-record-" + randomHex(4), TaskQueue: workflows.TaskQueue},
		workflows.ScheduledPayoutsWorkflowType, workflows.ScheduledPayoutsInput{})
	if err != nil {
		t.Fatal(err)
	}
	saveHistory(t, "scheduled-payouts", sp.GetID())
}

// TestRecordHistoriesSubscriptionChanges records a subscription the
// merchant paused, amended and resumed before cancelling it.
func TestRecordHistoriesSubscriptionChanges(t *testing.T) {
	if os.Getenv("PAYGATE_RECORD_HISTORIES") == "" {
		t.Skip("set PAYGATE_RECORD_HISTORIES=1 to record workflow histories")
	}
	sub := subscriptionAccount(t)
	first := startSubscription(t, sub, "2")
	waitForCharges(t, first.RecurringID, 1)
	for _, c := range [][2]string{{"pause", ""}, {"update", "6.00"}, {"resume", ""}} {
		if a := changeSubscription(t, sub, first.RecurringID, c[0], c[1], ""); a.ResultInfo != "0000:Success" {
			t.Fatalf("%s: %+v", c[0], a)
		}
	}
	waitForCharges(t, first.RecurringID, 2)
	if ack := cancelSubscription(t, sub, first.RecurringID); ack.RecurringStatus != "0" {
		t.Fatalf("cancel: %+v", ack)
	}
	saveHistory(t, "subscription-changed", workflows.SubscriptionWorkflowID(sub.MerchantID, first.RecurringID))
}

// TestRecordHistoriesDispute records a dispute raised, held and won.
func TestRecordHistoriesDispute(t *testing.T) {
	if os.Getenv("PAYGATE_RECORD_HISTORIES") == "" {
		t.Skip("set PAYGATE_RECORD_HISTORIES=1 to record workflow histories")
	}
	creds := subscriptionAccount(t)
	_, paid := authorise(t, signCard(cardOrder(creds, newOrderNo(t), "4242424242424242"), creds.SignKey))
	raised := simDispute(t, "/_sim/disputes", map[string]any{"reference": paid.TransactionID,
		"callback_url": env.api.URL + "/v1/disputes/callback"})
	id := "sim-acquirer:" + raised.DisputeID
	waitDispute(t, creds, id, "needs_response")
	simDispute(t, "/_sim/disputes/"+raised.DisputeID+"/decide", map[string]any{"outcome": "won"})
	waitDispute(t, creds, id, "won")
	saveHistory(t, "dispute-won", workflows.DisputeWorkflowID("sim-acquirer", raised.DisputeID))
}

package integration

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/workflows"
)

// eagerAPI is a second API of the gateway, as `paygate serve` runs it with
// PAYGATE_EAGER_START=true: a worker in its process, and each payment's
// workflow started eagerly on that worker, the answer handed over in the
// process. The suite's own worker polls the same task queue beside it.
type eagerAPI struct {
	url    string
	worker sdkworker.Worker
}

func startEagerAPI(t testing.TB) *eagerAPI {
	t.Helper()
	cfg := env.cfg
	cfg.Edge.EagerStart = true
	cfg.NodeName = "integration-eager"
	cfg.TemporalIdentity = app.EagerAPIIdentity(cfg.NodeName)
	cfg.Edge.PublicURL = env.gw.Config.Edge.PublicURL
	gw, err := app.Open(context.Background(), cfg, slog.New(slog.NewJSONHandler(env.logs, nil)), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	w, err := gw.EagerWorker()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	e := &eagerAPI{worker: w}
	t.Cleanup(func() {
		if e.worker != nil {
			e.worker.Stop()
		}
	})
	srv := httptest.NewServer(gw.APIHandler())
	t.Cleanup(srv.Close)
	e.url = srv.URL
	return e
}

// authorise posts a direct payment to the eager API and parses its answer.
func (e *eagerAPI) authorise(t *testing.T, f map[string]string) (int, respon) {
	t.Helper()
	code, b := postTo(t, e.url, "/v1/authorise", formType, form(f))
	var r respon
	if err := xml.Unmarshal(b, &r); err != nil {
		t.Fatalf("answer is not XML respon (%d): %v\n%s", code, err, b)
	}
	return code, r
}

// updatesIn counts the updates the order's workflow took: an answer
// handed over in the process takes none.
func updatesIn(t *testing.T, workflowID string) int {
	t.Helper()
	iter := env.temporal.GetWorkflowHistory(context.Background(), workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	n := 0
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetEventType() == enums.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED {
			n++
		}
	}
	return n
}

// TestEagerStartPayments: payments through an API that starts them eagerly
// on its own worker answer as any API does, each charged once, and a
// payment's first request takes its answer in the process, not by an
// update; a repeat of the request, one with other content, and twenty
// at once are answered as the update answers them.
func TestEagerStartPayments(t *testing.T) {
	e := startEagerAPI(t)
	creds := env.auto
	tests := []struct {
		name          string
		pan           string
		orderStatus   string
		resultInfo    string
		paymentStatus int
		captured      int64
	}{
		{"approved", "4242424242424242", "1", "0000:Success", 3000, 1234},
		{"declined", "4000000000009995", "0", "A0002:Insufficient funds", 6000, 0},
		{"acquirer timeout, outcome found by inquiry", "4000000000000341", "1", "0000:Success", 3000, 1234},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			orderNo := newOrderNo(t)
			fields := signCard(cardOrder(creds, orderNo, tc.pan), creds.SignKey)
			status, r := e.authorise(t, fields)
			if status != http.StatusOK || r.OrderStatus != tc.orderStatus || r.ResultInfo != tc.resultInfo {
				t.Fatalf("HTTP %d, order_status %q, result_info %q; want 200, %q, %q", status, r.OrderStatus, r.ResultInfo, tc.orderStatus, tc.resultInfo)
			}
			checkResultSignature(t, r, creds.SignKey)
			if n := updatesIn(t, workflows.OrderWorkflowID(creds.MerchantID, creds.AccountID, orderNo)); n != 0 {
				t.Errorf("the workflow took %d updates, want 0: the answer came by update, not in the process", n)
			}
			again, r2 := e.authorise(t, fields)
			if again != http.StatusOK || r2.ResultInfo != tc.resultInfo || r2.TransactionID != r.TransactionID {
				t.Errorf("the request again: HTTP %d, %q, transaction %s; want 200, %q, %s", again, r2.ResultInfo, r2.TransactionID, tc.resultInfo, r.TransactionID)
			}
			other := signCard(cardOrder(creds, orderNo, "5555555555554444"), creds.SignKey)
			if _, r3 := e.authorise(t, other); r3.ResultInfo != "I0009:Duplicate order_no with different content" {
				t.Errorf("the order_no with another card: %q, want I0009", r3.ResultInfo)
			}
			if n := chargesFor(r.TransactionID); n != 1 {
				t.Errorf("simulator charges = %d, want 1", n)
			}
			if o := findOrder(t, creds.AccountID, orderNo); int(o.PaymentStatus) != tc.paymentStatus || o.CapturedAmount != tc.captured {
				t.Errorf("record: payment_status %d captured %d; want %d, %d", o.PaymentStatus, o.CapturedAmount, tc.paymentStatus, tc.captured)
			}
		})
	}
	t.Run("twenty at once", func(t *testing.T) {
		t.Parallel()
		orderNo := newOrderNo(t)
		fields := signCard(cardOrder(creds, orderNo, "4242424242424242"), creds.SignKey)
		const n = 20
		results := make([]respon, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, results[i] = e.authorise(t, fields)
			}()
		}
		wg.Wait()
		for i, r := range results {
			if r.ResultInfo != "0000:Success" || r.TransactionID != results[0].TransactionID {
				t.Errorf("request %d: %q, transaction %s; want 0000:Success, %s", i, r.ResultInfo, r.TransactionID, results[0].TransactionID)
			}
		}
		if got := chargesFor(results[0].TransactionID); got != 1 {
			t.Errorf("simulator charges = %d, want exactly 1", got)
		}
	})
}

// TestEagerWorkerCrashMidChargeChargesOnce stops the eager API's worker
// while the acquirer holds the charge it started: the request gets no
// answer in the process and asks by the update, the suite's worker takes
// the order over once Temporal gives up on the stopped one's task, and the
// order ends paid with one charge.
func TestEagerWorkerCrashMidChargeChargesOnce(t *testing.T) {
	e := startEagerAPI(t)
	creds := env.auto
	orderNo := newOrderNo(t)
	type answer struct {
		status int
		r      respon
	}
	done := make(chan answer, 1)
	go func() {
		s, r := e.authorise(t, signCard(cardOrder(creds, orderNo, "4000000000000341"), creds.SignKey))
		done <- answer{s, r}
	}()
	waitForSimCharge(t, orderNo)
	e.worker.Stop()
	e.worker = nil

	var got answer
	select {
	case got = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("no answer within 60s after the eager worker stopped")
	}
	checkPaidOnce(t, got.status, got.r, creds.AccountID, orderNo)
	if n := updatesIn(t, workflows.OrderWorkflowID(creds.MerchantID, creds.AccountID, orderNo)); n != 1 {
		t.Errorf("the workflow took %d updates, want the request's 1", n)
	}
}

// payout posts a payout to the eager API and decodes its answer.
func (e *eagerAPI) payout(t *testing.T, body map[string]any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	code, raw := postTo(t, e.url, "/v1/payout", "application/json", string(b))
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("answer %s: %v", raw, err)
	}
	return code, out
}

// firstTaskWorker is the identity of the worker that ran the workflow's
// first workflow task.
func firstTaskWorker(t *testing.T, workflowID string) string {
	t.Helper()
	iter := env.temporal.GetWorkflowHistory(t.Context(), workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetWorkflowTaskStartedEventAttributes(); a != nil {
			return a.GetIdentity()
		}
	}
	t.Fatalf("workflow %s: no workflow task started", workflowID)
	return ""
}

// TestEagerStartPayouts: a payout through an API that starts workflows
// eagerly has its first workflow task (record, price, reservation,
// submission) run by that API's own worker, completes, and pays once, its
// request repeated too.
func TestEagerStartPayouts(t *testing.T) {
	e := startEagerAPI(t)
	creds := payoutAccount(t, 1_000_000)
	rid := newRequestID()
	body := payoutBody(creds, rid, "250.00", ibanCompletes)
	code, out := e.payout(t, body)
	if code != http.StatusOK {
		t.Fatalf("HTTP %d: %v", code, out)
	}
	if out["status"] != "COMPLETED" {
		out = awaitPayoutStatus(t, creds, rid)
	}
	if out["status"] != "COMPLETED" || out["fee_amount"] != 5.0 || out["amount_payer_pays"] != 255.0 {
		t.Errorf("payout = %v, want COMPLETED, fee 5.00, payer pays 255.00", out)
	}
	_, again := e.payout(t, body)
	if again["transaction_id"] != out["transaction_id"] || again["status"] != "COMPLETED" {
		t.Errorf("repeat = %v, first %v", again, out)
	}
	if got, want := firstTaskWorker(t, workflows.PayoutWorkflowID(creds.MerchantID, rid)), app.EagerAPIIdentity("integration-eager"); got != want {
		t.Errorf("first workflow task ran on %q, want the eager API's worker %q", got, want)
	}
	if k, ok := railKey(t, creds, rid); !ok || k.Attempts != 1 || k.Completed != 1 {
		t.Errorf("rail: %+v (found %v), want one completed attempt", k, ok)
	}
	if b := balance(t, creds); b.Available != 1_000_000-25_500 || b.Reserved != 0 {
		t.Errorf("balance = %+v, want one payout of 250.00 + 5.00 taken, nothing reserved", b)
	}
}

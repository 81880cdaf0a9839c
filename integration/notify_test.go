package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

// receiver is a merchant's notification endpoint that refuses a share of
// requests at random, verifies every request, and processes each notify_id
// once.
type receiver struct {
	key      string
	failRate float64

	mu        sync.Mutex
	rnd       *rand.Rand
	processed map[string]int        // notify_id → times processed
	byOrder   map[string][]string   // order_no → notify_types in processing order
	fields    map[string]url.Values // notify_id → fields
	refused   int
	bad       []string
}

func newReceiver(key string, failRate float64) *receiver {
	return &receiver{key: key, failRate: failRate, rnd: rand.New(rand.NewPCG(1, 2)),
		processed: map[string]int{}, byOrder: map[string][]string{}, fields: map[string]url.Values{}}
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.rnd.Float64() < rc.failRate {
		rc.refused++
		http.Error(w, "try later", http.StatusInternalServerError)
		return
	}
	if err := notify.Verify(rc.key, r.Header, body, time.Now(), notify.DefaultTolerance); err != nil {
		rc.bad = append(rc.bad, err.Error())
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	f, _ := url.ParseQuery(string(body))
	// Every field is one the API's description documents for its type.
	if hook, ok := api.NotificationWebhook(f.Get("notify_type")); !ok {
		rc.bad = append(rc.bad, "notify_type "+f.Get("notify_type")+" is not documented")
	} else {
		for k := range f {
			if _, ok := hook.Fields[k]; !ok {
				rc.bad = append(rc.bad, "field "+k+" of a "+f.Get("notify_type")+" notification is not documented")
			}
		}
	}
	id := f.Get("notify_id")
	if id != r.Header.Get(notify.HeaderID) {
		rc.bad = append(rc.bad, "notify_id "+id+" differs from webhook-id "+r.Header.Get(notify.HeaderID))
	}
	// De-duplicate: a notify_id seen before is acknowledged, not processed.
	if rc.processed[id] == 0 {
		rc.byOrder[f.Get("order_no")] = append(rc.byOrder[f.Get("order_no")], f.Get("notify_type"))
		rc.fields[id] = f
	}
	rc.processed[id]++
	w.WriteHeader(http.StatusOK)
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.fields)
}

func notifyAccount(t *testing.T) merchant.Credentials {
	t.Helper()
	creds, err := env.gw.Accounts.Create(context.Background(), merchant.NewAccount{Mode: testmode.Test,
		MerchantID: "40001", AccountID: fmt.Sprintf("40001%03d", orderSeq.Add(1)%1000), CaptureMode: models.CaptureAuto,
		AllowedQueryIPs: []string{"127.0.0.1"}, Currencies: []string{"USD"}, Risk: quietRisk,
	})
	if err != nil {
		t.Fatal(err)
	}
	return creds
}

// TestNotificationsUnderAFlakyReceiver pays 200 orders and refunds each in
// part, to a receiver that fails half of all requests: every event arrives,
// in order per order, and each notify_id is processed exactly once.
func TestNotificationsUnderAFlakyReceiver(t *testing.T) {
	if testing.Short() {
		t.Skip("200 orders")
	}
	t.Parallel()
	creds := notifyAccount(t)
	rc := newReceiver(creds.SignKey, 0.5)
	srv := httptest.NewServer(rc)
	defer srv.Close()

	const orders = 200
	type paid struct{ orderNo, txID string }
	results := make([]paid, orders)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range orders {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			orderNo := newOrderNo(t)
			f := cardOrder(creds, orderNo, "4242424242424242")
			f["notify_url"] = srv.URL + "/hooks/paygate"
			_, r := authorise(t, signCard(f, creds.SignKey))
			if r.OrderStatus != "1" {
				t.Errorf("payment %d: %s", i, r.ResultInfo)
				return
			}
			_, b := batch(t, creds, "/v1/refund", "refund_orders", []batchEntry{
				with(ref(r.TransactionID, orderNo, "12.34"), "refund_amount", "1.00"),
			})
			if len(b.Entries) != 1 || b.Entries[0]["refund_status"] != "1" {
				t.Errorf("refund %d: %v", i, b.Entries)
			}
			results[i] = paid{orderNo, r.TransactionID}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	deadline := time.Now().Add(3 * time.Minute)
	for rc.count() < 2*orders {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d notifications processed after 3 minutes", rc.count(), 2*orders)
		}
		time.Sleep(250 * time.Millisecond)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.bad) > 0 {
		t.Errorf("%d requests failed verification, first: %s", len(rc.bad), rc.bad[0])
	}
	if rc.refused < orders/2 {
		t.Errorf("the receiver refused only %d requests: the test did not exercise retries", rc.refused)
	}
	for _, p := range results {
		types := rc.byOrder[p.orderNo]
		if strings.Join(types, ",") != "payment,refund" {
			t.Errorf("order %s: processed %v, want payment then refund", p.orderNo, types)
		}
		for _, id := range []string{p.txID + "-n01", p.txID + "-n02"} {
			if rc.processed[id] < 1 {
				t.Errorf("notification %s never processed", id)
			}
		}
	}
	refused := rc.refused
	rc.mu.Unlock()
	// The record agrees: every notification delivered, attempts recorded.
	// The worker records a delivery after the receiver has answered, so the
	// last ones may land a moment after the receiver counted them.
	var delivered, attempts int64
	for wait := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		env.gw.DB.Model(&models.Notification{}).Where("account_id = ? AND status = ?", creds.AccountID, models.NotifyDelivered).Count(&delivered)
		env.gw.DB.Model(&models.NotificationAttempt{}).Where("notify_id IN (?)",
			env.gw.DB.Model(&models.Notification{}).Select("notify_id").Where("account_id = ?", creds.AccountID)).Count(&attempts)
		if delivered == 2*orders && attempts >= 2*orders+int64(refused) || time.Now().After(wait) {
			break
		}
	}
	if delivered != 2*orders || attempts < 2*orders+int64(refused) {
		t.Errorf("record: %d delivered, %d attempts (receiver refused %d)", delivered, attempts, refused)
	}
	rc.mu.Lock()
}

// TestWorkerKilledMidDeliveryStillDelivers runs the worker as its own
// process, kills it while a notification is being posted, and starts a new
// worker: the notification is still delivered, with the same notify_id.
func TestWorkerKilledMidDeliveryStillDelivers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a worker process")
	}
	ctx := context.Background()
	creds := notifyAccount(t)
	bin := filepath.Join(t.TempDir(), "paygate")
	build := exec.Command("go", "build", "-o", bin, "../cmd/paygate")
	build.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build paygate: %v\n%s", err, out)
	}

	// The first delivery hangs until the worker is dead; later ones pass.
	var mu sync.Mutex
	var got []string
	inFlight := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		first := len(got) == 0
		got = append(got, r.Header.Get(notify.HeaderID))
		mu.Unlock()
		if first {
			inFlight <- struct{}{}
			<-release
			http.Error(w, "gone", http.StatusServiceUnavailable)
			return
		}
		if err := notify.Verify(creds.SignKey, r.Header, body, time.Now(), notify.DefaultTolerance); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	defer close(release)

	env.worker.Stop()
	cfg := env.cfg
	var stderr bytes.Buffer
	proc := exec.Command(bin, "worker")
	// While it runs, this process is the suite's only worker: the other
	// tests' workflows (payouts, sim-bank payments, subscriptions) run on it
	// too, so it gets the suite's simulators and settings, not the
	// defaults (a payout re-run once reached another rail on the default
	// port, which made its transfer anew).
	proc.Env = append(os.Environ(),
		"DATABASE_URL="+cfg.DatabaseURL, "TEMPORAL_ADDRESS="+cfg.TemporalAddress,
		"PAYGATE_KEYRING="+cfg.Keyring, "PAYGATE_FINGERPRINT_KEY="+cfg.FingerprintKey,
		"ACQUIRER_URL="+cfg.Connectors.AcquirerURL, "ACQUIRER_TIMEOUT=1s",
		"SIMBANK_URL="+cfg.Connectors.SimBankURL, "RAIL_URL="+cfg.Payouts.RailURL, "TEST_RAIL_URL="+cfg.Payouts.TestRailURL,
		"PAYGATE_CONNECTORS="+strings.Join(cfg.Connectors.Names, ","),
		"PAYGATE_SUBSCRIPTION_TEST_INTERVALS=true",
		"PAYGATE_NOTIFY_ALLOW_PRIVATE=true", "PAYGATE_NOTIFY_SCHEDULE=initial=100ms,max=1s,horizon=1m")
	proc.Stderr = &stderr
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	defer func() {
		if !restarted {
			_ = proc.Process.Kill()
			_ = proc.Wait()
			w, err := env.gw.NewWorker()
			if err == nil && w.Start() == nil {
				env.worker = w
			}
		}
	}()

	orderNo := newOrderNo(t)
	f := cardOrder(creds, orderNo, "4242424242424242")
	f["notify_url"] = srv.URL + "/notify"
	_, r := authorise(t, signCard(f, creds.SignKey))
	if r.OrderStatus != "1" {
		t.Fatalf("payment: %s\n%s", r.ResultInfo, stderr.String())
	}
	select {
	case <-inFlight:
	case <-time.After(30 * time.Second):
		t.Fatalf("no delivery reached the receiver\n%s", stderr.String())
	}
	if err := proc.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = proc.Wait()
	w, err := env.gw.NewWorker()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	env.worker, restarted = w, true

	id := r.TransactionID + "-n01"
	deadline := time.Now().Add(90 * time.Second)
	for {
		n, err := models.FindNotification(ctx, env.gw.DB, id)
		if err == nil && n.Status == models.NotifyDelivered {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("notification %s not delivered after the worker restart (%+v, %v)", id, n, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range got {
		if h != id {
			t.Errorf("a delivery carried webhook-id %s, want %s", h, id)
		}
	}
	if len(got) < 2 {
		t.Errorf("deliveries = %v, want the interrupted one and a later one", got)
	}
}

// TestResendThroughTheAdminAPI delivers an order's notification again: the
// receiver sees the same notify_id and the same body.
func TestResendThroughTheAdminAPI(t *testing.T) {
	t.Parallel()
	creds := notifyAccount(t)
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	orderNo := newOrderNo(t)
	f := cardOrder(creds, orderNo, "4242424242424242")
	f["notify_url"] = srv.URL
	_, r := authorise(t, signCard(f, creds.SignKey))
	waitFor := func(n int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			mu.Lock()
			got := len(bodies)
			mu.Unlock()
			if got >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d deliveries, want %d", got, n)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor(1)

	tests := []struct {
		name   string
		token  string
		body   string
		status int
	}{
		{"no token", "", `{"account_id":"` + creds.AccountID + `","order_nos":["` + orderNo + `"]}`, http.StatusUnauthorized},
		{"wrong token", "nope", `{"account_id":"` + creds.AccountID + `","order_nos":["` + orderNo + `"]}`, http.StatusUnauthorized},
		{"nothing matches", adminToken, `{"account_id":"` + creds.AccountID + `","order_nos":["NO-SUCH"]}`, http.StatusNotFound},
		{"resend the order", adminToken, `{"account_id":"` + creds.AccountID + `","order_nos":["` + orderNo + `"]}`, http.StatusAccepted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, env.api.URL+"/admin/notifications/resend", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("HTTP %d (%s), want %d", resp.StatusCode, b, tc.status)
			}
			if tc.status == http.StatusAccepted && !strings.Contains(string(b), r.TransactionID+"-n01") {
				t.Errorf("answer %s does not name %s-n01", b, r.TransactionID)
			}
		})
	}
	waitFor(2)
	mu.Lock()
	defer mu.Unlock()
	if bodies[0] != bodies[1] {
		t.Errorf("redelivered body differs:\n%s\n%s", bodies[0], bodies[1])
	}
}

// setFailRate changes the share of requests the receiver refuses.
func (rc *receiver) setFailRate(r float64) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.failRate = r
}

// processedCount is how often the receiver took notifyID.
func (rc *receiver) processedCount(notifyID string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.processed[notifyID]
}

// newReceiverServer serves rc until the test ends.
func newReceiverServer(t *testing.T, rc *receiver) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return srv
}

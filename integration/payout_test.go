package integration

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/dev/railsim"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// Test beneficiaries of the rail simulator.
const (
	ibanCompletes   = "DE89370400440532013000"
	ibanAlwaysFails = "DE32370400449900000001"
)

// payoutAccount makes a merchant account of its own for one test, so the
// deposit balances of the tests do not mix, and tops it up with topUp
// minor units of USD (none when 0).
func payoutAccount(t *testing.T, topUp int64) merchant.Credentials {
	t.Helper()
	return payoutAccountB(t, topUp)
}

// payoutAccountB is payoutAccount for tests and benchmarks.
func payoutAccountB(t testing.TB, topUp int64) merchant.Credentials {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	id := "po" + hex.EncodeToString(b)
	creds, err := env.gw.Accounts.Create(t.Context(), merchant.NewAccount{Mode: testmode.Test,
		MerchantID: id, AccountID: id + "01", Currencies: []string{"USD", "EUR"}, Risk: quietRisk,
	})
	if err != nil {
		t.Fatal(err)
	}
	if topUp > 0 {
		_, err := ledger.New(env.gw.DB).TopUp(t.Context(), ledger.TopUp{Reference: "topup/" + id, MerchantID: creds.MerchantID,
			AccountID: creds.AccountID, Currency: "USD", Amount: topUp})
		if err != nil {
			t.Fatal(err)
		}
	}
	return creds
}

func newRequestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// payoutBody is a SWIFT payout of amount USD to iban, fee paid by the payer,
// signed with the account's key.
func payoutBody(creds merchant.Credentials, requestID, amount, iban string) map[string]any {
	return map[string]any{
		"merchant_id": creds.MerchantID, "account_id": creds.AccountID, "request_id": requestID,
		"payment_currency": "USD", "payment_amount": amount,
		"payment_method": "SWIFT", "fee_paid_by": "PAYER", "swift_charge_option": "SHARED", "fund_source": "DepositAccount",
		"beneficiary": map[string]any{
			"entity_type": "COMPANY", "company_name": "Muller GmbH",
			"address": map[string]any{"city": "Berlin", "country_code": "DE"},
			"bank_details": map[string]any{"account_name": "Muller GmbH", "bank_country_code": "DE",
				"iban": iban, "swift_code": "COBADEFFXXX", "account_currency": "USD"},
		},
		"payer":           map[string]any{"entity_type": "COMPANY", "company_name": "Demo Ltd", "address": map[string]any{"country_code": "US"}},
		"reference":       "invoice 42",
		"notify_url":      env.sink.URL + "/payouts",
		"encryption_data": signing.Sign(creds.SignKey, creds.MerchantID, creds.AccountID, requestID, "USD", amount),
	}
}

// postPayout sends a payout (or a query, by path) and decodes the answer.
func postPayout(t *testing.T, path string, body map[string]any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	status, raw := post(t, path, "application/json", string(b))
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("answer %s: %v", raw, err)
	}
	return status, out
}

// awaitPayoutStatus queries the payout until it is final.
func awaitPayoutStatus(t *testing.T, creds merchant.Credentials, requestID string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, out := postPayout(t, "/v1/payout/query", map[string]any{
			"merchant_id": creds.MerchantID, "account_id": creds.AccountID, "request_id": requestID,
			"encryption_data": signing.Sign(creds.SignKey, creds.MerchantID, creds.AccountID, requestID),
		})
		if s := out["status"]; s == "COMPLETED" || s == "FAILED" {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("payout %s not final: %v", requestID, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func railKey(t *testing.T, creds merchant.Credentials, requestID string) (railsim.KeyStats, bool) {
	t.Helper()
	st, err := env.rail.Stats()
	if err != nil {
		t.Fatal(err)
	}
	k, ok := st.ByKey[workflows.PayoutWorkflowID(creds.MerchantID, requestID)]
	return k, ok
}

func balance(t *testing.T, creds merchant.Credentials) ledger.Balance {
	t.Helper()
	b, err := ledger.New(env.gw.DB).Balance(t.Context(), creds.MerchantID, creds.AccountID, "USD")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPayoutCompletes(t *testing.T) {
	creds := payoutAccount(t, 1_000_000) // 10,000.00 USD
	rid := newRequestID()
	status, out := postPayout(t, "/v1/payout", payoutBody(creds, rid, "4000.00", ibanCompletes))
	if status != 200 {
		t.Fatalf("HTTP %d: %v", status, out)
	}
	if out["status"] != "COMPLETED" {
		out = awaitPayoutStatus(t, creds, rid)
	}
	// SWIFT USD: 2.00 + 0.25% of 4,000.00 = 12.00, paid by the payer.
	want := map[string]any{
		"status": "COMPLETED", "failure_type": "UNKNOWN", "fee_currency": "USD", "payer_id": creds.AccountID,
		"amount_beneficiary_receives": 4000.0, "amount_payer_pays": 4012.0, "fee_amount": 12.0, "request_id": rid,
	}
	for k, v := range want {
		if out[k] != v {
			t.Errorf("%s = %v, want %v", k, out[k], v)
		}
	}
	bank := out["beneficiary"].(map[string]any)["bank_details"].(map[string]any)
	if bank["local_clearing_system"] != "SWIFT" || bank["iban"] != ibanCompletes {
		t.Errorf("bank_details = %v", bank)
	}
	if ts, _ := out["created_at"].(string); !strings.HasSuffix(ts, "+00:00") {
		t.Errorf("created_at = %q", ts)
	}
	if ref, _ := out["short_reference_id"].(string); len(ref) != 15 {
		t.Errorf("short_reference_id = %q", ref)
	}
	sig := signing.SignUpper(creds.SignKey, creds.MerchantID, creds.AccountID, rid, "USD", "4000.00")
	if out["encryption_data"] != sig {
		t.Errorf("encryption_data = %v, want %s", out["encryption_data"], sig)
	}
	if k, ok := railKey(t, creds, rid); !ok || k.Completed != 1 || k.Attempts != 1 {
		t.Errorf("rail: %+v (found %v), want one completed attempt", k, ok)
	}
	if b := balance(t, creds); b.Available != 1_000_000-401_200 || b.Reserved != 0 {
		t.Errorf("balance = %+v, want 5,988.00 available and nothing reserved", b)
	}
}

// TestPayoutFindableAndNotified: ops find a failed payout in the Temporal
// UI by merchant, request id, status and failure type, and the merchant's
// notify_url gets its signed payout notification.
func TestPayoutFindableAndNotified(t *testing.T) {
	creds := payoutAccount(t, 0)
	rid := newRequestID()
	rc := newReceiver(creds.SignKey, 0)
	sink := httptest.NewServer(rc)
	defer sink.Close()
	body := payoutBody(creds, rid, "20.00", ibanCompletes)
	body["notify_url"] = sink.URL + "/payouts"
	_, out := postPayout(t, "/v1/payout", body)
	if out["status"] != "FAILED" {
		out = awaitPayoutStatus(t, creds, rid)
	}
	q := fmt.Sprintf("MerchantId = '%s' AND RequestId = '%s' AND PayoutStatus = 'FAILED' AND FailureType = 'INSUFFICIENT_FUNDS'",
		creds.MerchantID, rid)
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := env.temporal.ListWorkflow(t.Context(), &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", Query: q})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Executions) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no payout found by %s", q)
		}
		time.Sleep(200 * time.Millisecond)
	}
	id := fmt.Sprintf("%s-r01", out["transaction_id"])
	for {
		n, err := models.FindNotification(t.Context(), env.gw.DB, id)
		if err == nil && n.Status == notify.Delivered {
			if n.NotifyType != "payout" || n.Fields["failure_type"] != "INSUFFICIENT_FUNDS" || n.Fields["request_id"] != rid {
				t.Errorf("notification = %+v", n)
			}
			// Its encryption_data covers the outcome, so it cannot be
			// turned into another outcome's, and it is not the request's.
			rc.mu.Lock()
			got := rc.fields[id]
			rc.mu.Unlock()
			sig := got.Get("encryption_data")
			if !signing.VerifyPayoutResult(creds.SignKey, sig, got.Get) {
				t.Errorf("payout notification encryption_data %q does not verify as the payout result %v", sig, got)
			}
			completed := url.Values{}
			for k, v := range got {
				completed[k] = v
			}
			completed.Set("status", "COMPLETED")
			completed.Set("failure_type", "UNKNOWN")
			if signing.VerifyPayoutResult(creds.SignKey, sig, completed.Get) ||
				signing.Verify(creds.SignKey, sig, creds.MerchantID, creds.AccountID, rid, "USD", "20.00") {
				t.Errorf("the FAILED notification's signature also fits COMPLETED or the request")
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("notification %s not delivered (%v, %v; receiver refused: %v)", id, n, err, rc.bad)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestPayoutPermanentFailureReleasesFunds(t *testing.T) {
	creds := payoutAccount(t, 1_000_000)
	rid := newRequestID()
	_, out := postPayout(t, "/v1/payout", payoutBody(creds, rid, "100.00", ibanAlwaysFails))
	if out["status"] != "FAILED" {
		out = awaitPayoutStatus(t, creds, rid)
	}
	if out["status"] != "FAILED" || out["failure_type"] != "BENEFICIARY_ACCOUNT_INVALID" || out["failure_reason"] == "" {
		t.Fatalf("answer = %v", out)
	}
	if b := balance(t, creds); b.Available != 1_000_000 || b.Reserved != 0 {
		t.Errorf("balance = %+v, want everything released", b)
	}
}

func TestPayoutRepeatedRequestPaysOnce(t *testing.T) {
	creds := payoutAccount(t, 1_000_000)
	rid := newRequestID()
	body := payoutBody(creds, rid, "250.00", ibanCompletes)
	_, first := postPayout(t, "/v1/payout", body)
	first = awaitPayoutStatus(t, creds, rid)
	_, second := postPayout(t, "/v1/payout", body)
	if second["transaction_id"] != first["transaction_id"] || second["short_reference_id"] != first["short_reference_id"] ||
		second["status"] != "COMPLETED" {
		t.Errorf("repeat = %v, first %v", second, first)
	}
	if k, ok := railKey(t, creds, rid); !ok || k.Attempts != 1 || k.Completed != 1 {
		t.Errorf("rail: %+v, want one attempt", k)
	}
	// The same payout in another form (the request_id in upper case, the
	// IBAN in groups) is the same payout: its first answer, not I0022.
	for name, body := range map[string]map[string]any{
		"request_id in upper case": payoutBody(creds, strings.ToUpper(rid), "250.00", ibanCompletes),
		"IBAN in groups":           payoutBody(creds, rid, "250.00", "DE89 3704 0044 0532 0130 00"),
	} {
		if _, again := postPayout(t, "/v1/payout", body); again["transaction_id"] != first["transaction_id"] {
			t.Errorf("%s: %v, want the first payout", name, again)
		}
	}
	// The same request_id with other content is refused, unsigned.
	other := payoutBody(creds, rid, "251.00", ibanCompletes)
	_, refused := postPayout(t, "/v1/payout", other)
	if info, _ := refused["result_info"].(string); !strings.HasPrefix(info, "I0022:") || refused["encryption_data"] != "" {
		t.Errorf("different content = %v, want I0022 unsigned", refused)
	}
	// A wrong signature is refused and nothing is signed.
	body["encryption_data"] = strings.Repeat("0", 64)
	_, bad := postPayout(t, "/v1/payout", body)
	if info, _ := bad["result_info"].(string); !strings.HasPrefix(info, "I0013:") || bad["encryption_data"] != "" {
		t.Errorf("bad signature = %v", bad)
	}
	if b := balance(t, creds); b.Available != 1_000_000-25_500 {
		t.Errorf("balance = %+v, want one payout of 250.00 + 5.00 taken", b)
	}
}

func TestPayoutInsufficientFunds(t *testing.T) {
	creds := payoutAccount(t, 10_000) // 100.00 USD
	rid := newRequestID()
	_, out := postPayout(t, "/v1/payout", payoutBody(creds, rid, "500.00", ibanCompletes))
	if out["status"] != "FAILED" {
		out = awaitPayoutStatus(t, creds, rid)
	}
	if out["failure_type"] != "INSUFFICIENT_FUNDS" {
		t.Fatalf("answer = %v", out)
	}
	if _, ok := railKey(t, creds, rid); ok {
		t.Error("the rail got a transfer for a payout without funds")
	}
	if b := balance(t, creds); b.Available != 10_000 || b.Reserved != 0 {
		t.Errorf("balance = %+v", b)
	}
}

func TestPayoutValidationRefusedUnsigned(t *testing.T) {
	creds := payoutAccount(t, 0)
	rid := newRequestID()
	body := payoutBody(creds, rid, "10.00", "DE89370400440532013001") // bad check digits
	_, out := postPayout(t, "/v1/payout", body)
	if info, _ := out["result_info"].(string); !strings.HasPrefix(info, "I0008:") || out["encryption_data"] != "" {
		t.Errorf("answer = %v", out)
	}
}

func TestPayoutWorkerKilledDuringSubmissionPaysOnce(t *testing.T) {
	creds := payoutAccount(t, 1_000_000)
	rid := newRequestID()
	done := make(chan map[string]any, 1)
	go func() {
		b, _ := json.Marshal(payoutBody(creds, rid, "300.00", ibanCompletes))
		_, raw := post(t, "/v1/payout", "application/json", string(b))
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		done <- out
	}()
	// Kill the worker as soon as the rail holds the transfer: the
	// submission's answer may not have reached the workflow yet.
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, ok := railKey(t, creds, rid); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the transfer never reached the rail")
		}
		time.Sleep(2 * time.Millisecond)
	}
	env.worker.Stop()
	w, err := env.gw.NewWorker()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	env.worker = w
	<-done
	out := awaitPayoutStatus(t, creds, rid)
	if out["status"] != "COMPLETED" {
		t.Fatalf("answer = %v", out)
	}
	k, _ := railKey(t, creds, rid)
	st, _ := env.rail.Stats()
	ref := st.ByReference[fmt.Sprint(out["short_reference_id"])]
	if k.Attempts != 1 || k.Completed != 1 || ref.Transfers != 1 || ref.Completed != 1 {
		t.Errorf("rail key %+v, reference %+v: want one transfer paid once", k, ref)
	}
	if b := balance(t, creds); b.Available != 1_000_000-30_500 || b.Reserved != 0 {
		t.Errorf("balance = %+v", b)
	}
}

// TestPayoutIdempotencyKey: a merchant that retries a payout under the same
// Idempotency-Key gets the first answer back, even if its retry made a new
// request_id; another payout under that key is refused with I0020 and
// nothing more is paid.
func TestPayoutIdempotencyKey(t *testing.T) {
	t.Parallel()
	creds := payoutAccount(t, 100_000)
	key := "payout-" + newRequestID()
	send := func(body map[string]any) answer {
		t.Helper()
		return postWith(t, "/v1/payout", "application/json", jsonBody(t, body), api.IdempotencyKeyHeader, key)
	}
	firstID := newRequestID()
	first := send(payoutBody(creds, firstID, "10.00", ibanCompletes))
	if first.field(t, "request_id") != firstID || first.field(t, "status") == "" {
		t.Fatalf("first payout: %s", first.body)
	}
	again := send(payoutBody(creds, firstID, "10.00", ibanCompletes))
	if !bytes.Equal(again.body, first.body) || again.header.Get(api.ReplayedHeader) != "true" {
		t.Errorf("the same payout again: %s (replayed %q)", again.body, again.header.Get(api.ReplayedHeader))
	}
	other := send(payoutBody(creds, newRequestID(), "10.00", ibanCompletes))
	if other.field(t, "result_info") != codes.IdempotencyConflict.String() || other.field(t, "encryption_data") != "" {
		t.Errorf("another payout under the key: %s", other.body)
	}
	var n int64
	if err := env.gw.DB.Model(&models.Payout{}).Where("merchant_id = ?", creds.MerchantID).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d payouts recorded, want 1", n)
	}
}

// TestPayoutWokenByTheRail: the rail's callback wakes a submitted payout,
// which reads the transfer and completes without waiting for its fallback
// poll: the history holds the rail's word, a read of the transfer per word
// at most, and no timer fired.
func TestPayoutWokenByTheRail(t *testing.T) {
	creds := payoutAccount(t, 100_000)
	rid := newRequestID()
	if status, out := postPayout(t, "/v1/payout", payoutBody(creds, rid, "10.00", ibanCompletes)); status != 200 {
		t.Fatalf("HTTP %d: %v", status, out)
	}
	if out := awaitPayoutStatus(t, creds, rid); out["status"] != "COMPLETED" {
		t.Fatalf("payout %v", out)
	}
	dc, _, err := app.TemporalConverters(env.gw.Keys)
	if err != nil {
		t.Fatal(err)
	}
	var words, reads, timersFired int
	it := env.temporal.GetWorkflowHistory(t.Context(), workflows.PayoutWorkflowID(creds.MerchantID, rid), "", false,
		enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case ev.GetWorkflowExecutionSignaledEventAttributes().GetSignalName() == workflows.SignalPayoutTransferMoved:
			words++
		case ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == "PayoutGetTransfer":
			reads++
		case ev.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity":
			// From payout-local-rail the read is a local activity: its
			// marker's data names it.
			var la struct{ ActivityType string }
			if err := dc.FromPayloads(ev.GetMarkerRecordedEventAttributes().GetDetails()["data"], &la); err != nil {
				t.Fatalf("local activity marker: %v", err)
			}
			if la.ActivityType == "PayoutGetTransfer" {
				reads++
			}
		case ev.GetEventType() == enumspb.EVENT_TYPE_TIMER_FIRED:
			timersFired++
		}
	}
	// One word, one read; a callback the rail sent again (the API slow to
	// answer) is one more word and at most one more read. A workflow task
	// run again under load may find the transfer completed at its first
	// look, and then needs no word and no read: no timer is what counts.
	if reads > words || timersFired != 0 {
		t.Errorf("history: %d words of the rail, %d reads of the transfer, %d timers fired; want a read per word at most, no timer", words, reads, timersFired)
	}
}

// TestRefusedPayoutSignatureNotReusable: a payout refused before it was
// recorded (here its IBAN fails the check digits) leaves its request_id
// bound to that content. Its encryption_data covers the request_id and the
// amount but not the beneficiary: whoever saw it and sends it again with
// their own bank details is refused I0022, and nothing is paid.
func TestRefusedPayoutSignatureNotReusable(t *testing.T) {
	creds := payoutAccount(t, 1_000_000)
	rid := newRequestID()
	refusedBody := payoutBody(creds, rid, "300.00", "DE00370400440532013000")
	forged := payoutBody(creds, rid, "300.00", ibanCompletes)
	forged["beneficiary"].(map[string]any)["company_name"] = "Mallory Ltd"
	forged["beneficiary"].(map[string]any)["bank_details"].(map[string]any)["account_name"] = "Mallory Ltd"
	tests := []struct {
		name string
		body map[string]any
		want string
	}{
		{"the merchant's payout, refused", refusedBody, "I0008:"},
		{"its signature on another beneficiary", forged, "I0022:"},
		{"the merchant's payout again: refused as before", refusedBody, "I0008:"},
	}
	for _, tc := range tests {
		_, out := postPayout(t, "/v1/payout", tc.body)
		if info, _ := out["result_info"].(string); !strings.HasPrefix(info, tc.want) || out["encryption_data"] != "" {
			t.Errorf("%s: %v, want %s unsigned", tc.name, out, tc.want)
		}
	}
	_, q := postPayout(t, "/v1/payout/query", map[string]any{
		"merchant_id": creds.MerchantID, "account_id": creds.AccountID, "request_id": rid,
		"encryption_data": signing.Sign(creds.SignKey, creds.MerchantID, creds.AccountID, rid),
	})
	if info, _ := q["result_info"].(string); !strings.HasPrefix(info, "I0023:") {
		t.Errorf("query = %v, want no payout", q)
	}
	if b := balance(t, creds); b.Available != 1_000_000 || b.Reserved != 0 {
		t.Errorf("balance = %+v, want nothing taken", b)
	}
}

package api

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

const (
	limitedAccountID = "10086011"
	limitedKey       = "limited-k3y-0123456789abcdef"
	txL1, txL2       = "1379868670095785995", "1379868670095785996"
)

// newLimitedEnv is a replay env with a compatible account whose refunds
// signed with encryption_data may reach 15.00 a day.
func newLimitedEnv(t *testing.T) *batchEnv {
	t.Helper()
	env := newReplayEnv(t)
	env.accounts.accounts[testMerchantID+"/"+limitedAccountID] = merchant.NewTestAccount(models.Account{
		ID: limitedAccountID, MerchantID: testMerchantID, Name: "Limited", Active: true, Mode: "live",
		SigningScheme: merchant.SigningCompatible, CompatibleRefundDailyLimit: 1500, CaptureMode: models.CaptureAuto,
		AllowedQueryIPs: []string{testQueryIP}, Currencies: []string{"USD", "EUR"}, AmountLimits: map[string]int64{},
	}, limitedKey)
	for _, tx := range []string{txL1, txL2} {
		env.store.orders[tx] = &models.Order{TransactionID: tx, WorkflowID: wfID(tx), MerchantID: testMerchantID,
			AccountID: limitedAccountID, OrderNo: "ORD-" + tx[len(tx)-3:], Currency: "USD", Amount: 10000}
	}
	return env
}

// limitedRefund is a compatible refund of amount (currency of the entry)
// of tx on the limited account.
func limitedRefund(t *testing.T, tx, currency, amount, reason string) []byte {
	t.Helper()
	e := entry(tx, "refund_amount", amount, "refund_reason", reason)
	e["currency"] = currency
	f := batchFields("refund_orders", limitedKey, e)
	f["account_id"] = limitedAccountID
	return signBatch(f, "refund_orders", limitedKey).json(t)
}

func refundEntryCode(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var out struct {
		RefundOrders []map[string]any `json:"refund_orders"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("answer %s: %v", rec.Body.String(), err)
	}
	if len(out.RefundOrders) != 1 {
		t.Fatalf("answer %s", rec.Body.String())
	}
	s, _ := out.RefundOrders[0]["refund_message"].(string)
	return s
}

// TestCompatibleRefundLimit: on a live account that chose the compatible
// scheme, refunds signed with encryption_data stop at the daily limit per
// currency; a refused refund gives its amount back; a strong signature is
// not limited.
func TestCompatibleRefundLimit(t *testing.T) {
	env := newLimitedEnv(t)
	env.ops.answer = func(kind string, ref workflows.EntryRef, req any) (workflows.OperationResult, error) {
		if r, ok := req.(workflows.RefundRequest); ok && r.Reason == "refuse" {
			return workflows.OperationResult{}, &flows.ErrEntryRefused{Code: codes.InvalidState.ID, Message: codes.InvalidState.Message}
		}
		return doneResult(), nil
	}
	limit := codes.CompatibleRefundLimit.String()
	steps := []struct {
		name, tx, currency, amount, reason string
		want                               string
	}{
		{"10.00 of 15.00", txL1, "USD", "10.00", "", "0000:Success"},
		{"6.00 more passes the limit", txL2, "USD", "6.00", "", limit},
		{"a refund the order refuses takes nothing", txL2, "USD", "5.00", "refuse", codes.InvalidState.String()},
		{"5.00 more reaches it", txL2, "USD", "5.00", "", "0000:Success"},
		{"0.01 more passes it", txL1, "USD", "0.01", "", limit},
		{"another currency has a limit of its own", txL1, "EUR", "15.00", "", "0000:Success"},
		{"one refund over the limit on its own", txL1, "EUR", "15.01", "", limit},
	}
	for _, st := range steps {
		if got := refundEntryCode(t, send(t, env, "/v1/refund", limitedRefund(t, st.tx, st.currency, st.amount, st.reason))); got != st.want {
			t.Errorf("%s: %s, want %s", st.name, got, st.want)
		}
	}
	refunds := 0
	for _, c := range env.ops.recorded() {
		if c.kind == "refund" {
			refunds++
		}
	}
	if refunds != 4 { // three done and the refused one; none past the limit
		t.Errorf("%d refunds sent to orders, want 4", refunds)
	}
	// A strong signature proves more than a seen request can: no limit.
	body := refundBody(t, limitedAccountID, "", txL1)
	rec := send(t, env, "/v1/refund", body, signing.StrongHeader, strongSig(t, limitedKey, "/v1/refund", testNow, "nonce-limited-000001", body))
	if got := refundEntryCode(t, rec); got != "0000:Success" {
		t.Errorf("strong refund past the limit: %s", got)
	}
}

// TestCompatibleRefundLimitRaced: refunds racing on one account pass the
// limit together never.
func TestCompatibleRefundLimitRaced(t *testing.T) {
	env := newLimitedEnv(t)
	var wg sync.WaitGroup
	codesSeen := make([]string, 10)
	for i := range codesSeen {
		wg.Go(func() {
			// 2.00 each, different bodies (reasons), so no replay answers.
			codesSeen[i] = refundEntryCode(t, send(t, env, "/v1/refund", limitedRefund(t, txL1, "USD", "2.00", "r"+string(rune('a'+i)))))
		})
	}
	wg.Wait()
	done := 0
	for _, c := range codesSeen {
		if c == "0000:Success" {
			done++
		}
	}
	if done != 7 { // 7 × 2.00 = 14.00 of 15.00
		t.Errorf("%d refunds done, want 7: %v", done, codesSeen)
	}
}

// reuseMetrics counts the reports of a reused signature.
type reuseMetrics struct {
	mu     sync.Mutex
	reused map[string]int
}

func (m *reuseMetrics) ObserveRequest(string, string, time.Duration) {}
func (m *reuseMetrics) SignatureReused(op string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reused[op]++
}

// TestSignatureSeenAgainIsReported: a compatible signature of an operation
// that moves money, seen again with another body, is reported to ops (a
// warning and a metric) and still served; the same body again is not
// reported (the replay store answers it).
func TestSignatureSeenAgainIsReported(t *testing.T) {
	env := newLimitedEnv(t)
	m := &reuseMetrics{reused: map[string]int{}}
	env.srv.Metrics = m
	first := limitedRefund(t, txL1, "USD", "1.00", "")
	// The same signature upper-cased (it verifies whatever its case).
	var upper map[string]any
	if err := json.Unmarshal(limitedRefund(t, txL1, "USD", "4.00", ""), &upper); err != nil {
		t.Fatal(err)
	}
	upper["encryption_data"] = strings.ToUpper(upper["encryption_data"].(string))
	upperBody, _ := json.Marshal(upper)
	for i, body := range [][]byte{first, first, limitedRefund(t, txL1, "USD", "2.00", ""), limitedRefund(t, txL1, "USD", "3.00", ""), upperBody} {
		if got := refundEntryCode(t, send(t, env, "/v1/refund", body)); got != "0000:Success" {
			t.Fatalf("refund %d: %s", i, got)
		}
	}
	if m.reused["/v1/refund"] != 3 {
		t.Errorf("reports %v, want 3 on /v1/refund", m.reused)
	}
	if !strings.Contains(env.logs.String(), "a compatible signature seen again with other content") {
		t.Errorf("no warning logged:\n%s", env.logs.String())
	}
	var use models.SignatureUse
	if err := env.store.Records.(models.Records).DB.First(&use, "account_id = ?", limitedAccountID).Error; err != nil {
		t.Fatal(err)
	}
	if use.OtherContentUses != 3 || use.Operation != "/v1/refund" {
		t.Errorf("signature use %+v", use)
	}
}

// TestSignatureReplayedAfterItsWindowIsReported: the same refund body sent
// again once the replay store has forgotten its first answer (its 24 hours
// here made none) is executed again; it is reported to ops as a replay
// after the window, as another body would be.
func TestSignatureReplayedAfterItsWindowIsReported(t *testing.T) {
	env := newLimitedEnv(t)
	m := &reuseMetrics{reused: map[string]int{}}
	env.srv.Metrics = m
	env.srv.Replays.TTL = 0
	at := env.srv.Now()
	env.srv.Now = func() time.Time { return at }
	body := limitedRefund(t, txL1, "USD", "1.00", "")
	if got := refundEntryCode(t, send(t, env, "/v1/refund", body)); got != "0000:Success" {
		t.Fatalf("first refund: %s", got)
	}
	if m.reused["/v1/refund"] != 0 {
		t.Fatalf("the first use reported: %v", m.reused)
	}
	at = at.Add(25 * time.Hour)
	if got := refundEntryCode(t, send(t, env, "/v1/refund", body)); got != "0000:Success" {
		t.Fatalf("the same refund again: %s", got)
	}
	if m.reused["/v1/refund"] != 1 || !strings.Contains(env.logs.String(), "a compatible signature replayed after its replay window") {
		t.Errorf("reports %v, logs:\n%s\nwant the replay after the window reported once", m.reused, env.logs.String())
	}
}

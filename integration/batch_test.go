package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
)

// batchEntry is one entry of a batch request or answer.
type batchEntry map[string]string

type batchResponse struct {
	MerchantID     string       `json:"merchant_id"`
	AccountID      string       `json:"account_id"`
	ReturnStatus   string       `json:"return_status"`
	ReturnMessage  string       `json:"return_message"`
	EncryptionData string       `json:"encryption_data"`
	Entries        []batchEntry `json:"-"`
}

// batch posts entries to a batch endpoint, signed, and decodes the answer.
func batch(t *testing.T, creds merchant.Credentials, path, array string, entries []batchEntry) (int, batchResponse) {
	t.Helper()
	return batchSignedWith(t, creds, creds.SignKey, path, array, entries)
}

// batchSignedWith signs the request with signKey; the answer is always
// checked against the account's key.
func batchSignedWith(t *testing.T, creds merchant.Credentials, signKey, path, array string, entries []batchEntry) (int, batchResponse) {
	t.Helper()
	values := []string{creds.MerchantID, creds.AccountID}
	for _, e := range entries {
		values = append(values, e["transaction_id"])
	}
	body := map[string]any{
		"merchant_id": creds.MerchantID, "account_id": creds.AccountID,
		"encryption_data": signing.Sign(signKey, values...), array: entries,
	}
	status, b := post(t, path, "application/json", jsonBody(t, body))
	var r batchResponse
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &r); err != nil || json.Unmarshal(b, &raw) != nil {
		t.Fatalf("%s answer is not JSON (%d): %s", path, status, b)
	}
	if arr, ok := raw[array]; ok {
		var list []map[string]any
		if err := json.Unmarshal(arr, &list); err != nil {
			t.Fatalf("%s: %v", array, err)
		}
		for _, m := range list {
			e := batchEntry{}
			for k, v := range m {
				e[k] = fmt.Sprint(v)
			}
			r.Entries = append(r.Entries, e)
		}
	}
	// The answer is signed with the batch-response recipe.
	if r.EncryptionData != "" {
		vals := []string{r.MerchantID, r.AccountID, r.ReturnStatus}
		for _, e := range r.Entries {
			vals = append(vals, e["transaction_id"])
		}
		if want := signing.SignUpper(creds.SignKey, vals...); r.EncryptionData != want {
			t.Errorf("%s answer signature %s, want %s", path, r.EncryptionData, want)
		}
	}
	return status, r
}

// paidOrder pays an order of amount USD and returns its transaction id.
func paidOrder(t *testing.T, creds merchant.Credentials, amount string) (string, string) {
	t.Helper()
	orderNo := newOrderNo(t)
	f := cardOrder(creds, orderNo, "4242424242424242")
	f["amount"] = amount
	_, r := authorise(t, signCard(f, creds.SignKey))
	if r.OrderStatus != "1" {
		t.Fatalf("payment: %s", r.ResultInfo)
	}
	return r.TransactionID, orderNo
}

func ref(txID, orderNo, amount string) batchEntry {
	return batchEntry{"transaction_id": txID, "order_no": orderNo, "currency": "USD", "amount": amount}
}

func with(e batchEntry, kv ...string) batchEntry {
	out := batchEntry{}
	for k, v := range e {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func paymentStatus(t *testing.T, creds merchant.Credentials, orderNo string) int {
	t.Helper()
	return int(findOrder(t, creds.AccountID, orderNo).PaymentStatus)
}

func TestCaptureAndCancelBatch(t *testing.T) {
	t.Parallel()
	creds := env.manual
	txA, noA := paidOrder(t, creds, "50.00")
	txB, noB := paidOrder(t, creds, "20.00")
	txC, noC := paidOrder(t, creds, "30.00")
	status, r := batch(t, creds, "/v1/capture", "capture_orders", []batchEntry{
		ref(txA, noA, "50.00"),
		with(ref(txB, noB, "20.00"), "capture_amount", "15.00"),
		ref("1999999999999999999", "NOPE", "1.00"),
		ref(txC, noC, "31.00"),
		with(ref(txC, noC, "30.00"), "amount", "3O.00"),
	})
	if status != http.StatusOK || r.ReturnStatus != "1" || r.ReturnMessage != "OK" || len(r.Entries) != 5 {
		t.Fatalf("HTTP %d %s %s, %d entries", status, r.ReturnStatus, r.ReturnMessage, len(r.Entries))
	}
	want := []struct{ status, codeID string }{
		{"1", ""}, {"1", ""}, {"0", "I0016"}, {"0", "I0019"}, {"0", "I0003"},
	}
	for i, w := range want {
		e := r.Entries[i]
		if e["capture_status"] != w.status || !strings.HasPrefix(e["error_message"], w.codeID) || (w.codeID == "") != (e["error_message"] == "") {
			t.Errorf("entry %d: capture_status %q error_message %q, want %s %s", i, e["capture_status"], e["error_message"], w.status, w.codeID)
		}
	}
	if o := findOrder(t, creds.AccountID, noA); o.PaymentStatus != 3000 || o.CapturedAmount != 5000 {
		t.Errorf("order A: %d captured %d", o.PaymentStatus, o.CapturedAmount)
	}
	if o := findOrder(t, creds.AccountID, noB); o.PaymentStatus != 3000 || o.CapturedAmount != 1500 {
		t.Errorf("order B: %d captured %d, want 3000 1500", o.PaymentStatus, o.CapturedAmount)
	}

	// Cancel: C is still authorised, A is captured already.
	_, r = batch(t, creds, "/v1/cancel", "cancel_orders", []batchEntry{ref(txC, noC, "30.00"), ref(txA, noA, "50.00")})
	if len(r.Entries) != 2 || r.Entries[0]["cancel_status"] != "1" || r.Entries[1]["cancel_status"] != "0" ||
		!strings.HasPrefix(r.Entries[1]["error_message"], "I0018") {
		t.Errorf("cancel entries = %v", r.Entries)
	}
	if s := paymentStatus(t, creds, noC); s != 5000 {
		t.Errorf("cancelled order status = %d, want 5000", s)
	}
	voided := false
	for _, c := range env.sim.Charges() {
		if c.Reference == txC {
			voided = c.Voided
		}
	}
	if !voided {
		t.Error("the acquirer charge of the cancelled order is not voided")
	}
}

func TestBatchRefusedAsAWhole(t *testing.T) {
	t.Parallel()
	creds := env.manual
	many := make([]batchEntry, 51)
	for i := range many {
		many[i] = ref(fmt.Sprintf("1%018d", i), "X", "1.00")
	}
	status, r := batch(t, creds, "/v1/capture", "capture_orders", many)
	if status != http.StatusOK || r.ReturnStatus != "0" || !strings.HasPrefix(r.ReturnMessage, "I0015") || len(r.Entries) != 0 {
		t.Errorf("51 captures: HTTP %d %s %q %d entries", status, r.ReturnStatus, r.ReturnMessage, len(r.Entries))
	}
	_, r = batchSignedWith(t, creds, "wrong", "/v1/refund", "refund_orders", []batchEntry{ref("1", "X", "1.00")})
	if r.ReturnStatus != "0" || !strings.HasPrefix(r.ReturnMessage, "I0013") {
		t.Errorf("bad signature: %s %q", r.ReturnStatus, r.ReturnMessage)
	}
}

// refundsOf returns the simulator's refunds of one of our orders and their sum.
func refundsOf(txID string) (int, int64) {
	chargeID := ""
	for _, c := range env.sim.Charges() {
		if c.Reference == txID {
			chargeID = c.ChargeID
		}
	}
	n, sum := 0, int64(0)
	for _, r := range env.sim.Refunds() {
		if r.ChargeID == chargeID && r.Status != "failed" {
			n++
			sum += r.Amount
		}
	}
	return n, sum
}

func TestPartialThenFullRefunds(t *testing.T) {
	t.Parallel()
	creds := env.auto
	tx, no := paidOrder(t, creds, "100.00")
	steps := []struct {
		refund, status, codeID, refID string
		paymentStatus                 int
	}{
		{"30.00", "1", "0000", tx + "-01", 4100},
		{"70.00", "1", "0000", tx + "-02", 4000},
		{"0.01", "0", "I0018", "", 4000},
	}
	for i, s := range steps {
		_, r := batch(t, creds, "/v1/refund", "refund_orders", []batchEntry{
			with(ref(tx, no, "100.00"), "refund_amount", s.refund, "refund_reason", "customer request"),
		})
		if r.ReturnStatus != "1" || len(r.Entries) != 1 {
			t.Fatalf("step %d: %s %q", i, r.ReturnStatus, r.ReturnMessage)
		}
		e := r.Entries[0]
		if e["refund_status"] != s.status || !strings.HasPrefix(e["refund_message"], s.codeID) || e["refund_reference_id"] != s.refID ||
			e["refund_amount"] != s.refund || e["refund_reason"] != "customer request" || e["amount"] != "100.00" {
			t.Errorf("step %d: %v", i, e)
		}
		if got := paymentStatus(t, creds, no); got != s.paymentStatus {
			t.Errorf("step %d: payment_status %d, want %d", i, got, s.paymentStatus)
		}
	}
	if n, sum := refundsOf(tx); n != 2 || sum != 10000 {
		t.Errorf("simulator refunds: %d summing %d, want 2 and 10000", n, sum)
	}
	o := findOrder(t, creds.AccountID, no)
	if o.RefundedAmount != 10000 {
		t.Errorf("record refunded %d, want 10000", o.RefundedAmount)
	}

	// The refund query lists both, by order and by reference.
	f := map[string]string{"merchant_id": creds.MerchantID, "account_id": creds.AccountID,
		"encryption_data": signing.Sign(creds.SignKey, creds.MerchantID, creds.AccountID), "trades": tx}
	_, b := post(t, "/v1/retrievalRefund", formType, form(f))
	var q struct {
		ReturnStatus string              `json:"return_status"`
		RefundList   []map[string]string `json:"refund_list"`
	}
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatalf("retrievalRefund: %s", b)
	}
	if q.ReturnStatus != "1" || len(q.RefundList) != 2 || q.RefundList[0]["refund_reference_id"] != tx+"-01" ||
		q.RefundList[0]["refund_amount"] != "30.00" || q.RefundList[1]["refund_status"] != "1" {
		t.Errorf("retrievalRefund = %s", b)
	}
}

func TestPendingRefundSettles(t *testing.T) {
	t.Parallel()
	creds := env.auto
	tx, no := paidOrder(t, creds, "50.00")
	_, r := batch(t, creds, "/v1/refund", "refund_orders", []batchEntry{with(ref(tx, no, "50.00"), "refund_amount", "10.77")})
	if len(r.Entries) != 1 || r.Entries[0]["refund_status"] != "-1" {
		t.Fatalf("pending refund entry = %v", r.Entries)
	}
	if s := paymentStatus(t, creds, no); s != 3000 {
		t.Errorf("while pending: %d, want 3000", s)
	}
	deadline := time.Now().Add(20 * time.Second)
	for paymentStatus(t, creds, no) != 4100 {
		if time.Now().After(deadline) {
			t.Fatal("the pending refund never settled the order")
		}
		time.Sleep(200 * time.Millisecond)
	}
	refunds, err := models.FindRefunds(context.Background(), env.gw.DB, creds.MerchantID, creds.AccountID, []string{tx}, nil)
	if err != nil || len(refunds) != 1 || refunds[0].Status != models.RefundSucceeded || refunds[0].Amount != 1077 {
		t.Errorf("refund record = %+v (%v)", refunds, err)
	}
}

func TestConcurrentRefundsNeverExceedTheCapture(t *testing.T) {
	t.Parallel()
	creds := env.auto
	tx, no := paidOrder(t, creds, "100.00")
	const n = 50
	statuses := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each refund has its own reason: identical bodies would be
			// answered from the replay store, not executed.
			entry := with(ref(tx, no, "100.00"), "refund_amount", "10.00", "refund_reason", fmt.Sprintf("part %d", i))
			_, r := batch(t, creds, "/v1/refund", "refund_orders", []batchEntry{entry})
			if len(r.Entries) == 1 {
				statuses[i] = r.Entries[0]["refund_status"]
			}
		}()
	}
	wg.Wait()
	done, refused := 0, 0
	for _, s := range statuses {
		switch s {
		case "1":
			done++
		case "0":
			refused++
		}
	}
	if done != 10 || refused != 40 {
		t.Errorf("refunds done %d refused %d, want 10 and 40", done, refused)
	}
	if count, sum := refundsOf(tx); count != 10 || sum != 10000 {
		t.Errorf("simulator refunds: %d summing %d, want 10 and 10000", count, sum)
	}
	if o := findOrder(t, creds.AccountID, no); o.PaymentStatus != 4000 || o.RefundedAmount != 10000 {
		t.Errorf("record: %d refunded %d", o.PaymentStatus, o.RefundedAmount)
	}
}

func TestConcurrentIdenticalCapturesCaptureOnce(t *testing.T) {
	t.Parallel()
	creds := env.manual
	tx, no := paidOrder(t, creds, "40.00")
	const n = 20
	statuses := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, r := batch(t, creds, "/v1/capture", "capture_orders", []batchEntry{ref(tx, no, "40.00")})
			if len(r.Entries) == 1 {
				statuses[i] = r.Entries[0]["capture_status"]
			}
		}()
	}
	wg.Wait()
	for i, s := range statuses {
		if s != "1" {
			t.Errorf("request %d: capture_status %q, want 1 (the same capture)", i, s)
		}
	}
	for _, c := range env.sim.Charges() {
		if c.Reference == tx && c.CapturedAmount != 4000 {
			t.Errorf("simulator captured %d, want 4000", c.CapturedAmount)
		}
	}
	if o := findOrder(t, creds.AccountID, no); o.PaymentStatus != 3000 || o.CapturedAmount != 4000 {
		t.Errorf("record: %d captured %d", o.PaymentStatus, o.CapturedAmount)
	}
}

func TestReviewApproveAndReject(t *testing.T) {
	t.Parallel()
	creds := riskAccount(t, risk.Config{CountryMismatchScore: 60}, nil)
	held := func() (string, string) {
		f := riskOrder(t, creds, "4242424242424267", func(f map[string]string) { f["billing_country"] = "GB" })
		_, r := authorise(t, f)
		if r.OrderStatus != "-2" {
			t.Fatalf("not held: %s %s", r.OrderStatus, r.ResultInfo)
		}
		return r.TransactionID, f["order_no"]
	}
	txA, noA := held()
	txB, noB := held()
	_, r := batch(t, creds, "/v1/review", "review_orders", []batchEntry{
		with(ref(txA, noA, "12.34"), "review_flag", "1"),
		with(ref(txB, noB, "12.34"), "review_flag", "0"),
		with(ref(txB, noB, "12.34"), "review_flag", "1"),
	})
	if len(r.Entries) != 3 || r.Entries[0]["review_status"] != "1" || r.Entries[1]["review_status"] != "1" || r.Entries[2]["review_status"] != "0" {
		t.Fatalf("review entries = %v", r.Entries)
	}
	if s := paymentStatus(t, creds, noA); s != 3000 {
		t.Errorf("approved order: %d, want 3000", s)
	}
	if s := paymentStatus(t, creds, noB); s != 5000 {
		t.Errorf("rejected order: %d, want 5000", s)
	}
	if chargesFor(txA) != 1 || chargesFor(txB) != 0 {
		t.Errorf("charges: approved %d rejected %d, want 1 and 0", chargesFor(txA), chargesFor(txB))
	}
}

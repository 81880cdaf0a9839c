package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// opCall is one operation the handlers sent to an order's workflow.
type opCall struct {
	kind       string // capture, cancel, review or refund
	workflowID string
	req        any
}

// fakeOps records every operation and answers from answer, or, when that is
// nil or returns nothing, with a done entry.
type fakeOps struct {
	mu          sync.Mutex
	calls       []opCall
	inFlight    int
	maxInFlight int
	delay       time.Duration
	answer      func(kind string, ref workflows.EntryRef, req any) (workflows.OperationResult, error)
}

func (f *fakeOps) do(kind, workflowID string, ref workflows.EntryRef, req any) (workflows.OperationResult, error) {
	f.mu.Lock()
	f.calls = append(f.calls, opCall{kind: kind, workflowID: workflowID, req: req})
	f.inFlight++
	f.maxInFlight = max(f.maxInFlight, f.inFlight)
	answer, delay := f.answer, f.delay
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
	time.Sleep(delay)
	if answer == nil {
		return doneResult(), nil
	}
	return answer(kind, ref, req)
}

func (f *fakeOps) Capture(_ context.Context, id string, req workflows.CaptureRequest) (workflows.OperationResult, error) {
	return f.do("capture", id, req.Entry, req)
}

func (f *fakeOps) Cancel(_ context.Context, id string, req workflows.CancelRequest) (workflows.OperationResult, error) {
	return f.do("cancel", id, req.Entry, req)
}

func (f *fakeOps) Review(_ context.Context, id string, req workflows.ReviewRequest) (workflows.OperationResult, error) {
	return f.do("review", id, req.Entry, req)
}

func (f *fakeOps) Refund(_ context.Context, id string, req workflows.RefundRequest) (workflows.OperationResult, error) {
	return f.do("refund", id, req.Entry, req)
}

func (f *fakeOps) recorded() []opCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]opCall(nil), f.calls...)
}

func doneResult() workflows.OperationResult {
	return workflows.OperationResult{Status: workflows.EntryDone, ResultCode: codes.OK.ID, ResultMessage: codes.OK.Message}
}

// fakeStore serves orders by transaction id and a fixed list of refunds.
// The signature and refund-limit records go to Records when a test sets
// it (Postgres), and are empty otherwise; the rest of the record is no
// business of the batch and refund endpoints, and a call to it panics.
type fakeStore struct {
	Records
	mu        sync.Mutex
	orders    map[string]*models.Order
	orderErr  map[string]error
	lookups   int
	refunds   []models.Refund
	refundErr error
	queries   [][2][]string // trades and refund ids of each refund query
}

func (f *fakeStore) FindOrderByTransaction(_ context.Context, merchantID, accountID, transactionID string) (*models.Order, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups++
	if err := f.orderErr[transactionID]; err != nil {
		return nil, err
	}
	o, ok := f.orders[transactionID]
	if !ok || o.MerchantID != merchantID || o.AccountID != accountID {
		return nil, models.ErrNotFound
	}
	return o, nil
}

// RefundBlockingDispute: no payment of the fake is disputed.
func (f *fakeStore) RefundBlockingDispute(context.Context, string) (*models.Dispute, error) {
	return nil, nil
}

// FindOrders serves a query naming orders by transaction id.
func (f *fakeStore) FindOrders(_ context.Context, merchantID, accountID string, orderNos, trades []string) ([]models.Order, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []models.Order
	for _, o := range f.orders {
		if o.MerchantID == merchantID && o.AccountID == accountID && (slices.Contains(trades, o.TransactionID) || slices.Contains(orderNos, o.OrderNo)) {
			out = append(out, *o)
		}
	}
	return out, nil
}

// LatestNotifications: no order of the fake has been notified.
func (f *fakeStore) LatestNotifications(context.Context, []string) (map[string]models.Notification, error) {
	return map[string]models.Notification{}, nil
}

func (f *fakeStore) FindRefunds(_ context.Context, merchantID, accountID string, transactionIDs, refundIDs []string) ([]models.Refund, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, [2][]string{transactionIDs, refundIDs})
	if f.refundErr != nil {
		return nil, f.refundErr
	}
	var out []models.Refund
	for _, r := range f.refunds {
		if r.MerchantID == merchantID && r.AccountID == accountID &&
			(slices.Contains(transactionIDs, r.TransactionID) || slices.Contains(refundIDs, r.RefundReferenceID)) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (f *fakeStore) SignatureSeen(ctx context.Context, accountID, signatureHash, operation, bodyFingerprint string, at time.Time) (models.SignatureUse, error) {
	if f.Records == nil {
		// Every signature is seen for the first time.
		return models.SignatureUse{AccountID: accountID, SignatureHash: signatureHash, Operation: operation,
			BodyFingerprint: bodyFingerprint, FirstSeen: at}, nil
	}
	return f.Records.SignatureSeen(ctx, accountID, signatureHash, operation, bodyFingerprint, at)
}

func (f *fakeStore) ReserveCompatibleRefund(ctx context.Context, accountID string, day time.Time, currency string, amount, limit int64) (bool, error) {
	if f.Records == nil {
		return true, nil
	}
	return f.Records.ReserveCompatibleRefund(ctx, accountID, day, currency, amount, limit)
}

func (f *fakeStore) ReleaseCompatibleRefund(ctx context.Context, accountID string, day time.Time, currency string, amount int64) error {
	if f.Records == nil {
		return nil
	}
	return f.Records.ReleaseCompatibleRefund(ctx, accountID, day, currency, amount)
}

func (f *fakeStore) lookupCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lookups
}

// batchConcurrency is how many entries of one batch api/operations works
// on at once.
const batchConcurrency = 8

// Transaction ids of the orders the batch tests know.
const (
	txA     = "1379868670095785984"
	txB     = "1379868670095785985"
	txC     = "1379868670095785986"
	txD     = "1379868670095785987"
	txE     = "1379868670095785988"
	txF     = "1379868670095785989"
	txG     = "1379868670095785990"
	txH     = "1379868670095785991"
	txP     = "1379868670095785992"
	txOther = "1379868670095785993" // an order of another account
	txNone  = "1379868670095785999" // no such order
)

// wfID is the workflow id of the test order with transaction id tx.
func wfID(tx string) string {
	return workflows.OrderWorkflowID(testMerchantID, testAccountID, "ORD-"+tx[len(tx)-3:])
}

// batchEnv is a test server with fake operations and a store holding one
// 100.00 USD order per known transaction id, order_no ORD-<last 3 digits>.
type batchEnv struct {
	*testEnv
	ops   *fakeOps
	store *fakeStore
}

func newBatchEnv(t *testing.T) *batchEnv {
	t.Helper()
	te := newTestEnv(t)
	env := &batchEnv{testEnv: te, ops: te.ops, store: &fakeStore{orders: map[string]*models.Order{}, orderErr: map[string]error{}}}
	for _, tx := range []string{txA, txB, txC, txD, txE, txF, txG, txH, txP} {
		env.store.orders[tx] = &models.Order{TransactionID: tx, WorkflowID: wfID(tx), MerchantID: testMerchantID,
			AccountID: testAccountID, OrderNo: "ORD-" + tx[len(tx)-3:], Currency: "USD", Amount: 10000}
	}
	env.store.orders[txOther] = &models.Order{TransactionID: txOther, WorkflowID: "order/10087/10087001/X",
		MerchantID: "10087", AccountID: "10087001", OrderNo: "X", Currency: "USD", Amount: 10000}
	env.srv.Records = env.store
	return env
}

// entry is a batch entry for the test order tx, 100.00 USD, with extra fields.
func entry(tx string, extra ...string) map[string]any {
	e := map[string]any{"transaction_id": tx, "order_no": "ORD-" + tx[max(len(tx)-3, 0):], "currency": "USD", "amount": "100.00"}
	for i := 0; i+1 < len(extra); i += 2 {
		e[extra[i]] = extra[i+1]
	}
	return e
}

// batchFields is a batch request for array, signed with key over the
// entries' transaction ids in order.
func batchFields(array, key string, entries ...map[string]any) fields {
	f := fields{"merchant_id": testMerchantID, "account_id": testAccountID}
	list := make([]any, len(entries))
	for i, e := range entries {
		list[i] = e
	}
	f[array] = list
	return signBatch(f, array, key)
}

// signBatch sets encryption_data to the batch recipe of docs/design.md §3.
func signBatch(f fields, array, key string) fields {
	values := []string{f.str("merchant_id"), f.str("account_id")}
	list, _ := f[array].([]any)
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			values = append(values, fmt.Sprint(m["transaction_id"]))
		}
	}
	f["encryption_data"] = signing.Sign(key, values...)
	return f
}

// batchReply is a batch answer as a test reads it.
type batchReply struct {
	HTTP           int
	MerchantID     string
	AccountID      string
	ReturnStatus   string
	ReturnMessage  string
	EncryptionData string
	Array          json.RawMessage
	Entries        []map[string]string
}

func postBatch(t *testing.T, env *batchEnv, path, array, contentType string, body []byte) batchReply {
	t.Helper()
	rec := env.do(t, path, contentType, body, "")
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
		t.Fatalf("answer is not JSON: %v; %s", err, rec.Body.String())
	}
	r := batchReply{HTTP: rec.Code, Array: raw[array]}
	for name, dst := range map[string]*string{"merchant_id": &r.MerchantID, "account_id": &r.AccountID,
		"return_status": &r.ReturnStatus, "return_message": &r.ReturnMessage, "encryption_data": &r.EncryptionData} {
		v, ok := raw[name]
		if !ok {
			t.Fatalf("answer has no %s: %s", name, rec.Body.String())
		}
		if err := json.Unmarshal(v, dst); err != nil {
			t.Fatalf("%s is not a string: %s", name, v)
		}
	}
	if r.Array == nil {
		t.Fatalf("answer has no %s: %s", array, rec.Body.String())
	}
	if err := json.Unmarshal(r.Array, &r.Entries); err != nil {
		t.Fatalf("%s is not an array of string fields: %v; %s", array, err, r.Array)
	}
	return r
}

// wantSignature is the batch-response signature of an answer.
func wantSignature(r batchReply) string {
	values := []string{r.MerchantID, r.AccountID, r.ReturnStatus}
	for _, e := range r.Entries {
		values = append(values, e["transaction_id"])
	}
	return signing.SignUpper(testSignKey, values...)
}

// batchEndpoint is one batch endpoint as the tests drive it.
type batchEndpoint struct {
	path  string
	array string
	limit int
	// sample is a complete, valid entry for the test order tx.
	sample func(tx string) map[string]any
}

var batchEndpoints = []batchEndpoint{
	{"/v1/capture", "capture_orders", 50, func(tx string) map[string]any { return entry(tx) }},
	{"/v1/review", "review_orders", 100, func(tx string) map[string]any { return entry(tx, "review_flag", "1") }},
	{"/v1/cancel", "cancel_orders", 50, func(tx string) map[string]any { return entry(tx) }},
	{"/v1/refund", "refund_orders", 50, func(tx string) map[string]any {
		return entry(tx, "refund_amount", "10.00", "refund_reason", "returned")
	}},
}

func manyEntries(ep batchEndpoint, n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = ep.sample(fmt.Sprintf("1379868670095%06d", i))
	}
	return out
}

func TestBatchRefusedAsAWhole(t *testing.T) {
	for _, ep := range batchEndpoints {
		cases := []struct {
			name     string
			build    func() fields
			body     []byte // instead of build
			wantCode codes.Code
			wantHTTP int
			signed   bool // the request proved the key, so the answer is signed
			detailed bool // the message goes on with a detail of the error
		}{
			{
				name: "I0001 missing merchant_id", wantCode: codes.MissingField.With("merchant_id"),
				build: func() fields {
					f := batchFields(ep.array, testSignKey, ep.sample(txA))
					delete(f, "merchant_id")
					return f
				},
			},
			{
				name: "I0001 blank account_id", wantCode: codes.MissingField.With("account_id"),
				build: func() fields {
					f := batchFields(ep.array, testSignKey, ep.sample(txA))
					f["account_id"] = "  "
					return f
				},
			},
			{
				name: "I0002 unknown account", wantCode: codes.UnknownMerchant,
				build: func() fields {
					f := batchFields(ep.array, testSignKey, ep.sample(txA))
					f["account_id"] = "10086999"
					return signBatch(f, ep.array, testSignKey)
				},
			},
			{
				name: "I0013 wrong signature", wantCode: codes.BadSignature,
				build: func() fields {
					f := batchFields(ep.array, testSignKey, ep.sample(txA))
					f["encryption_data"] = strings.Repeat("a", 64)
					return f
				},
			},
			{
				name: "I0013 missing signature", wantCode: codes.BadSignature,
				build: func() fields {
					f := batchFields(ep.array, testSignKey, ep.sample(txA))
					delete(f, "encryption_data")
					return f
				},
			},
			{
				name: "I0013 signed with another key", wantCode: codes.BadSignature,
				build: func() fields { return batchFields(ep.array, otherSignKey, ep.sample(txA)) },
			},
			{
				name: "I0013 signed over the entries in another order", wantCode: codes.BadSignature,
				build: func() fields {
					f := batchFields(ep.array, testSignKey, ep.sample(txB), ep.sample(txA))
					f[ep.array] = []any{ep.sample(txA), ep.sample(txB)}
					return f
				},
			},
			{
				name: "I0013 signed without the transaction ids", wantCode: codes.BadSignature,
				build: func() fields {
					f := batchFields(ep.array, testSignKey, ep.sample(txA))
					f["encryption_data"] = signing.Sign(testSignKey, testMerchantID, testAccountID)
					return f
				},
			},
			{
				name: "I0001 missing array", wantCode: codes.MissingField.With(ep.array), signed: true,
				build: func() fields {
					f := batchFields(ep.array, testSignKey)
					delete(f, ep.array)
					return f
				},
			},
			{
				name: "I0008 transaction_id of 20 digits", signed: true,
				wantCode: codes.InvalidField.With(ep.array + "[1].transaction_id must be 19 digits"),
				build: func() fields {
					return batchFields(ep.array, testSignKey, entry(txA), entry("0"+txA))
				},
			},
			{
				name: "I0008 transaction_id with a letter", signed: true,
				wantCode: codes.InvalidField.With(ep.array + "[0].transaction_id must be 19 digits"),
				build: func() fields {
					return batchFields(ep.array, testSignKey, entry("A"+txA[1:]))
				},
			},
			{
				name: "I0001 empty array", wantCode: codes.MissingField.With(ep.array), signed: true,
				build: func() fields { return batchFields(ep.array, testSignKey) },
			},
			{
				name: fmt.Sprintf("I0015 %d entries", ep.limit+1), signed: true,
				wantCode: codes.TooManyOrders.With(fmt.Sprintf("at most %d %s", ep.limit, ep.array)),
				build:    func() fields { return batchFields(ep.array, testSignKey, manyEntries(ep, ep.limit+1)...) },
			},
			{
				name: "I0010 array that is not JSON", wantCode: codes.MalformedRequest, detailed: true,
				build: func() fields {
					f := batchFields(ep.array, testSignKey)
					f[ep.array] = "not json"
					return f
				},
			},
			{
				name: "I0010 entry that is not an object", wantCode: codes.MalformedRequest, detailed: true,
				build: func() fields {
					f := batchFields(ep.array, testSignKey)
					f[ep.array] = []any{"1379868670095785984"}
					return f
				},
			},
			{
				name: "I0010 malformed JSON", wantCode: codes.MalformedRequest, detailed: true,
				body: []byte(`{"merchant_id":"10086","` + ep.array + `":[`),
			},
			{
				name: "I0011 body of 2 MiB", wantCode: codes.RequestTooLarge, wantHTTP: http.StatusRequestEntityTooLarge,
				body: []byte(`{"merchant_id":"` + strings.Repeat("1", 2<<20) + `"}`),
			},
		}
		for _, c := range cases {
			for _, ct := range []string{ctJSON, ctForm} {
				t.Run(ep.array+"/"+c.name+"/"+ct, func(t *testing.T) {
					env := newBatchEnv(t)
					body := c.body
					if body == nil {
						f := c.build()
						body = f.json(t)
						if ct == ctForm {
							body = f.form(t)
						}
					}
					r := postBatch(t, env, ep.path, ep.array, ct, body)
					wantHTTP := c.wantHTTP
					if wantHTTP == 0 {
						wantHTTP = http.StatusOK
					}
					if r.HTTP != wantHTTP {
						t.Errorf("HTTP status = %d, want %d", r.HTTP, wantHTTP)
					}
					wantMessage := c.wantCode.String()
					if c.detailed && strings.HasPrefix(r.ReturnMessage, wantMessage+": ") {
						wantMessage = r.ReturnMessage
					}
					if r.ReturnStatus != "0" || r.ReturnMessage != wantMessage {
						t.Errorf("return = %q %q, want 0 %q", r.ReturnStatus, r.ReturnMessage, c.wantCode.String())
					}
					if string(r.Array) != "[]" {
						t.Errorf("%s = %s, want []", ep.array, r.Array)
					}
					want := ""
					if c.signed {
						want = signing.SignUpper(testSignKey, testMerchantID, testAccountID, "0")
					}
					if r.EncryptionData != want {
						t.Errorf("encryption_data = %q, want %q", r.EncryptionData, want)
					}
					if calls := env.ops.recorded(); len(calls) != 0 {
						t.Errorf("%d operations sent, want none", len(calls))
					}
					if n := env.store.lookupCount(); n != 0 {
						t.Errorf("%d order lookups, want none", n)
					}
				})
			}
		}
	}
}

func TestBatchAccountLoadError(t *testing.T) {
	for _, ep := range batchEndpoints {
		t.Run(ep.array, func(t *testing.T) {
			env := newBatchEnv(t)
			env.accounts.err = errors.New("database down")
			r := postBatch(t, env, ep.path, ep.array, ctJSON, batchFields(ep.array, testSignKey, ep.sample(txA)).json(t))
			if r.HTTP != http.StatusServiceUnavailable || r.ReturnStatus != "0" || r.ReturnMessage != codes.SystemError.String() {
				t.Errorf("answer = %d %q %q, want 503 0 %q", r.HTTP, r.ReturnStatus, r.ReturnMessage, codes.SystemError.String())
			}
			if r.EncryptionData != "" || string(r.Array) != "[]" {
				t.Errorf("encryption_data %q, array %s; want unsigned and []", r.EncryptionData, r.Array)
			}
		})
	}
}

// TestBatchAtTheLimit takes a full batch of each endpoint.
func TestBatchAtTheLimit(t *testing.T) {
	for _, ep := range batchEndpoints {
		t.Run(ep.array, func(t *testing.T) {
			env := newBatchEnv(t)
			entries := manyEntries(ep, ep.limit)
			r := postBatch(t, env, ep.path, ep.array, ctJSON, batchFields(ep.array, testSignKey, entries...).json(t))
			if r.ReturnStatus != "1" || r.ReturnMessage != "OK" || len(r.Entries) != ep.limit {
				t.Fatalf("answer = %q %q with %d entries, want 1 OK with %d", r.ReturnStatus, r.ReturnMessage, len(r.Entries), ep.limit)
			}
			if got := env.store.lookupCount(); got != ep.limit {
				t.Errorf("order lookups = %d, want %d", got, ep.limit)
			}
		})
	}
}

// TestBatchAnswerFields checks every response field of each operation.
func TestBatchAnswerFields(t *testing.T) {
	cases := []struct {
		ep      batchEndpoint
		entry   map[string]any
		answer  workflows.OperationResult
		want    map[string]string
		wantReq any
	}{
		{
			ep: batchEndpoints[0], entry: entry(txA),
			answer: doneResult(),
			want: map[string]string{"transaction_id": txA, "order_no": "ORD-984", "currency": "USD", "amount": "100.00",
				"capture_status": "1", "error_message": ""},
			wantReq: workflows.CaptureRequest{Entry: workflows.EntryRef{TransactionID: txA, OrderNo: "ORD-984", Currency: "USD", Amount: 10000}},
		},
		{
			ep: batchEndpoints[1], entry: entry(txA, "review_flag", "0"),
			answer: doneResult(),
			want: map[string]string{"transaction_id": txA, "order_no": "ORD-984", "currency": "USD", "amount": "100.00",
				"review_flag": "0", "review_status": "1", "error_message": ""},
			wantReq: workflows.ReviewRequest{Entry: workflows.EntryRef{TransactionID: txA, OrderNo: "ORD-984", Currency: "USD", Amount: 10000}, Approve: false},
		},
		{
			ep: batchEndpoints[2], entry: entry(txA),
			answer: workflows.OperationResult{Status: workflows.EntryRefused, ResultCode: codes.ConnectorError.ID, ResultMessage: codes.ConnectorError.Message},
			want: map[string]string{"transaction_id": txA, "order_no": "ORD-984", "currency": "USD", "amount": "100.00",
				"cancel_status": "0", "error_message": "C0001:Acquirer error"},
			wantReq: workflows.CancelRequest{Entry: workflows.EntryRef{TransactionID: txA, OrderNo: "ORD-984", Currency: "USD", Amount: 10000}},
		},
		{
			ep: batchEndpoints[3], entry: entry(txA, "refund_amount", "10.00", "refund_reason", "returned"),
			answer: workflows.OperationResult{Status: workflows.EntryDone, ResultCode: "0000", ResultMessage: "Success",
				RefundReferenceID: txA + "-01", RefundReference: "re_123"},
			want: map[string]string{"transaction_id": txA, "order_no": "ORD-984", "currency": "USD", "amount": "100.00",
				"refund_amount": "10.00", "refund_reason": "returned", "refund_status": "1", "refund_message": "0000:Success",
				"refund_reference": "re_123", "refund_reference_id": txA + "-01"},
			wantReq: workflows.RefundRequest{Entry: workflows.EntryRef{TransactionID: txA, OrderNo: "ORD-984", Currency: "USD", Amount: 10000},
				RefundAmount: 1000, Reason: "returned"},
		},
	}
	for _, c := range cases {
		t.Run(c.ep.array, func(t *testing.T) {
			env := newBatchEnv(t)
			env.ops.answer = func(string, workflows.EntryRef, any) (workflows.OperationResult, error) { return c.answer, nil }
			r := postBatch(t, env, c.ep.path, c.ep.array, ctJSON, batchFields(c.ep.array, testSignKey, c.entry).json(t))
			if r.HTTP != http.StatusOK || r.ReturnStatus != "1" || r.ReturnMessage != "OK" {
				t.Fatalf("answer = %d %q %q, want 200 1 OK", r.HTTP, r.ReturnStatus, r.ReturnMessage)
			}
			if r.MerchantID != testMerchantID || r.AccountID != testAccountID {
				t.Errorf("ids = %q %q", r.MerchantID, r.AccountID)
			}
			if len(r.Entries) != 1 || !reflect.DeepEqual(r.Entries[0], c.want) {
				t.Errorf("entries = %v\nwant [%v]", r.Entries, c.want)
			}
			if r.EncryptionData != signing.SignUpper(testSignKey, testMerchantID, testAccountID, "1", txA) {
				t.Errorf("encryption_data = %q, not the batch-response signature", r.EncryptionData)
			}
			calls := env.ops.recorded()
			if len(calls) != 1 || calls[0].workflowID != wfID(txA) || !reflect.DeepEqual(calls[0].req, c.wantReq) {
				t.Errorf("operations = %+v, want one %+v to %s", calls, c.wantReq, wfID(txA))
			}
		})
	}
}

func TestCaptureMixedBatch(t *testing.T) {
	env := newBatchEnv(t)
	env.store.orderErr[txE] = errors.New("connection reset")
	env.ops.answer = func(_ string, ref workflows.EntryRef, _ any) (workflows.OperationResult, error) {
		switch ref.TransactionID {
		case txB:
			return workflows.OperationResult{}, &flows.ErrEntryRefused{Code: codes.OrderMismatch.ID, Message: "Entry does not match the order: amount"}
		case txC:
			return workflows.OperationResult{Status: workflows.EntryPending, ResultCode: "0001", ResultMessage: "Pending at the acquirer"}, nil
		case txD:
			return workflows.OperationResult{}, errors.New("temporal unavailable")
		case txF:
			return workflows.OperationResult{Status: workflows.EntryRefused, ResultCode: codes.ConnectorError.ID, ResultMessage: codes.ConnectorError.Message}, nil
		case txH:
			return workflows.OperationResult{}, fmt.Errorf("capture update: %w: deadline", flows.ErrOutcomeUnknown)
		case txP:
			panic("boom")
		}
		return doneResult(), nil
	}
	entries := []map[string]any{
		entry(txA),                             // 0 captured
		entry(txNone),                          // 1 no such order
		entry(txA, "amount", "12.345"),         // 2 bad amount
		entry(txB),                             // 3 refused by the validator
		entry(txC),                             // 4 pending at the acquirer
		entry(txA, "currency", "XXX"),          // 5 unknown currency
		entry(txA, "order_no", ""),             // 6 missing order_no
		entry(txD),                             // 7 the update failed
		entry(txE),                             // 8 the lookup failed
		entry(txF),                             // 9 refused by the acquirer
		entry(txG, "capture_amount", " 5.00 "), // 10 partial capture
		entry(txH),                             // 11 outcome not known in time
		entry(txOther),                         // 12 another account's order
		entry(txG, "capture_amount", "0"),      // 13 zero partial capture
		entry(txG, "capture_amount", "1.234"),  // 14 bad partial capture
		entry(txP),                             // 15 panics
		entry(" "+txA+" ", "amount", " 100.00", "order_no", " ORD-984"), // 16 padded values
		entry(""), // 17 missing transaction_id
	}
	r := postBatch(t, env, "/v1/capture", "capture_orders", ctJSON, batchFields("capture_orders", testSignKey, entries...).json(t))
	if r.HTTP != http.StatusOK || r.ReturnStatus != "1" || r.ReturnMessage != "OK" {
		t.Fatalf("answer = %d %q %q, want 200 1 OK", r.HTTP, r.ReturnStatus, r.ReturnMessage)
	}
	want := []struct{ tx, no, amount, captureAmount, status, message string }{
		{txA, "ORD-984", "100.00", "", "1", ""},
		{txNone, "ORD-999", "100.00", "", "0", "I0016:Order not found"},
		{txA, "ORD-984", "12.345", "", "0", "I0003:Invalid amount: amount"},
		{txB, "ORD-985", "100.00", "", "0", "I0019:Entry does not match the order: amount"},
		{txC, "ORD-986", "100.00", "", "-1", ""},
		{txA, "ORD-984", "100.00", "", "0", "I0004:Currency not supported for this account: unknown currency XXX"},
		{txA, "", "100.00", "", "0", "I0001:Missing required field: order_no"},
		{txD, "ORD-987", "100.00", "", "0", "S0001:Temporary system error, try again"},
		{txE, "ORD-988", "100.00", "", "0", "S0001:Temporary system error, try again"},
		{txF, "ORD-989", "100.00", "", "0", "C0001:Acquirer error"},
		{txG, "ORD-990", "100.00", "5.00", "1", ""},
		{txH, "ORD-991", "100.00", "", "-1", ""},
		{txOther, "ORD-993", "100.00", "", "0", "I0016:Order not found"},
		{txG, "ORD-990", "100.00", "0", "0", "I0003:Invalid amount: capture_amount must be greater than zero"},
		{txG, "ORD-990", "100.00", "1.234", "0", "I0003:Invalid amount: capture_amount"},
		{txP, "ORD-992", "100.00", "", "0", "S0001:Temporary system error, try again"},
		{txA, "ORD-984", "100.00", "", "1", ""},
		{"", "ORD-", "100.00", "", "0", "I0001:Missing required field: transaction_id"},
	}
	if len(r.Entries) != len(want) {
		t.Fatalf("%d entries, want %d: %v", len(r.Entries), len(want), r.Entries)
	}
	for i, w := range want {
		t.Run(fmt.Sprintf("entry %d", i), func(t *testing.T) {
			wantEntry := map[string]string{"transaction_id": w.tx, "order_no": w.no, "currency": "USD", "amount": w.amount,
				"capture_status": w.status, "error_message": w.message}
			if i == 5 {
				wantEntry["currency"] = "XXX"
			}
			if w.captureAmount != "" {
				wantEntry["capture_amount"] = w.captureAmount
			}
			if !reflect.DeepEqual(r.Entries[i], wantEntry) {
				t.Errorf("entry = %v\nwant    %v", r.Entries[i], wantEntry)
			}
		})
	}
	if r.EncryptionData != wantSignature(r) {
		t.Errorf("encryption_data = %q, want %q", r.EncryptionData, wantSignature(r))
	}
	// Entries refused before the update never reach the workflow.
	sent := map[string][]int64{}
	for _, c := range env.ops.recorded() {
		req := c.req.(workflows.CaptureRequest)
		if c.workflowID != wfID(req.Entry.TransactionID) {
			t.Errorf("capture of %s sent to %s", req.Entry.TransactionID, c.workflowID)
		}
		sent[req.Entry.TransactionID] = append(sent[req.Entry.TransactionID], req.CaptureAmount)
	}
	wantSent := map[string][]int64{txA: {0, 0}, txB: {0}, txC: {0}, txD: {0}, txF: {0}, txG: {500}, txH: {0}, txP: {0}}
	if !reflect.DeepEqual(sent, wantSent) {
		t.Errorf("captures sent = %v, want %v", sent, wantSent)
	}
	logs := env.logs.String()
	for _, s := range []string{"temporal unavailable", "connection reset", "boom", "outcome not known in time"} {
		if !strings.Contains(logs, s) {
			t.Errorf("log lacks %q", s)
		}
	}
}

func TestRefundMixedBatch(t *testing.T) {
	env := newBatchEnv(t)
	var mu sync.Mutex
	seq := map[string]int{}
	env.ops.answer = func(_ string, ref workflows.EntryRef, req any) (workflows.OperationResult, error) {
		switch ref.TransactionID {
		case txB:
			return workflows.OperationResult{}, &flows.ErrEntryRefused{Code: codes.InvalidAmount.ID, Message: "Invalid amount: refund_amount exceeds the refundable 1000 minor units"}
		case txC:
			return workflows.OperationResult{Status: workflows.EntryPending, ResultCode: "0001", ResultMessage: "Pending at the acquirer",
				RefundReferenceID: txC + "-01", RefundReference: "re_pending"}, nil
		case txD:
			return workflows.OperationResult{Status: workflows.EntryRefused, ResultCode: codes.ConnectorError.ID, ResultMessage: codes.ConnectorError.Message,
				RefundReferenceID: txD + "-01"}, nil
		case txH:
			return workflows.OperationResult{}, fmt.Errorf("refund update: %w", flows.ErrOutcomeUnknown)
		}
		mu.Lock() // orders are worked concurrently; one order's entries one at a time
		defer mu.Unlock()
		seq[ref.TransactionID]++
		return workflows.OperationResult{Status: workflows.EntryDone, ResultCode: "0000", ResultMessage: "Success",
			RefundReferenceID: fmt.Sprintf("%s-%02d", ref.TransactionID, seq[ref.TransactionID]),
			RefundReference:   fmt.Sprintf("re_%d", req.(workflows.RefundRequest).RefundAmount)}, nil
	}
	entries := []map[string]any{
		entry(txA, "refund_amount", "30.50", "refund_reason", " damaged "),             // 0 refunded
		entry(txNone, "refund_amount", "1.00"),                                         // 1 no such order
		entry(txA, "refund_amount", "abc"),                                             // 2 bad refund_amount
		entry(txB, "refund_amount", "99.00"),                                           // 3 refused by the validator
		entry(txC, "refund_amount", "5.00", "refund_reason", "late"),                   // 4 pending
		entry(txA, "refund_amount", "0.00"),                                            // 5 zero
		entry(txA),                                                                     // 6 no refund_amount
		entry(txD, "refund_amount", "1.00"),                                            // 7 refused by the acquirer
		entry(txH, "refund_amount", "1.00"),                                            // 8 outcome not known in time
		entry(txA, "refund_amount", "1.00", "refund_reason", strings.Repeat("é", 501)), // 9 reason too long
		entry(txA, "refund_amount", "2.00"),                                            // 10 second refund of A
	}
	r := postBatch(t, env, "/v1/refund", "refund_orders", ctJSON, batchFields("refund_orders", testSignKey, entries...).json(t))
	if r.ReturnStatus != "1" || r.ReturnMessage != "OK" {
		t.Fatalf("return = %q %q, want 1 OK", r.ReturnStatus, r.ReturnMessage)
	}
	type refundWant struct{ tx, no, refundAmount, reason, status, message, reference, referenceID string }
	want := []refundWant{
		{txA, "ORD-984", "30.50", "damaged", "1", "0000:Success", "re_3050", txA + "-01"},
		{txNone, "ORD-999", "1.00", "", "0", "I0016:Order not found", "", ""},
		{txA, "ORD-984", "abc", "", "0", "I0003:Invalid amount: refund_amount", "", ""},
		{txB, "ORD-985", "99.00", "", "0", "I0003:Invalid amount: refund_amount exceeds the refundable 1000 minor units", "", ""},
		{txC, "ORD-986", "5.00", "late", "-1", "0001:Pending at the acquirer", "re_pending", txC + "-01"},
		{txA, "ORD-984", "0.00", "", "0", "I0003:Invalid amount: refund_amount must be greater than zero", "", ""},
		{txA, "ORD-984", "", "", "0", "I0001:Missing required field: refund_amount", "", ""},
		{txD, "ORD-987", "1.00", "", "0", "C0001:Acquirer error", "", txD + "-01"},
		{txH, "ORD-991", "1.00", "", "-1", "E0001:Acquirer did not answer in time", "", ""},
		{txA, "ORD-984", "1.00", strings.Repeat("é", 501), "0", "I0008:Invalid field value: refund_reason must be at most 500 characters", "", ""},
		{txA, "ORD-984", "2.00", "", "1", "0000:Success", "re_200", txA + "-02"},
	}
	if len(r.Entries) != len(want) {
		t.Fatalf("%d entries, want %d", len(r.Entries), len(want))
	}
	for i, w := range want {
		t.Run(fmt.Sprintf("entry %d", i), func(t *testing.T) {
			wantEntry := map[string]string{"transaction_id": w.tx, "order_no": w.no, "currency": "USD", "amount": "100.00",
				"refund_amount": w.refundAmount, "refund_reason": w.reason, "refund_status": w.status,
				"refund_message": w.message, "refund_reference": w.reference, "refund_reference_id": w.referenceID}
			if !reflect.DeepEqual(r.Entries[i], wantEntry) {
				t.Errorf("entry = %v\nwant    %v", r.Entries[i], wantEntry)
			}
		})
	}
	if r.EncryptionData != wantSignature(r) {
		t.Errorf("encryption_data = %q, want %q", r.EncryptionData, wantSignature(r))
	}
	var first workflows.RefundRequest
	for _, c := range env.ops.recorded() {
		if req := c.req.(workflows.RefundRequest); req.Entry.TransactionID == txA && req.RefundAmount == 3050 {
			first = req
		}
	}
	wantFirst := workflows.RefundRequest{Entry: workflows.EntryRef{TransactionID: txA, OrderNo: "ORD-984", Currency: "USD", Amount: 10000},
		RefundAmount: 3050, Reason: "damaged"}
	if first != wantFirst {
		t.Errorf("first refund sent = %+v, want %+v", first, wantFirst)
	}
}

// TestRefundEchoesWhatWasSent: numbers are taken as their text and amounts
// come back as sent, only trimmed.
func TestRefundEchoesWhatWasSent(t *testing.T) {
	env := newBatchEnv(t)
	body := fmt.Sprintf(`{"merchant_id":10086,"account_id":"10086001","encryption_data":%q,"refund_orders":[
		{"transaction_id":%s,"order_no":"ORD-984","currency":"USD","amount":100,"refund_amount":10.5,"refund_reason":"  size  "},
		{"transaction_id":"%s","order_no":"ORD-900","currency":"JPY","amount":" 1500 ","refund_amount":"200.00"}]}`,
		signing.Sign(testSignKey, testMerchantID, testAccountID, txA, txB), txA, txB)
	r := postBatch(t, env, "/v1/refund", "refund_orders", ctJSON, []byte(body))
	if r.ReturnStatus != "1" {
		t.Fatalf("return = %q %q, want 1", r.ReturnStatus, r.ReturnMessage)
	}
	wantEcho := []map[string]string{
		{"transaction_id": txA, "order_no": "ORD-984", "currency": "USD", "amount": "100", "refund_amount": "10.5", "refund_reason": "size"},
		{"transaction_id": txB, "order_no": "ORD-900", "currency": "JPY", "amount": "1500", "refund_amount": "200.00", "refund_reason": ""},
	}
	for i, w := range wantEcho {
		for k, v := range w {
			if r.Entries[i][k] != v {
				t.Errorf("entry %d %s = %q, want %q", i, k, r.Entries[i][k], v)
			}
		}
	}
	got := map[string]workflows.RefundRequest{}
	for _, c := range env.ops.recorded() {
		req := c.req.(workflows.RefundRequest)
		got[req.Entry.TransactionID] = req
	}
	want := map[string]workflows.RefundRequest{
		txA: {Entry: workflows.EntryRef{TransactionID: txA, OrderNo: "ORD-984", Currency: "USD", Amount: 10000}, RefundAmount: 1050, Reason: "size"},
		txB: {Entry: workflows.EntryRef{TransactionID: txB, OrderNo: "ORD-900", Currency: "JPY", Amount: 1500}, RefundAmount: 200},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("refunds sent = %+v\nwant %+v", got, want)
	}
}

func TestReviewFlag(t *testing.T) {
	cases := []struct {
		name        string
		flag        any
		wantStatus  string
		wantMessage string
		wantEcho    string
		wantApprove *bool
	}{
		{name: "1 approves", flag: "1", wantStatus: "1", wantEcho: "1", wantApprove: new(true)},
		{name: "0 rejects", flag: "0", wantStatus: "1", wantEcho: "0", wantApprove: new(false)},
		{name: "number 1 approves", flag: 1, wantStatus: "1", wantEcho: "1", wantApprove: new(true)},
		{name: "padded 0 rejects", flag: " 0 ", wantStatus: "1", wantEcho: "0", wantApprove: new(false)},
		{name: "2 is refused", flag: "2", wantStatus: "0", wantEcho: "2",
			wantMessage: "I0008:Invalid field value: review_flag must be 1 (approve) or 0 (reject)"},
		{name: "yes is refused", flag: "yes", wantStatus: "0", wantEcho: "yes",
			wantMessage: "I0008:Invalid field value: review_flag must be 1 (approve) or 0 (reject)"},
		{name: "missing", flag: nil, wantStatus: "0", wantEcho: "",
			wantMessage: "I0001:Missing required field: review_flag"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := newBatchEnv(t)
			e := entry(txA)
			if c.flag != nil {
				e["review_flag"] = c.flag
			}
			r := postBatch(t, env, "/v1/review", "review_orders", ctJSON, batchFields("review_orders", testSignKey, e).json(t))
			if len(r.Entries) != 1 {
				t.Fatalf("entries = %v", r.Entries)
			}
			got := r.Entries[0]
			if got["review_status"] != c.wantStatus || got["error_message"] != c.wantMessage || got["review_flag"] != c.wantEcho {
				t.Errorf("entry = %v, want review_status %q, error_message %q, review_flag %q", got, c.wantStatus, c.wantMessage, c.wantEcho)
			}
			calls := env.ops.recorded()
			if c.wantApprove == nil {
				if len(calls) != 0 {
					t.Errorf("operations sent = %+v, want none", calls)
				}
				return
			}
			if len(calls) != 1 || calls[0].kind != "review" || calls[0].req.(workflows.ReviewRequest).Approve != *c.wantApprove {
				t.Errorf("operations sent = %+v, want one review with Approve %v", calls, *c.wantApprove)
			}
		})
	}
}

func TestCancelBatch(t *testing.T) {
	env := newBatchEnv(t)
	env.ops.answer = func(_ string, ref workflows.EntryRef, _ any) (workflows.OperationResult, error) {
		if ref.TransactionID == txB {
			return workflows.OperationResult{}, &flows.ErrEntryRefused{Code: codes.InvalidState.ID, Message: codes.InvalidState.Message}
		}
		return doneResult(), nil
	}
	r := postBatch(t, env, "/v1/cancel", "cancel_orders", ctJSON,
		batchFields("cancel_orders", testSignKey, entry(txA), entry(txB), entry(txNone)).json(t))
	want := []map[string]string{
		{"transaction_id": txA, "order_no": "ORD-984", "currency": "USD", "amount": "100.00", "cancel_status": "1", "error_message": ""},
		{"transaction_id": txB, "order_no": "ORD-985", "currency": "USD", "amount": "100.00", "cancel_status": "0",
			"error_message": "I0018:Operation not allowed in the order's current state"},
		{"transaction_id": txNone, "order_no": "ORD-999", "currency": "USD", "amount": "100.00", "cancel_status": "0",
			"error_message": "I0016:Order not found"},
	}
	if !reflect.DeepEqual(r.Entries, want) {
		t.Errorf("entries = %v\nwant %v", r.Entries, want)
	}
	if r.EncryptionData != signing.SignUpper(testSignKey, testMerchantID, testAccountID, "1", txA, txB, txNone) {
		t.Errorf("encryption_data = %q, not the batch-response signature", r.EncryptionData)
	}
}

// TestBatchFormBody: in a form the array is JSON text; a JSON body may carry
// it as JSON text too.
func TestBatchFormBody(t *testing.T) {
	entries := []map[string]any{entry(txA, "refund_amount", "1.00"), entry(txB, "refund_amount", "2.00")}
	list, err := json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	sig := signing.Sign(testSignKey, testMerchantID, testAccountID, txA, txB)
	cases := []struct {
		name string
		ct   string
		body []byte
	}{
		{"form with the array as JSON text", ctForm, fields{"merchant_id": testMerchantID, "account_id": testAccountID,
			"encryption_data": sig, "refund_orders": string(list)}.form(t)},
		{"JSON under the form content type", ctForm, batchFields("refund_orders", testSignKey, entries...).json(t)},
		{"JSON with the array as JSON text", ctJSON, fields{"merchant_id": testMerchantID, "account_id": testAccountID,
			"encryption_data": sig, "refund_orders": string(list)}.json(t)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := newBatchEnv(t)
			r := postBatch(t, env, "/v1/refund", "refund_orders", c.ct, c.body)
			if r.ReturnStatus != "1" || len(r.Entries) != 2 {
				t.Fatalf("answer = %q %q with %d entries, want 1 with 2", r.ReturnStatus, r.ReturnMessage, len(r.Entries))
			}
			for i, tx := range []string{txA, txB} {
				if r.Entries[i]["transaction_id"] != tx || r.Entries[i]["refund_status"] != "1" {
					t.Errorf("entry %d = %v, want %s refunded", i, r.Entries[i], tx)
				}
			}
			if len(env.ops.recorded()) != 2 {
				t.Errorf("%d refunds sent, want 2", len(env.ops.recorded()))
			}
		})
	}
}

// TestBatchOrderAndConcurrency: entries are worked a few at a time but
// answered in the request's order; one order's entries go in array order.
func TestBatchOrderAndConcurrency(t *testing.T) {
	env := newBatchEnv(t)
	env.ops.delay = 2 * time.Millisecond
	ep := batchEndpoints[1]
	entries := manyEntries(ep, ep.limit-3)
	// Three more reviews of the first order, with different flags.
	entries = append(entries, entry(txA, "review_flag", "0"), entry(txA, "review_flag", "1"), entry(txA, "review_flag", "0"))
	for _, e := range entries {
		tx := e["transaction_id"].(string)
		env.store.orders[tx] = &models.Order{TransactionID: tx, WorkflowID: "wf-" + tx, MerchantID: testMerchantID,
			AccountID: testAccountID, OrderNo: e["order_no"].(string), Currency: "USD", Amount: 10000}
	}
	r := postBatch(t, env, ep.path, ep.array, ctJSON, batchFields(ep.array, testSignKey, entries...).json(t))
	if len(r.Entries) != len(entries) {
		t.Fatalf("%d entries, want %d", len(r.Entries), len(entries))
	}
	for i, e := range entries {
		if r.Entries[i]["transaction_id"] != e["transaction_id"] || r.Entries[i]["review_flag"] != e["review_flag"] || r.Entries[i]["review_status"] != "1" {
			t.Errorf("entry %d = %v, want %v reviewed", i, r.Entries[i], e)
		}
	}
	if r.EncryptionData != wantSignature(r) {
		t.Errorf("encryption_data = %q, want %q", r.EncryptionData, wantSignature(r))
	}
	calls := env.ops.recorded()
	var flagsOfA []bool
	for _, c := range calls {
		if req := c.req.(workflows.ReviewRequest); req.Entry.TransactionID == txA {
			flagsOfA = append(flagsOfA, req.Approve)
		}
	}
	if !slices.Equal(flagsOfA, []bool{false, true, false}) {
		t.Errorf("reviews of %s sent in order %v, want [false true false]", txA, flagsOfA)
	}
	env.ops.mu.Lock()
	most := env.ops.maxInFlight
	env.ops.mu.Unlock()
	if most > batchConcurrency || most < 2 {
		t.Errorf("at most %d operations in flight, want 2 to %d", most, batchConcurrency)
	}
}

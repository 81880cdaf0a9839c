package operations

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/apitest"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

const (
	txKnown   = "1379868670095785984"
	txUnknown = "1379868670095785999"
	// txDisputed is an order like txKnown's whose chargeback awaits the
	// merchant's answer.
	txDisputed = "1379868670095785985"
	// txDisputesUnread is an order whose disputes cannot be read.
	txDisputesUnread = "1379868670095785986"
)

// records holds one 100.00 USD order and the compatible refunds reserved
// today; the rest of the record is no business of the batches, and a call to it
// panics.
type records struct {
	api.Records
	mu       sync.Mutex
	reserved int64
}

func (r *records) FindOrderByTransaction(_ context.Context, m, a, tx string) (*models.Order, error) {
	if m != apitest.MerchantID || a != apitest.AccountID || tx != txKnown && tx != txDisputed && tx != txDisputesUnread {
		return nil, models.ErrNotFound
	}
	return &models.Order{TransactionID: tx, WorkflowID: "order/x", MerchantID: m, AccountID: a,
		OrderNo: "ORD-1", Currency: "USD", Amount: 10000}, nil
}

func (r *records) RefundBlockingDispute(_ context.Context, tx string) (*models.Dispute, error) {
	switch tx {
	case txDisputesUnread:
		return nil, errors.New("database: connection reset")
	case txDisputed:
		return &models.Dispute{TransactionID: tx, Stage: "chargeback", Status: "needs_response"}, nil
	}
	return nil, nil
}

// SignatureSeen: every signature is new (the edge notes compatible
// signatures of operations that move money).
func (r *records) SignatureSeen(_ context.Context, a, hash, op, fp string, at time.Time) (models.SignatureUse, error) {
	return models.SignatureUse{AccountID: a, SignatureHash: hash, Operation: op, BodyFingerprint: fp, FirstSeen: at}, nil
}

func (r *records) ReserveCompatibleRefund(_ context.Context, _ string, _ time.Time, _ string, amount, limit int64) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reserved+amount > limit {
		return false, nil
	}
	r.reserved += amount
	return true, nil
}

func (r *records) ReleaseCompatibleRefund(_ context.Context, _ string, _ time.Time, _ string, amount int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reserved -= amount
	return nil
}

// ops answers every operation done, refunds with a reference, and keeps
// what it was sent.
type ops struct {
	mu   sync.Mutex
	sent []any
}

func (o *ops) keep(req any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sent = append(o.sent, req)
}

func done() workflows.OperationResult {
	return workflows.OperationResult{Status: workflows.EntryDone, ResultCode: codes.OK.ID, ResultMessage: codes.OK.Message}
}

func (o *ops) Capture(_ context.Context, _ string, r workflows.CaptureRequest) (workflows.OperationResult, error) {
	o.keep(r)
	return done(), nil
}

func (o *ops) Cancel(_ context.Context, _ string, r workflows.CancelRequest) (workflows.OperationResult, error) {
	o.keep(r)
	return done(), nil
}

func (o *ops) Review(_ context.Context, _ string, r workflows.ReviewRequest) (workflows.OperationResult, error) {
	o.keep(r)
	return done(), nil
}

func (o *ops) Refund(_ context.Context, _ string, r workflows.RefundRequest) (workflows.OperationResult, error) {
	o.keep(r)
	res := done()
	res.RefundReference, res.RefundReferenceID = "RF-1", "R1"
	return res, nil
}

// batchAnswer is a batch answer as the tests read it.
type batchAnswer struct {
	ReturnStatus   string              `json:"return_status"`
	ReturnMessage  string              `json:"return_message"`
	EncryptionData string              `json:"encryption_data"`
	CaptureOrders  []map[string]string `json:"capture_orders"`
	RefundOrders   []map[string]string `json:"refund_orders"`
	ReviewOrders   []map[string]string `json:"review_orders"`
}

// send posts a batch of entries to path, signed over their transaction ids.
func send(t *testing.T, limit int64, o *ops, path, array string, entries ...map[string]string) batchAnswer {
	t.Helper()
	gate := apitest.Gate(apitest.Accounts{Edit: func(a *models.Account) { a.CompatibleRefundDailyLimit = limit }}, &records{})
	gate.Capabilities = []api.Capability{New(gate, o)}
	values := []string{apitest.MerchantID, apitest.AccountID}
	for _, e := range entries {
		values = append(values, e["transaction_id"])
	}
	body := map[string]any{"merchant_id": apitest.MerchantID, "account_id": apitest.AccountID, array: entries,
		"encryption_data": signing.Sign(apitest.SignKey, values...)}
	var out batchAnswer
	apitest.PostJSON(t, gate.Handler(), path, body, "", &out)
	return out
}

func entry(tx string, extra ...string) map[string]string {
	e := map[string]string{"transaction_id": tx, "order_no": "ORD-1", "currency": "USD", "amount": "100.00"}
	for i := 0; i+1 < len(extra); i += 2 {
		e[extra[i]] = extra[i+1]
	}
	return e
}

// TestBatchRefusals: a batch refused as a whole answers its code and no
// entry; nothing reaches an order.
func TestBatchRefusals(t *testing.T) {
	many := make([]map[string]string, 51)
	for i := range many {
		many[i] = entry(fmt.Sprintf("1379868670095%06d", i))
	}
	tests := []struct {
		name    string
		entries []map[string]string
		want    string
	}{
		{"no entries", nil, codes.MissingField.With("capture_orders").String()},
		{"an id that is not 19 digits", []map[string]string{entry("12345")}, codes.InvalidField.With("capture_orders[0].transaction_id must be 19 digits").String()},
		{"one entry over the limit", many, codes.TooManyOrders.With("at most 50 capture_orders").String()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := &ops{}
			got := send(t, 0, o, "/v1/capture", "capture_orders", tc.entries...)
			if got.ReturnStatus != "0" || got.ReturnMessage != tc.want || len(got.CaptureOrders) != 0 {
				t.Errorf("answer = %+v, want return_status 0, %q and no entries", got, tc.want)
			}
			if len(o.sent) != 0 {
				t.Errorf("%d operations sent, want none", len(o.sent))
			}
		})
	}
}

// TestBatchEntries: each entry is checked, sent to its order as the
// workflow's request, and answered in place with its exact fields.
func TestBatchEntries(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		array    string
		entry    map[string]string
		wantSent any
		want     map[string]string
	}{
		{"partial capture", "/v1/capture", "capture_orders", entry(txKnown, "capture_amount", "40.00"),
			workflows.CaptureRequest{Entry: workflows.EntryRef{TransactionID: txKnown, OrderNo: "ORD-1", Currency: "USD", Amount: 10000}, CaptureAmount: 4000},
			map[string]string{"transaction_id": txKnown, "order_no": "ORD-1", "currency": "USD", "amount": "100.00",
				"capture_amount": "40.00", "capture_status": "1", "error_message": ""}},
		{"refund", "/v1/refund", "refund_orders", entry(txKnown, "refund_amount", "10.00", "refund_reason", "returned"),
			workflows.RefundRequest{Entry: workflows.EntryRef{TransactionID: txKnown, OrderNo: "ORD-1", Currency: "USD", Amount: 10000}, RefundAmount: 1000, Reason: "returned"},
			map[string]string{"transaction_id": txKnown, "order_no": "ORD-1", "currency": "USD", "amount": "100.00",
				"refund_amount": "10.00", "refund_reason": "returned", "refund_status": "1", "refund_message": "0000:Success",
				"refund_reference": "RF-1", "refund_reference_id": "R1"}},
		{"review with a flag that is neither 1 nor 0", "/v1/review", "review_orders", entry(txKnown, "review_flag", "yes"), nil,
			map[string]string{"transaction_id": txKnown, "order_no": "ORD-1", "currency": "USD", "amount": "100.00",
				"review_flag": "yes", "review_status": "0", "error_message": codes.InvalidField.With("review_flag must be 1 (approve) or 0 (reject)").String()}},
		{"an order of nobody's", "/v1/capture", "capture_orders", entry(txUnknown), nil,
			map[string]string{"transaction_id": txUnknown, "order_no": "ORD-1", "currency": "USD", "amount": "100.00",
				"capture_status": "0", "error_message": codes.OrderNotFound.String()}},
		{"a refund of a disputed payment", "/v1/refund", "refund_orders", entry(txDisputed, "refund_amount", "10.00"), nil,
			map[string]string{"transaction_id": txDisputed, "order_no": "ORD-1", "currency": "USD", "amount": "100.00",
				"refund_amount": "10.00", "refund_reason": "", "refund_status": "0",
				"refund_message": codes.RefundDisputed.With("chargeback needs_response").String(), "refund_reference": "", "refund_reference_id": ""}},
		{"a refund whose disputes cannot be read", "/v1/refund", "refund_orders", entry(txDisputesUnread, "refund_amount", "10.00"), nil,
			map[string]string{"transaction_id": txDisputesUnread, "order_no": "ORD-1", "currency": "USD", "amount": "100.00",
				"refund_amount": "10.00", "refund_reason": "", "refund_status": "0",
				"refund_message": codes.SystemError.String(), "refund_reference": "", "refund_reference_id": ""}},
		{"a capture of a disputed payment", "/v1/capture", "capture_orders", entry(txDisputed),
			workflows.CaptureRequest{Entry: workflows.EntryRef{TransactionID: txDisputed, OrderNo: "ORD-1", Currency: "USD", Amount: 10000}},
			map[string]string{"transaction_id": txDisputed, "order_no": "ORD-1", "currency": "USD", "amount": "100.00",
				"capture_status": "1", "error_message": ""}},
		{"a refund of nothing", "/v1/refund", "refund_orders", entry(txKnown, "refund_amount", "0.00"), nil,
			map[string]string{"transaction_id": txKnown, "order_no": "ORD-1", "currency": "USD", "amount": "100.00",
				"refund_amount": "0.00", "refund_reason": "", "refund_status": "0",
				"refund_message": codes.InvalidAmount.With("refund_amount must be greater than zero").String(), "refund_reference": "", "refund_reference_id": ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := &ops{}
			got := send(t, 0, o, tc.path, tc.array, tc.entry)
			entries := map[string][]map[string]string{"capture_orders": got.CaptureOrders, "refund_orders": got.RefundOrders, "review_orders": got.ReviewOrders}[tc.array]
			if got.ReturnStatus != "1" || len(entries) != 1 || !reflect.DeepEqual(entries[0], tc.want) {
				t.Fatalf("answer = %+v, want one entry %v", got, tc.want)
			}
			var wantSent []any
			if tc.wantSent != nil {
				wantSent = []any{tc.wantSent}
			}
			if !reflect.DeepEqual(o.sent, wantSent) {
				t.Errorf("sent %+v, want %+v", o.sent, wantSent)
			}
		})
	}
}

// TestCompatibleRefundLimit: on an account with a daily limit, compatibly
// signed refunds stop at it; the refused one never reaches the order.
func TestCompatibleRefundLimit(t *testing.T) {
	o := &ops{}
	got := send(t, 1500, o, "/v1/refund", "refund_orders",
		entry(txKnown, "refund_amount", "10.00"), entry(txKnown, "refund_amount", "10.00"))
	messages := []string{got.RefundOrders[0]["refund_message"], got.RefundOrders[1]["refund_message"]}
	if want := []string{"0000:Success", codes.CompatibleRefundLimit.String()}; !reflect.DeepEqual(messages, want) {
		t.Errorf("refund messages %v, want %v", messages, want)
	}
	if len(o.sent) != 1 {
		t.Errorf("%d refunds sent, want 1", len(o.sent))
	}
}

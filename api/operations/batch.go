// Package operations is the batch capability of the merchant API: POST
// /v1/capture, /v1/review, /v1/cancel and /v1/refund, each a list of
// entries worked on their own orders and answered in place.
package operations

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/txid"
)

// batchKind is one of the four batch operations.
type batchKind int

const (
	batchCapture batchKind = iota
	batchReview
	batchCancel
	batchRefund
)

// batchOp describes a batch endpoint.
type batchOp struct {
	kind  batchKind
	array string // the request and response array
	limit int    // the most entries one request may hold
}

var (
	captureOp = batchOp{kind: batchCapture, array: "capture_orders", limit: 50}
	reviewOp  = batchOp{kind: batchReview, array: "review_orders", limit: 100}
	cancelOp  = batchOp{kind: batchCancel, array: "cancel_orders", limit: 50}
	refundOp  = batchOp{kind: batchRefund, array: "refund_orders", limit: 50}
)

// Handler serves the four batches.
type Handler struct {
	// Gate is the merchant API: its authenticated-request step, and the
	// record, clock and logger it holds.
	Gate *api.Server
	// Ops sends each entry to its order's workflow.
	Ops OrderOps
}

// New is the batch capability of gate, sending entries through ops.
func New(gate *api.Server, ops OrderOps) *Handler { return &Handler{Gate: gate, Ops: ops} }

// Routes puts the four batches on the merchant API's /v1 group.
func (h *Handler) Routes(v1 gin.IRoutes) {
	v1.POST("/capture", h.capture)
	v1.POST("/review", h.review)
	v1.POST("/cancel", h.cancel)
	v1.POST("/refund", h.refund)
}

func (h *Handler) capture(c *gin.Context) { h.batch(c, captureOp) }
func (h *Handler) review(c *gin.Context)  { h.batch(c, reviewOp) }
func (h *Handler) cancel(c *gin.Context)  { h.batch(c, cancelOp) }
func (h *Handler) refund(c *gin.Context)  { h.batch(c, refundOp) }

// batchRequest is a batch request; op is the operation whose array it
// carries (the route says which).
type batchRequest struct {
	MerchantID     order.Text   `json:"merchant_id"`
	AccountID      order.Text   `json:"account_id"`
	EncryptionData order.Text   `json:"encryption_data"`
	CaptureOrders  batchEntries `json:"capture_orders"`
	ReviewOrders   batchEntries `json:"review_orders"`
	CancelOrders   batchEntries `json:"cancel_orders"`
	RefundOrders   batchEntries `json:"refund_orders"`

	op batchOp
}

// entries returns the request's array of its operation.
func (r *batchRequest) entries() []batchEntry {
	switch r.op.kind {
	case batchCapture:
		return r.CaptureOrders
	case batchReview:
		return r.ReviewOrders
	case batchCancel:
		return r.CancelOrders
	case batchRefund:
		return r.RefundOrders
	}
	return nil
}

func (r *batchRequest) Trim() {
	api.TrimTexts(&r.MerchantID, &r.AccountID, &r.EncryptionData)
	entries := r.entries()
	for i := range entries {
		entries[i].trim()
	}
}

func (r *batchRequest) Echo() api.Echo {
	return api.Echo{MerchantID: r.MerchantID.String(), AccountID: r.AccountID.String()}
}

func (r *batchRequest) Signature() string { return r.EncryptionData.String() }

// SignedValues are the ids and every entry's transaction_id, in array order:
// the capture, review, cancel and refund recipes are one list (docs/design.md §3).
func (r *batchRequest) SignedValues() []string {
	values := []string{r.MerchantID.String(), r.AccountID.String()}
	for _, e := range r.entries() {
		values = append(values, e.TransactionID.String())
	}
	return values
}

// batch serves one batch endpoint: the request is refused as a whole, or
// every entry is worked on its own order and answered in place.
func (h *Handler) batch(c *gin.Context, op batchOp) {
	req := batchRequest{op: op}
	m, ok := h.Gate.AcceptMerchant(c, api.BatchAnswers(op.array), &req)
	if !ok {
		return
	}
	entries := req.entries()
	// The answer's recipe lists every entry's transaction_id after
	// return_status with no separator; only well-formed ids are signed, so
	// the answer can never read as a request over other ids. A missing id
	// adds nothing to the signed text and is refused entry by entry.
	for i := range entries {
		if id := entries[i].TransactionID.String(); id != "" && !txid.Valid(id) {
			m.Refuse(codes.InvalidField.With(fmt.Sprintf("%s[%d].transaction_id must be 19 digits", op.array, i)))
			return
		}
	}
	if len(entries) == 0 {
		m.Refuse(codes.MissingField.With(op.array))
		return
	}
	if len(entries) > op.limit {
		m.Refuse(codes.TooManyOrders.With(fmt.Sprintf("at most %d %s", op.limit, op.array)))
		return
	}

	merchantID, accountID := req.MerchantID.String(), req.AccountID.String()
	outcomes := h.runBatch(c.Request.Context(), h.orderOpsFor(c, m, op), op, merchantID, accountID, entries)
	resp := api.BatchAnswer{MerchantID: merchantID, AccountID: accountID, ReturnStatus: "1", ReturnMessage: "OK",
		Array: op.array, Entries: make([]any, len(entries)), TransactionIDs: make([]string, len(entries))}
	for i := range entries {
		resp.Entries[i] = op.answer(&entries[i], outcomes[i])
		resp.TransactionIDs[i] = entries[i].TransactionID.String()
	}
	api.RenderBatch(c, http.StatusOK, resp, m.Key(), codes.OK.ID)
}

// MovesMoney: capture, review, cancel and refund all move money.
func (r *batchRequest) MovesMoney() bool { return true }

var _ api.MoneyMover = (*batchRequest)(nil)

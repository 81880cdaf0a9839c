package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/internal/domain/txid"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// OrderStore reads the order and refund records the batch and refund query
// endpoints need.
type OrderStore interface {
	FindOrderByTransaction(ctx context.Context, merchantID, accountID, transactionID string) (*models.Order, error)
	FindRefunds(ctx context.Context, merchantID, accountID string, transactionIDs, refundIDs []string) ([]models.Refund, error)
}

// DBStore is the OrderStore over Postgres.
type DBStore struct{ DB *gorm.DB }

// FindOrderByTransaction loads an account's order by transaction id;
// models.ErrNotFound when there is none.
func (d DBStore) FindOrderByTransaction(ctx context.Context, merchantID, accountID, transactionID string) (*models.Order, error) {
	return models.FindOrderByTransaction(ctx, d.DB, merchantID, accountID, transactionID)
}

// FindRefunds loads an account's refunds by order and by refund reference.
func (d DBStore) FindRefunds(ctx context.Context, merchantID, accountID string, transactionIDs, refundIDs []string) ([]models.Refund, error) {
	return models.FindRefunds(ctx, d.DB, merchantID, accountID, transactionIDs, refundIDs)
}

// batchConcurrency is how many orders of one batch are worked on at once.
const batchConcurrency = 8

// maxRefundReason is the longest refund_reason the record keeps, in characters.
const maxRefundReason = 500

// Entry statuses as the interface carries them (DESIGN §4).
const (
	entryDone    = "1"
	entryRefused = "0"
	entryPending = "-1"
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

func (s *Server) capture(c *gin.Context) { s.batch(c, captureOp) }
func (s *Server) review(c *gin.Context)  { s.batch(c, reviewOp) }
func (s *Server) cancel(c *gin.Context)  { s.batch(c, cancelOp) }
func (s *Server) refund(c *gin.Context)  { s.batch(c, refundOp) }

// batchEntry is one entry of any batch array. Every field is text; numbers
// are taken as their literal text.
type batchEntry struct {
	TransactionID order.Text `json:"transaction_id"`
	OrderNo       order.Text `json:"order_no"`
	Currency      order.Text `json:"currency"`
	Amount        order.Text `json:"amount"`
	CaptureAmount order.Text `json:"capture_amount"` // our extension: partial capture
	ReviewFlag    order.Text `json:"review_flag"`
	RefundAmount  order.Text `json:"refund_amount"`
	RefundReason  order.Text `json:"refund_reason"`
}

func (e *batchEntry) trim() {
	for _, p := range []*order.Text{&e.TransactionID, &e.OrderNo, &e.Currency, &e.Amount, &e.CaptureAmount,
		&e.ReviewFlag, &e.RefundAmount, &e.RefundReason} {
		*p = order.Text(strings.TrimSpace(string(*p)))
	}
}

// batchEntries is a batch array. Besides a JSON array it takes JSON text
// holding the array, which is how a form sends it and how some merchants
// send it inside JSON too.
type batchEntries []batchEntry

func (b *batchEntries) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var text string
		if err := json.Unmarshal(data, &text); err != nil {
			return err
		}
		data = []byte(strings.TrimSpace(text))
		if len(data) == 0 {
			*b = nil
			return nil
		}
	}
	var list []batchEntry
	if err := json.Unmarshal(data, &list); err != nil {
		return err
	}
	*b = list
	return nil
}

type batchRequest struct {
	MerchantID     order.Text   `json:"merchant_id"`
	AccountID      order.Text   `json:"account_id"`
	EncryptionData order.Text   `json:"encryption_data"`
	CaptureOrders  batchEntries `json:"capture_orders"`
	ReviewOrders   batchEntries `json:"review_orders"`
	CancelOrders   batchEntries `json:"cancel_orders"`
	RefundOrders   batchEntries `json:"refund_orders"`
}

// entries returns the request's array of op, trimmed.
func (r *batchRequest) entries(op batchOp) []batchEntry {
	var list []batchEntry
	switch op.kind {
	case batchCapture:
		list = r.CaptureOrders
	case batchReview:
		list = r.ReviewOrders
	case batchCancel:
		list = r.CancelOrders
	case batchRefund:
		list = r.RefundOrders
	}
	for i := range list {
		list[i].trim()
	}
	return list
}

// batchResponse is the answer of a batch endpoint: the request-level result
// and one answer per entry, in the request's order, under the array's name.
type batchResponse struct {
	MerchantID     string
	AccountID      string
	ReturnStatus   string
	ReturnMessage  string
	EncryptionData string
	array          string
	answers        []any
	transactionIDs []string
}

// sign fills encryption_data with the batch-response recipe of DESIGN §3.
// Without a key (account unknown) the answer goes unsigned.
func (r *batchResponse) sign(key string) {
	if key == "" {
		return
	}
	values := append([]string{r.MerchantID, r.AccountID, r.ReturnStatus}, r.transactionIDs...)
	r.EncryptionData = signing.SignUpper(key, values...)
}

// MarshalJSON writes the fields in the interface's order, the array last
// under its operation's name.
func (r batchResponse) MarshalJSON() ([]byte, error) {
	head, err := json.Marshal(struct {
		MerchantID     string `json:"merchant_id"`
		AccountID      string `json:"account_id"`
		ReturnStatus   string `json:"return_status"`
		ReturnMessage  string `json:"return_message"`
		EncryptionData string `json:"encryption_data"`
	}{r.MerchantID, r.AccountID, r.ReturnStatus, r.ReturnMessage, r.EncryptionData})
	if err != nil {
		return nil, err
	}
	answers := r.answers
	if answers == nil {
		answers = []any{}
	}
	list, err := json.Marshal(answers)
	if err != nil {
		return nil, err
	}
	name, err := json.Marshal(r.array)
	if err != nil {
		return nil, err
	}
	out := append(head[:len(head)-1], ',')
	out = append(out, name...)
	out = append(out, ':')
	out = append(out, list...)
	return append(out, '}'), nil
}

// The answers of one entry, per operation (interface, batch order entries).
type captureAnswer struct {
	TransactionID string `json:"transaction_id"`
	OrderNo       string `json:"order_no"`
	Currency      string `json:"currency"`
	Amount        string `json:"amount"`
	CaptureAmount string `json:"capture_amount,omitempty"`
	CaptureStatus string `json:"capture_status"`
	ErrorMessage  string `json:"error_message"`
}

type reviewAnswer struct {
	TransactionID string `json:"transaction_id"`
	OrderNo       string `json:"order_no"`
	Currency      string `json:"currency"`
	Amount        string `json:"amount"`
	ReviewFlag    string `json:"review_flag"`
	ReviewStatus  string `json:"review_status"`
	ErrorMessage  string `json:"error_message"`
}

type cancelAnswer struct {
	TransactionID string `json:"transaction_id"`
	OrderNo       string `json:"order_no"`
	Currency      string `json:"currency"`
	Amount        string `json:"amount"`
	CancelStatus  string `json:"cancel_status"`
	ErrorMessage  string `json:"error_message"`
}

type refundAnswer struct {
	TransactionID     string `json:"transaction_id"`
	OrderNo           string `json:"order_no"`
	Currency          string `json:"currency"`
	Amount            string `json:"amount"`
	RefundAmount      string `json:"refund_amount"`
	RefundReason      string `json:"refund_reason"`
	RefundStatus      string `json:"refund_status"`
	RefundMessage     string `json:"refund_message"`
	RefundReference   string `json:"refund_reference"`
	RefundReferenceID string `json:"refund_reference_id"`
}

// entryOutcome is what happened to one entry.
type entryOutcome struct {
	status            string     // entryDone, entryRefused or entryPending
	code              codes.Code // why, for a refused entry; the result otherwise
	refundReference   string
	refundReferenceID string
}

func refusedEntry(code codes.Code) entryOutcome {
	return entryOutcome{status: entryRefused, code: code}
}

// errorMessage is the entry's error_message: empty unless it was refused.
func (o entryOutcome) errorMessage() string {
	if o.status != entryRefused {
		return ""
	}
	return o.code.String()
}

// answer renders an entry's outcome for op, echoing what the merchant sent.
func (op batchOp) answer(e *batchEntry, o entryOutcome) any {
	switch op.kind {
	case batchReview:
		return reviewAnswer{TransactionID: e.TransactionID.String(), OrderNo: e.OrderNo.String(),
			Currency: e.Currency.String(), Amount: e.Amount.String(), ReviewFlag: e.ReviewFlag.String(),
			ReviewStatus: o.status, ErrorMessage: o.errorMessage()}
	case batchCancel:
		return cancelAnswer{TransactionID: e.TransactionID.String(), OrderNo: e.OrderNo.String(),
			Currency: e.Currency.String(), Amount: e.Amount.String(), CancelStatus: o.status, ErrorMessage: o.errorMessage()}
	case batchRefund:
		return refundAnswer{TransactionID: e.TransactionID.String(), OrderNo: e.OrderNo.String(),
			Currency: e.Currency.String(), Amount: e.Amount.String(), RefundAmount: e.RefundAmount.String(),
			RefundReason: e.RefundReason.String(), RefundStatus: o.status, RefundMessage: o.code.String(),
			RefundReference: o.refundReference, RefundReferenceID: o.refundReferenceID}
	default:
		return captureAnswer{TransactionID: e.TransactionID.String(), OrderNo: e.OrderNo.String(),
			Currency: e.Currency.String(), Amount: e.Amount.String(), CaptureAmount: e.CaptureAmount.String(),
			CaptureStatus: o.status, ErrorMessage: o.errorMessage()}
	}
}

// batch serves one batch endpoint: the request is refused as a whole, or
// every entry is worked on its own order and answered in place.
func (s *Server) batch(c *gin.Context, op batchOp) {
	ctx := c.Request.Context()
	var req batchRequest
	var key string
	answer := func(httpStatus int, resp batchResponse, resultID string) {
		resp.MerchantID, resp.AccountID, resp.array = req.MerchantID.String(), req.AccountID.String(), op.array
		resp.sign(key)
		c.Set(ctxResultCode, resultID)
		c.JSON(httpStatus, resp)
	}
	refuse := func(httpStatus int, code codes.Code) {
		answer(httpStatus, batchResponse{ReturnStatus: "0", ReturnMessage: code.String()}, code.ID)
	}
	body, err := readBody(c.Request.Body)
	if errors.Is(err, errTooLarge) {
		refuse(http.StatusRequestEntityTooLarge, codes.RequestTooLarge)
		return
	}
	if err != nil {
		refuse(http.StatusBadRequest, codes.MalformedRequest.With("body could not be read"))
		return
	}
	if code := decodeBody(body, &req); code != nil {
		req = batchRequest{}
		refuse(http.StatusOK, *code)
		return
	}
	req.MerchantID = order.Text(strings.TrimSpace(req.MerchantID.String()))
	req.AccountID = order.Text(strings.TrimSpace(req.AccountID.String()))
	if missing := firstEmpty(map[string]string{"merchant_id": req.MerchantID.String(), "account_id": req.AccountID.String()}); missing != "" {
		refuse(http.StatusOK, codes.MissingField.With(missing))
		return
	}
	account, err := s.Accounts.Load(ctx, req.MerchantID.String(), req.AccountID.String())
	if errors.Is(err, merchant.ErrUnknownAccount) {
		refuse(http.StatusOK, codes.UnknownMerchant)
		return
	}
	if err != nil {
		s.Logger.Error("load account", "account_id", req.AccountID.String(), "error", err)
		refuse(http.StatusServiceUnavailable, codes.SystemError)
		return
	}
	entries := req.entries(op)
	signed := []string{req.MerchantID.String(), req.AccountID.String()}
	for i := range entries {
		signed = append(signed, entries[i].TransactionID.String())
	}
	// key stays empty, and every answer unsigned, until the request proves it.
	proven, ok := s.authenticate(c, account, strings.TrimSpace(req.EncryptionData.String()), signed...)
	if !ok {
		refuse(http.StatusOK, codes.BadSignature)
		return
	}
	key = proven
	// The answer's recipe lists every entry's transaction_id after
	// return_status with no separator; only well-formed ids are signed, so
	// the answer can never read as a request over other ids. A missing id
	// adds nothing to the signed text and is refused entry by entry.
	for i := range entries {
		if id := entries[i].TransactionID.String(); id != "" && !txid.Valid(id) {
			refuse(http.StatusOK, codes.InvalidField.With(fmt.Sprintf("%s[%d].transaction_id must be 19 digits", op.array, i)))
			return
		}
	}
	if len(entries) == 0 {
		refuse(http.StatusOK, codes.MissingField.With(op.array))
		return
	}
	if len(entries) > op.limit {
		refuse(http.StatusOK, codes.TooManyOrders.With(fmt.Sprintf("at most %d %s", op.limit, op.array)))
		return
	}

	outcomes := s.runBatch(ctx, op, req.MerchantID.String(), req.AccountID.String(), entries)
	resp := batchResponse{ReturnStatus: "1", ReturnMessage: "OK", answers: make([]any, len(entries)),
		transactionIDs: make([]string, len(entries))}
	for i := range entries {
		resp.answers[i] = op.answer(&entries[i], outcomes[i])
		resp.transactionIDs[i] = entries[i].TransactionID.String()
	}
	answer(http.StatusOK, resp, codes.OK.ID)
}

// runBatch works the entries, a few orders at a time, and returns their
// outcomes in the entries' order. Entries naming the same transaction are
// worked one after another in array order, so that, say, two refunds of one
// order are numbered as the merchant listed them.
func (s *Server) runBatch(ctx context.Context, op batchOp, merchantID, accountID string, entries []batchEntry) []entryOutcome {
	out := make([]entryOutcome, len(entries))
	var groups [][]int
	byTransaction := map[string]int{}
	for i := range entries {
		id := entries[i].TransactionID.String()
		if g, ok := byTransaction[id]; ok && id != "" {
			groups[g] = append(groups[g], i)
			continue
		}
		byTransaction[id] = len(groups)
		groups = append(groups, []int{i})
	}
	slots := make(chan struct{}, batchConcurrency)
	var wg sync.WaitGroup
	for _, group := range groups {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			for _, i := range group {
				out[i] = s.runEntrySafely(ctx, op, merchantID, accountID, &entries[i])
			}
		})
	}
	wg.Wait()
	return out
}

// runEntrySafely keeps a panic in one entry from taking the process down:
// the entry is answered as a system error.
func (s *Server) runEntrySafely(ctx context.Context, op batchOp, merchantID, accountID string, e *batchEntry) (o entryOutcome) {
	defer func() {
		if r := recover(); r != nil {
			s.Logger.Error("batch entry panic", "operation", op.array, "transaction_id", e.TransactionID.String(), "panic", r)
			o = refusedEntry(codes.SystemError)
		}
	}()
	return s.runEntry(ctx, op, merchantID, accountID, e)
}

// runEntry checks one entry, finds its order and sends the operation to the
// order's workflow.
func (s *Server) runEntry(ctx context.Context, op batchOp, merchantID, accountID string, e *batchEntry) entryOutcome {
	send, code := op.prepare(e)
	if code != nil {
		return refusedEntry(*code)
	}
	o, err := s.Store.FindOrderByTransaction(ctx, merchantID, accountID, e.TransactionID.String())
	if err != nil {
		return s.entryFailed(op, e, err)
	}
	workflowID := o.WorkflowID
	if workflowID == "" {
		workflowID = workflows.OrderWorkflowID(o.MerchantID, o.AccountID, o.OrderNo)
	}
	res, err := send(ctx, s.Ops, workflowID)
	if err != nil {
		return s.entryFailed(op, e, err)
	}
	return resultOutcome(res)
}

// resultOutcome turns the workflow's answer into the entry's outcome.
func resultOutcome(res workflows.OperationResult) entryOutcome {
	o := entryOutcome{
		status:            strconv.Itoa(res.Status),
		code:              codes.Code{ID: res.ResultCode, Message: res.ResultMessage},
		refundReference:   res.RefundReference,
		refundReferenceID: res.RefundReferenceID,
	}
	if res.ResultCode == "" {
		// Every answer carries a code; keep the message well-formed if not.
		o.code = codes.OK
		if res.Status == workflows.EntryRefused {
			o.code = codes.SystemError
		}
	}
	return o
}

// entryFailed answers an entry whose lookup or operation failed, logging
// what the merchant cannot act on.
func (s *Server) entryFailed(op batchOp, e *batchEntry, err error) entryOutcome {
	o := entryErrorOutcome(err)
	switch {
	case o.code.Is(codes.SystemError):
		s.Logger.Error("batch entry failed", "operation", op.array, "transaction_id", e.TransactionID.String(), "error", err)
	case o.status == entryPending:
		s.Logger.Warn("batch entry outcome not known in time", "operation", op.array, "transaction_id", e.TransactionID.String(), "error", err)
	}
	return o
}

// entryErrorOutcome maps the error of an entry's lookup or operation to the
// entry's outcome.
func entryErrorOutcome(err error) entryOutcome {
	var refused *ErrEntryRefused
	switch {
	case errors.As(err, &refused):
		return refusedEntry(codes.Code{ID: refused.Code, Message: refused.Message})
	case errors.Is(err, models.ErrNotFound):
		return refusedEntry(codes.OrderNotFound)
	case errors.Is(err, ErrOutcomeUnknown):
		// Sent and maybe done: the merchant must not send it again blindly
		// (a refund would be a second refund) but look the order up.
		return entryOutcome{status: entryPending, code: codes.AcquirerTimeout}
	default:
		return refusedEntry(codes.SystemError)
	}
}

// textField is a named field of an entry.
type textField struct {
	name  string
	value order.Text
}

// entrySender sends a checked entry to the workflow of its order.
type entrySender func(ctx context.Context, ops OrderOps, workflowID string) (workflows.OperationResult, error)

// prepare checks an entry's fields for op and returns the operation to send,
// or the code that refuses the entry.
func (op batchOp) prepare(e *batchEntry) (entrySender, *codes.Code) {
	fail := func(c codes.Code) (entrySender, *codes.Code) { return nil, &c }
	required := []textField{
		{"transaction_id", e.TransactionID}, {"order_no", e.OrderNo}, {"currency", e.Currency}, {"amount", e.Amount},
	}
	switch op.kind {
	case batchReview:
		required = append(required, textField{"review_flag", e.ReviewFlag})
	case batchRefund:
		required = append(required, textField{"refund_amount", e.RefundAmount})
	}
	for _, f := range required {
		if f.value == "" {
			return fail(codes.MissingField.With(f.name))
		}
	}
	currency := e.Currency.String()
	if !money.KnownCurrency(currency) {
		return fail(codes.UnsupportedCurrency.With("unknown currency " + currency))
	}
	amount, err := money.Parse(e.Amount.String(), currency)
	if err != nil {
		return fail(codes.InvalidAmount.With("amount"))
	}
	ref := workflows.EntryRef{
		TransactionID: e.TransactionID.String(),
		OrderNo:       e.OrderNo.String(),
		Currency:      currency,
		Amount:        amount.Minor,
	}
	switch op.kind {
	case batchReview:
		var approve bool
		switch e.ReviewFlag {
		case "1":
			approve = true
		case "0":
		default:
			return fail(codes.InvalidField.With("review_flag must be 1 (approve) or 0 (reject)"))
		}
		req := workflows.ReviewRequest{Entry: ref, Approve: approve}
		return func(ctx context.Context, ops OrderOps, id string) (workflows.OperationResult, error) {
			return ops.Review(ctx, id, req)
		}, nil
	case batchCancel:
		req := workflows.CancelRequest{Entry: ref}
		return func(ctx context.Context, ops OrderOps, id string) (workflows.OperationResult, error) {
			return ops.Cancel(ctx, id, req)
		}, nil
	case batchRefund:
		refund, code := positiveAmount("refund_amount", e.RefundAmount, currency)
		if code != nil {
			return nil, code
		}
		if utf8.RuneCountInString(e.RefundReason.String()) > maxRefundReason {
			return fail(codes.InvalidField.With(fmt.Sprintf("refund_reason must be at most %d characters", maxRefundReason)))
		}
		req := workflows.RefundRequest{Entry: ref, RefundAmount: refund, Reason: e.RefundReason.String()}
		return func(ctx context.Context, ops OrderOps, id string) (workflows.OperationResult, error) {
			return ops.Refund(ctx, id, req)
		}, nil
	default:
		req := workflows.CaptureRequest{Entry: ref}
		if e.CaptureAmount != "" {
			partial, code := positiveAmount("capture_amount", e.CaptureAmount, currency)
			if code != nil {
				return nil, code
			}
			req.CaptureAmount = partial
		}
		return func(ctx context.Context, ops OrderOps, id string) (workflows.OperationResult, error) {
			return ops.Capture(ctx, id, req)
		}, nil
	}
}

// positiveAmount parses an amount field that must be greater than zero.
func positiveAmount(name string, value order.Text, currency string) (int64, *codes.Code) {
	a, err := money.Parse(value.String(), currency)
	if err != nil {
		c := codes.InvalidAmount.With(name)
		return 0, &c
	}
	if a.Minor <= 0 {
		c := codes.InvalidAmount.With(name + " must be greater than zero")
		return 0, &c
	}
	return a.Minor, nil
}

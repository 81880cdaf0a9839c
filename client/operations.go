package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"iter"
	"strconv"
)

// The operations' paths.
const (
	PathAuthorise          = "/v1/authorise"
	PathCheckout           = "/v1/checkout"
	PathCapture            = "/v1/capture"
	PathReview             = "/v1/review"
	PathCancel             = "/v1/cancel"
	PathRefund             = "/v1/refund"
	PathRetrievalTrans     = "/v1/retrievalTrans"
	PathRetrievalRefund    = "/v1/retrievalRefund"
	PathPayout             = "/v1/payout"
	PathPayoutQuery        = "/v1/payout/query"
	PathCancelSubscription = "/v1/cancelsubscription"
	PathSubscription       = "/v1/subscription"
	PathTokenDelete        = "/v1/token/delete"
	PathDispute            = "/v1/dispute"
	PathOptimise           = "/v1/optimise"
)

// Authorise pays with a card, a stored card (TokenID) or an alternative
// payment method (PaymentMethod and ReturnURL). OrderStatus says what
// became of it; IssuerURL, when OrderStatus is OrderPending, is where the
// shopper goes next (3-D Secure or the method's page).
func (c *Client) Authorise(ctx context.Context, p Payment, opts ...CallOption) (*PaymentResult, error) {
	recipe := []string{p.OrderNo, p.Currency, p.Amount, p.FirstName, p.LastName, p.Card,
		p.ExpirationYear, p.ExpirationMonth, p.SecurityCode, p.ShopperEmail}
	if p.isAPM() {
		recipe = []string{p.OrderNo, p.Currency, p.Amount, p.PaymentMethod, p.ReturnURL}
	}
	out := new(PaymentResult)
	if err := c.post(ctx, PathAuthorise, p, recipe, out, opts); err != nil {
		return nil, err
	}
	return out, nil
}

// Checkout opens a hosted payment: the answer is a page for the shopper's
// browser that takes them to the payment page; ReturnURL is where they
// come back to.
func (c *Client) Checkout(ctx context.Context, o Order, opts ...CallOption) (*HostedPage, error) {
	out := new(HostedPage)
	if err := c.post(ctx, PathCheckout, o, []string{o.OrderNo, o.Currency, o.Amount, o.ReturnURL}, out, opts); err != nil {
		return nil, err
	}
	return out, nil
}

// Capture captures authorised orders (at most 50).
func (c *Client) Capture(ctx context.Context, entries []CaptureEntry, opts ...CallOption) (*CaptureAnswer, error) {
	return postBatch(ctx, c, PathCapture, "capture_orders", entries, new(CaptureAnswer), opts)
}

// Review approves or rejects orders held for review (at most 100).
func (c *Client) Review(ctx context.Context, entries []ReviewEntry, opts ...CallOption) (*ReviewAnswer, error) {
	return postBatch(ctx, c, PathReview, "review_orders", entries, new(ReviewAnswer), opts)
}

// Cancel cancels authorised orders before capture (at most 50).
func (c *Client) Cancel(ctx context.Context, entries []CancelEntry, opts ...CallOption) (*CancelAnswer, error) {
	return postBatch(ctx, c, PathCancel, "cancel_orders", entries, new(CancelAnswer), opts)
}

// Refund refunds paid orders, in full or in part (at most 50 entries).
func (c *Client) Refund(ctx context.Context, entries []RefundEntry, opts ...CallOption) (*RefundAnswer, error) {
	return postBatch(ctx, c, PathRefund, "refund_orders", entries, new(RefundAnswer), opts)
}

// batchEntry is an entry of a batch request or answer: the batch recipes
// sign each entry's transaction id, in order.
type batchEntry interface{ transaction() string }

func (e CaptureEntry) transaction() string  { return e.TransactionID }
func (e ReviewEntry) transaction() string   { return e.TransactionID }
func (e CancelEntry) transaction() string   { return e.TransactionID }
func (e RefundEntry) transaction() string   { return e.TransactionID }
func (e CaptureResult) transaction() string { return e.TransactionID }
func (e ReviewResult) transaction() string  { return e.TransactionID }
func (e CancelResult) transaction() string  { return e.TransactionID }
func (e RefundResult) transaction() string  { return e.TransactionID }

// transactions are the entries' transaction ids, in order.
func transactions[E batchEntry](entries []E) []string {
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.transaction()
	}
	return ids
}

// postBatch sends entries under the batch's array name, signed with the
// batch recipe, and decodes the answer into out.
func postBatch[E batchEntry, A answer](ctx context.Context, c *Client, path, array string, entries []E, out A, opts []CallOption) (A, error) {
	if err := c.post(ctx, path, map[string][]E{array: entries}, transactions(entries), out, opts); err != nil {
		var none A
		return none, err
	}
	return out, nil
}

// QueryOrders answers one page of orders; Orders reads every page.
func (c *Client) QueryOrders(ctx context.Context, q OrdersQuery, opts ...CallOption) (*OrdersPage, error) {
	out := new(OrdersPage)
	if err := c.post(ctx, PathRetrievalTrans, q, nil, out, append(opts, readOnly)); err != nil {
		return nil, err
	}
	return out, nil
}

// ErrCursorLoop is a page whose next cursor is the one it was read from.
var ErrCursorLoop = errors.New("paygate: the order query's cursor does not move")

// Orders reads the orders q selects, page after page, following
// next_cursor until there is none or a page is empty: with no selection
// the answer is the change feed, whose cursor stays put once it has caught
// up (QueryOrders gives that cursor, to read the next changes later). It
// stops at the first error, which it yields.
func (c *Client) Orders(ctx context.Context, q OrdersQuery, opts ...CallOption) iter.Seq2[QueriedOrder, error] {
	return func(yield func(QueriedOrder, error) bool) {
		for {
			page, err := c.QueryOrders(ctx, q, opts...)
			if err != nil {
				yield(QueriedOrder{}, err)
				return
			}
			for _, o := range page.Orders {
				if !yield(o, nil) {
					return
				}
			}
			if page.NextCursor == "" || len(page.Orders) == 0 {
				return
			}
			if page.NextCursor == q.Cursor {
				yield(QueriedOrder{}, ErrCursorLoop)
				return
			}
			q.Cursor = page.NextCursor
		}
	}
}

// QueryRefunds answers refunds and their statuses.
func (c *Client) QueryRefunds(ctx context.Context, q RefundsQuery, opts ...CallOption) (*RefundsAnswer, error) {
	out := new(RefundsAnswer)
	if err := c.post(ctx, PathRetrievalRefund, q, nil, out, append(opts, readOnly)); err != nil {
		return nil, err
	}
	return out, nil
}

// Payout sends money to a beneficiary. The answer is the payout as it
// stands; its outcome follows in a payout notification (or PayoutQuery).
func (c *Client) Payout(ctx context.Context, p Payout, opts ...CallOption) (*PayoutResult, error) {
	out := new(PayoutResult)
	if err := c.post(ctx, PathPayout, p, []string{p.RequestID, p.PaymentCurrency, p.PaymentAmount}, out, opts); err != nil {
		return nil, err
	}
	return out, nil
}

// PayoutQuery answers the payout named by requestID as it stands.
func (c *Client) PayoutQuery(ctx context.Context, requestID string, opts ...CallOption) (*PayoutResult, error) {
	out := new(PayoutResult)
	body := struct {
		RequestID string `json:"request_id"`
	}{requestID}
	if err := c.post(ctx, PathPayoutQuery, body, []string{requestID}, out, append(opts, readOnly)); err != nil {
		return nil, err
	}
	return out, nil
}

// CancelSubscription ends a subscription: no charge is made after it.
func (c *Client) CancelSubscription(ctx context.Context, recurringID string, opts ...CallOption) (*SubscriptionAnswer, error) {
	out := new(SubscriptionAnswer)
	body := struct {
		RecurringID string `json:"recurring_id"`
	}{recurringID}
	if err := c.post(ctx, PathCancelSubscription, body, []string{recurringID}, out, opts); err != nil {
		return nil, err
	}
	return out, nil
}

// Subscription queries, pauses, resumes or updates a subscription.
func (c *Client) Subscription(ctx context.Context, s SubscriptionChange, opts ...CallOption) (*SubscriptionAnswer, error) {
	out := new(SubscriptionAnswer)
	recipe := []string{s.RecurringID, s.Action, s.ContractAmount, s.RecurringDeductionTime}
	if err := c.post(ctx, PathSubscription, s, recipe, out, opts); err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteToken deletes a stored card: it can pay no more.
func (c *Client) DeleteToken(ctx context.Context, tokenID string, opts ...CallOption) (*TokenAnswer, error) {
	out := new(TokenAnswer)
	body := struct {
		TokenID string `json:"token_id"`
	}{tokenID}
	if err := c.post(ctx, PathTokenDelete, body, []string{tokenID}, out, opts); err != nil {
		return nil, err
	}
	return out, nil
}

// Dispute lists disputes or acts on one. Evidence is sent as given and
// EvidenceSHA256 is filled with its digest.
func (c *Client) Dispute(ctx context.Context, d DisputeRequest, opts ...CallOption) (*DisputeAnswer, error) {
	body := struct {
		DisputeID      string          `json:"dispute_id,omitempty"`
		Action         string          `json:"action,omitempty"`
		Evidence       json.RawMessage `json:"evidence,omitempty"`
		EvidenceSHA256 string          `json:"evidence_sha256,omitempty"`
	}{DisputeID: d.DisputeID, Action: d.Action, EvidenceSHA256: d.EvidenceSHA256}
	if len(d.Evidence) > 0 {
		raw, err := json.Marshal(d.Evidence)
		if err != nil {
			return nil, fmt.Errorf("paygate: encode evidence: %w", err)
		}
		sum := sha256.Sum256(raw)
		body.Evidence, body.EvidenceSHA256 = raw, hex.EncodeToString(sum[:])
	}
	out := new(DisputeAnswer)
	if d.Action == "list" || d.Action == "query" {
		opts = append(opts, readOnly)
	}
	if err := c.post(ctx, PathDispute, body, []string{body.DisputeID, body.Action, body.EvidenceSHA256}, out, opts); err != nil {
		return nil, err
	}
	return out, nil
}

// Optimise ranks payment methods and connectors for a payment like o.
func (c *Client) Optimise(ctx context.Context, o OptimiseRequest, opts ...CallOption) (*OptimiseAnswer, error) {
	out := new(OptimiseAnswer)
	if err := c.post(ctx, PathOptimise, o, []string{o.RequestID, o.Currency, o.Amount, o.ShopperEmail}, out, append(opts, readOnly)); err != nil {
		return nil, err
	}
	return out, nil
}

// readOnly marks a query's call: it sends no Idempotency-Key, whatever
// the caller's options say (a page of Orders is another body each time).
func readOnly(c *call) { c.readOnly = true }

// The answers' results and signature recipes (docs/design.md §3).

func (r *PaymentResult) result() string { return r.ResultInfo }

// A payment result is always signed for a caller who proved the key, its
// refusals too.
func (r *PaymentResult) signed() (string, []string, bool) {
	return r.EncryptionData, []string{r.MerchantID, r.AccountID, r.TransactionID, r.OrderNo, r.Currency,
		r.Amount, r.OrderStatus, r.ResultInfo}, true
}
func (r *PaymentResult) setReplayed(v bool) { r.Replayed = v }

func (*HostedPage) result() string                   { return "" }
func (*HostedPage) signed() (string, []string, bool) { return "", nil, false }

func (h *BatchHead) result() string {
	if h.ReturnStatus == "1" {
		return ""
	}
	return h.ReturnMessage
}

// A batch taken is signed; a refused one is an *Error before this matters.
func (h *BatchHead) signed(ids []string) (string, []string, bool) {
	return h.EncryptionData, append([]string{h.MerchantID, h.AccountID, h.ReturnStatus}, ids...), h.ReturnStatus == "1"
}
func (h *BatchHead) setReplayed(v bool) { h.Replayed = v }

func (a *CaptureAnswer) signed() (string, []string, bool) {
	return a.BatchHead.signed(transactions(a.Orders))
}

func (a *ReviewAnswer) signed() (string, []string, bool) {
	return a.BatchHead.signed(transactions(a.Orders))
}

func (a *CancelAnswer) signed() (string, []string, bool) {
	return a.BatchHead.signed(transactions(a.Orders))
}

func (a *RefundAnswer) signed() (string, []string, bool) {
	return a.BatchHead.signed(transactions(a.Orders))
}

func (p *OrdersPage) result() string {
	if p.ReturnStatus == "1" {
		return ""
	}
	return p.ReturnMessage
}
func (*OrdersPage) signed() (string, []string, bool) { return "", nil, false }

func (a *RefundsAnswer) result() string {
	if a.ReturnStatus == "1" {
		return ""
	}
	return a.ReturnMessage
}
func (*RefundsAnswer) signed() (string, []string, bool) { return "", nil, false }

func (p *PayoutResult) result() string { return p.ResultInfo }

// A payout's answer is signed; its refusals (result_info) are not.
func (p *PayoutResult) signed() (string, []string, bool) {
	return p.EncryptionData, []string{p.MerchantID, p.AccountID, p.RequestID, p.PaymentCurrency, p.PaymentAmount}, p.ResultInfo == ""
}
func (p *PayoutResult) setReplayed(v bool) { p.Replayed = v }

// succeeded reports whether a result_info is the success code.
func succeeded(resultInfo string) bool { code, _ := splitResult(resultInfo); return code == "0000" }

func (a *SubscriptionAnswer) result() string { return a.ResultInfo }
func (a *SubscriptionAnswer) signed() (string, []string, bool) {
	return a.EncryptionData, []string{a.MerchantID, a.AccountID, a.RecurringID, a.RecurringStatus, a.ResultInfo}, succeeded(a.ResultInfo)
}

func (a *TokenAnswer) result() string { return a.ResultInfo }
func (a *TokenAnswer) signed() (string, []string, bool) {
	return a.EncryptionData, []string{a.MerchantID, a.AccountID, a.TokenID, a.ResultInfo}, succeeded(a.ResultInfo)
}

func (a *DisputeAnswer) result() string { return a.ResultInfo }
func (a *DisputeAnswer) signed() (string, []string, bool) {
	values := []string{a.MerchantID, a.AccountID}
	for _, d := range a.Disputes {
		values = append(values, d.DisputeID, d.Status)
	}
	return a.EncryptionData, append(values, a.ResultInfo), succeeded(a.ResultInfo)
}

func (a *OptimiseAnswer) result() string { return a.ResultInfo }
func (a *OptimiseAnswer) signed() (string, []string, bool) {
	values := []string{a.MerchantID, a.AccountID, a.RequestID, a.Currency, a.Amount, a.ResultInfo}
	for _, m := range a.PaymentMethods {
		values = append(values, m.PaymentMethod, m.Brand, m.SuccessRate, strconv.Itoa(m.SampleSize))
	}
	for _, k := range a.Connectors {
		values = append(values, k.Connector, k.SuccessRate, strconv.Itoa(k.SampleSize))
	}
	return a.EncryptionData, values, succeeded(a.ResultInfo)
}

func xmlUnmarshal(raw []byte, out any) error { return xml.Unmarshal(raw, out) }

package api

import (
	"cmp"
	"encoding/json"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api/apidoc"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/order"
)

// Documented is a capability that describes its routes for the API
// reference (/openapi.json). Every route of the router is described:
// TestEveryRouteIsDocumented.
type Documented interface {
	Operations() []apidoc.Operation
}

// ResultCodesURL is where the result codes are explained, row by row.
const ResultCodesURL = "https://github.com/paygate/paygate/blob/main/docs/result-codes.md"

// DocInfo heads the API's OpenAPI document.
var DocInfo = apidoc.Info{
	Title:   "Paygate merchant API",
	Version: "1",
	Description: "Card, hosted, 3-D Secure and alternative payments, their captures, refunds and reviews, payouts, " +
		"subscriptions, stored cards, disputes and queries. Requests are JSON or form-encoded (the gateway reads a body " +
		"beginning with { as JSON); each operation answers in one format. Every answer carries a result code " +
		"(result_info, return_message) whose row in docs/result-codes.md says what it means and what to do.",
	ResultCodesURL: ResultCodesURL,
}

// textSchema is order.Text's: a string that may be sent as a bare number
// or boolean, read as its literal text.
var textSchema = apidoc.Schema{"type": []any{"string", "number", "boolean", "null"}}

// DocSchemas read the API's types, with the rules of its common fields.
var DocSchemas = apidoc.Schemas{
	Types: map[reflect.Type]apidoc.Schema{reflect.TypeFor[order.Text](): textSchema, reflect.TypeFor[json.RawMessage](): {}},
	Rules: map[string]apidoc.Rule{
		"merchant_id":      {Description: "The merchant's id.", Example: "10086"},
		"account_id":       {Description: "The merchant's account (a shop) the request is for.", Example: "10086001"},
		"order_no":         {Description: "The merchant's order number: 1 to 64 printable ASCII characters, no spaces, unique in the account.", Pattern: `^[!-~]{0,64}$`},
		"currency":         {Description: "ISO 4217 code, upper case, one the account accepts.", Pattern: `^([A-Z]{3})?$`, Example: "USD"},
		"amount":           {Description: "A decimal amount in the currency's major unit, with no more decimals than the currency has (12.34 USD, 1234 JPY).", Pattern: `^([0-9]+(\.[0-9]{1,3})?)?$`, Example: "12.34"},
		"encryption_data":  {Description: "The compatible signature: hex SHA-256 of the operation's signed fields in order, without separators, then the sign key. Not needed with a Paygate-Signature header. Answers carry one (upper-case hex) only when the request proved the key."},
		"transaction_id":   {Description: "The gateway's id of an order: 19 digits."},
		"card":             {Description: "The card number: 12 to 19 digits passing the Luhn check. Never echoed, logged or stored in clear."},
		"expiration_month": {Description: "1 to 12 (01 to 12)."},
		"expiration_year":  {Description: "Two or four digits; not expired and at most 20 years ahead."},
		"security_code":    {Description: "The CVV: 3 digits (4 for American Express). Kept sealed only until the authorisation ends."},
		"shopper_email":    {Description: "The shopper's email address (RFC 5322), at most 200 characters.", Format: "email"},
		"shopper_ip":       {Description: "The shopper's IPv4 or IPv6 address."},
		"billing_country":  {Description: "ISO 3166-1 alpha-2, upper case.", Pattern: `^([A-Z]{2})?$`},
		"delivery_country": {Description: "ISO 3166-1 alpha-2, upper case.", Pattern: `^([A-Z]{2})?$`},
		"notify_url":       {Description: "Where the gateway posts the order's notifications: an absolute http or https URL, at most 1024 characters.", Format: "uri"},
		"return_url":       {Description: "Where the shopper is sent back: an absolute http or https URL.", Format: "uri"},
		"cancel_url":       {Description: "Where a shopper who cancels is sent: an absolute http or https URL.", Format: "uri"},
		"token_id":         {Description: "A stored card: tk_ and 40 hex digits.", Pattern: `^(tk_[0-9a-f]{40})?$`},
		"recurring_id":     {Description: "A subscription: R and 19 digits.", Pattern: `^(R[0-9]{19})?$`},
		"result_info":      {Description: "The result code and its message, ID:message (see docs/result-codes.md)."},
		"return_message":   {Description: "The result code and its message, ID:message (see docs/result-codes.md)."},
		"return_status":    {Description: "1 when the request was carried out, 0 when it was refused.", Enum: []string{"0", "1"}},
		"order_status":     {Description: "1 paid or authorised, 0 failed, 2 pending (3-D Secure, an APM, a review)."},
		"payment_status":   {Description: "The order's payment status (docs/design.md §4)."},
		"request_id":       {Description: "The merchant's id of a payout, unique in the account."},
	},
}

// Answers are the answers of a merchant operation in format f: ok under
// 200, and the refusals of a body that could not be read (400), one too
// large (413) and a system error (503, or 200 in the XML answer).
func (f AnswerFormat) Answers(ok apidoc.Answer) map[int]apidoc.Answer {
	out := map[int]apidoc.Answer{http.StatusOK: ok}
	refusal := apidoc.Answer{Media: f.docMedia, Body: f.docRefusal}
	if f.docRefusal == nil {
		refusal = ok
	}
	for _, st := range []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable} {
		if st == http.StatusServiceUnavailable && f.systemErrorStatus == http.StatusOK {
			continue
		}
		r := refusal
		r.Description = map[int]string{
			http.StatusBadRequest:            "The body could not be read (I0010).",
			http.StatusRequestEntityTooLarge: "The body is over 1 MiB (I0011).",
			http.StatusServiceUnavailable:    "A system error (S0001): send the same request again.",
		}[st]
		r.Example = nil
		out[st] = r
	}
	return out
}

// MerchantHeaders are the request headers every merchant operation reads.
var MerchantHeaders = []apidoc.Parameter{
	{Name: "Paygate-Signature", Description: "The strong signature, t=<unix seconds>,n=<nonce>,v1=<hex HMAC-SHA256> (docs/design.md §3); encryption_data is not read when it is sent."},
	{Name: "Idempotency-Key", Description: "1 to 255 printable ASCII characters: the same key with the same body is answered with the first answer (Idempotent-Replayed: true); with another body, I0020."},
}

// ownOperations are the routes the server itself registers.
func (s *Server) ownOperations() []apidoc.Operation {
	text := apidoc.Answer{Media: apidoc.Text, Schema: apidoc.Schema{"type": "string"}}
	ok := text
	ok.Description, ok.Example = "The API answers.", "ok"
	return []apidoc.Operation{
		{Method: http.MethodGet, Path: "/healthz", Tag: "Operations", Summary: "Health check",
			Answers: map[int]apidoc.Answer{http.StatusOK: ok}},
		{Method: http.MethodGet, Path: "/openapi.json", Tag: "Operations", Summary: "This document",
			Answers: map[int]apidoc.Answer{http.StatusOK: {Media: apidoc.JSON, Schema: apidoc.Schema{"type": "object"}, Description: "The OpenAPI 3.1 description of every route."}}},
		{Method: http.MethodGet, Path: "/reference", Tag: "Operations", Summary: "The API reference, as a page",
			Answers: map[int]apidoc.Answer{http.StatusOK: {Media: apidoc.HTML, Schema: apidoc.Schema{"type": "string"}, Description: "This document rendered by the API itself, without scripts."}}},
		{Method: http.MethodPost, Path: "/codec/*call", Tag: "Operations", Summary: "Temporal's remote codec (encode or decode)",
			Description: "The Temporal UI and CLI decode the gateway's encrypted payloads here: call is encode or decode, the body Temporal's protojson payloads. An ops user signed in to the console, or the codec token as a bearer token.",
			RawRequest:  &apidoc.Content{Media: apidoc.JSON, Schema: apidoc.Schema{"type": "object", "properties": apidoc.Schema{"payloads": apidoc.Schema{"type": "array"}}}},
			Example:     map[string]any{"payloads": []any{map[string]any{"metadata": map[string]any{"encoding": "YmluYXJ5L2VuY3J5cHRlZA=="}, "data": "<base64>"}}},
			Answers: map[int]apidoc.Answer{
				http.StatusOK:           {Media: apidoc.JSON, Schema: apidoc.Schema{"type": "object", "properties": apidoc.Schema{"payloads": apidoc.Schema{"type": "array"}}}},
				http.StatusBadRequest:   text,
				http.StatusUnauthorized: text,
				http.StatusNotFound:     text,
			}},
		{Method: http.MethodOptions, Path: "/codec/*call", Tag: "Operations", Summary: "The codec's CORS preflight",
			Answers: map[int]apidoc.Answer{http.StatusNoContent: {Description: "The UI's origin may call the codec."}, http.StatusForbidden: text}},
	}
}

// Operations are every route's description: the server's own, each
// capability's and the admin API's.
func (s *Server) Operations() []apidoc.Operation {
	ops := s.ownOperations()
	for _, c := range s.Capabilities {
		if d, ok := c.(Documented); ok {
			ops = append(ops, d.Operations()...)
		}
	}
	if s.Admin != nil {
		ops = append(ops, s.Admin.Operations()...)
	}
	slices.SortStableFunc(ops, func(a, b apidoc.Operation) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Method, b.Method))
	})
	return ops
}

// apiDocument is the OpenAPI document as JSON, made once.
type apiDocument struct {
	once sync.Once
	json []byte
	page []byte
	err  error
}

func (s *Server) document() ([]byte, []byte, error) {
	d := &s.doc
	d.once.Do(func() {
		ops := s.Operations()
		doc := apidoc.Document(DocInfo, DocSchemas, ops, Notifications())
		if d.json, d.err = json.MarshalIndent(doc, "", "  "); d.err != nil {
			return
		}
		d.page, d.err = apidoc.Page(DocInfo, DocSchemas, ops)
	})
	return d.json, d.page, d.err
}

func (s *Server) serveOpenAPI(c *gin.Context) {
	doc, _, err := s.document()
	if err != nil {
		s.Logger.Error("openapi document", "error", err)
		c.String(http.StatusServiceUnavailable, "the API description could not be made")
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", doc)
}

func (s *Server) serveReference(c *gin.Context) {
	_, page, err := s.document()
	if err != nil {
		s.Logger.Error("openapi reference page", "error", err)
		c.String(http.StatusServiceUnavailable, "the API reference could not be made")
		return
	}
	c.Header("Content-Security-Policy", apidoc.PagePolicy)
	c.Header("Cache-Control", "no-cache")
	c.Data(http.StatusOK, "text/html; charset=utf-8", page)
}

// CodeIDs are the ids of cs, for an operation's Codes.
func CodeIDs(cs ...codes.Code) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

// RequestCodes are the refusals every signed merchant request may meet.
var RequestCodes = []codes.Code{codes.MissingField, codes.UnknownMerchant, codes.InvalidField, codes.MalformedRequest,
	codes.RequestTooLarge, codes.BadSignature, codes.IdempotencyConflict, codes.RequestInProgress, codes.SystemError}

// notifyHeaders are the signature headers of every notification
// (Standard Webhooks; `paygate verify-notification` checks them).
var notifyHeaders = []apidoc.Parameter{
	{Name: notify.HeaderID, Required: true, Description: "The notification's id, its notify_id: the same on every attempt, so a receiver processes it once."},
	{Name: notify.HeaderTimestamp, Required: true, Description: "Unix seconds when this attempt was signed; refuse one more than 5 minutes off."},
	{Name: notify.HeaderSignature, Required: true, Description: "v1,<base64 HMAC-SHA256 with the account's sign key of webhook-id, '.', webhook-timestamp, '.', the body>."},
}

// Notifications are the webhooks the gateway posts to a merchant's
// notify_url (a settlement's to the account's settlement_notify_url), form
// encoded, until one is acknowledged with a 2xx.
func Notifications() []apidoc.Webhook {
	order := map[string]string{
		"notify_type":    "What happened: payment, review, cancel, expiry, capture or refund.",
		"notify_id":      "The notification's id (also webhook-id).",
		"merchant_id":    "The merchant.",
		"account_id":     "The account.",
		"transaction_id": "The order's transaction id.",
		"order_no":       "The merchant's order number.",
		"currency":       "The order's currency.",
		"amount":         "The order's amount.",
		"order_status":   "1 paid or authorised, 0 failed, 2 pending.",
		"result_info":    "The result code and its message.",
		"payment_status": "The order's payment status (docs/design.md §4).",
		"card":           "The masked card, when there is one.",
		"encryption_data": "Signed over merchant_id, account_id, transaction_id, order_no, currency, amount, order_status, " +
			"result_info (upper-case hex), as the payment's answer is.",
	}
	with := func(base map[string]string, more map[string]string) map[string]string {
		out := maps.Clone(base)
		maps.Copy(out, more)
		return out
	}
	return []apidoc.Webhook{
		{Name: "payment", Summary: "An order's payment, review, cancel or expiry moved it", Fields: order, Headers: notifyHeaders,
			Description: "notify_type payment (the outcome of a payment that was pending: 3-D Secure, an APM, a hosted page), review, cancel or expiry. One order's notifications arrive in order."},
		{Name: "capture", Summary: "An order was captured", Headers: notifyHeaders,
			Fields: with(order, map[string]string{"capture_amount": "The amount captured."})},
		{Name: "refund", Summary: "A refund moved", Headers: notifyHeaders,
			Fields: with(order, map[string]string{
				"refund_amount": "The refund's amount.", "refund_reference_id": "The gateway's id of the refund.",
				"refund_reference": "The acquirer's reference of the refund.", "refund_status": "1 refunded, 0 refused.",
				"refund_message": "The refund's result code and message.", "refund_reason": "The reason the merchant gave.",
			})},
		{Name: "payout", Summary: "A payout moved", Headers: notifyHeaders, Fields: map[string]string{
			"notify_type": "payout", "notify_id": "The notification's id (also webhook-id).",
			"merchant_id": "The merchant.", "account_id": "The deposit account.", "request_id": "The merchant's id of the payout.",
			"payment_currency": "What the beneficiary is paid in.", "payment_amount": "What the beneficiary is paid.",
			"transaction_id": "The gateway's id of the payout.", "short_reference_id": "The rail's short reference.",
			"status": "pending, processing, completed, failed or cancelled.", "failure_type": "Why it failed, when it did.",
			"failure_reason": "The rail's words, when it failed.", "amount_beneficiary_receives": "What the beneficiary receives.",
			"amount_payer_pays": "What the deposit account pays, fee included.", "fee_amount": "The fee, once priced.",
			"fee_currency":    "The fee's currency.",
			"encryption_data": "Signed over merchant_id, account_id, request_id, payment_currency, payment_amount, transaction_id, status, failure_type (upper-case hex).",
		}},
		{Name: "subscription", Summary: "A subscription changed", Headers: notifyHeaders, Fields: map[string]string{
			"notify_type": "subscription", "notify_id": "The notification's id (also webhook-id).",
			"merchant_id": "The merchant.", "account_id": "The account.", "recurring_id": "The subscription.",
			"contract_name": "The contract's name.", "change": "What changed: pause, resume, update, ...",
			"recurring_status": "The subscription's status.", "charges": "Successful charges so far, the first payment included.",
			"contract_amount": "What the next charge charges.", "currency": "Its currency.",
			"recurring_deduction_time": "The next charge (UTC, 2006-01-02 15:04:05), empty when none is due.",
		}},
		{Name: "dispute", Summary: "A dispute moved, or its evidence is due soon", Headers: notifyHeaders, Fields: map[string]string{
			"notify_type": "dispute", "notify_id": "The notification's id (also webhook-id).", "event": "The dispute's new status, or reminder.",
			"merchant_id": "The merchant.", "account_id": "The account.", "transaction_id": "The disputed order.",
			"order_no": "Its order number.", "dispute_id": "The dispute.", "stage": "The dispute's stage.", "status": "Its status.",
			"reason": "The acquirer's reason.", "currency": "The disputed amount's currency.", "amount": "The disputed amount.",
			"fee": "The acquirer's dispute fee.", "evidence_due_by": "When the evidence is due (UTC).",
		}},
		{Name: "settlement", Summary: "An acquirer's settlement of a day was reconciled", Headers: notifyHeaders, Fields: map[string]string{
			"notify_type": "settlement", "notify_id": "The notification's id (also webhook-id).",
			"merchant_id": "The merchant.", "account_id": "The account.", "connector": "The acquirer.",
			"settlement_date": "The day settled (YYYY-MM-DD).", "currency": "The settlement's currency.",
			"captures": "Captures settled.", "captured_amount": "Their amount.", "refunds": "Refunds settled.",
			"refunded_amount": "Their amount.", "chargebacks": "Chargebacks settled.", "fees": "The fees the account was charged: its captures' under its pricing, and its chargebacks'.",
			"net_amount": "What the day came to for the account: captures less refunds, chargebacks and fees.",
		}},
	}
}

// NotificationWebhook is the webhook a notification of notifyType is, by
// its notify_type (false when none documents it).
func NotificationWebhook(notifyType string) (apidoc.Webhook, bool) {
	for _, w := range Notifications() {
		if w.Name == notifyType {
			return w, true
		}
		if w.Name == "payment" && slices.Contains([]string{"review", "cancel", "expiry"}, notifyType) {
			return w, true
		}
	}
	return apidoc.Webhook{}, false
}

// helpLinks gives every answer whose result code is not a success a Link
// header to that code's row in docs/result-codes.md (rel="help"), where
// the code is explained and what to do about it: the answer's own format
// stays as the interface has it.
func helpLinks(c *gin.Context) {
	c.Writer = &pageWriter{ResponseWriter: c.Writer, finish: func(int) {
		if code := c.GetString(ContextResultCode); code != "" && code != codes.OK.ID {
			c.Writer.Header().Set("Link", HelpLink(code))
		}
	}}
	c.Next()
}

// HelpLink is the Link header value of a result code's row.
func HelpLink(code string) string {
	return "<" + ResultCodesURL + "#" + strings.ToLower(code) + `>; rel="help"`
}

// Package simbank is the connector of "sim-bank", the second simulated
// acquirer (internal/dev/simbank). Its API is unlike the first simulator's:
// form-encoded requests and answers under /gw/v2, amounts as decimal
// strings in the currency's major unit, upper-case states
// (AUTHORISED, CAPTURED, REFUSED, REVERSED; refunds DONE, QUEUED, REJECTED),
// ISO 8583 style response codes, and the idempotency key in the
// X-Request-Id header. The client maps all of it onto the connector
// vocabulary (internal/domain/connector). It offers card payments only: no
// 3-D Secure, no APMs, so it sends no callbacks either.
//
// Every error it returns wraps one of connector's errors (or the caller's
// context error). Errors never contain card data.
package simbank

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/refund"

	"github.com/paygate/paygate/internal/adapters/connectors"
	"github.com/paygate/paygate/internal/adapters/outbound"
)

// Name is this connector's name, as accounts and orders name it.
const Name = "sim-bank"

const (
	maxResponseBytes = 64 << 10
	apiPrefix        = "/gw/v2"
	headerRequestID  = "X-Request-Id"
	formContentType  = "application/x-www-form-urlencoded"
)

// The acquirer's payment states.
const (
	stateAuthorised = "AUTHORISED"
	stateCaptured   = "CAPTURED"
	stateRefused    = "REFUSED"
	stateReversed   = "REVERSED"
)

// declineReasons maps the acquirer's response codes of refused payments to
// our words; any other code is a generic decline.
var declineReasons = map[string]connector.DeclineReason{
	"05": connector.DeclineGeneric,
	"51": connector.DeclineInsufficientFunds,
	"54": connector.DeclineExpiredCard,
	"N7": connector.DeclineIncorrectCVC,
	"1A": connector.DeclineAuthenticationRequired,
}

// Config configures a Client.
type Config struct {
	// BaseURL is the acquirer's address (SIMBANK_URL), without /gw/v2.
	BaseURL string
	// Timeout bounds each request; zero means 10 seconds.
	Timeout time.Duration
}

// Client calls sim-bank's API. It is safe for concurrent use.
type Client struct {
	connectors.NoCallbacks // no 3-D Secure, no APMs: it sends none
	baseURL                *url.URL
	http                   *http.Client
}

// New returns a client for the acquirer at cfg.BaseURL.
func New(cfg Config) (*Client, error) {
	timeout, err := outbound.Timeout("sim-bank client", cfg.Timeout)
	if err != nil {
		return nil, err
	}
	u, err := outbound.BaseURL("sim-bank client", cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	return &Client{baseURL: u, http: &http.Client{Timeout: timeout, Transport: outbound.Transport()}}, nil
}

// failures are the connector's errors for a call that got no answer.
var failures = outbound.Failures{Timeout: connector.ErrTimeout, Unavailable: connector.ErrUnavailable}

// Name is the connector's name.
func (c *Client) Name() string { return Name }

// Charge authorises (txn_type AUTH) or sells (SALE) a card payment. A
// refusal is an answer, not an error. On connector.ErrTimeout the caller
// must Inquire with the same idempotency key.
func (c *Client) Charge(ctx context.Context, req connector.ChargeRequest) (connector.Charge, error) {
	what := "payment " + req.IdempotencyKey
	if req.IdempotencyKey == "" {
		return connector.Charge{}, fmt.Errorf("%s: %w: empty idempotency key", what, connector.ErrRejected)
	}
	if req.ThreeDS != nil {
		// Sending the payment without its authentication would lose the
		// liability shift the merchant asked for.
		return connector.Charge{}, fmt.Errorf("%s: %w: 3-D Secure", what, connector.ErrUnsupported)
	}
	if req.Installments > 0 {
		// The bank pays out at once; splitting the shopper's payment is not
		// something it does.
		return connector.Charge{}, fmt.Errorf("%s: %w: installments", what, connector.ErrUnsupported)
	}
	amount, err := decimal(what, req.Amount, req.Currency)
	if err != nil {
		return connector.Charge{}, err
	}
	exp, err := expiry(req.Card.ExpiryMonth, req.Card.ExpiryYear)
	if err != nil {
		return connector.Charge{}, fmt.Errorf("%s: %w: %v", what, connector.ErrRejected, err)
	}
	txnType := "AUTH"
	if req.Capture {
		txnType = "SALE"
	}
	form := url.Values{
		"txn_type":     {txnType},
		"merchant_ref": {req.Reference},
		"pan":          {req.Card.Number},
		"exp":          {exp},
		"cvc":          {req.Card.CVV},
		"amount":       {amount},
		"currency":     {req.Currency},
	}
	if req.StoredCredential {
		// A card on file: the bank takes it without a security code.
		form.Set("cof", "1")
	}
	ans, err := c.do(ctx, what, http.MethodPost, "/payments", req.IdempotencyKey, form)
	if err != nil {
		return connector.Charge{}, err
	}
	return chargeOf(what, ans)
}

// Inquire returns the payment made by the request with idempotencyKey, or
// an error wrapping connector.ErrNotFound when none was made.
func (c *Client) Inquire(ctx context.Context, idempotencyKey string) (connector.Charge, error) {
	what := "inquire " + idempotencyKey
	if idempotencyKey == "" {
		return connector.Charge{}, fmt.Errorf("%s: %w: empty idempotency key", what, connector.ErrRejected)
	}
	ans, err := c.do(ctx, what, http.MethodGet, "/payments?"+url.Values{"request_id": {idempotencyKey}}.Encode(), "", nil)
	if err != nil {
		return connector.Charge{}, err
	}
	return chargeOf(what, ans)
}

// FinalInquiry: the simulator's record of charges by key is never behind
// a charge it made, so a charge its inquiry does not find was never made.
func (c *Client) FinalInquiry() bool { return true }

// RequestTimeout: every payment request carries the end of it
// (X-Request-Deadline) and the simulator makes none past that.
func (c *Client) RequestTimeout() time.Duration { return c.http.Timeout }

// Capture settles part or all of an AUTHORISED payment.
func (c *Client) Capture(ctx context.Context, req connector.CaptureRequest) (connector.Charge, error) {
	what := "capture " + req.ChargeID + " " + req.IdempotencyKey
	if err := connector.CheckIDs(what, req.ChargeID, req.IdempotencyKey); err != nil {
		return connector.Charge{}, err
	}
	amount, err := decimal(what, req.Amount, req.Currency)
	if err != nil {
		return connector.Charge{}, err
	}
	ans, err := c.do(ctx, what, http.MethodPost, "/payments/"+url.PathEscape(req.ChargeID)+"/capture", req.IdempotencyKey,
		url.Values{"amount": {amount}, "currency": {req.Currency}})
	if err != nil {
		return connector.Charge{}, err
	}
	return chargeOf(what, ans)
}

// Void reverses an AUTHORISED payment.
func (c *Client) Void(ctx context.Context, req connector.VoidRequest) (connector.Charge, error) {
	what := "reversal " + req.ChargeID + " " + req.IdempotencyKey
	if err := connector.CheckIDs(what, req.ChargeID, req.IdempotencyKey); err != nil {
		return connector.Charge{}, err
	}
	ans, err := c.do(ctx, what, http.MethodPost, "/payments/"+url.PathEscape(req.ChargeID)+"/reversal", req.IdempotencyKey, url.Values{})
	if err != nil {
		return connector.Charge{}, err
	}
	return chargeOf(what, ans)
}

// Refund refunds part of a CAPTURED payment; it may come back pending
// (QUEUED).
func (c *Client) Refund(ctx context.Context, req connector.RefundRequest) (connector.Refund, error) {
	what := "refund " + req.ChargeID + " " + req.IdempotencyKey
	if err := connector.CheckIDs(what, req.ChargeID, req.IdempotencyKey); err != nil {
		return connector.Refund{}, err
	}
	amount, err := decimal(what, req.Amount, req.Currency)
	if err != nil {
		return connector.Refund{}, err
	}
	ans, err := c.do(ctx, what, http.MethodPost, "/payments/"+url.PathEscape(req.ChargeID)+"/refunds", req.IdempotencyKey,
		url.Values{"amount": {amount}, "currency": {req.Currency}})
	if err != nil {
		return connector.Refund{}, err
	}
	return refundOf(what, ans)
}

// GetRefund reads a refund's state.
func (c *Client) GetRefund(ctx context.Context, refundID string) (connector.Refund, error) {
	what := "get refund " + refundID
	if refundID == "" {
		return connector.Refund{}, fmt.Errorf("%s: %w: empty refund id", what, connector.ErrRejected)
	}
	ans, err := c.do(ctx, what, http.MethodGet, "/refunds/"+url.PathEscape(refundID), "", nil)
	if err != nil {
		return connector.Refund{}, err
	}
	return refundOf(what, ans)
}

// decimal writes minor units of currency as the acquirer's decimal string
// ("12.34" for USD, "1234" for JPY). A currency without a known exponent
// cannot be written and is refused.
func decimal(what string, minor int64, currency string) (string, error) {
	if !money.KnownCurrency(currency) {
		return "", fmt.Errorf("%s: %w: currency %q has no known exponent", what, connector.ErrRejected, currency)
	}
	if minor <= 0 {
		return "", fmt.Errorf("%s: %w: amount must be positive", what, connector.ErrRejected)
	}
	return money.FromMinor(minor, currency).String(), nil
}

// expiry writes a card's expiry as MMYY.
func expiry(month, year string) (string, error) {
	if len(month) == 1 {
		month = "0" + month
	}
	if len(year) == 4 {
		year = year[2:]
	}
	if len(month) != 2 || len(year) != 2 {
		return "", errors.New("expiry must be a month and a two- or four-digit year")
	}
	return month + year, nil
}

// minorOf reads a decimal amount of the answer in currency.
func minorOf(what string, ans url.Values, field, currency string) (int64, error) {
	a, err := money.Parse(ans.Get(field), currency)
	if err != nil {
		return 0, fmt.Errorf("%s: decode answer: %s: %w", what, field, err)
	}
	return a.Minor, nil
}

func chargeOf(what string, ans url.Values) (connector.Charge, error) {
	cur := ans.Get("currency")
	out := connector.Charge{
		ID:       ans.Get("payment_id"),
		Message:  ans.Get("text"),
		AuthCode: ans.Get("approval_code"),
		Currency: cur,
	}
	if out.ID == "" {
		return connector.Charge{}, fmt.Errorf("%s: decode answer: no payment_id", what)
	}
	var err error
	if out.Amount, err = minorOf(what, ans, "amount", cur); err != nil {
		return connector.Charge{}, err
	}
	if out.CapturedAmount, err = minorOf(what, ans, "captured", cur); err != nil {
		return connector.Charge{}, err
	}
	if out.RefundedAmount, err = minorOf(what, ans, "refunded", cur); err != nil {
		return connector.Charge{}, err
	}
	switch ans.Get("state") {
	case stateAuthorised, stateCaptured:
		out.Status = connector.Approved
	case stateReversed:
		// Approved once, then released.
		out.Status, out.Voided = connector.Approved, true
	case stateRefused:
		out.Status = connector.Declined
		out.DeclineReason = connector.DeclineGeneric
		if r, ok := declineReasons[ans.Get("response_code")]; ok {
			out.DeclineReason = r
		}
	default:
		return connector.Charge{}, fmt.Errorf("%s: decode answer: unknown state %q", what, ans.Get("state"))
	}
	return out, nil
}

// refundOf maps a refund answer: DONE is succeeded, QUEUED pending, and
// anything else (REJECTED) failed.
func refundOf(what string, ans url.Values) (connector.Refund, error) {
	out := connector.Refund{ID: ans.Get("refund_id"), ChargeID: ans.Get("payment_id"), Currency: ans.Get("currency")}
	if out.ID == "" {
		return connector.Refund{}, fmt.Errorf("%s: decode answer: no refund_id", what)
	}
	var err error
	if out.Amount, err = minorOf(what, ans, "amount", out.Currency); err != nil {
		return connector.Refund{}, err
	}
	switch ans.Get("state") {
	case "DONE":
		out.Status = refund.Succeeded
	case "QUEUED":
		out.Status = refund.Pending
	default:
		out.Status = refund.Failed
	}
	return out, nil
}

// do sends one request (form-encoded, with the request id header when
// requestID is set) and returns the form of a 2xx answer. what names the
// operation in errors and holds no card data.
func (c *Client) do(ctx context.Context, what, method, pathAndQuery, requestID string, form url.Values) (url.Values, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	target := c.baseURL.String() + apiPrefix + pathAndQuery
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, fmt.Errorf("%s: build request: %w", what, err)
	}
	req.Header.Set("Accept", formContentType)
	if form != nil {
		req.Header.Set("Content-Type", formContentType)
	}
	if requestID != "" {
		req.Header.Set(headerRequestID, requestID)
	}
	if method == http.MethodPost {
		outbound.StampDeadline(req, c.http.Timeout)
	}
	statusCode, raw, err := failures.Exchange(ctx, c.http, req, maxResponseBytes, what)
	if err != nil {
		return nil, err
	}
	ans, parseErr := url.ParseQuery(string(raw))
	if statusCode >= 200 && statusCode < 300 {
		if parseErr != nil {
			return nil, fmt.Errorf("%s: decode answer: %w", what, parseErr)
		}
		return ans, nil
	}
	code := ans.Get("error")
	if code == "" {
		code = http.StatusText(statusCode)
	}
	detail := code
	if f := ans.Get("field"); f != "" {
		detail += " (" + f + ")"
	}
	if t := ans.Get("error_text"); t != "" {
		detail += ": " + t
	}
	switch {
	case statusCode == http.StatusNotFound:
		return nil, fmt.Errorf("%s: %w: %s", what, connector.ErrNotFound, detail)
	case statusCode == http.StatusConflict:
		return nil, fmt.Errorf("%s: %w: %s", what, connector.ErrConflict, detail)
	case statusCode >= 500:
		return nil, fmt.Errorf("%s: %w: status %d %s", what, connector.ErrUnavailable, statusCode, detail)
	default:
		return nil, fmt.Errorf("%s: %w: status %d %s", what, connector.ErrRejected, statusCode, detail)
	}
}

// Package simacquirer is the connector of the simulated acquirer
// (internal/dev/simulator): Client speaks its JSON API, Connector maps that
// onto the connector vocabulary (internal/domain/connector).
//
// Every error it returns wraps one of the package's sentinel errors (or the
// caller's context error) so callers can decide whether to retry, inquire or
// give up. Errors never contain card data.
package simacquirer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/paygate/paygate/internal/domain/connector"

	"github.com/paygate/paygate/internal/adapters/outbound"
)

// maxResponseBytes bounds an answer read.
const maxResponseBytes = 1 << 20

// The client's errors are the connector vocabulary's, so the activities
// classify its failures without knowing this acquirer.
var (
	// ErrTimeout means no answer arrived in time, or the connection failed after
	// the request may have reached the acquirer: the outcome is unknown and the
	// caller must inquire before doing anything else.
	ErrTimeout = connector.ErrTimeout
	// ErrUnavailable means the acquirer answered 5xx or could not be reached:
	// nothing was done and it is safe to retry with the same idempotency key.
	ErrUnavailable = connector.ErrUnavailable
	// ErrNotFound means the acquirer has no such charge or refund.
	ErrNotFound = connector.ErrNotFound
	// ErrConflict means the idempotency key was used with a different request
	// or the charge is in the wrong state for the operation.
	ErrConflict = connector.ErrConflict
	// ErrRejected means the request itself is wrong; it must not be retried.
	ErrRejected = connector.ErrRejected
)

// Charge statuses.
const (
	StatusApproved = "approved"
	StatusDeclined = "declined"
)

// Refund statuses.
const (
	RefundSucceeded = "succeeded"
	RefundPending   = "pending"
	RefundFailed    = "failed"
)

// Client calls the acquirer's HTTP API. It is safe for concurrent use.
type Client struct {
	baseURL *url.URL
	http    *http.Client
}

// NewClient returns a client for the acquirer at baseURL whose requests give
// up after timeout; a zero timeout means 10 seconds.
func NewClient(baseURL string, timeout time.Duration) (*Client, error) {
	timeout, err := outbound.Timeout("acquirer client", timeout)
	if err != nil {
		return nil, err
	}
	u, err := outbound.BaseURL("acquirer client", baseURL)
	if err != nil {
		return nil, err
	}
	return &Client{baseURL: u, http: &http.Client{Timeout: timeout, Transport: outbound.Transport()}}, nil
}

// failures are the acquirer's errors for a call that got no answer.
var failures = outbound.Failures{Timeout: ErrTimeout, Unavailable: ErrUnavailable}

// ChargeRequest asks the acquirer to authorise, and optionally capture, a
// card payment. Its String, GoString, LogValue and JSON forms hide the card.
type ChargeRequest struct {
	IdempotencyKey string `json:"idempotency_key"`
	Reference      string `json:"reference"`
	CardNumber     string `json:"-"`
	ExpiryMonth    string `json:"-"`
	ExpiryYear     string `json:"-"`
	CVV            string `json:"-"`
	Amount         int64  `json:"amount"`
	Currency       string `json:"currency"`
	Capture        bool   `json:"capture"`
	// ThreeDS carries the result of a 3-D Secure authentication; nil when the
	// charge is not authenticated.
	ThreeDS *ThreeDSData `json:"three_ds,omitempty"`
	// Stored marks a charge of a stored card, made without a CVV.
	Stored bool `json:"stored_credential,omitempty"`
	// Installments is the number of monthly installments, 0 for none.
	Installments int `json:"installments,omitempty"`
}

// String describes r without card data.
func (r ChargeRequest) String() string {
	return fmt.Sprintf("ChargeRequest{IdempotencyKey:%q Reference:%q Card:%s Amount:%d Currency:%q Capture:%t}",
		r.IdempotencyKey, r.Reference, maskCard(r.CardNumber), r.Amount, r.Currency, r.Capture)
}

// GoString describes r without card data, for the %#v verb.
func (r ChargeRequest) GoString() string { return r.String() }

// LogValue describes r for log/slog without card data.
func (r ChargeRequest) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("idempotency_key", r.IdempotencyKey),
		slog.String("reference", r.Reference),
		slog.String("card", maskCard(r.CardNumber)),
		slog.Int64("amount", r.Amount),
		slog.String("currency", r.Currency),
		slog.Bool("capture", r.Capture),
	)
}

func maskCard(number string) string {
	if len(number) < 4 {
		return "****"
	}
	return "****" + number[len(number)-4:]
}

// chargeWire is the wire form of a ChargeRequest; it is only ever marshalled
// straight into a request body.
type chargeWire struct {
	IdempotencyKey string       `json:"idempotency_key"`
	Reference      string       `json:"reference"`
	CardNumber     string       `json:"card_number"`
	ExpiryMonth    string       `json:"expiry_month"`
	ExpiryYear     string       `json:"expiry_year"`
	CVV            string       `json:"cvv"`
	Amount         int64        `json:"amount"`
	Currency       string       `json:"currency"`
	Capture        bool         `json:"capture"`
	ThreeDS        *ThreeDSData `json:"three_ds,omitempty"`
	Stored         bool         `json:"stored_credential,omitempty"`
	Installments   int          `json:"installments,omitempty"`
}

// Charge is the acquirer's record of a charge. It holds no card number.
type Charge struct {
	ChargeID       string    `json:"charge_id"`
	IdempotencyKey string    `json:"idempotency_key"`
	Reference      string    `json:"reference"`
	Status         string    `json:"status"`
	DeclineCode    string    `json:"decline_code"`
	Message        string    `json:"message"`
	AuthCode       string    `json:"auth_code"`
	Amount         int64     `json:"amount"`
	Currency       string    `json:"currency"`
	CapturedAmount int64     `json:"captured_amount"`
	RefundedAmount int64     `json:"refunded_amount"`
	Voided         bool      `json:"voided"`
	CardBIN        string    `json:"card_bin"`
	CardLast4      string    `json:"card_last4"`
	ThreeDS        bool      `json:"three_ds"`
	CreatedAt      time.Time `json:"created_at"`
}

// Approved reports whether the acquirer approved the charge.
func (c Charge) Approved() bool { return c.Status == StatusApproved }

// Refund is the acquirer's record of a refund.
type Refund struct {
	RefundID       string     `json:"refund_id"`
	ChargeID       string     `json:"charge_id"`
	IdempotencyKey string     `json:"idempotency_key"`
	Amount         int64      `json:"amount"`
	Currency       string     `json:"currency"`
	Status         string     `json:"status"`
	CreatedAt      time.Time  `json:"created_at"`
	SettledAt      *time.Time `json:"settled_at"`
}

// Charge asks the acquirer to charge a card. A decline is not an error: it
// comes back as a Charge with Status "declined". On ErrTimeout the caller must
// Inquire with the same idempotency key before retrying.
func (c *Client) Charge(ctx context.Context, req ChargeRequest) (Charge, error) {
	what := "charge " + req.IdempotencyKey
	if req.IdempotencyKey == "" {
		return Charge{}, fmt.Errorf("charge: %w: empty idempotency key", ErrRejected)
	}
	body := chargeWire(req)
	var out Charge
	err := c.do(ctx, what, http.MethodPost, "/v1/charges", body, &out)
	return out, err
}

// Inquire returns the charge created with idempotencyKey, or ErrNotFound if
// the acquirer never created one.
func (c *Client) Inquire(ctx context.Context, idempotencyKey string) (Charge, error) {
	what := "inquire " + idempotencyKey
	if idempotencyKey == "" {
		return Charge{}, fmt.Errorf("inquire: %w: empty idempotency key", ErrRejected)
	}
	var out Charge
	err := c.do(ctx, what, http.MethodGet, "/v1/charges/"+url.PathEscape(idempotencyKey), nil, &out)
	return out, err
}

// Capture captures amount of an approved, uncaptured charge; the rest of the
// authorisation is released.
func (c *Client) Capture(ctx context.Context, chargeID, idempotencyKey string, amount int64) (Charge, error) {
	what := "capture " + chargeID + " " + idempotencyKey
	if err := connector.CheckIDs(what, chargeID, idempotencyKey); err != nil {
		return Charge{}, err
	}
	body := struct {
		IdempotencyKey string `json:"idempotency_key"`
		Amount         int64  `json:"amount"`
	}{idempotencyKey, amount}
	var out Charge
	err := c.do(ctx, what, http.MethodPost, "/v1/charges/"+url.PathEscape(chargeID)+"/capture", body, &out)
	return out, err
}

// Void cancels an approved charge that has not been captured.
func (c *Client) Void(ctx context.Context, chargeID, idempotencyKey string) (Charge, error) {
	what := "void " + chargeID + " " + idempotencyKey
	if err := connector.CheckIDs(what, chargeID, idempotencyKey); err != nil {
		return Charge{}, err
	}
	body := struct {
		IdempotencyKey string `json:"idempotency_key"`
	}{idempotencyKey}
	var out Charge
	err := c.do(ctx, what, http.MethodPost, "/v1/charges/"+url.PathEscape(chargeID)+"/void", body, &out)
	return out, err
}

// Refund returns amount of a captured charge to the card. The refund may come
// back pending; poll GetRefund until it settles.
func (c *Client) Refund(ctx context.Context, chargeID, idempotencyKey string, amount int64) (Refund, error) {
	what := "refund " + chargeID + " " + idempotencyKey
	if err := connector.CheckIDs(what, chargeID, idempotencyKey); err != nil {
		return Refund{}, err
	}
	body := struct {
		IdempotencyKey string `json:"idempotency_key"`
		Amount         int64  `json:"amount"`
	}{idempotencyKey, amount}
	var out Refund
	err := c.do(ctx, what, http.MethodPost, "/v1/charges/"+url.PathEscape(chargeID)+"/refunds", body, &out)
	return out, err
}

// GetRefund returns the refund with refundID.
func (c *Client) GetRefund(ctx context.Context, refundID string) (Refund, error) {
	what := "get refund " + refundID
	if refundID == "" {
		return Refund{}, fmt.Errorf("get refund: %w: empty refund id", ErrRejected)
	}
	var out Refund
	err := c.do(ctx, what, http.MethodGet, "/v1/refunds/"+url.PathEscape(refundID), nil, &out)
	return out, err
}

type errorBody struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// do sends one request and decodes a 2xx answer into out. what names the
// operation in errors and must not hold card data.
func (c *Client) do(ctx context.Context, what, method, path string, in, out any) error {
	return c.doUpTo(ctx, what, method, path, in, out, maxResponseBytes)
}

// errAnswerTooLong: the answer did not fit the bound its call reads.
var errAnswerTooLong = errors.New("answer longer than the client reads")

// doUpTo is do for an answer of at most limit bytes; a longer one is
// errAnswerTooLong rather than a cut answer that fails to decode.
func (c *Client) doUpTo(ctx context.Context, what, method, path string, in, out any, limit int64) error {
	req, err := outbound.JSONRequest(ctx, c.baseURL, method, path, nil, in)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if method == http.MethodPost {
		outbound.StampDeadline(req, c.http.Timeout)
	}
	statusCode, raw, err := failures.Exchange(ctx, c.http, req, limit+1, what)
	if err != nil {
		return err
	}
	if int64(len(raw)) > limit {
		return fmt.Errorf("%s: %w: more than %d bytes", what, errAnswerTooLong, limit)
	}

	if statusCode >= 200 && statusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s: decode response: %w", what, err)
		}
		return nil
	}
	var eb errorBody
	_ = json.Unmarshal(raw, &eb)
	code := eb.Error
	if code == "" {
		code = http.StatusText(statusCode)
	}
	switch {
	case statusCode == http.StatusNotFound:
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	case statusCode == http.StatusConflict:
		return fmt.Errorf("%s: %w: %s", what, ErrConflict, code)
	case statusCode >= 500:
		return fmt.Errorf("%s: %w: status %d %s", what, ErrUnavailable, statusCode, code)
	default:
		if eb.Message != "" {
			return fmt.Errorf("%s: %w: %s: %s", what, ErrRejected, code, eb.Message)
		}
		return fmt.Errorf("%s: %w: status %d %s", what, ErrRejected, statusCode, code)
	}
}

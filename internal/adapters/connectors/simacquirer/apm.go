package simacquirer

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// APM payment statuses.
const (
	APMPending   = "pending"
	APMSucceeded = "succeeded"
	APMCancelled = "cancelled"
)

// APMCustomer identifies the payer of an APM payment. PIX requires Document
// (11 digits).
type APMCustomer struct {
	Name     string `json:"name"`
	Email    string `json:"email"`
	Document string `json:"document"`
}

// APMRequest asks the APM provider to start a payment. The provider posts the
// outcome to CallbackURL and sends the shopper back to ReturnURL.
type APMRequest struct {
	IdempotencyKey string      `json:"idempotency_key"`
	Method         string      `json:"method"`
	Amount         int64       `json:"amount"`
	Currency       string      `json:"currency"`
	Country        string      `json:"country"`
	Reference      string      `json:"reference"`
	CallbackURL    string      `json:"callback_url"`
	ReturnURL      string      `json:"return_url"`
	BankCode       string      `json:"bank_code"`
	Customer       APMCustomer `json:"customer"`
}

// APMPayment is the provider's record of an APM payment. The shopper pays at
// RedirectURL.
type APMPayment struct {
	PaymentID      string    `json:"payment_id"`
	Status         string    `json:"status"`
	Method         string    `json:"method"`
	Amount         int64     `json:"amount"`
	Currency       string    `json:"currency"`
	Country        string    `json:"country"`
	Reference      string    `json:"reference"`
	RedirectURL    string    `json:"redirect_url"`
	CallbackStatus int       `json:"callback_status"`
	CreatedAt      time.Time `json:"created_at"`
}

// APMCallback is the body the provider posts to the callback URL, signed in
// the X-Provider-Signature header (see VerifyProviderSignature).
type APMCallback struct {
	PaymentID string `json:"payment_id"`
	Reference string `json:"reference"`
	Status    string `json:"status"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
	Method    string `json:"method"`
}

// CreateAPMPayment starts an APM payment. It is idempotent by
// req.IdempotencyKey. A request the provider refuses (unsupported_method,
// currency_not_supported, country_not_supported, invalid_request) returns an
// error wrapping ErrRejected whose message holds the provider's code.
func (c *Client) CreateAPMPayment(ctx context.Context, req APMRequest) (APMPayment, error) {
	what := "create apm payment " + req.IdempotencyKey
	if req.IdempotencyKey == "" {
		return APMPayment{}, fmt.Errorf("create apm payment: %w: empty idempotency key", ErrRejected)
	}
	var out APMPayment
	err := c.do(ctx, what, http.MethodPost, "/v1/apm/payments", req, &out)
	return out, err
}

// CancelAPMPayment calls off a pending APM payment and returns it as it
// then stands: cancelled, or succeeded when the shopper paid first.
func (c *Client) CancelAPMPayment(ctx context.Context, id string) (APMPayment, error) {
	what := "cancel apm payment " + id
	if id == "" {
		return APMPayment{}, fmt.Errorf("cancel apm payment: %w: empty payment id", ErrRejected)
	}
	var out APMPayment
	err := c.do(ctx, what, http.MethodPost, "/v1/apm/payments/"+url.PathEscape(id)+"/cancel", nil, &out)
	return out, err
}

// GetAPMPayment returns the APM payment with id.
func (c *Client) GetAPMPayment(ctx context.Context, id string) (APMPayment, error) {
	what := "get apm payment " + id
	if id == "" {
		return APMPayment{}, fmt.Errorf("get apm payment: %w: empty payment id", ErrRejected)
	}
	var out APMPayment
	err := c.do(ctx, what, http.MethodGet, "/v1/apm/payments/"+url.PathEscape(id), nil, &out)
	return out, err
}

package simacquirer

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/refund"
)

// Name is the simulated acquirer's connector name, as accounts and orders
// name it. It is connector.DefaultName: accounts and orders that name no
// connector were made for this one.
const Name = "sim-acquirer"

// Config configures a Connector.
type Config struct {
	// BaseURL is the simulator's address (ACQUIRER_URL).
	BaseURL string
	// Timeout bounds each request; zero means 10 seconds.
	Timeout time.Duration
	// CallbackSecret is the key the simulated ACS and APM provider sign
	// their callbacks with (PAYGATE_PROVIDER_SECRET). Without it every
	// callback is refused.
	CallbackSecret string
}

// Connector is the simulated acquirer behind the connector vocabulary: card
// payments, 3-D Secure and APM payments, and the check of the callbacks its
// ACS and APM provider send. It is safe for concurrent use.
type Connector struct {
	client *Client
	secret string
}

// New returns the connector for cfg; the base URL must be an absolute http
// or https URL.
func New(cfg Config) (*Connector, error) {
	c, err := NewClient(cfg.BaseURL, cfg.Timeout)
	if err != nil {
		return nil, err
	}
	return &Connector{client: c, secret: cfg.CallbackSecret}, nil
}

// keyOf is a key as the simulated acquirer takes it: printable ASCII
// without '/'. A routed charge's key at a connector other than the order's
// first ends "/<connector>" (the only '/' a key holds: the workflow id's
// are ':'), which the acquirer refused as a bad request, so an order never
// failed over to it; '~' stands in, and no other key ends "~<connector>".
func keyOf(key string) string { return strings.ReplaceAll(key, "/", "~") }

// Name is the connector's name.
func (c *Connector) Name() string { return Name }

// Charge authorises, and for a sale captures, a card payment. A decline is
// an answer, not an error.
func (c *Connector) Charge(ctx context.Context, req connector.ChargeRequest) (connector.Charge, error) {
	var threeDS *ThreeDSData
	if d := req.ThreeDS; d != nil {
		threeDS = &ThreeDSData{AuthenticationID: d.AuthenticationID, ECI: d.ECI, CAVV: d.CAVV,
			External: d.External, XID: d.XID, DSTransID: d.DSTransID}
	}
	ch, err := c.client.Charge(ctx, ChargeRequest{
		IdempotencyKey: keyOf(req.IdempotencyKey),
		Reference:      req.Reference,
		CardNumber:     req.Card.Number,
		ExpiryMonth:    req.Card.ExpiryMonth,
		ExpiryYear:     req.Card.ExpiryYear,
		CVV:            req.Card.CVV,
		Amount:         req.Amount,
		Currency:       req.Currency,
		Capture:        req.Capture,
		ThreeDS:        threeDS,
		Stored:         req.StoredCredential,
		Installments:   req.Installments,
	})
	if err != nil {
		return connector.Charge{}, err
	}
	return chargeOf(ch), nil
}

// FinalInquiry: the simulator's record of charges by key is never behind
// a charge it made, so a charge its inquiry does not find was never made.
func (c *Connector) FinalInquiry() bool { return true }

// RequestTimeout: every charge carries the end of it (X-Request-Deadline)
// and the simulator makes none past that.
func (c *Connector) RequestTimeout() time.Duration { return c.client.http.Timeout }

// Inquire returns the charge made with idempotencyKey, or an error wrapping
// connector.ErrNotFound when none was made.
func (c *Connector) Inquire(ctx context.Context, idempotencyKey string) (connector.Charge, error) {
	ch, err := c.client.Inquire(ctx, keyOf(idempotencyKey))
	if err != nil {
		return connector.Charge{}, err
	}
	return chargeOf(ch), nil
}

// Capture captures part or all of an approved charge.
func (c *Connector) Capture(ctx context.Context, req connector.CaptureRequest) (connector.Charge, error) {
	ch, err := c.client.Capture(ctx, req.ChargeID, keyOf(req.IdempotencyKey), req.Amount)
	if err != nil {
		return connector.Charge{}, err
	}
	return chargeOf(ch), nil
}

// Void releases an uncaptured charge.
func (c *Connector) Void(ctx context.Context, req connector.VoidRequest) (connector.Charge, error) {
	ch, err := c.client.Void(ctx, req.ChargeID, keyOf(req.IdempotencyKey))
	if err != nil {
		return connector.Charge{}, err
	}
	return chargeOf(ch), nil
}

// Refund refunds part of a captured charge; the refund may be pending.
func (c *Connector) Refund(ctx context.Context, req connector.RefundRequest) (connector.Refund, error) {
	r, err := c.client.Refund(ctx, req.ChargeID, keyOf(req.IdempotencyKey), req.Amount)
	if err != nil {
		return connector.Refund{}, err
	}
	return refundOf(r), nil
}

// GetRefund reads a refund's status.
func (c *Connector) GetRefund(ctx context.Context, refundID string) (connector.Refund, error) {
	r, err := c.client.GetRefund(ctx, refundID)
	if err != nil {
		return connector.Refund{}, err
	}
	return refundOf(r), nil
}

// Authenticate starts 3-D Secure for a card.
func (c *Connector) Authenticate(ctx context.Context, req connector.AuthenticationRequest) (connector.Authentication, error) {
	ar := AuthenticationRequest{
		IdempotencyKey: keyOf(req.IdempotencyKey),
		CardNumber:     req.Card.Number,
		ExpiryMonth:    req.Card.ExpiryMonth,
		ExpiryYear:     req.Card.ExpiryYear,
		Amount:         req.Amount,
		Currency:       req.Currency,
		Reference:      req.Reference,
		ReturnURL:      req.ReturnURL,
	}
	if req.Browser != (connector.Browser{}) {
		b := req.Browser
		ar.Browser = &b
	}
	au, err := c.client.Authenticate(ctx, ar)
	if err != nil {
		return connector.Authentication{}, err
	}
	return authenticationOf(au), nil
}

// GetAuthentication asks the ACS where an authentication stands.
func (c *Connector) GetAuthentication(ctx context.Context, id string) (connector.Authentication, error) {
	au, err := c.client.GetAuthentication(ctx, id)
	if err != nil {
		return connector.Authentication{}, err
	}
	return authenticationOf(au), nil
}

// CreateAPMPayment starts a payment at the APM provider.
func (c *Connector) CreateAPMPayment(ctx context.Context, req connector.APMRequest) (connector.APMPayment, error) {
	p, err := c.client.CreateAPMPayment(ctx, APMRequest{
		IdempotencyKey: keyOf(req.IdempotencyKey),
		Method:         req.Method,
		Amount:         req.Amount,
		Currency:       req.Currency,
		Country:        req.Country,
		Reference:      req.Reference,
		CallbackURL:    req.CallbackURL,
		ReturnURL:      req.ReturnURL,
		BankCode:       req.BankCode,
		Customer:       APMCustomer{Name: req.Customer.Name, Email: req.Customer.Email, Document: req.Customer.Document},
	})
	if err != nil {
		return connector.APMPayment{}, err
	}
	return apmPaymentOf(p), nil
}

// GetAPMPayment asks the APM provider where a payment stands.
func (c *Connector) GetAPMPayment(ctx context.Context, id string) (connector.APMPayment, error) {
	p, err := c.client.GetAPMPayment(ctx, id)
	if err != nil {
		return connector.APMPayment{}, err
	}
	return apmPaymentOf(p), nil
}

// CancelAPMPayment calls off a payment the shopper has not completed at
// the APM provider, and returns it as it then stands.
func (c *Connector) CancelAPMPayment(ctx context.Context, id string) (connector.APMPayment, error) {
	p, err := c.client.CancelAPMPayment(ctx, id)
	if err != nil {
		return connector.APMPayment{}, err
	}
	return apmPaymentOf(p), nil
}

// ReadThreeDSResult reads the challenge result the ACS had the shopper's
// browser post: the authentication and the order it names, once the form
// carries the ACS's signature. It proves only who sent the result: the order
// asks the ACS for the outcome.
func (c *Connector) ReadThreeDSResult(form url.Values) (connector.ThreeDSCallback, error) {
	if c.secret == "" || !VerifyThreeDSResult(c.secret, form.Get("authentication_id"), form.Get("status"), form.Get("cavv"),
		form.Get("reference"), form.Get("signature")) {
		return connector.ThreeDSCallback{}, connector.ErrCallbackUnsigned
	}
	cb := connector.ThreeDSCallback{AuthenticationID: form.Get("authentication_id"), Reference: form.Get("reference")}
	if cb.AuthenticationID == "" || cb.Reference == "" {
		return connector.ThreeDSCallback{}, connector.ErrCallbackMalformed
	}
	return cb, nil
}

// ReadAPMCallback reads the APM provider's callback: the payment and the
// order it names, once body carries the provider's signature in its
// X-Provider-Signature header. It proves only who sent the callback: the
// order asks the provider for the payment's status.
func (c *Connector) ReadAPMCallback(body []byte, header http.Header) (connector.APMCallback, error) {
	if c.secret == "" || !VerifyProviderSignature(c.secret, body, header.Get("X-Provider-Signature")) {
		return connector.APMCallback{}, connector.ErrCallbackUnsigned
	}
	var cb struct {
		PaymentID string `json:"payment_id"`
		Reference string `json:"reference"`
	}
	if err := json.Unmarshal(body, &cb); err != nil || cb.PaymentID == "" || cb.Reference == "" {
		return connector.APMCallback{}, connector.ErrCallbackMalformed
	}
	return connector.APMCallback{PaymentID: cb.PaymentID, Reference: cb.Reference}, nil
}

// declineReasons are the simulator's decline codes in our words; the
// simulator happens to use the same words.
var declineReasons = map[string]connector.DeclineReason{
	"do_not_honor":            connector.DeclineGeneric,
	"insufficient_funds":      connector.DeclineInsufficientFunds,
	"expired_card":            connector.DeclineExpiredCard,
	"incorrect_cvc":           connector.DeclineIncorrectCVC,
	"authentication_required": connector.DeclineAuthenticationRequired,
	"authentication_failed":   connector.DeclineAuthenticationFailed,
}

func chargeOf(ch Charge) connector.Charge {
	out := connector.Charge{
		ID:             ch.ChargeID,
		Status:         connector.Declined,
		Message:        ch.Message,
		AuthCode:       ch.AuthCode,
		Amount:         ch.Amount,
		Currency:       ch.Currency,
		CapturedAmount: ch.CapturedAmount,
		RefundedAmount: ch.RefundedAmount,
		Voided:         ch.Voided,
	}
	if ch.Approved() {
		out.Status = connector.Approved
		return out
	}
	out.DeclineReason = connector.DeclineGeneric
	if r, ok := declineReasons[ch.DeclineCode]; ok {
		out.DeclineReason = r
	}
	return out
}

// refundOf maps a refund; anything the simulator calls neither pending nor
// succeeded is failed.
func refundOf(r Refund) connector.Refund {
	st := refund.Failed
	switch r.Status {
	case RefundPending:
		st = refund.Pending
	case RefundSucceeded:
		st = refund.Succeeded
	}
	return connector.Refund{ID: r.RefundID, ChargeID: r.ChargeID, Amount: r.Amount, Currency: r.Currency, Status: st}
}

func authenticationOf(au Authentication) connector.Authentication {
	return connector.Authentication{ID: au.AuthenticationID, Status: connector.AuthenticationStatus(au.Status),
		ECI: au.ECI, CAVV: au.CAVV, ACSURL: au.ACSURL}
}

func apmPaymentOf(p APMPayment) connector.APMPayment {
	return connector.APMPayment{ID: p.PaymentID, Status: connector.APMStatus(p.Status), RedirectURL: p.RedirectURL}
}

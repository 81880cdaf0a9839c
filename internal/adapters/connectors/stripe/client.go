// Package stripe is the connector of Stripe, on Stripe's own Go library
// (stripe-go) and its PaymentIntents API. It maps Stripe's statuses, error
// types and decline codes onto the connector vocabulary
// (internal/domain/connector); no Stripe word leaves this package.
//
// Every call carries an Idempotency-Key derived from our own ids, so a
// retried activity gets Stripe's first answer again instead of a second
// charge, and every PaymentIntent carries our reference and key in its
// metadata, which is how Inquire finds it. The card goes to Stripe as a
// PaymentMethod made from the vault's card inside the charge call, which
// needs the account's "raw card data APIs" (docs/connectors.md).
//
// Every error it returns wraps one of connector's errors (or the caller's
// context error). Errors never contain card data.
package stripe

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	stripego "github.com/stripe/stripe-go/v82"

	"github.com/paygate/paygate/internal/adapters/outbound"
	"github.com/paygate/paygate/internal/domain/card"
	"github.com/paygate/paygate/internal/domain/connector"
)

// Name is this connector's name, as accounts and orders name it.
const Name = "stripe"

// The metadata keys a PaymentIntent carries.
const (
	metaReference = "paygate_reference" // our transaction id
	metaKey       = "paygate_key"       // the charge's idempotency key
)

// Config configures a Client.
type Config struct {
	// SecretKey is the account's secret key (sk_live_... or sk_test_...).
	SecretKey string
	// BaseURL is Stripe's API address; empty is https://api.stripe.com,
	// whose file uploads go to https://files.stripe.com. Tests point it at
	// stripe-mock or a fake, which then takes the uploads too.
	BaseURL string
	// Timeout bounds each request; zero means 10 seconds.
	Timeout time.Duration
	// Transport carries the requests; nil is the gateway's outbound
	// transport. Tests reach stripe-mock's Unix socket through it.
	Transport http.RoundTripper
	// CallbackSecret signs the address Stripe sends the shopper back to
	// after its 3-D Secure page (threeds.go); without it no 3-D Secure.
	CallbackSecret string
	// WebhookSecret is the signing secret of the account's webhook
	// endpoint (whsec_...; webhook.go); without it every event is refused.
	WebhookSecret string
	// SettlementDays is how long after a charge Stripe pays it out (T+2
	// when zero); the settlement report of a day is the balance
	// transactions of the day that many days before (settlement.go).
	SettlementDays int
}

// Client calls Stripe. It is safe for concurrent use.
type Client struct {
	api            *stripego.Client
	callbackSecret []byte
	webhookSecret  string
	settlementDays int
}

// failures are the connector's errors for a call that got no answer.
var failures = outbound.Failures{Timeout: connector.ErrTimeout, Unavailable: connector.ErrUnavailable}

// New returns a client for the Stripe account of cfg.SecretKey.
func New(cfg Config) (*Client, error) {
	if cfg.SecretKey == "" {
		return nil, errors.New("stripe client: no secret key")
	}
	if cfg.SettlementDays < 0 {
		return nil, errors.New("stripe client: settlement days below zero")
	}
	timeout, err := outbound.Timeout("stripe client", cfg.Timeout)
	if err != nil {
		return nil, err
	}
	base, files := cfg.BaseURL, cfg.BaseURL
	if base == "" {
		base, files = "https://api.stripe.com", "https://files.stripe.com"
	}
	u, err := outbound.BaseURL("stripe client", base)
	if err != nil {
		return nil, err
	}
	fu, err := outbound.BaseURL("stripe client", files)
	if err != nil {
		return nil, err
	}
	transport := cfg.Transport
	if transport == nil {
		transport = outbound.Transport()
	}
	backend := &stripego.BackendConfig{
		URL:        stripego.String(strings.TrimSuffix(u.String(), "/")),
		HTTPClient: &http.Client{Timeout: timeout, Transport: transport},
		// The activities retry, with the same key; the library's own
		// retries would hide from them how long a call really took.
		MaxNetworkRetries: stripego.Int64(0),
		// The library logs answers it dislikes; ours are logged once, by
		// the activity that sees the error.
		LeveledLogger:   &stripego.LeveledLogger{Level: stripego.LevelNull},
		EnableTelemetry: stripego.Bool(false),
	}
	backends := stripego.NewBackendsWithConfig(backend)
	// Stripe takes file uploads (dispute evidence) on a host of their own.
	uploads := *backend
	uploads.URL = stripego.String(strings.TrimSuffix(fu.String(), "/"))
	backends.Uploads = stripego.GetBackendWithConfig(stripego.UploadsBackend, &uploads)
	return &Client{api: stripego.NewClient(cfg.SecretKey, stripego.WithBackends(backends)),
		callbackSecret: []byte(cfg.CallbackSecret), webhookSecret: cfg.WebhookSecret, settlementDays: cmp.Or(cfg.SettlementDays, 2)}, nil
}

// IsTestKey reports whether a secret key is of Stripe's test mode, where
// no real money moves.
func IsTestKey(key string) bool {
	return strings.HasPrefix(key, "sk_test_") || strings.HasPrefix(key, "rk_test_")
}

// Name is the connector's name.
func (c *Client) Name() string { return Name }

// Offer is what Stripe takes through this connector: cards of every brand
// the gateway recognises (with Stripe's 3-D Secure, threeds.go); no APMs.
func (c *Client) Offer() connector.Offer {
	return connector.Offer{CardBrands: card.Brands(), ExternalThreeDS: true, Installments: true}
}

// Charge authorises (capture_method manual) or sells (automatic) a card
// payment: a PaymentMethod of the card, then a PaymentIntent confirmed at
// once. A decline is an answer, not an error. On connector.ErrTimeout the
// caller must Inquire with the same idempotency key.
func (c *Client) Charge(ctx context.Context, req connector.ChargeRequest) (connector.Charge, error) {
	what := "payment " + req.IdempotencyKey
	if req.IdempotencyKey == "" {
		return connector.Charge{}, fmt.Errorf("%s: %w: empty idempotency key", what, connector.ErrRejected)
	}
	if req.ThreeDS != nil && !req.ThreeDS.External {
		return c.chargeAuthenticated(ctx, what, req)
	}
	pm, err := c.paymentMethod(ctx, what, req.IdempotencyKey, req.Card)
	if err != nil {
		return declinedOr(ctx, what, err)
	}
	captureMethod := stripego.PaymentIntentCaptureMethodManual
	if req.Capture {
		captureMethod = stripego.PaymentIntentCaptureMethodAutomatic
	}
	params := &stripego.PaymentIntentCreateParams{
		Amount:             stripego.Int64(toStripe(req.Amount, req.Currency)),
		Currency:           stripego.String(strings.ToLower(req.Currency)),
		CaptureMethod:      stripego.String(string(captureMethod)),
		Confirm:            stripego.Bool(true),
		PaymentMethod:      stripego.String(pm.ID),
		PaymentMethodTypes: stripego.StringSlice([]string{"card"}),
		// Without our 3-D Secure step for Stripe, a charge Stripe wants
		// authenticated is declined as such rather than left waiting.
		ErrorOnRequiresAction: stripego.Bool(true),
		Metadata:              map[string]string{metaReference: req.Reference, metaKey: req.IdempotencyKey},
	}
	if card := cardOptions(req); card != nil {
		params.PaymentMethodOptions = &stripego.PaymentIntentCreatePaymentMethodOptionsParams{Card: card}
	}
	params.SetIdempotencyKey(req.IdempotencyKey)
	pi, err := c.api.V1PaymentIntents.Create(ctx, params)
	if err != nil {
		return declinedOr(ctx, what, err)
	}
	return chargeOf(what, pi)
}

// cardOptions are a charge's card options at Stripe: the merchant's own
// 3-D Secure result, passed as a third party's authentication, and
// installments as a fixed count of monthly payments; nil for neither.
func cardOptions(req connector.ChargeRequest) *stripego.PaymentIntentCreatePaymentMethodOptionsCardParams {
	var card *stripego.PaymentIntentCreatePaymentMethodOptionsCardParams
	if d := req.ThreeDS; d != nil && d.External {
		card = &stripego.PaymentIntentCreatePaymentMethodOptionsCardParams{ThreeDSecure: &stripego.PaymentIntentCreatePaymentMethodOptionsCardThreeDSecureParams{
			Cryptogram: stripego.String(d.CAVV), ElectronicCommerceIndicator: stripego.String(d.ECI),
			TransactionID: stripego.String(cmp.Or(d.DSTransID, d.XID)), Version: stripego.String(threeDSVersion(d)),
		}}
	}
	if req.Installments > 0 {
		if card == nil {
			card = &stripego.PaymentIntentCreatePaymentMethodOptionsCardParams{}
		}
		card.Installments = &stripego.PaymentIntentCreatePaymentMethodOptionsCardInstallmentsParams{
			Enabled: stripego.Bool(true),
			Plan: &stripego.PaymentIntentCreatePaymentMethodOptionsCardInstallmentsPlanParams{
				Count: stripego.Int64(int64(req.Installments)), Interval: stripego.String("month"), Type: stripego.String("fixed_count"),
			},
		}
	}
	return card
}

// threeDSVersion is the protocol of an external result: 2 when it has a
// directory server transaction id, 1 (XID) otherwise.
func threeDSVersion(d *connector.ThreeDSData) string {
	if d.DSTransID != "" {
		return "2.2.0"
	}
	return "1.0.2"
}

// paymentMethod makes a PaymentMethod of the card, under the operation's
// key + "/pm".
func (c *Client) paymentMethod(ctx context.Context, what, key string, card connector.Card) (*stripego.PaymentMethod, error) {
	month, year, err := expiry(card)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", what, connector.ErrRejected, err)
	}
	cardParams := &stripego.PaymentMethodCreateCardParams{
		Number: stripego.String(card.Number), ExpMonth: stripego.Int64(month), ExpYear: stripego.Int64(year),
	}
	if card.CVV != "" {
		cardParams.CVC = stripego.String(card.CVV)
	}
	params := &stripego.PaymentMethodCreateParams{Type: stripego.String(string(stripego.PaymentMethodTypeCard)), Card: cardParams}
	params.SetIdempotencyKey(key + "/pm")
	return c.api.V1PaymentMethods.Create(ctx, params)
}

// Inquire returns the PaymentIntent our charge with idempotencyKey made,
// found by its metadata, or an error wrapping connector.ErrNotFound when
// Stripe shows none. Stripe's search may lag a new PaymentIntent by a
// minute; the caller's retry of the charge with the same key is what
// settles it (Stripe answers a key it has seen with its first answer).
func (c *Client) Inquire(ctx context.Context, idempotencyKey string) (connector.Charge, error) {
	what := "inquire " + idempotencyKey
	if idempotencyKey == "" {
		return connector.Charge{}, fmt.Errorf("%s: %w: unusable idempotency key", what, connector.ErrRejected)
	}
	params := &stripego.PaymentIntentSearchParams{}
	params.Query = "metadata['" + metaKey + "']:" + searchString(idempotencyKey)
	params.Limit = stripego.Int64(1)
	for pi, err := range c.api.V1PaymentIntents.Search(ctx, params) {
		if err != nil {
			return connector.Charge{}, errorOf(ctx, what, err)
		}
		return chargeOf(what, pi)
	}
	return connector.Charge{}, fmt.Errorf("%s: %w", what, connector.ErrNotFound)
}

// searchString is s as a string of Stripe's search query language: in
// single quotes, a quote or a backslash in it escaped with a backslash. An
// order number may hold either; such a key was refused, and the order's
// inquiry retried for ever with the order pending.
func searchString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// LookCharge reads the PaymentIntent chargeID as it stands now. Unlike
// Inquire's search, a read by id is never behind Stripe's own record, so a
// capture or cancel that Stripe made shows at once.
func (c *Client) LookCharge(ctx context.Context, chargeID string) (connector.Charge, error) {
	what := "look " + chargeID
	if chargeID == "" || strings.ContainsAny(chargeID, "/?#") {
		return connector.Charge{}, fmt.Errorf("%s: %w: unusable charge id", what, connector.ErrRejected)
	}
	pi, err := c.api.V1PaymentIntents.Retrieve(ctx, chargeID, nil)
	if err != nil {
		return connector.Charge{}, errorOf(ctx, what, err)
	}
	return chargeOf(what, pi)
}

// Capture captures part or all of an uncaptured PaymentIntent; Stripe
// releases the rest.
func (c *Client) Capture(ctx context.Context, req connector.CaptureRequest) (connector.Charge, error) {
	what := "capture " + req.ChargeID + " " + req.IdempotencyKey
	if err := connector.CheckIDs(what, req.ChargeID, req.IdempotencyKey); err != nil {
		return connector.Charge{}, err
	}
	params := &stripego.PaymentIntentCaptureParams{AmountToCapture: stripego.Int64(toStripe(req.Amount, req.Currency))}
	params.SetIdempotencyKey(req.IdempotencyKey)
	pi, err := c.api.V1PaymentIntents.Capture(ctx, req.ChargeID, params)
	if err != nil {
		return connector.Charge{}, errorOf(ctx, what, err)
	}
	return chargeOf(what, pi)
}

// Void cancels an uncaptured PaymentIntent, releasing the authorisation.
func (c *Client) Void(ctx context.Context, req connector.VoidRequest) (connector.Charge, error) {
	what := "void " + req.ChargeID + " " + req.IdempotencyKey
	if err := connector.CheckIDs(what, req.ChargeID, req.IdempotencyKey); err != nil {
		return connector.Charge{}, err
	}
	params := &stripego.PaymentIntentCancelParams{}
	params.SetIdempotencyKey(req.IdempotencyKey)
	pi, err := c.api.V1PaymentIntents.Cancel(ctx, req.ChargeID, params)
	if err != nil {
		return connector.Charge{}, errorOf(ctx, what, err)
	}
	return chargeOf(what, pi)
}

// Refund refunds part of a captured PaymentIntent; several refunds may
// follow one another up to the captured amount. It may come back pending.
func (c *Client) Refund(ctx context.Context, req connector.RefundRequest) (connector.Refund, error) {
	what := "refund " + req.ChargeID + " " + req.IdempotencyKey
	if err := connector.CheckIDs(what, req.ChargeID, req.IdempotencyKey); err != nil {
		return connector.Refund{}, err
	}
	params := &stripego.RefundCreateParams{PaymentIntent: stripego.String(req.ChargeID), Amount: stripego.Int64(toStripe(req.Amount, req.Currency))}
	params.SetIdempotencyKey(req.IdempotencyKey)
	r, err := c.api.V1Refunds.Create(ctx, params)
	if err != nil {
		return connector.Refund{}, errorOf(ctx, what, err)
	}
	return refundOf(r), nil
}

// GetRefund reads a refund's state.
func (c *Client) GetRefund(ctx context.Context, refundID string) (connector.Refund, error) {
	what := "get refund " + refundID
	if refundID == "" {
		return connector.Refund{}, fmt.Errorf("%s: %w: empty refund id", what, connector.ErrRejected)
	}
	r, err := c.api.V1Refunds.Retrieve(ctx, refundID, nil)
	if err != nil {
		return connector.Refund{}, errorOf(ctx, what, err)
	}
	return refundOf(r), nil
}

// expiry reads the card's month and four-digit year as Stripe wants them.
func expiry(c connector.Card) (int64, int64, error) {
	month, err := strconv.ParseInt(c.ExpiryMonth, 10, 64)
	if err != nil || month < 1 || month > 12 {
		return 0, 0, errors.New("expiry month")
	}
	year, err := strconv.ParseInt(c.ExpiryYear, 10, 64)
	switch {
	case err != nil || year < 0:
		return 0, 0, errors.New("expiry year")
	case len(c.ExpiryYear) == 2:
		year += 2000
	case len(c.ExpiryYear) != 4:
		return 0, 0, errors.New("expiry year")
	}
	return month, year, nil
}

package stripe

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	stripego "github.com/stripe/stripe-go/v82"

	"github.com/paygate/paygate/internal/domain/connector"
)

// Stripe's 3-D Secure is part of its PaymentIntent, where ours is a step
// before the charge. Authenticate therefore confirms a PaymentIntent that
// only authorises (capture_method manual) with a return_url: Stripe asks
// for the shopper's authentication when the issuer wants it
// (requires_action, whose redirect_to_url is our challenge page) or
// authorises at once. The PaymentIntent's id is the authentication's, and
// the charge that follows (Charge with ThreeDS) takes that PaymentIntent,
// capturing it for a sale, instead of making a new one.
//
// Stripe sends the shopper back to the return_url with payment_intent in
// the query. The return_url is ours and signed (CallbackSecret) over the
// order's reference, so only a return Stripe's page was given reads as
// this connector's; even so it only wakes the order, which asks Stripe
// (GetAuthentication).

// ChallengeOrigin is where Stripe's 3-D Secure pages are (its
// redirect_to_url), which the shopper's pages may send the shopper to.
const ChallengeOrigin = "https://hooks.stripe.com"

// callbackConnector marks our return_url as Stripe's.
const callbackConnector = "stripe"

// Authenticate starts the card's authentication at Stripe (see above).
// req.Browser is not sent: Stripe takes no browser data through its API
// and collects it on its own authentication page.
func (c *Client) Authenticate(ctx context.Context, req connector.AuthenticationRequest) (connector.Authentication, error) {
	what := "3-D Secure " + req.IdempotencyKey
	if req.IdempotencyKey == "" || req.Reference == "" {
		return connector.Authentication{}, fmt.Errorf("%s: %w: no idempotency key or reference", what, connector.ErrRejected)
	}
	returnURL, err := c.returnURL(req.ReturnURL, req.Reference)
	if err != nil {
		return connector.Authentication{}, fmt.Errorf("%s: %w: %v", what, connector.ErrRejected, err)
	}
	pm, err := c.paymentMethod(ctx, what, req.IdempotencyKey, req.Card)
	if err != nil {
		return failedOr(ctx, what, err)
	}
	params := &stripego.PaymentIntentCreateParams{
		Amount:             stripego.Int64(toStripe(req.Amount, req.Currency)),
		Currency:           stripego.String(strings.ToLower(req.Currency)),
		CaptureMethod:      stripego.String(string(stripego.PaymentIntentCaptureMethodManual)),
		Confirm:            stripego.Bool(true),
		PaymentMethod:      stripego.String(pm.ID),
		PaymentMethodTypes: stripego.StringSlice([]string{"card"}),
		ReturnURL:          stripego.String(returnURL),
		PaymentMethodOptions: &stripego.PaymentIntentCreatePaymentMethodOptionsParams{
			Card: &stripego.PaymentIntentCreatePaymentMethodOptionsCardParams{RequestThreeDSecure: stripego.String("any")},
		},
		Metadata: map[string]string{metaReference: req.Reference, metaKey: req.IdempotencyKey},
	}
	params.SetIdempotencyKey(req.IdempotencyKey)
	pi, err := c.api.V1PaymentIntents.Create(ctx, params)
	if err != nil {
		return failedOr(ctx, what, err)
	}
	return authenticationOf(what, pi)
}

// GetAuthentication reads where the authentication's PaymentIntent stands.
func (c *Client) GetAuthentication(ctx context.Context, id string) (connector.Authentication, error) {
	what := "get 3-D Secure " + id
	if id == "" {
		return connector.Authentication{}, fmt.Errorf("%s: %w: empty id", what, connector.ErrRejected)
	}
	pi, err := c.api.V1PaymentIntents.Retrieve(ctx, id, nil)
	if err != nil {
		return connector.Authentication{}, errorOf(ctx, what, err)
	}
	return authenticationOf(what, pi)
}

// CancelAuthentication cancels the authentication's PaymentIntent, for the
// merchant's cancel of an order waiting at the challenge: a shopper who
// passes the challenge afterwards is not authorised. One already cancelled
// is left as it is.
func (c *Client) CancelAuthentication(ctx context.Context, id string) error {
	what := "cancel 3-D Secure " + id
	if id == "" {
		return fmt.Errorf("%s: %w: empty id", what, connector.ErrRejected)
	}
	params := &stripego.PaymentIntentCancelParams{}
	params.SetIdempotencyKey("cancel-authentication:" + id)
	_, err := c.api.V1PaymentIntents.Cancel(ctx, id, params)
	if err == nil {
		return nil
	}
	if pi, gerr := c.api.V1PaymentIntents.Retrieve(ctx, id, nil); gerr == nil && pi.Status == stripego.PaymentIntentStatusCanceled {
		return nil
	}
	return errorOf(ctx, what, err)
}

// authenticationOf maps a PaymentIntent onto an authentication: waiting
// for the shopper at its redirect_to_url, authenticated once Stripe
// authorised it, failed when the attempt failed. One still processing is
// an unknown outcome.
func authenticationOf(what string, pi *stripego.PaymentIntent) (connector.Authentication, error) {
	au := connector.Authentication{ID: pi.ID}
	switch pi.Status {
	case stripego.PaymentIntentStatusRequiresAction:
		if pi.NextAction == nil || pi.NextAction.RedirectToURL == nil || pi.NextAction.RedirectToURL.URL == "" {
			// Only Stripe.js could finish it; no page of ours can.
			au.Status = connector.AuthenticationFailed
			return au, nil
		}
		au.Status, au.ACSURL = connector.ChallengeRequired, pi.NextAction.RedirectToURL.URL
	case stripego.PaymentIntentStatusRequiresCapture, stripego.PaymentIntentStatusSucceeded:
		au.Status = connector.Authenticated
	case stripego.PaymentIntentStatusProcessing, stripego.PaymentIntentStatusRequiresConfirmation:
		return connector.Authentication{}, fmt.Errorf("%s: %w: PaymentIntent %s is %s", what, connector.ErrTimeout, pi.ID, pi.Status)
	default:
		au.Status = connector.AuthenticationFailed
	}
	return au, nil
}

// failedOr answers a card error of an authentication as a failed one, and
// any other error as errorOf does.
func failedOr(ctx context.Context, what string, err error) (connector.Authentication, error) {
	if se := cardError(err); se != nil {
		au := connector.Authentication{Status: connector.AuthenticationFailed}
		if se.PaymentIntent != nil {
			au.ID = se.PaymentIntent.ID
		}
		return au, nil
	}
	return connector.Authentication{}, errorOf(ctx, what, err)
}

// chargeAuthenticated is the charge after Stripe's authentication: the
// authentication's PaymentIntent, which must be this order's and of its
// amount, captured for a sale.
func (c *Client) chargeAuthenticated(ctx context.Context, what string, req connector.ChargeRequest) (connector.Charge, error) {
	id := req.ThreeDS.AuthenticationID
	if !strings.HasPrefix(id, "pi_") {
		// Another connector's authentication means nothing to Stripe.
		return connector.Charge{}, fmt.Errorf("%s: %w: %q is no Stripe authentication", what, connector.ErrRejected, id)
	}
	pi, err := c.api.V1PaymentIntents.Retrieve(ctx, id, nil)
	if err != nil {
		return connector.Charge{}, errorOf(ctx, what, err)
	}
	if pi.Metadata[metaReference] != req.Reference || pi.Amount != toStripe(req.Amount, req.Currency) || !strings.EqualFold(string(pi.Currency), req.Currency) {
		return connector.Charge{}, fmt.Errorf("%s: %w: PaymentIntent %s is not this order's authentication", what, connector.ErrRejected, id)
	}
	if pi.Status == stripego.PaymentIntentStatusRequiresCapture && req.Capture {
		params := &stripego.PaymentIntentCaptureParams{AmountToCapture: stripego.Int64(toStripe(req.Amount, req.Currency))}
		params.SetIdempotencyKey(req.IdempotencyKey)
		if pi, err = c.api.V1PaymentIntents.Capture(ctx, id, params); err != nil {
			return connector.Charge{}, errorOf(ctx, what, err)
		}
	}
	return chargeOf(what, pi)
}

// returnURL is the address Stripe sends the shopper back to: the order's
// 3-D Secure return with this connector's name, the reference and our
// signature over them.
func (c *Client) returnURL(base, reference string) (string, error) {
	if len(c.callbackSecret) == 0 {
		return "", errors.New("no callback secret: 3-D Secure is off")
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("return address %q is not an http(s) URL", base)
	}
	q := u.Query()
	q.Set("connector", callbackConnector)
	q.Set("reference", reference)
	q.Set("signature", c.sign(reference))
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func (c *Client) sign(reference string) string {
	m := hmac.New(sha256.New, c.callbackSecret)
	m.Write([]byte("stripe 3-D Secure return|" + reference))
	return hex.EncodeToString(m.Sum(nil))
}

// ReadThreeDSResult reads the shopper's return from Stripe's 3-D Secure
// page: ours when it names this connector and carries our signature over
// its reference; then it must name the PaymentIntent.
func (c *Client) ReadThreeDSResult(form url.Values) (connector.ThreeDSCallback, error) {
	if form.Get("connector") != callbackConnector || len(c.callbackSecret) == 0 {
		return connector.ThreeDSCallback{}, connector.ErrCallbackUnsigned
	}
	ref := form.Get("reference")
	if !hmac.Equal([]byte(form.Get("signature")), []byte(c.sign(ref))) {
		return connector.ThreeDSCallback{}, connector.ErrCallbackUnsigned
	}
	pi := form.Get("payment_intent")
	if ref == "" || pi == "" {
		return connector.ThreeDSCallback{}, connector.ErrCallbackMalformed
	}
	return connector.ThreeDSCallback{AuthenticationID: pi, Reference: ref}, nil
}

// ReadAPMCallback refuses every APM callback: no APM goes through Stripe.
func (c *Client) ReadAPMCallback([]byte, http.Header) (connector.APMCallback, error) {
	return connector.APMCallback{}, connector.ErrCallbackUnsigned
}

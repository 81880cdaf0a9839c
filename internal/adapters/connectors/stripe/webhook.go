package stripe

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/paygate/paygate/internal/domain/connector"
)

// ReadWebhook reads an event Stripe posts to the gateway's webhook endpoint
// (POST /v1/webhooks/stripe), checked with the library's own signature
// check (Stripe-Signature, five minutes' tolerance). Only PaymentIntent
// events of PaymentIntents the gateway made (our reference in their
// metadata) are of use: they name the PaymentIntent, which wakes an order
// waiting for Stripe's 3-D Secure as the shopper's return does, and the
// order then asks Stripe. Nothing an event claims is taken.
//
// The event's API version is not checked: an endpoint sends events in the
// account's version, which need not be the library's, and only the ids
// are read.
func (c *Client) ReadWebhook(body []byte, header http.Header) (connector.ThreeDSCallback, error) {
	if c.webhookSecret == "" {
		return connector.ThreeDSCallback{}, connector.ErrCallbackUnsigned
	}
	ev, err := webhook.ConstructEventWithOptions(body, header.Get("Stripe-Signature"), c.webhookSecret,
		webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
	if err != nil {
		return connector.ThreeDSCallback{}, connector.ErrCallbackUnsigned
	}
	if !strings.HasPrefix(string(ev.Type), "payment_intent.") || ev.Data == nil {
		return connector.ThreeDSCallback{}, connector.ErrCallbackIrrelevant
	}
	var pi struct {
		ID       string            `json:"id"`
		Object   string            `json:"object"`
		Metadata map[string]string `json:"metadata"`
	}
	if err := json.Unmarshal(ev.Data.Raw, &pi); err != nil || pi.ID == "" || pi.Object != "payment_intent" {
		return connector.ThreeDSCallback{}, connector.ErrCallbackMalformed
	}
	ref := pi.Metadata[metaReference]
	if ref == "" {
		// A PaymentIntent of another integration on the same account.
		return connector.ThreeDSCallback{}, connector.ErrCallbackIrrelevant
	}
	return connector.ThreeDSCallback{AuthenticationID: pi.ID, Reference: ref}, nil
}

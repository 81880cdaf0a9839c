package stripe

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/paygate/paygate/internal/domain/connector"
)

// TestReadWebhook: an event is read only with the endpoint's signature,
// fresh; only a PaymentIntent event of a PaymentIntent we made names an
// order to wake.
func TestReadWebhook(t *testing.T) {
	const secret = "whsec_test_paygate"
	c, err := New(Config{SecretKey: "sk_test_x", WebhookSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	event := func(typ, object string) []byte {
		return []byte(`{"id":"evt_1","object":"event","type":"` + typ + `","api_version":"2024-06-20","data":{"object":` + object + `}}`)
	}
	ours := `{"id":"pi_1","object":"payment_intent","status":"requires_capture","metadata":{"paygate_reference":"1379868670095785984"}}`
	signed := func(body []byte, at time.Time, key string) http.Header {
		sp := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: key, Timestamp: at})
		return http.Header{"Stripe-Signature": {sp.Header}}
	}
	now := time.Now()
	tests := []struct {
		name   string
		body   []byte
		header http.Header
		want   connector.ThreeDSCallback
		err    error
	}{
		{"authorised after 3-D Secure", event("payment_intent.amount_capturable_updated", ours), nil,
			connector.ThreeDSCallback{AuthenticationID: "pi_1", Reference: "1379868670095785984"}, nil},
		{"signed with another secret", event("payment_intent.succeeded", ours), signed(event("payment_intent.succeeded", ours), now, "whsec_other"),
			connector.ThreeDSCallback{}, connector.ErrCallbackUnsigned},
		{"signed too long ago", event("payment_intent.succeeded", ours), signed(event("payment_intent.succeeded", ours), now.Add(-10*time.Minute), secret),
			connector.ThreeDSCallback{}, connector.ErrCallbackUnsigned},
		{"not signed", event("payment_intent.succeeded", ours), http.Header{}, connector.ThreeDSCallback{}, connector.ErrCallbackUnsigned},
		{"a refund's event", event("charge.refunded", `{"id":"ch_1","object":"charge"}`), nil, connector.ThreeDSCallback{}, connector.ErrCallbackIrrelevant},
		{"a PaymentIntent we did not make", event("payment_intent.succeeded", `{"id":"pi_2","object":"payment_intent","metadata":{}}`), nil,
			connector.ThreeDSCallback{}, connector.ErrCallbackIrrelevant},
		{"a PaymentIntent event without one", event("payment_intent.succeeded", `{"object":"charge"}`), nil,
			connector.ThreeDSCallback{}, connector.ErrCallbackMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			header := tc.header
			if header == nil {
				header = signed(tc.body, now, secret)
			}
			got, err := c.ReadWebhook(tc.body, header)
			if got != tc.want || !errors.Is(err, tc.err) {
				t.Errorf("ReadWebhook = %+v, %v; want %+v, %v", got, err, tc.want, tc.err)
			}
		})
	}
	plain, _ := New(Config{SecretKey: "sk_test_x"})
	body := event("payment_intent.succeeded", ours)
	if _, err := plain.ReadWebhook(body, signed(body, now, secret)); !errors.Is(err, connector.ErrCallbackUnsigned) {
		t.Errorf("without a webhook secret: %v, want refused", err)
	}
}

// Package notify builds, signs and verifies the notifications Paygate sends
// to a merchant's notify_url (docs/design.md §6), schedules their retries and keeps
// deliveries away from private addresses.
//
// A notification is a form-encoded POST signed twice: the encryption_data
// field over the payment-result recipe of docs/design.md §3 (signing.SignPaymentResult,
// the one function every payment result is signed with), and Standard Webhooks
// headers (webhook-id, webhook-timestamp, webhook-signature) over the whole
// body. Everything here is pure and deterministic except NewClient, so
// workflows may call the signing and scheduling functions directly.
package notify

import "net/url"

// Fields are the form fields of one notification, in no particular order.
type Fields map[string]string

// Get returns the named field, "" when the notification has none; with
// signing.PaymentResultFrom it reads the fields encryption_data covers.
func (f Fields) Get(name string) string { return f[name] }

// EncryptionDataField is the form field that carries the recipe signature.
const EncryptionDataField = "encryption_data"

// NotifyTypeField names a notification's kind; TypePayout is a payout's,
// whose encryption_data is the payout-result recipe (signing).
const (
	NotifyTypeField = "notify_type"
	TypePayout      = "payout"
	// TypeSettlement tells a merchant account what an acquirer settled to
	// it on a day. It carries no encryption_data: its fields are the
	// gateway's own, and the webhook signature headers sign its body.
	TypeSettlement = "settlement"
	// TypeSubscription tells a merchant that a subscription was paused,
	// resumed or amended. Like a settlement notification it carries no
	// encryption_data: the merchant asked for the change, and the webhook
	// signature headers sign what became of it.
	TypeSubscription = "subscription"
	// TypeDispute tells a merchant of a dispute of one of its payments:
	// raised, reminded of its deadline, moved, decided. Its fields are the
	// gateway's and the acquirer's, so like the settlement notification it
	// carries no encryption_data; the webhook headers sign it.
	TypeDispute = "dispute"
)

// HeadersOnly reports whether notifications of notify_type typ carry no
// encryption_data and are signed by the webhook headers alone.
func HeadersOnly(typ string) bool {
	return typ == TypeSettlement || typ == TypeSubscription || typ == TypeDispute
}

// The kinds of an order's notifications (notify_type). They travel in
// notifications and the record, so they must never change.
const (
	TypePayment = "payment"
	TypeReview  = "review"
	TypeCapture = "capture"
	TypeCancel  = "cancel"
	TypeRefund  = "refund"
	TypeExpiry  = "expiry"
)

// Body form-encodes the fields with keys sorted (url.Values.Encode), so one
// notification always has one body.
func Body(f Fields) []byte {
	v := make(url.Values, len(f))
	for k, s := range f {
		v.Set(k, s)
	}
	return []byte(v.Encode())
}

// Package notify builds, signs and verifies the notifications Paygate sends
// to a merchant's notify_url (DESIGN §6), schedules their retries and keeps
// deliveries away from private addresses.
//
// A notification is a form-encoded POST signed twice: the encryption_data
// field over the payment-result recipe of DESIGN §3, and Standard Webhooks
// headers (webhook-id, webhook-timestamp, webhook-signature) over the whole
// body. Everything here is pure and deterministic except NewClient, so
// workflows may call the signing and scheduling functions directly.
package notify

import (
	"net/url"

	"github.com/paygate/paygate/internal/domain/signing"
)

// Fields are the form fields of one notification, in no particular order.
type Fields map[string]string

// PaymentResultFields are the fields signed by encryption_data on a payment
// result, in recipe order (DESIGN §3), before the sign key.
var PaymentResultFields = []string{
	"merchant_id", "account_id", "transaction_id", "order_no",
	"currency", "amount", "order_status", "result_info",
}

// EncryptionDataField is the form field that carries the recipe signature.
const EncryptionDataField = "encryption_data"

// Body form-encodes the fields with keys sorted (url.Values.Encode), so one
// notification always has one body.
func Body(f Fields) []byte {
	v := make(url.Values, len(f))
	for k, s := range f {
		v.Set(k, s)
	}
	return []byte(v.Encode())
}

// PaymentResultSignature computes encryption_data over the payment-result
// recipe of DESIGN §3 (merchant_id, account_id, transaction_id, order_no,
// currency, amount, order_status, result_info) as upper-case hex. A field
// missing from f is signed as the empty string.
func PaymentResultSignature(key string, f Fields) string {
	return signing.SignUpper(key, recipeValues(f)...)
}

func recipeValues(f Fields) []string {
	values := make([]string, len(PaymentResultFields))
	for i, name := range PaymentResultFields {
		values[i] = f[name]
	}
	return values
}

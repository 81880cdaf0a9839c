package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/domain/signing"
)

// Standard Webhooks header names.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// DefaultTolerance is how far a webhook-timestamp may be from now, in either
// direction, before the notification is refused as stale.
const DefaultTolerance = 5 * time.Minute

// Errors returned (wrapped) by the Verify functions; match them with errors.Is.
var (
	ErrMissingHeaders    = errors.New("notify: missing webhook headers")
	ErrStaleTimestamp    = errors.New("notify: webhook timestamp outside the tolerance")
	ErrBadSignature      = errors.New("notify: no webhook signature matches")
	ErrBadEncryptionData = errors.New("notify: encryption_data does not match the payment result")
	// ErrHeadersOnly: the notification's kind carries no encryption_data
	// (HeadersOnly); only its webhook headers can prove it.
	ErrHeadersOnly = errors.New("notify: this notification is signed by its webhook headers alone")
)

// webhookMAC returns HMAC-SHA256(key, id + "." + timestamp + "." + body).
func webhookMAC(key, id, timestamp string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Header holds webhook headers under canonical names, as net/http keeps
// them, so a sender can copy it into a request's header as it is. It is
// its own type so that this package stays free of net/http.
type Header map[string][]string

// HeaderReader is what the Verify functions read headers through; an
// http.Header is one.
type HeaderReader interface {
	Get(name string) string
	Values(name string) []string
}

// canonicalName spells a header name as net/http does: the first letter and
// each letter after a hyphen in upper case, the rest in lower case.
func canonicalName(name string) string {
	b := []byte(name)
	upper := true
	for i, c := range b {
		switch {
		case upper && 'a' <= c && c <= 'z':
			b[i] = c - 'a' + 'A'
		case !upper && 'A' <= c && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
		upper = c == '-'
	}
	return string(b)
}

// Get returns the first value of the named header, or "".
func (h Header) Get(name string) string {
	if v := h[canonicalName(name)]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Values returns every value of the named header.
func (h Header) Values(name string) []string { return h[canonicalName(name)] }

// Set replaces the named header's values with value.
func (h Header) Set(name, value string) { h[canonicalName(name)] = []string{value} }

// Del removes the named header.
func (h Header) Del(name string) { delete(h, canonicalName(name)) }

// Clone returns a copy that shares nothing with h.
func (h Header) Clone() Header {
	out := make(Header, len(h))
	for k, v := range h {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// Sign returns the Standard Webhooks headers for a body: webhook-id is id,
// webhook-timestamp is ts in Unix seconds and webhook-signature is
// "v1," + base64(HMAC-SHA256(key, id + "." + timestamp + "." + body)). The
// key's bytes are used as given, not base64-decoded.
func Sign(key, id string, ts time.Time, body []byte) Header {
	timestamp := strconv.FormatInt(ts.Unix(), 10)
	h := make(Header, 3)
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, timestamp)
	h.Set(HeaderSignature, "v1,"+base64.StdEncoding.EncodeToString(webhookMAC(key, id, timestamp, body)))
	return h
}

// VerifyHeaders checks the Standard Webhooks signature and timestamp of a
// received notification. The timestamp must be within tolerance of now in
// either direction (DefaultTolerance when tolerance is not positive). The
// webhook-signature header may hold several space-separated entries, and may
// be repeated; the notification is accepted when any "v1," entry matches.
// Entries of other versions are ignored.
func VerifyHeaders(key string, h HeaderReader, body []byte, now time.Time, tolerance time.Duration) error {
	id, timestamp := h.Get(HeaderID), h.Get(HeaderTimestamp)
	sigs := h.Values(HeaderSignature)
	var missing []string
	if id == "" {
		missing = append(missing, HeaderID)
	}
	if timestamp == "" {
		missing = append(missing, HeaderTimestamp)
	}
	if len(sigs) == 0 || strings.TrimSpace(strings.Join(sigs, "")) == "" {
		missing = append(missing, HeaderSignature)
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s", ErrMissingHeaders, strings.Join(missing, ", "))
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %s %q is not a Unix time", ErrStaleTimestamp, HeaderTimestamp, timestamp)
	}
	ts := time.Unix(sec, 0)
	if d := now.Sub(ts); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: %s %s is %s away from now %s (tolerance %s)",
			ErrStaleTimestamp, HeaderTimestamp, timestamp, d.Abs().Round(time.Second),
			now.UTC().Format(time.RFC3339), tolerance)
	}
	want := webhookMAC(key, id, timestamp, body)
	for _, header := range sigs {
		for _, entry := range strings.Fields(header) {
			version, sig, ok := strings.Cut(entry, ",")
			if !ok || version != "v1" {
				continue
			}
			got, err := base64.StdEncoding.DecodeString(sig)
			if err != nil {
				continue
			}
			if hmac.Equal(got, want) {
				return nil
			}
		}
	}
	return fmt.Errorf("%w (%s %s)", ErrBadSignature, HeaderID, id)
}

// VerifyBody checks the encryption_data form field of the body against the
// payment-result recipe, or the payout-result recipe when notify_type is
// payout; hex case does not matter. A body that is not a form,
// repeats a field (so a reader could see another value than the one
// verified) or has no encryption_data is refused with ErrBadEncryptionData.
func VerifyBody(key string, body []byte) error {
	v, err := url.ParseQuery(string(body))
	if err != nil {
		return fmt.Errorf("%w: body is not form-encoded: %v", ErrBadEncryptionData, err)
	}
	for name, vs := range v {
		if len(vs) > 1 {
			return fmt.Errorf("%w: field %s appears %d times", ErrBadEncryptionData, name, len(vs))
		}
	}
	if HeadersOnly(v.Get(NotifyTypeField)) {
		return fmt.Errorf("%w (notify_type %s)", ErrHeadersOnly, v.Get(NotifyTypeField))
	}
	got := strings.TrimSpace(v.Get(EncryptionDataField))
	if got == "" {
		return fmt.Errorf("%w: no %s field", ErrBadEncryptionData, EncryptionDataField)
	}
	var ok bool
	if v.Get(NotifyTypeField) == TypePayout {
		ok = signing.VerifyPayoutResult(key, got, v.Get)
	} else {
		ok = signing.VerifyPaymentResult(key, got, signing.PaymentResultFrom(v.Get))
	}
	if !ok {
		return ErrBadEncryptionData
	}
	return nil
}

// Verify checks the webhook headers (VerifyHeaders) and then the body's
// encryption_data (VerifyBody), returning the first failure.
func Verify(key string, h HeaderReader, body []byte, now time.Time, tolerance time.Duration) error {
	if err := VerifyHeaders(key, h, body, now, tolerance); err != nil {
		return err
	}
	if err := VerifyBody(key, body); err != nil && !errors.Is(err, ErrHeadersOnly) {
		return err
	}
	return nil
}

package notify

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/signing"
)

const testKey = "k3y-for-tests-0123456789abcdef"

// vectorFields is the payment-result vector of signature-vectors.json.
func vectorFields() Fields {
	return Fields{
		"merchant_id": "10086", "account_id": "10086001", "transaction_id": "1379868670095785984",
		"order_no": "ORD-2026-0002", "currency": "USD", "amount": "12.34",
		"order_status": "1", "result_info": "0000:Success",
	}
}

const vectorSignature = "6036B8D34D939F79412A6B733CC41CD788E73E76760725ACD5D829DDB62B15ED"

func signedBody(key string) []byte {
	f := vectorFields()
	f["notify_type"] = "payment"
	f["notify_id"] = "N1379868670095785999"
	f[EncryptionDataField] = signing.SignPaymentResult(key, signing.PaymentResultFrom(f.Get))
	return Body(f)
}

// TestNotificationSignatureVector: a notification's fields, extra ones
// included, are signed over the payment-result recipe alone.
func TestNotificationSignatureVector(t *testing.T) {
	cases := []struct {
		name  string
		extra Fields
	}{
		{"recipe fields only", nil},
		{"notification fields beside the recipe", Fields{"notify_type": "refund", "notify_id": "N1", "extra": "ignored"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := vectorFields()
			for k, v := range tc.extra {
				f[k] = v
			}
			if got := signing.SignPaymentResult(testKey, signing.PaymentResultFrom(f.Get)); got != vectorSignature {
				t.Fatalf("SignPaymentResult = %s, want %s", got, vectorSignature)
			}
		})
	}
}

func TestBodyKeyOrder(t *testing.T) {
	tests := []struct {
		name string
		in   Fields
		want string
	}{
		{"empty", Fields{}, ""},
		{"sorted keys", Fields{"z": "1", "a": "2", "m": "3"}, "a=2&m=3&z=1"},
		{"escaped values", Fields{"result_info": "0000:Success", "amount": "1 2&3"}, "amount=1+2%263&result_info=0000%3ASuccess"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 20 { // map order varies between runs; the body must not
				if got := string(Body(tt.in)); got != tt.want {
					t.Fatalf("Body = %q, want %q", got, tt.want)
				}
			}
		})
	}
}

func TestSignVerifyHeaders(t *testing.T) {
	const key = "whsec-test-key"
	sent := time.Unix(1767225600, 0)
	body := []byte("a=1&b=2")
	// A receiver reads the headers as net/http gives them.
	good := http.Header(Sign(key, "msg_1", sent, body))
	otherSig := Sign("another-key", "msg_1", sent, body).Get(HeaderSignature)
	with := func(mod func(h http.Header)) http.Header {
		h := good.Clone()
		mod(h)
		return h
	}
	tests := []struct {
		name    string
		key     string
		h       http.Header
		body    []byte
		now     time.Time
		tol     time.Duration
		wantErr error
	}{
		{"round trip", key, good, body, sent, 0, nil},
		{"5m old accepted", key, good, body, sent.Add(5 * time.Minute), DefaultTolerance, nil},
		{"one byte changed", key, good, []byte("a=1&b=3"), sent, 0, ErrBadSignature},
		{"byte appended", key, good, []byte("a=1&b=2\n"), sent, 0, ErrBadSignature},
		{"5m01s old", key, good, body, sent.Add(5*time.Minute + time.Second), DefaultTolerance, ErrStaleTimestamp},
		{"5m01s in the future", key, good, body, sent.Add(-5*time.Minute - time.Second), DefaultTolerance, ErrStaleTimestamp},
		{"zero tolerance means default", key, good, body, sent.Add(5*time.Minute + time.Second), 0, ErrStaleTimestamp},
		{"wider tolerance", key, good, body, sent.Add(time.Hour), 2 * time.Hour, nil},
		{"wrong key", "whsec-wrong-key", good, body, sent, 0, ErrBadSignature},
		{"missing id", key, with(func(h http.Header) { h.Del(HeaderID) }), body, sent, 0, ErrMissingHeaders},
		{"missing timestamp", key, with(func(h http.Header) { h.Del(HeaderTimestamp) }), body, sent, 0, ErrMissingHeaders},
		{"missing signature", key, with(func(h http.Header) { h.Del(HeaderSignature) }), body, sent, 0, ErrMissingHeaders},
		{"no headers", key, http.Header{}, body, sent, 0, ErrMissingHeaders},
		{"malformed timestamp", key, with(func(h http.Header) { h.Set(HeaderTimestamp, "2026-01-01") }), body, sent, 0, ErrStaleTimestamp},
		{"id changed", key, with(func(h http.Header) { h.Set(HeaderID, "msg_2") }), body, sent, 0, ErrBadSignature},
		{"second of two v1 matches", key, with(func(h http.Header) {
			h.Set(HeaderSignature, otherSig+" "+good.Get(HeaderSignature))
		}), body, sent, 0, nil},
		{"repeated header, second matches", key, with(func(h http.Header) {
			h.Set(HeaderSignature, otherSig)
			h.Add(HeaderSignature, good.Get(HeaderSignature))
		}), body, sent, 0, nil},
		{"other versions ignored", key, with(func(h http.Header) {
			h.Set(HeaderSignature, "v1a,"+strings.TrimPrefix(good.Get(HeaderSignature), "v1,")+" v2,xyz")
		}), body, sent, 0, ErrBadSignature},
		{"garbage entries then match", key, with(func(h http.Header) {
			h.Set(HeaderSignature, "v1,!!notbase64 v1 "+good.Get(HeaderSignature))
		}), body, sent, 0, nil},
		{"only non-matching v1", key, with(func(h http.Header) { h.Set(HeaderSignature, otherSig) }), body, sent, 0, ErrBadSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := VerifyHeaders(tt.key, tt.h, tt.body, tt.now, tt.tol)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("VerifyHeaders = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("VerifyHeaders = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestSignHeaders(t *testing.T) {
	h := Sign("whsec-test-key", "msg_2Lh9", time.Unix(1767225600, 0), []byte("a=1&b=2"))
	want := map[string]string{
		"Webhook-Id":        "msg_2Lh9",
		"Webhook-Timestamp": "1767225600",
		// Computed independently with Python's hmac module.
		"Webhook-Signature": "v1,nTjJcBomJbS/CNOVNEgRZvtNx1L5v9uBhl9YSFS1Iqc=",
	}
	if len(h) != len(want) {
		t.Fatalf("Sign gave %d headers, want %d: %v", len(h), len(want), h)
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}

func TestVerifyBody(t *testing.T) {
	good := signedBody(testKey)
	replaceSig := func(sig string) []byte {
		return []byte(strings.Replace(string(good), "encryption_data="+vectorSignature, "encryption_data="+sig, 1))
	}
	if !strings.Contains(string(good), "encryption_data="+vectorSignature) {
		t.Fatalf("body %s does not carry the vector signature", good)
	}
	tests := []struct {
		name    string
		key     string
		body    []byte
		wantErr error
	}{
		{"good upper case", testKey, good, nil},
		{"good lower case", testKey, replaceSig(strings.ToLower(vectorSignature)), nil},
		{"good mixed case", testKey, replaceSig(strings.ToLower(vectorSignature[:10]) + vectorSignature[10:]), nil},
		{"trailing newline tolerated on the field", testKey, append(append([]byte{}, good...), '\n'), nil},
		{"wrong key", "another-key", good, ErrBadEncryptionData},
		{"bad signature", testKey, replaceSig(strings.Repeat("0", 64)), ErrBadEncryptionData},
		{"short signature", testKey, replaceSig("6036B8"), ErrBadEncryptionData},
		{"amount changed", testKey, []byte(strings.Replace(string(good), "amount=12.34", "amount=12.35", 1)), ErrBadEncryptionData},
		{"no encryption_data", testKey, Body(vectorFields()), ErrBadEncryptionData},
		{"repeated field", testKey, append(append([]byte{}, good...), "&amount=99.00"...), ErrBadEncryptionData},
		{"not a form", testKey, []byte("amount=%zz"), ErrBadEncryptionData},
		{"payout, its result recipe", testKey, payoutBody("FAILED", "FAILED"), nil},
		{"payout, status changed after signing", testKey, payoutBody("FAILED", "COMPLETED"), ErrBadEncryptionData},
		{"payout signed with the request recipe", testKey, payoutRequestSigned(), ErrBadEncryptionData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := VerifyBody(tt.key, tt.body)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("VerifyBody = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("VerifyBody = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestVerify(t *testing.T) {
	now := time.Unix(1767225600, 0)
	body := signedBody(testKey)
	h := Sign(testKey, "msg_1", now, body)
	if err := Verify(testKey, h, body, now, 0); err != nil {
		t.Fatalf("Verify = %v, want nil", err)
	}
	// Headers signed correctly over a body whose encryption_data is wrong.
	bad := []byte(strings.Replace(string(body), "amount=12.34", "amount=12.35", 1))
	if err := Verify(testKey, Sign(testKey, "msg_1", now, bad), bad, now, 0); !errors.Is(err, ErrBadEncryptionData) {
		t.Fatalf("Verify(bad body) = %v, want ErrBadEncryptionData", err)
	}
	if err := Verify(testKey, http.Header{}, body, now, 0); !errors.Is(err, ErrMissingHeaders) {
		t.Fatalf("Verify(no headers) = %v, want ErrMissingHeaders", err)
	}
}

// TestVerifyHeadersOnly: settlement and subscription notifications carry
// no encryption_data; their webhook headers alone prove them, and the body
// alone proves nothing.
func TestVerifyHeadersOnly(t *testing.T) {
	now := time.Unix(1767225600, 0)
	tests := []struct {
		name    string
		typ     string
		headers bool
		want    error
	}{
		{"settlement with its headers", TypeSettlement, true, nil},
		{"subscription with its headers", TypeSubscription, true, nil},
		{"subscription without headers", TypeSubscription, false, ErrMissingHeaders},
		{"a payment without encryption_data", TypePayment, true, ErrBadEncryptionData},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := Body(Fields{"notify_type": tc.typ, "notify_id": "R1-s01", "merchant_id": "10086", "recurring_status": "4"})
			var h HeaderReader = http.Header{}
			if tc.headers {
				h = Sign(testKey, "R1-s01", now, body)
			}
			if err := Verify(testKey, h, body, now, 0); !errors.Is(err, tc.want) {
				t.Errorf("Verify = %v, want %v", err, tc.want)
			}
			if err := VerifyBody(testKey, body); tc.typ != TypePayment && !errors.Is(err, ErrHeadersOnly) {
				t.Errorf("VerifyBody = %v, want ErrHeadersOnly", err)
			}
		})
	}
}

// payoutFields is a payout notification's fields without encryption_data.
func payoutFields(status string) Fields {
	return Fields{"notify_type": TypePayout, "notify_id": "1234567890123456789-r01", "merchant_id": "10086",
		"account_id": "10086001", "request_id": "0b5f6e0c-3c1a-4f7e-9a51-8d2b1c7e4a10", "payment_currency": "USD",
		"payment_amount": "100.00", "transaction_id": "1234567890123456789", "status": status, "failure_type": ""}
}

// payoutBody is a payout notification signed for signedStatus and sent
// with sentStatus.
func payoutBody(signedStatus, sentStatus string) []byte {
	f := payoutFields(signedStatus)
	sig := signing.SignPayoutResult(testKey, f.Get)
	f = payoutFields(sentStatus)
	f[EncryptionDataField] = sig
	return Body(f)
}

// payoutRequestSigned is a payout notification signed with the payout
// request's recipe, as before the payout-result recipe.
func payoutRequestSigned() []byte {
	f := payoutFields("FAILED")
	f[EncryptionDataField] = signing.SignUpper(testKey, "10086", "10086001", "0b5f6e0c-3c1a-4f7e-9a51-8d2b1c7e4a10", "USD", "100.00")
	return Body(f)
}

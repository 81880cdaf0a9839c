package notify

import (
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/signing"
)

// Fuzz targets: go test -run='^$' -fuzz='^FuzzCheckURL$' ./internal/domain/notify
// (or make fuzz). Plain go test runs the seeds.

// FuzzParseSchedule checks that a schedule ParseSchedule accepts is
// positive with max at least initial, reads back the same from its own
// rendering, and gives delays within [base/2, base] for any attempt, base
// being initial doubled per attempt up to max, always the same for one seed.
func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{
		"", "initial=30s,max=1h,horizon=72h", "max=1s", "initial=2h", "initial=1ns,max=2562047h", " initial = 1m , ",
		"initial=0s", "initial=-1s", "initial=1s,initial=2s", "bogus=1s", "initial", "initial=1e9", "initial=1µs",
		"initial=9223372036854775807ns", "initial=1s,max=9223372036854775807ns", "initial=1s\x00", ",,,",
	} {
		f.Add(s, "order-1", 1)
	}
	f.Add("initial=1ns,max=9223372036854775807ns", "x", 100)
	f.Add("", "", -5)
	f.Fuzz(func(t *testing.T, spec, seed string, attempt int) {
		s, err := ParseSchedule(spec)
		if err != nil {
			return
		}
		if s.Initial <= 0 || s.Max < s.Initial || s.Horizon <= 0 {
			t.Fatalf("ParseSchedule(%q) = %+v", spec, s)
		}
		again, err := ParseSchedule(fmt.Sprintf("initial=%s,max=%s,horizon=%s", s.Initial, s.Max, s.Horizon))
		if err != nil || again != s {
			t.Fatalf("ParseSchedule of %+v rendered = %+v, %v", s, again, err)
		}
		attempt %= 200
		n := max(attempt, 1)
		base := new(big.Int).Lsh(big.NewInt(int64(s.Initial)), uint(n-1))
		if base.Cmp(big.NewInt(int64(s.Max))) > 0 {
			base.SetInt64(int64(s.Max))
		}
		d := time.Duration(base.Int64())
		got := s.Delay(seed, attempt)
		if got < d/2 || got > d {
			t.Fatalf("%+v.Delay(%q, %d) = %s, want within [%s, %s]", s, seed, attempt, got, d/2, d)
		}
		if s.Delay(seed, attempt) != got {
			t.Fatalf("Delay(%q, %d) is not deterministic", seed, attempt)
		}
	})
}

// FuzzWebhookSignature checks the Standard Webhooks headers: what Sign
// makes, VerifyHeaders accepts at the signing time; another key, body or id,
// a changed signature or a timestamp outside the tolerance is refused.
func FuzzWebhookSignature(f *testing.F) {
	f.Add("whsec", "msg_1", int64(1767225600), []byte("merchant_id=10086&amount=12.34"), uint8(0))
	f.Add("", "x", int64(0), []byte{}, uint8(7))
	f.Add("k\x00", "id with spaces", int64(-62135596800), []byte("\x00\xff"), uint8(43))
	f.Add("ключ", "\xff", int64(253402300799), []byte(strings.Repeat("a", 1000)), uint8(255))
	f.Fuzz(func(t *testing.T, key, id string, sec int64, body []byte, at uint8) {
		if strings.TrimSpace(id) == "" || strings.ContainsAny(id, "\r\n") {
			return
		}
		sec %= 1 << 37 // some 4,000 years either side of 1970
		ts := time.Unix(sec, 0)
		h := Sign(key, id, ts, body)
		if err := VerifyHeaders(key, h, body, ts, 0); err != nil {
			t.Fatalf("VerifyHeaders of its own headers = %v", err)
		}
		if err := VerifyHeaders(key, h, body, ts.Add(DefaultTolerance), 0); err != nil {
			t.Fatalf("VerifyHeaders at the edge of the tolerance = %v", err)
		}
		if err := VerifyHeaders(key, h, body, ts.Add(DefaultTolerance+time.Second), 0); !errors.Is(err, ErrStaleTimestamp) {
			t.Fatalf("VerifyHeaders past the tolerance = %v, want ErrStaleTimestamp", err)
		}
		for name, err := range map[string]error{
			"another key":  VerifyHeaders(key+"x", h, body, ts, 0),
			"another body": VerifyHeaders(key, h, append(body[:len(body):len(body)], 'x'), ts, 0),
		} {
			if !errors.Is(err, ErrBadSignature) {
				t.Fatalf("%s: VerifyHeaders = %v, want ErrBadSignature", name, err)
			}
		}
		other := h.Clone()
		other.Set(HeaderID, id+"x")
		if err := VerifyHeaders(key, other, body, ts, 0); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("another id: VerifyHeaders = %v, want ErrBadSignature", err)
		}
		sig := []byte(h.Get(HeaderSignature))
		// Inside the base64, short of its last character, whose low bits the
		// lenient decoder ignores.
		i := 3 + int(at)%(len(sig)-5)
		sig[i] ^= 0x01
		if sig[i] == '=' || sig[i] == 0 {
			return
		}
		other = h.Clone()
		other.Set(HeaderSignature, string(sig))
		if err := VerifyHeaders(key, other, body, ts, 0); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("changed signature %s: VerifyHeaders = %v, want ErrBadSignature", sig, err)
		}
	})
}

// paymentResultRecipe is the payment-result recipe as docs/design.md §3 lists it,
// spelled here apart from the signing package so the fuzz target checks
// VerifyBody against the design rather than against itself.
var paymentResultRecipe = []string{
	"merchant_id", "account_id", "transaction_id", "order_no",
	"currency", "amount", "order_status", "result_info",
}

// FuzzVerifyBody checks the encryption_data of a notification body: a body
// built by Body with signing.SignPaymentResult verifies and stops verifying
// when any signed value changes; on any body, VerifyBody accepts exactly a
// form with no repeated field whose encryption_data is the recipe signature.
func FuzzVerifyBody(f *testing.F) {
	f.Add("sign-key", "10086", "1234567890123456789", "12.34", "success", []byte("merchant_id=10086&encryption_data=00"))
	f.Add("", "", "", "", "", []byte(""))
	f.Add("k", "a&b=c", "\x00", "12.3", "\xff", []byte("amount=%zz"))
	f.Add("k", " 1 ", "+", "%41", "é", []byte("a=1&a=2&encryption_data=x"))
	f.Add("k", "1", "2", "3", "4", []byte("merchant_id=1;account_id=2"))
	f.Fuzz(func(t *testing.T, key, merchant, txid, amount, status string, raw []byte) {
		fields := Fields{"merchant_id": merchant, "account_id": "1008601", "transaction_id": txid, "order_no": "A1",
			"currency": "USD", "amount": amount, "order_status": status, "result_info": "ok"}
		fields[EncryptionDataField] = signing.SignPaymentResult(key, signing.PaymentResultFrom(fields.Get))
		body := Body(fields)
		if err := VerifyBody(key, body); err != nil {
			t.Fatalf("VerifyBody(%q) of its own signature = %v", body, err)
		}
		changed := Fields{}
		for k, v := range fields {
			changed[k] = v
		}
		changed["amount"] += "0"
		if err := VerifyBody(key, Body(changed)); !errors.Is(err, ErrBadEncryptionData) {
			t.Fatalf("VerifyBody with the amount changed = %v, want ErrBadEncryptionData", err)
		}

		err := VerifyBody(key, raw)
		v, perr := url.ParseQuery(string(raw))
		want := perr == nil
		for _, vs := range v {
			want = want && len(vs) == 1
		}
		sig := strings.TrimSpace(v.Get(EncryptionDataField))
		values := make([]string, len(paymentResultRecipe))
		for i, name := range paymentResultRecipe {
			values[i] = v.Get(name)
		}
		want = want && sig != "" && signing.Verify(key, sig, values...)
		if (err == nil) != want || (err != nil && !errors.Is(err, ErrBadEncryptionData)) {
			t.Fatalf("VerifyBody(%q) = %v, want accepted %v", raw, err, want)
		}
	})
}

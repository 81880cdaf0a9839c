package simacquirer

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fuzz targets: go test -run='^$' -fuzz='^FuzzVerifyProviderSignature$'
// ./internal/adapters/connectors/simacquirer (or make fuzz). Plain go test runs the seeds.

// flipHex returns sig with the hex digit at i replaced by another one.
func flipHex(sig string, i int) string {
	r := byte('0')
	if sig[i] == '0' {
		r = '1'
	}
	return sig[:i] + string(r) + sig[i+1:]
}

// FuzzVerifyProviderSignature checks the APM callback signature: it accepts
// exactly the provider's lower-case hex HMAC of the body under the secret;
// a changed hex digit, another case, another body or another secret is
// refused; and no input panics.
func FuzzVerifyProviderSignature(f *testing.F) {
	body := []byte(`{"payment_id":"apm_1","reference":"o1","status":"succeeded","amount":1000,"currency":"BRL","method":"PIX"}`)
	f.Add("sim-secret", body, SignProviderCallback("sim-secret", body), uint8(0))
	f.Add("sim-secret", body, strings.ToUpper(SignProviderCallback("sim-secret", body)), uint8(5))
	f.Add("", []byte{}, "", uint8(63))
	f.Add("s", []byte("\x00\xff"), "00", uint8(9))
	f.Add("s\x00", []byte("a"), SignProviderCallback("s", []byte("a")), uint8(1))
	f.Fuzz(func(t *testing.T, secret string, body []byte, sig string, at uint8) {
		want := SignProviderCallback(secret, body)
		if got := VerifyProviderSignature(secret, body, sig); got != (sig == want) {
			t.Fatalf("VerifyProviderSignature(%q, %q, %q) = %v, want %v", secret, body, sig, got, !got)
		}
		if len(want) != 64 || strings.Trim(want, "0123456789abcdef") != "" {
			t.Fatalf("SignProviderCallback = %q, want 64 lower-case hex digits", want)
		}
		if !VerifyProviderSignature(secret, body, want) {
			t.Fatal("the provider's own signature is refused")
		}
		i := int(at) % 64
		for _, bad := range []string{flipHex(want, i), strings.ToUpper(want), want[:63], want + "0", ""} {
			if bad != want && VerifyProviderSignature(secret, body, bad) {
				t.Fatalf("VerifyProviderSignature accepts %q", bad)
			}
		}
		if VerifyProviderSignature(secret, append(body[:len(body):len(body)], 'x'), want) {
			t.Fatal("a signature is accepted for a longer body")
		}
		if VerifyProviderSignature(secret+"x", body, want) {
			t.Fatal("a signature is accepted under another secret")
		}
	})
}

// FuzzVerifyThreeDSResult checks the ACS's challenge-result signature: the
// round trip holds, a changed hex digit or any changed field is refused, and
// two results whose fields hold no '|' never share a signature.
func FuzzVerifyThreeDSResult(f *testing.F) {
	f.Add("sim-secret", "auth_1", "authenticated", "AAAB", "o1", "", uint8(0))
	f.Add("", "", "", "", "", "00", uint8(63))
	f.Add("s", "a|b", "c", "", "", "x", uint8(3))
	f.Add("s", "\x00", "\xff", "ÿ", "|", strings.Repeat("a", 64), uint8(200))
	f.Fuzz(func(t *testing.T, secret, id, status, cavv, ref, sig string, at uint8) {
		want := SignThreeDSResult(secret, id, status, cavv, ref)
		if got := VerifyThreeDSResult(secret, id, status, cavv, ref, sig); got != (sig == want) {
			t.Fatalf("VerifyThreeDSResult(..., %q) = %v, want %v", sig, got, !got)
		}
		if !VerifyThreeDSResult(secret, id, status, cavv, ref, want) {
			t.Fatal("the ACS's own signature is refused")
		}
		if bad := flipHex(want, int(at)%64); VerifyThreeDSResult(secret, id, status, cavv, ref, bad) {
			t.Fatalf("VerifyThreeDSResult accepts %q", bad)
		}
		fields := []string{id, status, cavv, ref}
		for i := range fields {
			changed := append([]string(nil), fields...)
			changed[i] += "x"
			if VerifyThreeDSResult(secret, changed[0], changed[1], changed[2], changed[3], want) {
				t.Fatalf("a signature of %q is accepted for %q", fields, changed)
			}
		}
		// Moving one character from one field into its neighbour.
		if strings.Contains(id+status+cavv+ref, "|") || id == "" {
			return
		}
		if VerifyThreeDSResult(secret, id[:len(id)-1], id[len(id)-1:]+status, cavv, ref, want) {
			t.Fatalf("a signature of %q is accepted with a character moved between fields", fields)
		}
	})
}

// answer is what the fake provider sends next.
type answer struct {
	status int
	body   []byte
}

// FuzzProviderAnswer checks how the client reads any answer of the acquirer,
// ACS or APM provider: a 2xx answer decodes exactly as encoding/json reads
// it, or is an error; every error wraps exactly one of the package's
// sentinel errors, chosen by the status (404 not found, 409 conflict, 5xx
// unavailable, any other refusal rejected); nothing panics.
func FuzzProviderAnswer(f *testing.F) {
	f.Add(200, []byte(`{"charge_id":"ch_1","status":"approved","amount":1234,"created_at":"2026-01-02T03:04:05Z"}`))
	f.Add(200, []byte(`{"payment_id":"apm_1","status":"pending","amount":1e400}`))
	f.Add(200, []byte(`{"authentication_id":"a","status":"challenge_required","acs_url":"http://x"}`))
	f.Add(200, []byte(`{"refund_id":"r","settled_at":null,"created_at":"not a time"}`))
	f.Add(200, []byte(`{"amount":"12"}`))
	f.Add(200, []byte(``))
	f.Add(200, []byte(`null`))
	f.Add(200, []byte("{\"status\":\"\x00\xff\"}"))
	f.Add(201, []byte(`[]`))
	f.Add(204, []byte(`{}`))
	f.Add(302, []byte(`{}`))
	f.Add(400, []byte(`{"error":"invalid_request","message":"bad card 4242424242424242"}`))
	f.Add(404, []byte(`{}`))
	f.Add(409, []byte(`{"error":"conflict"}`))
	f.Add(422, []byte(`not json`))
	f.Add(500, []byte(`{"error":"boom"}`))
	f.Add(503, []byte(``))
	f.Add(599, []byte(`{"error":"`+strings.Repeat("x", 5000)+`"}`))

	var mu sync.Mutex
	var next answer
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		a := next
		mu.Unlock()
		w.WriteHeader(a.status)
		_, _ = w.Write(a.body)
	}))
	f.Cleanup(srv.Close)
	c, err := NewClient(srv.URL, 5*time.Second)
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	calls := []struct {
		name string
		out  any
		call func() (any, error)
	}{
		{"inquire", &Charge{}, func() (any, error) { v, err := c.Inquire(ctx, "k"); return &v, err }},
		{"get refund", &Refund{}, func() (any, error) { v, err := c.GetRefund(ctx, "r"); return &v, err }},
		{"get authentication", &Authentication{}, func() (any, error) { v, err := c.GetAuthentication(ctx, "a"); return &v, err }},
		{"get APM payment", &APMPayment{}, func() (any, error) { v, err := c.GetAPMPayment(ctx, "p"); return &v, err }},
	}
	sentinels := []error{ErrTimeout, ErrUnavailable, ErrNotFound, ErrConflict, ErrRejected}

	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 200 || status > 599 {
			status = 200 + (status%400+400)%400
		}
		mu.Lock()
		next = answer{status: status, body: body}
		mu.Unlock()
		sent := body
		if status == http.StatusNoContent || status == http.StatusNotModified {
			sent = nil
		}
		for _, call := range calls {
			got, err := call.call()
			if status < 300 {
				want := reflect.New(reflect.TypeOf(call.out).Elem()).Interface()
				werr := json.Unmarshal(sent, want)
				if (err == nil) != (werr == nil) {
					t.Fatalf("%s: status %d body %q: err %v, encoding/json says %v", call.name, status, body, err, werr)
				}
				if err == nil {
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s: decoded %+v, want %+v", call.name, got, want)
					}
					continue
				}
			}
			if err == nil {
				t.Fatalf("%s: status %d accepted", call.name, status)
			}
			matched := 0
			for _, s := range sentinels {
				if errors.Is(err, s) {
					matched++
				}
			}
			var want error
			switch {
			case status < 300:
				want = nil // a 2xx that does not decode wraps nothing more specific
			case status == http.StatusNotFound:
				want = ErrNotFound
			case status == http.StatusConflict:
				want = ErrConflict
			case status >= 500:
				want = ErrUnavailable
			default:
				want = ErrRejected
			}
			if want != nil && (matched != 1 || !errors.Is(err, want)) {
				t.Fatalf("%s: status %d: error %v, want exactly %v", call.name, status, err, want)
			}
		}
	})
}

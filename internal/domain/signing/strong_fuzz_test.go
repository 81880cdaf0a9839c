package signing

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Fuzz targets of the strong scheme: go test -run='^$' -fuzz='^FuzzCanonicalString$' ./internal/domain/signing
// (or make fuzz). Plain go test runs the seeds.

// referenceValue encodes a value decoded by encoding/json (UseNumber) the
// way the package comment describes, from a tree instead of a token stream.
func referenceValue(b *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteString("o" + strconv.Itoa(len(keys)) + ":")
		for _, k := range keys {
			writeLP(b, k)
			referenceValue(b, x[k])
		}
	case []any:
		b.WriteString("a" + strconv.Itoa(len(x)) + ":")
		for _, e := range x {
			referenceValue(b, e)
		}
	case string:
		b.WriteByte('s')
		writeLP(b, x)
	case json.Number:
		b.WriteByte('n')
		writeLP(b, x.String())
	case bool:
		if x {
			b.WriteByte('t')
		} else {
			b.WriteByte('f')
		}
	case nil:
		b.WriteByte('z')
	}
}

// FuzzCanonicalString checks that any body either is refused with
// ErrStrongBody or gives the canonical string a tree-based reference gives,
// and that what SignStrong signs VerifyStrong accepts, and only for the same
// operation, key and body.
func FuzzCanonicalString(f *testing.F) {
	f.Add([]byte(`{"merchant_id":"10086","account_id":"10086001"}`), "POST", "/v1/refund", int64(1781524800))
	f.Add([]byte(`merchant_id=10086&account_id=10086001`), "POST", "/v1/capture", int64(0))
	f.Add([]byte(`{"a":1.50,"b":[true,false,null],"c":{"y":"\u00e9","x":""}}`), "post", "/v1/authorise", int64(99))
	f.Add([]byte(`{"amount":"1","Amount":"2"}`), "POST", "/v1/refund", int64(1))
	f.Add([]byte(`{"a":"\xff"}`), "POST", "/", int64(1))
	f.Add([]byte(`a=1&a=2`), "POST", "/v1/refund", int64(1))
	f.Add([]byte(`{"o":[[[[{}]]]]}`), "POST", "/v1/review", int64(1))
	f.Fuzz(func(t *testing.T, body []byte, method, path string, ts int64) {
		if ts < 0 {
			ts = -ts
		}
		ts %= 1_000_000_000_000
		const nonce = "fuzz-nonce-0123456789"
		canonical, err := CanonicalString(method, path, ts, nonce, body)
		if err != nil {
			if !errors.Is(err, ErrStrongBody) {
				t.Fatalf("CanonicalString error %v is not ErrStrongBody", err)
			}
			return
		}
		if trimmed := bytes.TrimSpace(body); trimmed[0] == '{' {
			dec := json.NewDecoder(bytes.NewReader(trimmed))
			dec.UseNumber()
			var tree any
			if err := dec.Decode(&tree); err != nil {
				t.Fatalf("CanonicalString accepts %q, which encoding/json refuses: %v", body, err)
			}
			var ref strings.Builder
			ref.WriteString("PGS1\n")
			writeLP(&ref, strings.ToUpper(method))
			writeLP(&ref, path)
			writeLP(&ref, strconv.FormatInt(ts, 10))
			writeLP(&ref, nonce)
			referenceValue(&ref, tree)
			if ref.String() != canonical {
				t.Fatalf("canonical string\n%q\nreference\n%q", canonical, ref.String())
			}
		} else if _, err := url.ParseQuery(string(trimmed)); err != nil {
			t.Fatalf("CanonicalString accepts %q, which is not a form", body)
		}
		const key = "fuzz-key"
		sig, err := SignStrong(key, method, path, ts, nonce, body)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Unix(ts, 0)
		if err := VerifyStrong(key, method, path, body, sig, now); err != nil {
			t.Fatalf("VerifyStrong refuses its own signature: %v", err)
		}
		if err := VerifyStrong(key+"x", method, path, body, sig, now); !errors.Is(err, ErrStrongMismatch) {
			t.Fatalf("another key: %v", err)
		}
		if err := VerifyStrong(key, method, path+"x", body, sig, now); !errors.Is(err, ErrStrongMismatch) {
			t.Fatalf("another path: %v", err)
		}
		parsed, err := ParseStrongHeader(sig.String())
		if err != nil || parsed != sig {
			t.Fatalf("header %q reads back as %+v, %v", sig, parsed, err)
		}
	})
}

// FuzzParseStrongHeader checks that no header makes the parser panic and
// that whatever it accepts is well-formed and renders back to itself.
func FuzzParseStrongHeader(f *testing.F) {
	f.Add("t=1781524800,n=n0nce-0123456789abcdef,v1=9c89f905a93a6a509c87874060cba241afe5dd81a5685a95bc0f207101d480e4")
	f.Add(" v1=9C89F905A93A6A509C87874060CBA241AFE5DD81A5685A95BC0F207101D480E4 ,n=abcdefghijklmnop, t=1,v2=x")
	f.Add("t=,n=,v1=")
	f.Add("t=1,t=2")
	f.Add(",,,")
	f.Fuzz(func(t *testing.T, h string) {
		sig, err := ParseStrongHeader(h)
		if err != nil {
			if !errors.Is(err, ErrStrongHeader) {
				t.Fatalf("error %v is not ErrStrongHeader", err)
			}
			return
		}
		if !ValidNonce(sig.Nonce) || len(sig.V1) != 64 || sig.Timestamp < 0 {
			t.Fatalf("accepted %q as %+v", h, sig)
		}
		again, err := ParseStrongHeader(sig.String())
		if err != nil || again != sig {
			t.Fatalf("%+v renders as %q, which reads back as %+v, %v", sig, sig, again, err)
		}
	})
}

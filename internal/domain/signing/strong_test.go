package signing

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// The vectors of docs/decisions.md, "Strong signatures". They were checked
// against an independent implementation (the Python reference signer in
// the same section).
const (
	vectorKey   = "k3y-for-tests-0123456789abcdef"
	vectorTime  = 1781524800 // 2026-06-15T12:00:00Z
	vectorNonce = "n0nce-0123456789abcdef"
)

const vectorPrefix = "PGS1\n4:POST10:/v1/refund10:178152480022:n0nce-0123456789abcdef"

func TestCanonicalString(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string // after vectorPrefix
	}{
		{"JSON object", `{"merchant_id":"10086","account_id":"10086001"}`,
			"o2:10:account_ids8:1008600111:merchant_ids5:10086"},
		{"form gives the same string as JSON strings", `merchant_id=10086&account_id=10086001`,
			"o2:10:account_ids8:1008600111:merchant_ids5:10086"},
		{"white space around JSON and between tokens", " \n{ \"account_id\" : \"10086001\" ,\t\"merchant_id\":\"10086\" }\n",
			"o2:10:account_ids8:1008600111:merchant_ids5:10086"},
		{"refund batch", `{"merchant_id":"10086","account_id":"10086001","encryption_data":"","refund_orders":[{"transaction_id":"1379868670095785984","order_no":"ORD-1","currency":"USD","amount":"12.34","refund_amount":"2.00"}]}`,
			"o4:10:account_ids8:1008600115:encryption_datas0:11:merchant_ids5:1008613:refund_ordersa1:o5:6:amounts5:12.348:currencys3:USD8:order_nos5:ORD-113:refund_amounts4:2.0014:transaction_ids19:1379868670095785984"},
		{"numbers as written, literals, nested object, escapes decoded", `{"a":1.50,"b":[true,false,null],"c":{"y":"\u00e9","x":""}}`,
			"o3:1:an4:1.501:ba3:tfz1:co2:1:xs0:1:ys2:é"},
		{"number and string are told apart", `{"amount":12.34,"currency":"12.34"}`,
			"o2:6:amountn5:12.348:currencys5:12.34"},
		{"keys in byte order, upper case first", `{"b":"1","a":"2","Z":"3"}`,
			"o3:1:Zs1:31:as1:21:bs1:1"},
		{"a body that does not start with { is a form, as the API reads it", `[{"a":"1"}]`,
			`o1:11:[{"a":"1"}]s0:`},
		{"form values decoded, nested JSON text kept as text", `note=a%20b+c&cart_items=%5B%7B%22x%22%3A1%7D%5D`,
			`o2:10:cart_itemss9:[{"x":1}]4:notes5:a b c`},
		{"empty form value", `note=&merchant_id=1`,
			"o2:11:merchant_ids1:14:notes0:"},
		{"empty object", `{}`, "o0:"},
		{"empty array", `{"capture_orders":[]}`, "o1:14:capture_ordersa0:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CanonicalString("POST", "/v1/refund", vectorTime, vectorNonce, []byte(tc.body))
			if err != nil {
				t.Fatalf("CanonicalString: %v", err)
			}
			if want := vectorPrefix + tc.want; got != want {
				t.Errorf("CanonicalString =\n%q\nwant\n%q", got, want)
			}
		})
	}
}

func TestCanonicalStringNamesTheOperation(t *testing.T) {
	body := []byte(`{"merchant_id":"10086"}`)
	tests := []struct {
		name   string
		method string
		path   string
		want   string
	}{
		{"method upper-cased", "post", "/v1/capture", "PGS1\n4:POST11:/v1/capture"},
		{"another path", "POST", "/v1/retrievalTrans", "PGS1\n4:POST18:/v1/retrievalTrans"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CanonicalString(tc.method, tc.path, 7, "abcdefghijklmnop", body)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want + "1:716:abcdefghijklmnopo1:11:merchant_ids5:10086"
			if got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// TestCanonicalStringIsUnambiguous: bodies that a plain concatenation would
// run together give different canonical strings.
func TestCanonicalStringIsUnambiguous(t *testing.T) {
	pairs := []struct {
		name string
		a, b string
	}{
		{"a digit moved between fields", `{"amount":"12.34","first_name":"Ada"}`, `{"amount":"12.3","first_name":"4Ada"}`},
		{"key and value boundary", `{"ab":"c"}`, `{"a":"bc"}`},
		{"one entry or two", `{"o":[{"t":"12"}]}`, `{"o":[{"t":"1"},{"t":"2"}]}`},
		{"string or number", `{"a":"1"}`, `{"a":1}`},
		{"null or empty string", `{"a":null}`, `{"a":""}`},
		{"array or JSON text", `{"a":["x"]}`, `{"a":"[\"x\"]"}`},
	}
	for _, tc := range pairs {
		t.Run(tc.name, func(t *testing.T) {
			a, errA := CanonicalString("POST", "/v1/refund", 1, vectorNonce, []byte(tc.a))
			b, errB := CanonicalString("POST", "/v1/refund", 1, vectorNonce, []byte(tc.b))
			if errA != nil || errB != nil {
				t.Fatalf("errors %v %v", errA, errB)
			}
			if a == b {
				t.Errorf("%s and %s share the canonical string %q", tc.a, tc.b, a)
			}
		})
	}
}

func TestCanonicalStringRefuses(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"empty body", ""},
		{"white space only", " \n "},
		{"invalid JSON", `{"a":}`},
		{"truncated JSON", `{"a":"1"`},
		{"data after the object", `{"a":"1"}{"a":"2"}`},
		{"duplicate key", `{"amount":"1.00","amount":"999.00"}`},
		{"keys differing in case", `{"amount":"1.00","Amount":"999.00"}`},
		{"keys differing in case, nested", `{"o":[{"refund_amount":"1","REFUND_AMOUNT":"2"}]}`},
		{"Kelvin sign folds to k", "{\"k\":\"1\",\"\u212a\":\"2\"}"},
		{"form field twice", `amount=1.00&amount=999.00`},
		{"form keys differing in case", `amount=1.00&AMOUNT=999.00`},
		{"invalid form", `a=%zz`},
		{"nested too deep", `{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CanonicalString("POST", "/v1/refund", 1, vectorNonce, []byte(tc.body))
			if !errors.Is(err, ErrStrongBody) {
				t.Errorf("CanonicalString(%q) error = %v, want ErrStrongBody", tc.body, err)
			}
		})
	}
}

func TestStrongMACVectors(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{"query fields", `{"merchant_id":"10086","account_id":"10086001"}`, "9c89f905a93a6a509c87874060cba241afe5dd81a5685a95bc0f207101d480e4"},
		{"query fields as a form", `merchant_id=10086&account_id=10086001`, "9c89f905a93a6a509c87874060cba241afe5dd81a5685a95bc0f207101d480e4"},
		{"refund batch", `{"merchant_id":"10086","account_id":"10086001","encryption_data":"","refund_orders":[{"transaction_id":"1379868670095785984","order_no":"ORD-1","currency":"USD","amount":"12.34","refund_amount":"2.00"}]}`,
			"132cad11b588de01d9cfd943e1277cbb712b57f8b855590fc2c440cf2e89814f"},
		{"literals and nesting", `{"a":1.50,"b":[true,false,null],"c":{"y":"\u00e9","x":""}}`, "b987c77ccfaa48c14963cc01a2f4e3353879d52c2c35da31cbdc736607f8706e"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sig, err := SignStrong(vectorKey, "POST", "/v1/refund", vectorTime, vectorNonce, []byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if sig.V1 != tc.want {
				t.Errorf("v1 = %s, want %s", sig.V1, tc.want)
			}
			if want := "t=1781524800,n=" + vectorNonce + ",v1=" + tc.want; sig.String() != want {
				t.Errorf("header = %s, want %s", sig, want)
			}
			// The key is trimmed, as in the compatible scheme.
			if again, _ := SignStrong(" "+vectorKey+"\n", "POST", "/v1/refund", vectorTime, vectorNonce, []byte(tc.body)); again != sig {
				t.Errorf("a padded key signs %s", again.V1)
			}
		})
	}
}

func TestParseStrongHeader(t *testing.T) {
	const mac = "9c89f905a93a6a509c87874060cba241afe5dd81a5685a95bc0f207101d480e4"
	want := StrongSignature{Timestamp: vectorTime, Nonce: vectorNonce, V1: mac}
	tests := []struct {
		name   string
		header string
		want   StrongSignature
		ok     bool
	}{
		{"as SignStrong writes it", "t=1781524800,n=n0nce-0123456789abcdef,v1=" + mac, want, true},
		{"any order, spaces", " v1=" + mac + " , n=n0nce-0123456789abcdef ,t=1781524800 ", want, true},
		{"unknown keys ignored", "t=1781524800,n=n0nce-0123456789abcdef,v1=" + mac + ",v2=zzz", want, true},
		{"upper-case hex kept as sent", "t=1781524800,n=n0nce-0123456789abcdef,v1=" + strings.ToUpper(mac),
			StrongSignature{Timestamp: vectorTime, Nonce: vectorNonce, V1: strings.ToUpper(mac)}, true},
		{"empty", "", StrongSignature{}, false},
		{"v1 missing", "t=1781524800,n=n0nce-0123456789abcdef", StrongSignature{}, false},
		{"t missing", "n=n0nce-0123456789abcdef,v1=" + mac, StrongSignature{}, false},
		{"n missing", "t=1781524800,v1=" + mac, StrongSignature{}, false},
		{"t twice", "t=1781524800,t=1781524801,n=n0nce-0123456789abcdef,v1=" + mac, StrongSignature{}, false},
		{"v1 twice", "t=1781524800,n=n0nce-0123456789abcdef,v1=" + mac + ",v1=" + mac, StrongSignature{}, false},
		{"t not digits", "t=-1781524800,n=n0nce-0123456789abcdef,v1=" + mac, StrongSignature{}, false},
		{"t too long", "t=1781524800000,n=n0nce-0123456789abcdef,v1=" + mac, StrongSignature{}, false},
		{"t in milliseconds is too long", "t=1781524800123,n=n0nce-0123456789abcdef,v1=" + mac, StrongSignature{}, false},
		{"nonce too short", "t=1781524800,n=short-nonce,v1=" + mac, StrongSignature{}, false},
		{"nonce too long", "t=1781524800,n=" + strings.Repeat("a", 65) + ",v1=" + mac, StrongSignature{}, false},
		{"nonce with a dot", "t=1781524800,n=n0nce.0123456789abcdef,v1=" + mac, StrongSignature{}, false},
		{"v1 short", "t=1781524800,n=n0nce-0123456789abcdef,v1=" + mac[:63], StrongSignature{}, false},
		{"v1 not hex", "t=1781524800,n=n0nce-0123456789abcdef,v1=" + mac[:63] + "g", StrongSignature{}, false},
		{"a part without =", "t=1781524800,n=n0nce-0123456789abcdef,v1=" + mac + ",junk", StrongSignature{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStrongHeader(tc.header)
			if tc.ok != (err == nil) {
				t.Fatalf("ParseStrongHeader(%q) error = %v, want ok %v", tc.header, err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrStrongHeader) {
				t.Errorf("error %v is not ErrStrongHeader", err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestVerifyStrong(t *testing.T) {
	body := []byte(`{"merchant_id":"10086","account_id":"10086001"}`)
	now := time.Unix(vectorTime, 0)
	sig, err := SignStrong(vectorKey, "POST", "/v1/refund", vectorTime, vectorNonce, body)
	if err != nil {
		t.Fatal(err)
	}
	upper := sig
	upper.V1 = strings.ToUpper(sig.V1)
	otherNonce := sig
	otherNonce.Nonce = "n0nce-0123456789abcdeF"
	tests := []struct {
		name   string
		key    string
		method string
		path   string
		body   []byte
		sig    StrongSignature
		now    time.Time
		want   error
	}{
		{"valid", vectorKey, "POST", "/v1/refund", body, sig, now, nil},
		{"upper-case hex", vectorKey, "POST", "/v1/refund", body, upper, now, nil},
		{"same fields as a form", vectorKey, "POST", "/v1/refund", []byte("account_id=10086001&merchant_id=10086"), sig, now, nil},
		{"5 minutes late", vectorKey, "POST", "/v1/refund", body, sig, now.Add(5 * time.Minute), nil},
		{"5 minutes early", vectorKey, "POST", "/v1/refund", body, sig, now.Add(-5 * time.Minute), nil},
		{"stale by a second", vectorKey, "POST", "/v1/refund", body, sig, now.Add(5*time.Minute + time.Second), ErrStrongStale},
		{"from the future", vectorKey, "POST", "/v1/refund", body, sig, now.Add(-5*time.Minute - time.Second), ErrStrongStale},
		{"another key", "another-key", "POST", "/v1/refund", body, sig, now, ErrStrongMismatch},
		{"another operation", vectorKey, "POST", "/v1/capture", body, sig, now, ErrStrongMismatch},
		{"another method", vectorKey, "GET", "/v1/refund", body, sig, now, ErrStrongMismatch},
		{"a field changed", vectorKey, "POST", "/v1/refund", []byte(`{"merchant_id":"10086","account_id":"10086002"}`), sig, now, ErrStrongMismatch},
		{"a field added", vectorKey, "POST", "/v1/refund", []byte(`{"merchant_id":"10086","account_id":"10086001","note":""}`), sig, now, ErrStrongMismatch},
		{"another nonce", vectorKey, "POST", "/v1/refund", body, otherNonce, now, ErrStrongMismatch},
		{"a body that cannot be canonicalised", vectorKey, "POST", "/v1/refund", []byte(`{"a":"1","A":"2"}`), sig, now, ErrStrongBody},
		{"malformed v1", vectorKey, "POST", "/v1/refund", body, StrongSignature{Timestamp: vectorTime, Nonce: vectorNonce, V1: "zz"}, now, ErrStrongHeader},
		{"malformed nonce", vectorKey, "POST", "/v1/refund", body, StrongSignature{Timestamp: vectorTime, Nonce: "x", V1: sig.V1}, now, ErrStrongHeader},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifyStrong(tc.key, tc.method, tc.path, tc.body, tc.sig, tc.now)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("VerifyStrong = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestValidNonce(t *testing.T) {
	tests := []struct {
		name  string
		nonce string
		want  bool
	}{
		{"16 characters", "abcdefghijklmnop", true},
		{"64 characters", strings.Repeat("Z9_-", 16), true},
		{"uuid", "0f8fad5b-d9cb-469f-a165-70867728950e", true},
		{"15 characters", "abcdefghijklmno", false},
		{"65 characters", strings.Repeat("a", 65), false},
		{"comma", "abcdefghijklmno,", false},
		{"space", "abcdefgh ijklmnop", false},
		{"non-ASCII", "abcdefghijklmnoé", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ValidNonce(tc.nonce); got != tc.want {
				t.Errorf("ValidNonce(%q) = %v, want %v", tc.nonce, got, tc.want)
			}
		})
	}
}

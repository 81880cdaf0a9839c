package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/paygate/paygate/internal/dev/fuzztext"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/order"
)

// Fuzz targets of the request decoding: run each with
//
//	go test -run='^$' -fuzz='^FuzzDecodeBody$' ./api
//
// (or make fuzz). Plain go test runs the seeds of f.Add and testdata/fuzz.

// bodySeeds are bodies every decoding target starts from: both encodings,
// nested fields, batch arrays (also as JSON text in a string), NUL bytes,
// invalid UTF-8, escapes and other edges.
var bodySeeds = []string{
	"",
	" \r\n\t",
	`{"merchant_id":"10086","account_id":"1008601","order_no":"A1","currency":"USD","amount":"12.34","card":"4242424242424242","expiration_month":"12","expiration_year":"2030","security_code":"123","encryption_data":"ab"}`,
	`{"amount":12.30,"card":4242424242424242,"shopper_level":true,"note":null}`,
	`merchant_id=10086&account_id=1008601&order_no=A1&currency=USD&amount=12.3&note=a%0Ab&first_name=Ada`,
	`merchant_id=10086&amount=12.34&amount=99.99&merchant_id=666`,
	`cart_items=%5B%7B%22basic_item_data%22%3A%7B%22name%22%3A%22Hat%22%2C%22price%22%3A%7B%22amount_usd%22%3A12.5%7D%7D%7D%5D`,
	`{"cart_items":[{"basic_item_data":{"name":"Hat","quantity":1,"price":{"amount_usd":1e400}}}]}`,
	`{"person":{"documents":{"labels":{"bank_account":{"bank":{"code":7,"name":"x"}}}}}}`,
	`{"capture_orders":[{"transaction_id":"1234567890123456789","capture_amount":"1.00"}]}`,
	`{"refund_orders":"[{\"transaction_id\":\"1234567890123456789\",\"refund_reason\":\"late\"}]"}`,
	`{"refund_orders":"[{\"refund_reason\":\"a\\u0000b\"}]"}`,
	`refund_orders=%5B%7B%22refund_reason%22%3A%22a%5Cu0000b%22%7D%5D`,
	`refund_orders=%22%5B%5D%22`,
	`{"REFUND_ORDERS":"[{\"refund_reason\":\"a\\u0000b\"}]"}`,
	`REFUND_ORDERS=%5B%7B%22refund_reason%22%3A%22a%5Cu0000b%22%7D%5D`,
	"note=a%00b",
	"note=a%ffb",
	"a%00b=%ff",
	"first_name=Ada%09",
	`{"note":"a\u0000b"}`,
	"{\"note\":\"a\x00b\"}",
	"{\"note\":\"\xff\"}",
	"{\"\xff\":1}",
	`{"note":"\ud800"}`,
	`{"first_name":"\u0085"}`,
	`{"merchant_id":"10086"} x`,
	`{"merchant_id":10086}`,
	`{"merchant_id":"100`,
	`{"a":[[[[[[[1]]]]]]]}`,
	`merchant_id=%zz`,
	`merchant_id=1;account_id=2`,
	`cart_items=%5B%7B`,
	`amount=%D9%A1%D9%A2.%D9%A3`,
}

// textFields are a few request types that decodeBody fills in production.
func textFields() []func() any {
	return []func() any{
		func() any { return new(paymentBody) },
		func() any {
			return new(struct {
				MerchantID    order.Text          `json:"merchant_id"`
				CaptureOrders JSONList[edgeEntry] `json:"capture_orders"`
				RefundOrders  JSONList[edgeEntry] `json:"refund_orders"`
			})
		},
		func() any { return new(hostedBody) },
	}
}

// FuzzDecodeBody checks decodeBody on any body: it answers either a refusal
// with a body code (I0008, I0010, I0011) or a value, never both and never a
// panic; the same body always gives the same answer; and a decoded value
// only holds text that the body wrote (as a JSON value, a form value, or a
// value inside JSON text carried in one), in valid UTF-8, without control
// characters (tab, line feed and carriage return only in multi-line fields).
func FuzzDecodeBody(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		written := writtenValues(body)
		for _, mk := range textFields() {
			dst := mk()
			code := decodeBody(body, dst)
			again := mk()
			code2 := decodeBody(body, again)
			if (code == nil) != (code2 == nil) || (code != nil && *code != *code2) || (code == nil && !reflect.DeepEqual(dst, again)) {
				t.Fatalf("%T: two decodings of one body differ: %v / %v", dst, code, code2)
			}
			if code != nil {
				switch code.ID {
				case codes.InvalidField.ID, codes.MalformedRequest.ID, codes.RequestTooLarge.ID:
				default:
					t.Fatalf("%T: refused with %s, want a body code", dst, code)
				}
				if !utf8.ValidString(code.String()) {
					t.Fatalf("%T: refusal %q is not valid UTF-8", dst, code.String())
				}
				continue
			}
			fuzztext.WalkText(reflect.ValueOf(dst), "", func(field, v string) {
				if v == "" {
					return
				}
				if !written[v] {
					t.Errorf("%T: field %s = %q is not a value the body wrote", dst, field, v)
				}
				if msg := badText(field, v); msg != "" {
					t.Errorf("%T: field %s = %q %s", dst, field, v, msg)
				}
			})
		}
	})
}

// FuzzFormToJSON checks the form path against url.ParseQuery: a form whose
// names and values are valid UTF-8 (and whose nested fields hold valid JSON
// when they look like JSON) always converts, to a JSON object with the same
// names, the first value of each, and nested JSON kept as it was written;
// any other form is refused.
func FuzzFormToJSON(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		out, err := formToJSON(body)
		values, perr := url.ParseQuery(body)
		convertible := perr == nil
		for key, vals := range values {
			if len(vals) == 0 {
				continue
			}
			v := vals[0]
			if !utf8.ValidString(key) || !utf8.ValidString(v) {
				convertible = false
			}
			if tv := strings.TrimSpace(v); nestedFields[fieldKey(key)] && tv != "" && (tv[0] == '[' || tv[0] == '{') && !json.Valid([]byte(tv)) {
				convertible = false
			}
		}
		if err != nil {
			if convertible {
				t.Fatalf("formToJSON(%q) refused a convertible form: %v", body, err)
			}
			var fe *fieldError
			if errors.As(err, &fe) && fe.code.ID != codes.InvalidField.ID {
				t.Fatalf("formToJSON(%q) refused a field with %s, want %s", body, fe.code.ID, codes.InvalidField.ID)
			}
			return
		}
		if !convertible {
			t.Fatalf("formToJSON(%q) = %s, want a refusal", body, out)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(out, &obj); err != nil {
			t.Fatalf("formToJSON(%q) = %s, not a JSON object: %v", body, out, err)
		}
		if got, want := slices.Sorted(maps.Keys(obj)), slices.Sorted(maps.Keys(values)); !slices.Equal(got, want) {
			t.Fatalf("formToJSON(%q) names %q, want %q", body, got, want)
		}
		for key, raw := range obj {
			v := values[key][0]
			if tv := strings.TrimSpace(v); nestedFields[fieldKey(key)] && tv != "" && (tv[0] == '[' || tv[0] == '{') {
				if string(raw) != tv {
					t.Errorf("nested %s = %s, want it as written: %s", key, raw, tv)
				}
				continue
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil || s != v {
				t.Errorf("%s = %s, want the string %q (%v)", key, raw, v, err)
			}
		}
	})
}

// writtenValues lists the values a body writes: every JSON string, number
// and literal (not the names), in JSON text or in the JSON a form becomes,
// every first form value, and, one level down, the values of JSON text
// carried in a string.
func writtenValues(body []byte) map[string]bool {
	out := map[string]bool{}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		fuzztext.JSONValues(trimmed, out, 1)
		return out
	}
	values, err := url.ParseQuery(string(trimmed))
	if err != nil {
		return out
	}
	for _, vals := range values {
		if len(vals) == 0 {
			continue
		}
		out[vals[0]] = true
		fuzztext.JSONValues([]byte(strings.TrimSpace(vals[0])), out, 1)
	}
	return out
}

// badText says what is wrong with a decoded field value, or "".
func badText(field, v string) string {
	if !utf8.ValidString(v) {
		return "is not valid UTF-8"
	}
	for _, r := range v {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			if !multilineFields[field] {
				return "holds a tab or line break in a one-line field"
			}
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return "holds a control character"
		}
	}
	return ""
}

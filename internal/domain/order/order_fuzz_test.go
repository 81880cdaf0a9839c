package order

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// Fuzz targets: go test -run='^$' -fuzz='^FuzzText$' ./internal/domain/order (or
// make fuzz). Plain go test runs the seeds.

// FuzzText checks Text as encoding/json feeds it: a JSON string gives its
// decoded text, a number or boolean its literal text exactly as written (no
// float ever rounds an amount), null the empty text, an object or array a
// type error; and the text marshals to a JSON string that reads back the same.
func FuzzText(f *testing.F) {
	for _, s := range []string{
		`"12.34"`, `12.34`, `12.30`, `1e400`, `-0.0E-99999`, `123456789012345678901234567890`, `true`, `false`, `null`,
		`""`, `" 12.3 "`, `"\u0000"`, `"\ud800"`, "\"\xff\"", `{}`, `[]`, `[1]`, `{"a":1}`, ` 7 `, `"١٢"`, `x`, ``, `"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got Text
		err := json.Unmarshal(data, &got)
		if !json.Valid(data) {
			if err == nil {
				t.Fatalf("Unmarshal(%q) = %q, want an error for invalid JSON", data, got)
			}
			return
		}
		trimmed := bytes.TrimSpace(data)
		var want string
		switch trimmed[0] {
		case '{', '[':
			var typeErr *json.UnmarshalTypeError
			if !errors.As(err, &typeErr) {
				t.Fatalf("Unmarshal(%q) = %q, %v; want a type error", data, got, err)
			}
			return
		case '"':
			if err := json.Unmarshal(trimmed, &want); err != nil {
				t.Fatal(err)
			}
		case 'n':
			want = ""
		default:
			want = string(trimmed)
		}
		if err != nil || string(got) != want {
			t.Fatalf("Unmarshal(%q) = %q, %v; want %q", data, got, err, want)
		}
		out, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		var back Text
		if err := json.Unmarshal(out, &back); err != nil || back != got {
			t.Fatalf("Text %q marshals to %s, which reads back as %q, %v", got, out, back, err)
		}
	})
}

// FuzzDetails checks that order details read from any JSON have one
// canonical JSON form: marshalling, reading back and marshalling again gives
// the same bytes, so a stored order reads back as it was stored.
func FuzzDetails(f *testing.F) {
	for _, s := range []string{
		`{}`, `null`,
		`{"merchant_id":"10086","order_no":"A1","currency":"USD","amount":12.30,"note":"a\nb","items":"x"}`,
		`{"cart_items":[{"basic_item_data":{"name":"Hat","quantity":2,"price":{"amount_usd":1e400,"currency":"USD"},"productId":7}}]}`,
		`{"cart_items":[],"account_owner":[{}],"total_discount":null,"subscription":{},"person":{"documents":{"labels":{"bank_account":{"bank":{}}}}}}`,
		`{"additional_information":[{"mpi_info":{"eci":"05"}}],"MERCHANT_ID":"x","merchant_id":"y"}`,
		`{"person":{"phone_number":5511999999999,"address_number":true}}`,
		`{"note":"\u0000\ud800","first_name":"` + "\xff" + `"}`,
		`{"amount":{}}`, `{"amount":[]}`, `[]`, `{"subscription":{"interval_count":-1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d Details
		if err := json.Unmarshal(data, &d); err != nil {
			return
		}
		first, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("Marshal of details read from %q: %v", data, err)
		}
		var again Details
		if err := json.Unmarshal(first, &again); err != nil {
			t.Fatalf("details marshal to %s, which does not read back: %v", first, err)
		}
		second, err := json.Marshal(again)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, second) {
			t.Fatalf("details from %q marshal to\n%s\nthen to\n%s", data, first, second)
		}
	})
}

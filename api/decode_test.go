package api

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/order"
)

func TestDecodeBody(t *testing.T) {
	type dst struct {
		MerchantID string           `json:"merchant_id"`
		Amount     order.Text       `json:"amount"`
		Note       string           `json:"note"`
		CartItems  []order.CartItem `json:"cart_items"`
	}
	cart := []order.CartItem{{BasicItemData: order.BasicItemData{Name: "Hat", Price: order.ItemPrice{AmountUSD: "12.5"}}}}
	cases := []struct {
		name     string
		body     string
		want     dst
		wantCode string // empty: decoded
	}{
		{
			name: "json",
			body: `{"merchant_id":"10086","amount":"12.34","note":"a&b","cart_items":[{"basic_item_data":{"name":"Hat","price":{"amount_usd":12.5}}}]}`,
			want: dst{MerchantID: "10086", Amount: "12.34", Note: "a&b", CartItems: cart},
		},
		{
			name: "json with number amount kept as text",
			body: `{"merchant_id":"10086","amount":12.30}`,
			want: dst{MerchantID: "10086", Amount: "12.30"},
		},
		{
			name: "json after white space",
			body: "\n\t {\"merchant_id\":\"10086\"}\n",
			want: dst{MerchantID: "10086"},
		},
		{
			name: "form",
			body: `merchant_id=10086&amount=12.34&note=a%26b&cart_items=` +
				`%5B%7B%22basic_item_data%22%3A%7B%22name%22%3A%22Hat%22%2C%22price%22%3A%7B%22amount_usd%22%3A12.5%7D%7D%7D%5D`,
			want: dst{MerchantID: "10086", Amount: "12.34", Note: "a&b", CartItems: cart},
		},
		{
			name: "form with repeated keys keeps the first",
			body: "merchant_id=10086&amount=12.34&amount=99.99&merchant_id=666",
			want: dst{MerchantID: "10086", Amount: "12.34"},
		},
		{
			name: "form text in a non-nested field that looks like JSON stays text",
			body: "note=%5B1%2C2%5D",
			want: dst{Note: "[1,2]"},
		},
		{name: "empty body", body: "", wantCode: codes.MalformedRequest.ID},
		{name: "white space only", body: " \r\n\t", wantCode: codes.MalformedRequest.ID},
		{name: "bad form escape", body: "merchant_id=%zz", wantCode: codes.MalformedRequest.ID},
		{name: "form nested field with invalid JSON", body: "cart_items=%5B%7B", wantCode: codes.MalformedRequest.ID},
		{name: "form nested field that is not JSON", body: "cart_items=hat", wantCode: codes.MalformedRequest.ID},
		{name: "truncated json", body: `{"merchant_id":"100`, wantCode: codes.MalformedRequest.ID},
		{name: "json wrong type", body: `{"merchant_id":10086}`, wantCode: codes.MalformedRequest.ID},
		{name: "json trailing garbage", body: `{"merchant_id":"10086"} x`, wantCode: codes.MalformedRequest.ID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got dst
			code := decodeBody([]byte(c.body), &got)
			if c.wantCode != "" {
				if code == nil {
					t.Fatalf("decoded %+v, want %s", got, c.wantCode)
				}
				if code.ID != c.wantCode {
					t.Errorf("code = %s, want %s", code, c.wantCode)
				}
				return
			}
			if code != nil {
				t.Fatalf("code = %s, want decoded", code)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(c.want)
			if string(gj) != string(wj) {
				t.Errorf("decoded %s, want %s", gj, wj)
			}
		})
	}
}

// paymentBody and hostedBody have the shapes of api/payments' requests, a
// card payment's and a hosted payment's, for the decoding tests.
type paymentBody struct {
	order.Details
	Card            order.Text `json:"card"`
	ExpirationMonth order.Text `json:"expiration_month"`
	ExpirationYear  order.Text `json:"expiration_year"`
	SecurityCode    order.Text `json:"security_code"`
	EncryptionData  string     `json:"encryption_data"`
}

type hostedBody struct {
	order.Details
	EncryptionData string `json:"encryption_data"`
	SignInfo       string `json:"signInfo"`
}

// TestDecodeBodySameResult checks that the three encodings of one order
// decode to the same request.
func TestDecodeBodySameResult(t *testing.T) {
	f := validCard()
	f["cart_items"] = []map[string]any{{"basic_item_data": map[string]any{"name": "Hat", "quantity": "2"}}}
	var fromJSON, fromForm paymentBody
	if code := decodeBody(f.json(t), &fromJSON); code != nil {
		t.Fatalf("json: %s", code)
	}
	if code := decodeBody(f.form(t), &fromForm); code != nil {
		t.Fatalf("form: %s", code)
	}
	gj, _ := json.Marshal(fromJSON)
	fj, _ := json.Marshal(fromForm)
	if string(gj) != string(fj) {
		t.Errorf("form decodes to\n%s\njson to\n%s", fj, gj)
	}
}

// TestDescribeJSONErrorHidesBody feeds bodies holding a PAN that fail to
// decode in several ways; the message must never quote them.
func TestDescribeJSONErrorHidesBody(t *testing.T) {
	bodies := []struct {
		name string
		body string
	}{
		{"syntax error after the PAN", `{"card":"` + testPAN + `",,}`},
		{"syntax error inside the PAN", `{"card":42424242x4242424242}`},
		{"bare PAN as a value", `{"card":` + testPAN + `}x`},
		{"truncated after the PAN", `{"card":"` + testPAN},
		{"PAN as a number in a text field", `{"first_name":` + testPAN + `}`},
		{"PAN as a string in an array field", `{"cart_items":"` + testPAN + `"}`},
		{"PAN as a key of an object field", `{"amount":{"` + testPAN + `":1}}`},
	}
	for _, b := range bodies {
		t.Run(b.name, func(t *testing.T) {
			var req paymentBody
			code := decodeBody([]byte(b.body), &req)
			if code == nil {
				t.Fatal("decoded; want I0010")
			}
			if code.ID != codes.MalformedRequest.ID {
				t.Errorf("code = %s, want %s", code.ID, codes.MalformedRequest.ID)
			}
			for _, part := range []string{testPAN, "42424242", "4242"} {
				if strings.Contains(code.Message, part) {
					t.Errorf("message %q quotes the body (%s)", code.Message, part)
				}
			}
		})
	}
	t.Run("unexpected EOF", func(t *testing.T) {
		if got := describeJSONError(io.ErrUnexpectedEOF); got != "truncated JSON" {
			t.Errorf("got %q", got)
		}
	})
	t.Run("other error", func(t *testing.T) {
		if got := describeJSONError(errors.New("card " + testPAN)); strings.Contains(got, testPAN) {
			t.Errorf("got %q", got)
		}
	})
}

func TestReadBody(t *testing.T) {
	cases := []struct {
		name    string
		size    int
		wantErr error
	}{
		{"empty", 0, nil},
		{"exactly the limit", MaxBodyBytes, nil},
		{"one byte over", MaxBodyBytes + 1, errTooLarge},
		{"2 MiB", 2 << 20, errTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := readBody(strings.NewReader(strings.Repeat("x", c.size)))
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("err = %v, want %v", err, c.wantErr)
			}
			if err == nil && len(b) != c.size {
				t.Errorf("read %d bytes, want %d", len(b), c.size)
			}
		})
	}
}

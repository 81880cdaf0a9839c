package api

import (
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/domain/order"
)

// edgeEntry is a batch entry as the edge decodes it (api/operations has the
// batches' own).
type edgeEntry struct {
	TransactionID order.Text `json:"transaction_id"`
	RefundReason  order.Text `json:"refund_reason"`
}

func TestDecodeBodyRefusesBadText(t *testing.T) {
	type dst struct {
		MerchantID   string              `json:"merchant_id"`
		Note         string              `json:"note"`
		FirstName    string              `json:"first_name"`
		RefundReason string              `json:"refund_reason"`
		CartItems    []order.CartItem    `json:"cart_items"`
		RefundOrders JSONList[edgeEntry] `json:"refund_orders"`
	}
	manyItems := "[" + strings.Repeat(`{"basic_item_data":{"name":"Hat"}},`, 100) + `{"basic_item_data":{"name":"Hat"}}]`
	deep := strings.Repeat(`{"a":`, 7) + "1" + strings.Repeat("}", 7)
	cases := []struct {
		name string
		body string
		want string // the whole result_info; empty: decoded
	}{
		{name: "form NUL in note", body: "merchant_id=1&note=a%00b", want: "I0008:Invalid field value: note contains a control character"},
		{name: "json NUL escape in note", body: `{"merchant_id":"1","note":"a\u0000b"}`, want: "I0008:Invalid field value: note contains a control character"},
		{name: "json raw invalid UTF-8", body: "{\"merchant_id\":\"1\",\"first_name\":\"A\xffda\"}", want: "I0008:Invalid field value: first_name is not valid UTF-8"},
		{name: "form invalid UTF-8", body: "merchant_id=1&first_name=A%FFda", want: "I0008:Invalid field value: first_name is not valid UTF-8"},
		{name: "form invalid UTF-8 field name", body: "merchant_id=1&a%FF=1", want: `I0008:Invalid field value: field name "a\xff" is not valid UTF-8`},
		{name: "json raw invalid UTF-8 in a key", body: "{\"merchant_id\":\"1\",\"a\xff\":\"x\"}", want: "I0008:Invalid field value: a field name is not valid UTF-8"},
		{name: "escape character in first_name", body: `{"first_name":"Ada\u001b[31m"}`, want: "I0008:Invalid field value: first_name contains a control character"},
		{name: "DEL in merchant_id", body: "merchant_id=1%7F", want: "I0008:Invalid field value: merchant_id contains a control character"},
		{name: "C1 control in note", body: `{"note":"a\u0085b"}`, want: "I0008:Invalid field value: note contains a control character"},
		{name: "newline in first_name", body: "first_name=Ada%0A", want: "I0008:Invalid field value: first_name contains a control character"},
		{name: "newline and tab in note are fine", body: "note=line%0Aone%09two%0D%0A"},
		{name: "newline in refund_reason is fine", body: `{"refund_reason":"damaged\nreturned"}`},
		{name: "NUL inside a cart item", body: `{"cart_items":[{"basic_item_data":{"name":"H\u0000at"}}]}`, want: "I0008:Invalid field value: cart_items[0].basic_item_data.name contains a control character"},
		{name: "NUL in a form cart item", body: "cart_items=" + "%5B%7B%22basic_item_data%22%3A%7B%22name%22%3A%22H%5Cu0000at%22%7D%7D%5D", want: "I0008:Invalid field value: cart_items[0].basic_item_data.name contains a control character"},
		{name: "101 cart items", body: `{"cart_items":` + manyItems + `}`, want: "I0011:Request body too large: cart_items holds more than 100 entries"},
		{name: "nested too deeply", body: `{"note":"x","custom_obj":` + deep + `}`, want: "I0008:Invalid field value: custom_obj.a.a.a.a.a is nested too deeply"},
		{name: "overlong nested text", body: `{"cart_items":[{"basic_item_data":{"name":"` + strings.Repeat("x", 2049) + `"}}]}`, want: "I0008:Invalid field value: cart_items[0].basic_item_data.name is too long"},
		{name: "NUL escaped in a batch array sent as JSON text", body: `{"refund_orders":"[{\"refund_reason\":\"a\\u0000b\"}]"}`, want: "I0008:Invalid field value: refund_orders[0].refund_reason contains a control character"},
		// The decoder takes a field's name in any case, so the checks do.
		{name: "NUL escaped in a batch array sent as JSON text under an upper-case name", body: `{"REFUND_ORDERS":"[{\"refund_reason\":\"a\\u0000b\"}]"}`, want: "I0008:Invalid field value: refund_orders[0].refund_reason contains a control character"},
		{name: "NUL in a form's batch array under a mixed-case name", body: "Refund_Orders=%5B%7B%22refund_reason%22%3A%22a%5Cu0000b%22%7D%5D", want: "I0008:Invalid field value: refund_orders[0].refund_reason contains a control character"},
		{name: "NUL in an entry's field of upper-case name", body: `{"refund_orders":[{"REFUND_REASON":"a\u0000b"}]}`, want: "I0008:Invalid field value: refund_orders[0].refund_reason contains a control character"},
		{name: "101 cart items under an upper-case name", body: `{"CART_ITEMS":` + manyItems + `}`, want: "I0011:Request body too large: cart_items holds more than 100 entries"},
		{name: "101 cart items under a name with the long s, which the decoder folds to s", body: `{"cart_item\u017f":` + manyItems + `}`, want: "I0011:Request body too large: cart_items holds more than 100 entries"},
		{name: "batch array as JSON text nested too deeply", body: `{"refund_orders":"[{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":1}}}}}]"}`, want: "I0008:Invalid field value: refund_orders[0].a.a.a.a is nested too deeply"},
		{name: "batch array as JSON text is fine", body: `{"refund_orders":"[{\"refund_reason\":\"line\\none\"}]"}`},
		{name: "unicode text is fine", body: `{"first_name":"Zoë","note":"日本語 ✓"}`},
		// A dispute's evidence holds letters of paragraphs and files.
		{name: "a long evidence statement of paragraphs is fine", body: `{"evidence":[{"name":"n","text":"` + strings.Repeat("x", 9000) + `\n\tmore"}]}`},
		{name: "a NUL in an evidence statement", body: `{"evidence":[{"name":"n","text":"a\u0000b"}]}`, want: "I0008:Invalid field value: evidence[0].text contains a control character"},
		{name: "a newline in an evidence piece's name", body: `{"evidence":[{"name":"a\nb","text":"t"}]}`, want: "I0008:Invalid field value: evidence[0].name contains a control character"},
		{name: "an evidence name over 2 KiB", body: `{"evidence":[{"name":"` + strings.Repeat("x", 2049) + `","text":"t"}]}`, want: "I0008:Invalid field value: evidence[0].name is too long"},
		{name: "an evidence statement over its most bytes", body: `{"evidence":[{"name":"n","text":"` + strings.Repeat("x", 80001) + `"}]}`, want: "I0008:Invalid field value: evidence[0].text is too long"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var d dst
			code := decodeBody([]byte(tc.body), &d)
			got := ""
			if code != nil {
				got = code.String()
			}
			if got != tc.want {
				t.Fatalf("decodeBody = %q, want %q", got, tc.want)
			}
		})
	}
}

package checkout

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
)

func sampleRequest() map[string]string {
	return map[string]string{
		"merchant_id":            "M100",
		"account_id":             "A200",
		"order_no":               "ORD-1",
		"currency":               "USD",
		"amount":                 "59.90",
		"item_total":             "50.00",
		"tax_total":              "4.90",
		"shipping":               "5.00",
		"shipping_discount":      "0.00",
		"website":                "shop.example",
		"items":                  "Shirt#,#SKU1#,#25.00#,#2",
		"note":                   "leave at door",
		"shopper_id":             "S1",
		"shopper_level":          "3",
		"open3d":                 "do3DS",
		"token_id":               "tok_1",
		"first_name":             "Ana",
		"last_name":              "López",
		"notify_url":             "https://shop.example/notify",
		"return_url":             "https://shop.example/return",
		"cancel_url":             "https://shop.example/cancel",
		"delivery_firstname":     "Ana",
		"delivery_lastname":      "López",
		"delivery_country":       "ES",
		"delivery_state":         "M",
		"delivery_city":          "Madrid",
		"delivery_address":       "Calle 1",
		"delivery_postal_code":   "28001",
		"default_lang":           "es",
		"verify_billing_address": "1",
		"payment_method":         "card",
		"encryption_data":        "deadbeef",
		"card":                   "4242424242424242",
		"security_code":          "123",
	}
}

var sampleGateway = Gateway{
	GbcID: "g1", ConnectorCode: "sim", AccountName: "Shop", Website: "", PmID: "pm1", ApmType: "none",
	Descriptor: "SHOP*EX", OrderPrefix: "PG", RRTimezone: "UTC", OrderNumLength: "12", SendBGoods: "1",
	ReplaceName: "0", SendBankWebsite: "shop.example", ReplaceUpID: "u1", ReplaceMatchAddress: "0", ToPassPage: "1",
}

func TestForwardingFields(t *testing.T) {
	req := sampleRequest()
	fields := ForwardingFields(req, sampleGateway, "SIG123", "203.0.113.7")

	got := map[string]string{}
	count := map[string]int{}
	for _, f := range fields {
		got[f.Name] = f.Value
		count[f.Name]++
	}
	for name, n := range count {
		if n != 1 {
			t.Errorf("%s appears %d times", name, n)
		}
	}

	want := map[string]string{
		// camelCase twins
		"orderNo": "ORD-1", "orderAmount": "59.90", "orderCurrency": "USD",
		"notifyUrl": "https://shop.example/notify", "returnUrl": "https://shop.example/return",
		"cancelUrl": "https://shop.example/cancel", "signInfo": "SIG123", "merNo": "M100", "gatewayNo": "A200",
		"shopperId": "S1", "shopperLevel": "3", "firstName": "Ana", "lastName": "López", "itemTotal": "50.00",
		"taxTotal": "4.90", "shipFee": "5.00", "shippingDiscount": "0.00", "goodsInfo": "Shirt#,#SKU1#,#25.00#,#2",
		"isOpen3D": "do3DS", "paymentToken": "tok_1", "shipFirstName": "Ana", "shipLastName": "López",
		"shipCountry": "ES", "shipState": "M", "shipCity": "Madrid", "shipAddress": "Calle 1", "shipZip": "28001",
		"defaultLang": "es", "verifyBillingAddress": "1", "remark": "leave at door",
		// pass-through
		"return_url": "https://shop.example/return", "cancel_url": "https://shop.example/cancel",
		"source_notify_url": "https://shop.example/notify", "source_request_ip": "203.0.113.7",
		"default_lang": "es", "logo_name": "", "merSendLogoNo": "", "verify_billing_address": "1",
		"card_type": "", "payment_method": "card", "APMType": "",
		// gateway side; website keeps the request's value as the gateway's is empty
		"gbc_id": "g1", "connector_code": "sim", "account_name": "Shop", "website": "shop.example",
		"pm_id": "pm1", "apm_type": "none", "descriptor": "SHOP*EX", "orderprefix": "PG", "rrtimezone": "UTC",
		"ordernumlength": "12", "sendbgoods": "1", "replacename": "0", "send_bank_website": "shop.example",
		"replace_up_id": "u1", "replace_match_address": "0", "to_pass_page": "1",
	}
	for name, v := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("missing %s", name)
			continue
		}
		if g != v {
			t.Errorf("%s = %q, want %q", name, g, v)
		}
	}
	// Every request field is echoed under its own name, except the signature and card data.
	for name, v := range req {
		_, present := got[name]
		switch name {
		case "encryption_data", "card", "security_code":
			if present {
				t.Errorf("%s must not be echoed", name)
			}
		default:
			if got[name] != v {
				t.Errorf("request field %s = %q, want %q", name, got[name], v)
			}
		}
	}
	// The request fields come first, sorted by name.
	var echoed []string
	for _, f := range fields[:len(req)-3] {
		echoed = append(echoed, f.Name)
	}
	for i := 1; i < len(echoed); i++ {
		if echoed[i-1] >= echoed[i] {
			t.Errorf("request fields not sorted: %q before %q", echoed[i-1], echoed[i])
		}
	}
	// allParams is the request as a query string, without signature or card data.
	q, err := url.ParseQuery(got["allParams"])
	if err != nil {
		t.Fatal(err)
	}
	if q.Get("order_no") != "ORD-1" || q.Get("last_name") != "López" || q.Has("encryption_data") || q.Has("card") || q.Has("security_code") {
		t.Errorf("allParams = %q", got["allParams"])
	}
	if strings.Contains(got["allParams"], "4242424242424242") {
		t.Error("card number in allParams")
	}
	if len(q) != len(req)-3 {
		t.Errorf("allParams has %d params, want %d", len(q), len(req)-3)
	}
}

func TestForwardingFieldsEmptyRequest(t *testing.T) {
	fields := ForwardingFields(nil, Gateway{Website: "gw.example"}, "", "")
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[f.Name] {
			t.Errorf("%s twice", f.Name)
		}
		seen[f.Name] = true
		if f.Name == "website" {
			if f.Value != "gw.example" {
				t.Errorf("website = %q", f.Value)
			}
		} else if f.Value != "" {
			t.Errorf("%s = %q, want empty", f.Name, f.Value)
		}
	}
	// 30 twins + 11 pass-through + allParams + 16 gateway-side inputs.
	if len(fields) != 30+11+1+16 {
		t.Errorf("got %d fields", len(fields))
	}
}

func TestForwardingFieldsGatewayOverridesWebsite(t *testing.T) {
	fields := ForwardingFields(map[string]string{"website": "merchant.example", "signInfo": "forged"},
		Gateway{Website: "registered.example"}, "SIG", "")
	for _, f := range fields {
		switch f.Name {
		case "website":
			if f.Value != "registered.example" {
				t.Errorf("website = %q", f.Value)
			}
		case "signInfo":
			if f.Value != "SIG" {
				t.Errorf("signInfo = %q", f.Value)
			}
		}
	}
}

func TestRenderForwarding(t *testing.T) {
	var b bytes.Buffer
	err := RenderForwarding(&b, ForwardingData{Action: "/v1/checkout", Fields: []Field{
		{"order_no", `A"1<script>alert(1)</script>`},
		{"default_lang", "es"},
		{"submit", "x"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		`<html lang="es">`,
		`<form id="auto-form" method="post" action="/v1/checkout">`,
		`<input type="hidden" name="order_no" value="A&#34;1&lt;script&gt;alert(1)&lt;/script&gt;">`,
		`<input type="hidden" name="submit" value="x">`,
		`HTMLFormElement.prototype.submit.call(form)`,
		`<noscript><button type="submit" class="primary">Continuar</button></noscript>`,
		Message("es", "redirecting"),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "<script>alert") {
		t.Error("value not escaped")
	}
	if strings.Contains(out, "http://") || strings.Contains(out, "https://") {
		t.Error("page references an external resource")
	}
}

// TestForwardingFieldsDropCardData: card data under any spelling a
// merchant might send never reaches the page or allParams.
func TestForwardingFieldsDropCardData(t *testing.T) {
	tests := []struct {
		name string
		echo bool
	}{
		{"Card", false},
		{"CARD", false},
		{"card_number", false},
		{"cardNo", false},
		{"PAN", false},
		{"cvv", false},
		{"CVC2", false},
		{"Security-Code", false},
		{"expiry_month", false},
		{"ENCRYPTION_DATA", false},
		{"cardholder_note", true},
		{"order_no", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fields := ForwardingFields(map[string]string{tc.name: "4242424242424242"}, Gateway{}, "sig", "203.0.113.1")
			var echoed bool
			for _, f := range fields {
				if f.Name == tc.name || strings.Contains(f.Value, "4242424242424242") {
					echoed = true
				}
			}
			if echoed != tc.echo {
				t.Errorf("%s echoed = %v, want %v", tc.name, echoed, tc.echo)
			}
		})
	}
}

package checkout

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestParseItems(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Item
	}{
		{"empty", "", nil},
		{"blank", "  ", nil},
		{"one", "Shirt#,#SKU1#,#25.00#,#2", []Item{{"Shirt", "SKU1", "25.00", "2"}}},
		{"two", "Shirt#,#SKU1#,#25.00#,#2#;#Hat#,#SKU2#,#9.90#,#1",
			[]Item{{"Shirt", "SKU1", "25.00", "2"}, {"Hat", "SKU2", "9.90", "1"}}},
		{"trimmed", " Shirt #,# SKU1 #,# 25.00 #,# 2 ", []Item{{"Shirt", "SKU1", "25.00", "2"}}},
		{"missing segments", "Shirt#,#SKU1", []Item{{"Shirt", "SKU1", "", ""}}},
		{"name only", "Gift card", []Item{{"Gift card", "", "", ""}}},
		{"extra segments ignored", "A#,#B#,#1.00#,#3#,#extra", []Item{{"A", "B", "1.00", "3"}}},
		{"empty entries skipped", "#;#A#,#B#,#1.00#,#3#;##,##,##,##;#", []Item{{"A", "B", "1.00", "3"}}},
		{"empty middle segment", "A#,##,#1.00#,#3", []Item{{"A", "", "1.00", "3"}}},
		{"single separators are text", "A,B#C#,#X#,#1#,#1", []Item{{"A,B#C", "X", "1", "1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseItems(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseItems(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestMessage(t *testing.T) {
	if got := Message("es", "pay"); got != "Pagar" {
		t.Errorf("es pay = %q", got)
	}
	if got := Message("es-MX", "pay"); got != "Pagar" {
		t.Errorf("es-MX pay = %q", got)
	}
	if got := Message("fr", "pay"); got != "Pay" {
		t.Errorf("fr pay = %q", got)
	}
	if got := Message("", "cancel"); got != Message("en", "cancel") {
		t.Errorf("empty lang = %q", got)
	}
	if got := Message("en", "no_such_key"); got != "no_such_key" {
		t.Errorf("unknown key = %q", got)
	}
	if got := Message("es", "no_such_key"); got != "no_such_key" {
		t.Errorf("unknown key es = %q", got)
	}
}

func TestMessagesComplete(t *testing.T) {
	required := strings.Fields(`pay_title order_summary order_no total item quantity price card_holder card_number
		expiry expiry_month expiry_year security_code pay cancel invalid_number invalid_expiry expired_card invalid_cvv
		missing_holder declined session_expired payment_failed redirecting continue processing threeds_required apm_title`)
	for _, key := range required {
		if _, ok := messages["en"][key]; !ok {
			t.Errorf("en lacks %s", key)
		}
	}
	for _, lang := range Langs {
		m, ok := messages[lang]
		if !ok {
			t.Fatalf("no messages for %s", lang)
		}
		if len(m) != len(messages["en"]) {
			t.Errorf("%s has %d messages, en has %d", lang, len(m), len(messages["en"]))
		}
		for key := range messages["en"] {
			if m[key] == "" {
				t.Errorf("%s lacks %s", lang, key)
			}
		}
	}
	// Spanish is a translation, not a copy (a few words are the same in both).
	same := map[string]bool{"total": true, "month_placeholder": true}
	for key, en := range messages["en"] {
		if !same[key] && messages["es"][key] == en {
			t.Errorf("es %s is the English text %q", key, en)
		}
	}
}

func samplePage(lang string) PaymentPageData {
	return PaymentPageData{
		Lang: lang, Session: "sess-<1>", MerchantName: "Shop & Co", OrderNo: "ORD-1",
		Amount: "59.90", Currency: "USD",
		Items:     ParseItems("Shirt#,#SKU1#,#25.00#,#2#;#Hat#,#SKU2#,#9.90#,#1"),
		PayAction: "/v1/checkout/pay", CancelAction: "/v1/checkout/cancel",
		Brands: []string{"visa", "mastercard", "amex"},
	}
}

func TestRenderPaymentPage(t *testing.T) {
	old := now
	now = func() time.Time { return time.Date(2030, 5, 1, 0, 0, 0, 0, time.UTC) }
	defer func() { now = old }()

	for _, lang := range []string{"en", "es", "xx"} {
		t.Run(lang, func(t *testing.T) {
			var b bytes.Buffer
			if err := RenderPaymentPage(&b, samplePage(lang)); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			l := normLang(lang)
			wants := []string{
				`<html lang="` + l + `">`,
				`<form id="pay-form" method="post" action="/v1/checkout/pay"`,
				`<input type="hidden" id="session" name="session" value="sess-&lt;1&gt;">`,
				`<form id="cancel-form" method="post" action="/v1/checkout/cancel">`,
				`<input type="hidden" name="session" value="sess-&lt;1&gt;">`,
				`id="card-holder" name="card_holder"`,
				`id="card-number" name="card_number" inputmode="numeric" autocomplete="cc-number"`,
				`id="expiry-month" name="expiry_month"`,
				`id="expiry-year" name="expiry_year"`,
				`id="security-code" name="security_code" inputmode="numeric" autocomplete="cc-csc"`,
				`id="pay-button"`, `id="cancel-button"`, `id="card-brand"`, `id="form-error"`,
				`<span id="amount">59.90</span> <span id="currency">USD</span>`,
				`<dd id="order-no">ORD-1</dd>`, `Shop &amp; Co`,
				`<td>Shirt <span class="code">` + Message(l, "item_code") + `: SKU1</span></td><td class="num">2</td><td class="num">25.00</td>`,
				`<li class="badge">Visa</li><li class="badge">Mastercard</li><li class="badge">Amex</li>`,
				`<option value="01">01</option>`, `<option value="12">12</option>`,
				`<option value="2030">2030</option>`, `<option value="2045">2045</option>`,
				`data-msg-invalid-number="` + Message(l, "invalid_number") + `"`,
			}
			for _, key := range []string{"pay_title", "order_summary", "order_no", "total", "item", "quantity", "price",
				"card_holder", "card_number", "expiry", "expiry_month", "expiry_year", "security_code", "pay", "cancel"} {
				wants = append(wants, Message(l, key))
			}
			for _, want := range wants {
				if !strings.Contains(out, want) {
					t.Errorf("missing %q", want)
				}
			}
			for _, bad := range []string{`<option value="2029">`, `<option value="2046">`, "server-error", " selected", "http://", "https://"} {
				if strings.Contains(out, bad) {
					t.Errorf("unexpected %q", bad)
				}
			}
			// Every input and select has a label.
			for _, m := range regexp.MustCompile(`<(?:input|select) [^>]*id="([^"]+)"`).FindAllStringSubmatch(out, -1) {
				if strings.Contains(m[0], `type="hidden"`) {
					continue
				}
				if !strings.Contains(out, `<label for="`+m[1]+`">`) {
					t.Errorf("no label for %s", m[1])
				}
			}
			// No card field carries a value.
			for _, m := range regexp.MustCompile(`<input [^>]*>`).FindAllString(out, -1) {
				if strings.Contains(m, `name="card_`) || strings.Contains(m, `name="security_code"`) {
					if strings.Contains(m, "value=") {
						t.Errorf("card input pre-filled: %s", m)
					}
				}
			}
		})
	}
}

func TestRenderPaymentPageSpanish(t *testing.T) {
	var b bytes.Buffer
	if err := RenderPaymentPage(&b, samplePage("es")); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Pagar", "Resumen del pedido", "Número de tarjeta", "Cancelar el pago"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(out, ">Pay ") || strings.Contains(out, "Order summary") {
		t.Error("English text on the Spanish page")
	}
}

func TestRenderPaymentPageError(t *testing.T) {
	d := samplePage("en")
	d.Error = Message("en", "declined") + " <b>"
	var b bytes.Buffer
	if err := RenderPaymentPage(&b, d); err != nil {
		t.Fatal(err)
	}
	want := `<div id="server-error" class="error" role="alert">` + Message("en", "declined") + ` &lt;b&gt;</div>`
	if !strings.Contains(b.String(), want) {
		t.Errorf("missing %q", want)
	}
}

func TestRenderRedirect(t *testing.T) {
	t.Run("GET", func(t *testing.T) {
		var b bytes.Buffer
		err := RenderRedirect(&b, ResultPageData{
			Lang: "es", Title: "Volviendo a la tienda", Target: "https://shop.example/return?ref=a%26b&x=1",
			Method: "get", Fields: []Field{{"order_no", "ORD-1"}, {"order_status", `1"`}},
		})
		if err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{
			`<html lang="es">`, `<title>Volviendo a la tienda</title>`,
			`<form id="auto-form" method="get" action="https://shop.example/return">`,
			`<input type="hidden" name="ref" value="a&amp;b">` + "\n" +
				`<input type="hidden" name="x" value="1">` + "\n" +
				`<input type="hidden" name="order_no" value="ORD-1">` + "\n" +
				`<input type="hidden" name="order_status" value="1&#34;">`,
			`HTMLFormElement.prototype.submit.call(form)`, `<noscript>`, "Continuar",
			Message("es", "redirecting"),
		} {
			if !strings.Contains(out, want) {
				t.Errorf("missing %q in\n%s", want, out)
			}
		}
	})
	t.Run("POST", func(t *testing.T) {
		var b bytes.Buffer
		err := RenderRedirect(&b, ResultPageData{
			Lang: "en", Message: Message("en", "threeds_required"), Target: "/acs/challenge?id=7",
			Method: "POST", Fields: []Field{{"PaReq", "abc"}, {"TermUrl", "/v1/3ds/return"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{
			`<form id="auto-form" method="post" action="/acs/challenge?id=7">`,
			`<input type="hidden" name="PaReq" value="abc">`,
			`<input type="hidden" name="TermUrl" value="/v1/3ds/return">`,
			Message("en", "threeds_required"), `<title>` + Message("en", "redirecting") + `</title>`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("missing %q in\n%s", want, out)
			}
		}
	})
	t.Run("unsafe target", func(t *testing.T) {
		var b bytes.Buffer
		if err := RenderRedirect(&b, ResultPageData{Target: "javascript:alert(1)", Method: "POST"}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "javascript:") {
			t.Error("javascript: URL rendered as the form action")
		}
	})
}

func TestRenderMessage(t *testing.T) {
	var b bytes.Buffer
	if err := RenderMessage(&b, "es", Message("es", "error_title"), Message("es", "session_expired")+" <x>"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`<html lang="es">`, "<h1>" + Message("es", "error_title") + "</h1>", Message("es", "session_expired") + " &lt;x&gt;"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "<script") {
		t.Error("message page has a script")
	}
}

// The policy's hashes must match the inline script and style exactly as
// rendered, or browsers would block them.
func TestContentSecurityPolicy(t *testing.T) {
	var b bytes.Buffer
	if err := RenderPaymentPage(&b, samplePage("en")); err != nil {
		t.Fatal(err)
	}
	if err := RenderForwarding(&b, ForwardingData{Action: "/v1/checkout"}); err != nil {
		t.Fatal(err)
	}
	csp := ContentSecurityPolicy("https://shop.example")
	for _, re := range []string{`(?s)<script>(.*?)</script>`, `(?s)<style>(.*?)</style>`} {
		ms := regexp.MustCompile(re).FindAllStringSubmatch(b.String(), -1)
		if len(ms) != 2 {
			t.Fatalf("%s: %d matches", re, len(ms))
		}
		for _, m := range ms {
			sum := sha256.Sum256([]byte(m[1]))
			if h := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(csp, h) {
				t.Errorf("policy %q lacks %s", csp, h)
			}
		}
	}
	if !strings.Contains(csp, "form-action 'self' https://shop.example") {
		t.Errorf("policy = %q", csp)
	}
}

package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/adapters/vault"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/workflows"
)

// TestAuthoriseRefusesBeforeWorkflow covers every result code the handler
// answers before an order workflow runs. Each request is correctly signed
// unless the signature is the point, so the check under test is the one
// that answers; none may reach Orders or the vault.
func TestAuthoriseRefusesBeforeWorkflow(t *testing.T) {
	// resign returns a mutation that applies change and signs the result.
	resign := func(change func(f fields)) func(f fields) {
		return func(f fields) {
			change(f)
			f.signWith(testSignKey, cardRecipe)
		}
	}
	set := func(name string, value any) func(f fields) {
		return resign(func(f fields) { f[name] = value })
	}
	drop := func(name string) func(f fields) {
		return resign(func(f fields) { delete(f, name) })
	}
	type tc struct {
		name   string
		mutate func(f fields)
		// body, when set, is sent as is instead of the encoded fields.
		body     func(t *testing.T) []byte
		ct       string
		wantCode codes.Code
		wantHTTP int
	}
	cases := []tc{
		{name: "I0001 missing merchant_id", mutate: drop("merchant_id"), wantCode: codes.MissingField},
		{name: "I0001 missing account_id", mutate: drop("account_id"), wantCode: codes.MissingField},
		{name: "I0001 missing encryption_data", mutate: func(f fields) { delete(f, "encryption_data") }, wantCode: codes.MissingField},
		{name: "I0001 blank encryption_data", mutate: func(f fields) { f["encryption_data"] = "  " }, wantCode: codes.MissingField},
		{name: "I0001 missing order_no", mutate: drop("order_no"), wantCode: codes.MissingField},
		{name: "I0001 missing currency", mutate: drop("currency"), wantCode: codes.MissingField},
		{name: "I0001 missing amount", mutate: drop("amount"), wantCode: codes.MissingField},
		{name: "I0001 missing expiration_month", mutate: drop("expiration_month"), wantCode: codes.MissingField},
		{name: "I0001 missing expiration_year", mutate: drop("expiration_year"), wantCode: codes.MissingField},
		{name: "I0001 missing security_code", mutate: drop("security_code"), wantCode: codes.MissingField},
		{name: "I0001 missing first_name", mutate: drop("first_name"), wantCode: codes.MissingField},
		{name: "I0001 missing last_name", mutate: drop("last_name"), wantCode: codes.MissingField},
		{name: "I0001 missing shopper_email", mutate: drop("shopper_email"), wantCode: codes.MissingField},
		{name: "I0001 blank first_name", mutate: set("first_name", "   "), wantCode: codes.MissingField},

		{name: "I0002 unknown account", mutate: set("account_id", "10086999"), wantCode: codes.UnknownMerchant},
		{name: "I0002 unknown merchant", mutate: set("merchant_id", "99999"), wantCode: codes.UnknownMerchant},

		{name: "I0003 three fraction digits", mutate: set("amount", "12.345"), wantCode: codes.InvalidAmount},
		{name: "I0003 negative", mutate: set("amount", "-1"), wantCode: codes.InvalidAmount},
		{name: "I0003 zero", mutate: set("amount", "0"), wantCode: codes.InvalidAmount},
		{name: "I0003 zero with fraction", mutate: set("amount", "0.00"), wantCode: codes.InvalidAmount},
		{name: "I0003 letters", mutate: set("amount", "abc"), wantCode: codes.InvalidAmount},
		{name: "I0003 exponent", mutate: set("amount", "1e3"), wantCode: codes.InvalidAmount},
		{name: "I0003 fraction on JPY", mutate: resign(func(f fields) { f["currency"], f["amount"] = "JPY", "100.5" }), wantCode: codes.InvalidAmount},
		{name: "I0003 bad item_total", mutate: set("item_total", "1.234"), wantCode: codes.InvalidAmount},
		{name: "I0003 negative shipping", mutate: set("shipping", "-5.00"), wantCode: codes.InvalidAmount},

		{name: "I0004 unknown currency", mutate: set("currency", "XXX"), wantCode: codes.UnsupportedCurrency},
		{name: "I0004 lower-case currency", mutate: set("currency", "usd"), wantCode: codes.UnsupportedCurrency},
		{name: "I0004 currency not enabled for the account", mutate: set("currency", "GBP"), wantCode: codes.UnsupportedCurrency},

		{name: "I0005 Luhn failure", mutate: set("card", "4242424242424241"), wantCode: codes.InvalidCardNumber},
		{name: "I0005 letters", mutate: set("card", "4242abcd42424242"), wantCode: codes.InvalidCardNumber},
		{name: "I0005 too short", mutate: set("card", "42424242428"), wantCode: codes.InvalidCardNumber},
		{name: "I0005 a zero in front of a card", mutate: set("card", "04242424242424242"), wantCode: codes.InvalidCardNumber},
		{name: "I0005 with spaces", mutate: set("card", "4242 4242 4242 4242"), wantCode: codes.InvalidCardNumber},

		{name: "I0006 expired", mutate: resign(func(f fields) { f["expiration_month"], f["expiration_year"] = "05", "2026" }), wantCode: codes.InvalidExpiry},
		{name: "I0006 month 13", mutate: set("expiration_month", "13"), wantCode: codes.InvalidExpiry},
		{name: "I0006 month 0", mutate: set("expiration_month", "0"), wantCode: codes.InvalidExpiry},
		{name: "I0006 year with a letter", mutate: set("expiration_year", "20x1"), wantCode: codes.InvalidExpiry},
		{name: "I0006 year too far ahead", mutate: set("expiration_year", "2047"), wantCode: codes.InvalidExpiry},

		{name: "I0007 two-digit CVV", mutate: set("security_code", "73"), wantCode: codes.InvalidCVV},
		{name: "I0007 four-digit CVV for visa", mutate: set("security_code", "7391"), wantCode: codes.InvalidCVV},
		{name: "I0007 CVV with a letter", mutate: set("security_code", "7a9"), wantCode: codes.InvalidCVV},

		{name: "I0008 bad shopper_email", mutate: set("shopper_email", "ada.example.com"), wantCode: codes.InvalidField},
		{name: "I0008 shopper_email with display name", mutate: set("shopper_email", "Ada <ada@example.com>"), wantCode: codes.InvalidField},
		{name: "I0008 notify_url ftp", mutate: set("notify_url", "ftp://x"), wantCode: codes.InvalidField},
		{name: "I0008 notify_url without host", mutate: set("notify_url", "https://"), wantCode: codes.InvalidField},
		// Every delivery to it would be refused (notifyclient.CheckURL).
		{name: "I0008 notify_url with user info", mutate: set("notify_url", "https://user:pass@shop.example/notify"), wantCode: codes.InvalidField},
		{name: "I0008 bad shopper_ip", mutate: set("shopper_ip", "300.1.2.3"), wantCode: codes.InvalidField},
		{name: "I0008 billing_country ZZ", mutate: set("billing_country", "ZZ"), wantCode: codes.InvalidField},
		{name: "I0008 delivery_country lower-case", mutate: set("delivery_country", "gb"), wantCode: codes.InvalidField},
		{name: "I0008 order_no with a space", mutate: set("order_no", "ORD 1"), wantCode: codes.InvalidField},
		{name: "I0008 order_no of 65 characters", mutate: set("order_no", strings.Repeat("A", 65)), wantCode: codes.InvalidField},
		{name: "I0008 note of 3000 characters", mutate: set("note", strings.Repeat("n", 3000)), wantCode: codes.InvalidField},
		{name: "I0008 first_name of 101 characters", mutate: set("first_name", strings.Repeat("a", 101)), wantCode: codes.InvalidField},

		{
			name: "I0010 truncated JSON", ct: ctJSON, wantCode: codes.MalformedRequest,
			body: func(t *testing.T) []byte { b := validCard().json(t); return b[:len(b)/2] },
		},
		{name: "I0010 amount as an object", mutate: set("amount", map[string]any{"value": "12.34"}), wantCode: codes.MalformedRequest},
		{name: "I0010 amount as an array", mutate: set("amount", []string{"12.34"}), wantCode: codes.MalformedRequest},
		{name: "I0010 cart_items as a string in JSON", mutate: set("cart_items", "two hats"), wantCode: codes.MalformedRequest},
		{
			name: "I0010 invalid JSON in a form's cart_items", ct: ctForm, wantCode: codes.MalformedRequest,
			body: func(t *testing.T) []byte {
				return []byte(string(validCard().form(t)) + "&cart_items=" + "%5B%7B%22basic_item_data%22%3A")
			},
		},
		{
			name: "I0010 invalid form escape", ct: ctForm, wantCode: codes.MalformedRequest,
			body: func(t *testing.T) []byte { return []byte("merchant_id=10086&account_id=%zz") },
		},
		{
			name: "I0010 empty body", ct: ctJSON, wantCode: codes.MalformedRequest,
			body: func(t *testing.T) []byte { return nil },
		},

		{
			name: "I0011 body of 2 MiB", ct: ctJSON, wantCode: codes.RequestTooLarge, wantHTTP: http.StatusRequestEntityTooLarge,
			body: func(t *testing.T) []byte {
				f := validCard()
				f["note"] = strings.Repeat("x", 2<<20)
				return f.json(t)
			},
		},

		{
			name: "I0012 both card and payment_method", wantCode: codes.PaymentTypeConflict,
			mutate: resign(func(f fields) { f["payment_method"] = "paypal" }),
		},
		{
			name: "I0012 neither card nor payment_method", wantCode: codes.PaymentTypeConflict,
			mutate: drop("card"),
		},

		{name: "I0013 wrong signature", mutate: func(f fields) { f["encryption_data"] = strings.Repeat("0", 64) }, wantCode: codes.BadSignature},
		{name: "I0013 signature not hex", mutate: func(f fields) { f["encryption_data"] = "not-a-signature" }, wantCode: codes.BadSignature},
		{name: "I0013 signature by another key", mutate: func(f fields) { f.signWith(otherSignKey, cardRecipe) }, wantCode: codes.BadSignature},
		{
			name: "I0013 signed field changed after signing", wantCode: codes.BadSignature,
			mutate: func(f fields) { f["amount"] = "99.99" },
		},
		{
			name: "I0013 APM request signed with the card recipe", wantCode: codes.BadSignature,
			mutate: func(f fields) {
				for _, k := range []string{"card", "expiration_month", "expiration_year", "security_code"} {
					delete(f, k)
				}
				f["payment_method"] = "paypal"
				f["return_url"] = "https://shop.example/return"
				f.signWith(testSignKey, cardRecipe)
			},
		},

		{
			name: "I0017 payment_method only", wantCode: codes.UnsupportedMethod,
			mutate: func(f fields) {
				for _, k := range []string{"card", "expiration_month", "expiration_year", "security_code"} {
					delete(f, k)
				}
				f["payment_method"] = "paypal"
				f["return_url"] = "https://shop.example/return"
				f.signWith(testSignKey, apmRecipe)
			},
		},
	}
	for _, c := range cases {
		for _, ct := range []string{ctJSON, ctForm} {
			if c.ct != "" && c.ct != ct {
				continue
			}
			name := c.name
			if c.ct == "" {
				name += " " + map[string]string{ctJSON: "json", ctForm: "form"}[ct]
			}
			t.Run(name, func(t *testing.T) {
				env := newTestEnv(t)
				var body []byte
				switch {
				case c.body != nil:
					body = c.body(t)
				default:
					f := validCard()
					c.mutate(f)
					if ct == ctJSON {
						body = f.json(t)
					} else {
						// A form carries text only: skip cases whose point is a JSON type.
						for _, v := range f {
							if _, ok := v.(string); !ok && c.wantCode.ID == codes.MalformedRequest.ID {
								t.Skip("JSON-only case")
							}
						}
						body = f.form(t)
					}
				}
				rec := env.do(t, "/v1/authorise", ct, body, "")
				wantHTTP := c.wantHTTP
				if wantHTTP == 0 {
					wantHTTP = http.StatusOK
				}
				if rec.Code != wantHTTP {
					t.Errorf("HTTP status = %d, want %d", rec.Code, wantHTTP)
				}
				r := parseRespon(t, rec)
				if got := codes.Parse(r.ResultInfo).ID; got != c.wantCode.ID {
					t.Errorf("result code = %s (%q), want %s", got, r.ResultInfo, c.wantCode.ID)
				}
				if r.OrderStatus != "0" {
					t.Errorf("order_status = %q, want 0", r.OrderStatus)
				}
				if n := len(env.orders.inputs()); n != 0 {
					t.Errorf("Orders.Authorise called %d times, want 0", n)
				}
				if n, _ := env.vault.counts(); n != 0 {
					t.Errorf("vault tokenised %d cards, want 0", n)
				}
				if strings.Contains(rec.Body.String(), testPAN) {
					t.Errorf("answer contains the PAN: %s", rec.Body.String())
				}
			})
		}
	}
}

// TestAuthoriseRefusalSignature checks that refusals to a known account are
// signed with its key and refusals to an unknown one are not signed.
func TestAuthoriseRefusalSignature(t *testing.T) {
	env := newTestEnv(t)
	f := validCard()
	f["security_code"] = "73"
	f.signWith(testSignKey, cardRecipe)
	r := parseRespon(t, env.do(t, "/v1/authorise", ctJSON, f.json(t), ""))
	want := signing.SignUpper(testSignKey, r.MerchantID, r.AccountID, r.TransactionID, r.OrderNo, r.Currency,
		r.Amount, r.OrderStatus, r.ResultInfo)
	if r.EncryptionData != want {
		t.Errorf("encryption_data = %q, want %q", r.EncryptionData, want)
	}
	if r.Amount != "12.34" || r.Currency != "USD" || r.OrderNo != "ORD-2026-0002" {
		t.Errorf("echo = %q %q %q, want 12.34 USD ORD-2026-0002", r.Amount, r.Currency, r.OrderNo)
	}

	f = validCard()
	f["account_id"] = "10086999"
	r = parseRespon(t, env.do(t, "/v1/authorise", ctJSON, f.json(t), ""))
	if r.EncryptionData != "" {
		t.Errorf("unknown account: encryption_data = %q, want empty", r.EncryptionData)
	}
}

// TestAuthoriseAccountLoadError answers S0001 when accounts cannot be read.
func TestAuthoriseAccountLoadError(t *testing.T) {
	env := newTestEnv(t)
	env.accounts.err = errors.New("database down")
	rec := env.do(t, "/v1/authorise", ctJSON, validCard().json(t), "")
	if got := codes.Parse(parseRespon(t, rec).ResultInfo).ID; got != codes.SystemError.ID {
		t.Errorf("result code = %s, want %s", got, codes.SystemError.ID)
	}
	if n := len(env.orders.inputs()); n != 0 {
		t.Errorf("Orders.Authorise called %d times, want 0", n)
	}
}

// TestAuthoriseSuccessEncodings sends the same order as JSON, as a form and
// as JSON under the form Content-Type: all three must start the same order.
func TestAuthoriseSuccessEncodings(t *testing.T) {
	encodings := []struct {
		name string
		ct   string
		body func(t *testing.T, f fields) []byte
	}{
		{"json", ctJSON, func(t *testing.T, f fields) []byte { return f.json(t) }},
		{"form", ctForm, func(t *testing.T, f fields) []byte { return f.form(t) }},
		{"json with form content type", ctForm, func(t *testing.T, f fields) []byte { return f.json(t) }},
		{"json without content type", "", func(t *testing.T, f fields) []byte { return f.json(t) }},
	}
	wantToken := fakeToken(workflows.OrderWorkflowID(testMerchantID, testAccountID, "ORD-2026-0002"),
		vaultCard(testPAN, "12", "2031", testCVV))
	var first *workflows.OrderInput
	for _, e := range encodings {
		t.Run(e.name, func(t *testing.T) {
			env := newTestEnv(t)
			f := validCard()
			f["amount"] = " 12.34 " // trimmed before use and signing
			rec := env.do(t, "/v1/authorise", e.ct, e.body(t, f), "")
			if rec.Code != http.StatusOK {
				t.Fatalf("HTTP status = %d, want 200", rec.Code)
			}
			calls := env.orders.inputs()
			if len(calls) != 1 {
				t.Fatalf("Orders.Authorise called %d times, want 1", len(calls))
			}
			in := calls[0]
			if in.Amount != 1234 || in.Currency != "USD" {
				t.Errorf("amount = %d %s, want 1234 USD", in.Amount, in.Currency)
			}
			if in.TransactionID != testTxID || in.MerchantID != testMerchantID || in.AccountID != testAccountID || in.OrderNo != "ORD-2026-0002" {
				t.Errorf("ids = %q %q %q %q", in.TransactionID, in.MerchantID, in.AccountID, in.OrderNo)
			}
			if in.CaptureMode != "auto" {
				t.Errorf("capture mode = %q, want auto", in.CaptureMode)
			}
			wantCard := workflows.CardRef{
				Token: wantToken, Masked: "424242******4242", Brand: "visa", Fingerprint: env.vault.Fingerprint(testPAN),
			}
			if in.Card != wantCard {
				t.Errorf("card = %+v, want %+v", in.Card, wantCard)
			}
			if in.Details.Amount != "12.34" {
				t.Errorf("details amount = %q, want 12.34", in.Details.Amount)
			}
			if in.RequestFingerprint == "" {
				t.Errorf("no request fingerprint")
			}
			if first == nil {
				first = &in
			} else if !reflect.DeepEqual(*first, in) {
				t.Errorf("OrderInput differs from the JSON one:\n got %+v\nwant %+v", in, *first)
			}
			if n, deleted := env.vault.counts(); n != 1 || len(deleted) != 0 {
				t.Errorf("vault: %d tokenised, %v deleted; want 1 and none", n, deleted)
			}
		})
	}
}

func TestAuthoriseSuccessXML(t *testing.T) {
	env := newTestEnv(t)
	f := validCard()
	f["custom"] = "cart=42&ref=x"
	rec := env.do(t, "/v1/authorise", ctJSON, f.json(t), "")
	if rec.Code != http.StatusOK {
		t.Fatalf("HTTP status = %d, want 200", rec.Code)
	}
	wantPaths := []string{"respon"}
	for _, el := range []string{"merchant_id", "account_id", "order_no", "amount", "currency", "transaction_id",
		"card", "order_status", "result_info", "contract_name", "recurring_id", "recurring_deduction_period",
		"recurring_deduction_time", "note", "custom", "token_id", "connector", "threeds_result", "risk_action",
		"risk_score", "risk_reasons"} {
		wantPaths = append(wantPaths, "respon/"+el)
	}
	// Interface, "Direct payment result": risk_reasons (children name and
	// status).
	for range 2 {
		wantPaths = append(wantPaths, "respon/risk_reasons/name", "respon/risk_reasons/status")
	}
	wantPaths = append(wantPaths, "respon/encryption_data")
	if got := elementPaths(t, rec.Body.Bytes()); !slices.Equal(got, wantPaths) {
		t.Errorf("XML elements:\n got %v\nwant %v", got, wantPaths)
	}

	r := parseRespon(t, rec)
	want := map[string][2]string{
		"merchant_id":    {r.MerchantID, testMerchantID},
		"account_id":     {r.AccountID, testAccountID},
		"order_no":       {r.OrderNo, "ORD-2026-0002"},
		"amount":         {r.Amount, "12.34"},
		"currency":       {r.Currency, "USD"},
		"transaction_id": {r.TransactionID, testTxID},
		"card":           {r.Card, "424242******4242"},
		"order_status":   {r.OrderStatus, "1"},
		"result_info":    {r.ResultInfo, "0000:Success"},
		"note":           {r.Note, "gift wrap please"},
		"custom":         {r.Custom, "cart=42&ref=x"},
		"connector":      {r.Connector, "simulator"},
		"threeds_result": {r.ThreeDSResult, "not_enrolled"},
		"risk_action":    {r.RiskAction, "ACCEPT"},
		"risk_score":     {r.RiskScore, "12"},
	}
	for name, v := range want {
		if v[0] != v[1] {
			t.Errorf("%s = %q, want %q", name, v[0], v[1])
		}
	}
	if got := codes.Parse(r.ResultInfo).ID; got != codes.OK.ID {
		t.Errorf("result code = %s, want %s", got, codes.OK.ID)
	}
	if rr := r.RiskReasons.Reasons; len(rr) != 2 || rr[0].Name != "velocity" || rr[0].Status != "ACCEPT" ||
		rr[1].Name != "amount_limit" {
		t.Errorf("risk_reasons = %+v", r.RiskReasons)
	}
	wantSig := signing.SignUpper(testSignKey, testMerchantID, testAccountID, testTxID, "ORD-2026-0002", "USD", "12.34", "1", "0000:Success")
	if r.EncryptionData != wantSig {
		t.Errorf("encryption_data = %q, want %q", r.EncryptionData, wantSig)
	}
	if r.EncryptionData != strings.ToUpper(r.EncryptionData) {
		t.Errorf("encryption_data %q is not upper-case", r.EncryptionData)
	}
}

// TestAuthoriseNestedFields sends every nested field of the payment order and
// checks it reaches the workflow input unchanged, from JSON and from a form.
func TestAuthoriseNestedFields(t *testing.T) {
	nested := map[string]string{
		"cart_items": `[{"basic_item_data":{"name":"Hat","quantity":"2","type":"physical",` +
			`"price":{"amount_usd":12.5,"amount_local_currency":10.40,"currency":"GBP"},"category":"clothes","productId":"H-1"}}]`,
		"account_owner": `[{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com","account_id":"A-7",` +
			`"created":1700000000,"past_orders_count":3,"past_orders_sum":123.45,"lastLogin_ip":"203.0.113.10","registration_ip":"203.0.113.11"}]`,
		"total_discount":         `[{"coupon_code_used":"SPRING","discount_type":"percent"}]`,
		"additional_information": `[{"mpi_info":{"eci":"05","cavv":"AAABBBCCC","xid":"X-1","dsTransID":"f25084f0-5b16-4c0a-ae5d-b24808a95e4b"}}]`,
		"subscription": `{"contract":"C-1","contract_name":"Monthly box","contract_amount":"9.99","interval":"day",` +
			`"interval_count":"30","billing_cycle":12,"promotion_cycle":0,"contract_start":"20260701","contract_end":"20270701","price_id":"P-1"}`,
	}
	want := order.Details{
		CartItems: []order.CartItem{{BasicItemData: order.BasicItemData{
			Name: "Hat", Quantity: "2", Type: "physical",
			Price:    order.ItemPrice{AmountUSD: "12.5", AmountLocalCurrency: "10.40", Currency: "GBP"},
			Category: "clothes", ProductID: "H-1",
		}}},
		AccountOwner: []order.AccountOwner{{
			FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", AccountID: "A-7",
			Created: "1700000000", PastOrdersCount: "3", PastOrdersSum: "123.45",
			LastLoginIP: "203.0.113.10", RegistrationIP: "203.0.113.11",
		}},
		TotalDiscount: []order.Discount{{CouponCodeUsed: "SPRING", DiscountType: "percent"}},
		AdditionalInformation: []order.AdditionalInformation{{MPIInfo: &order.MPIInfo{
			ECI: "05", CAVV: "AAABBBCCC", XID: "X-1", DSTransID: "f25084f0-5b16-4c0a-ae5d-b24808a95e4b",
		}}},
		Subscription: &order.Subscription{
			Contract: "C-1", ContractName: "Monthly box", ContractAmount: "9.99", Interval: "day",
			IntervalCount: "30", BillingCycle: "12", PromotionCycle: "0",
			ContractStart: "20260701", ContractEnd: "20270701", PriceID: "P-1",
		},
		CheckoutTime: "1700000000",
	}
	cases := []struct {
		name string
		ct   string
		body func(t *testing.T) []byte
	}{
		{"json", ctJSON, func(t *testing.T) []byte {
			f := validCard()
			for k, v := range nested {
				f[k] = json.RawMessage(v)
			}
			f["checkout_time"] = json.RawMessage("1700000000")
			return f.json(t)
		}},
		{"form with nested JSON text", ctForm, func(t *testing.T) []byte {
			f := validCard()
			for k, v := range nested {
				f[k] = v // a string: sent as the JSON text itself
			}
			f["checkout_time"] = "1700000000"
			return f.form(t)
		}},
	}
	var fingerprints []string
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := newTestEnv(t)
			rec := env.do(t, "/v1/authorise", c.ct, c.body(t), "")
			if got := codes.Parse(parseRespon(t, rec).ResultInfo).ID; got != codes.OK.ID {
				t.Fatalf("result code = %s, want %s; body %s", got, codes.OK.ID, rec.Body.String())
			}
			calls := env.orders.inputs()
			if len(calls) != 1 {
				t.Fatalf("Orders.Authorise called %d times, want 1", len(calls))
			}
			d := calls[0].Details
			got := order.Details{
				CartItems: d.CartItems, AccountOwner: d.AccountOwner, TotalDiscount: d.TotalDiscount,
				AdditionalInformation: d.AdditionalInformation, Subscription: d.Subscription, CheckoutTime: d.CheckoutTime,
			}
			if !reflect.DeepEqual(got, want) {
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(want)
				t.Errorf("nested details:\n got %s\nwant %s", gj, wj)
			}
			fingerprints = append(fingerprints, calls[0].RequestFingerprint)
		})
	}
	if len(fingerprints) == 2 && fingerprints[0] != fingerprints[1] {
		t.Errorf("JSON and form bodies of one order have different fingerprints")
	}
}

// TestAuthoriseNoteAtLimit accepts free text up to the limit even when it
// holds characters that JSON escapes.
func TestAuthoriseNoteAtLimit(t *testing.T) {
	cases := []struct {
		name     string
		note     string
		wantCode codes.Code
	}{
		{"2048 plain characters", strings.Repeat("n", order.MaxFreeText), codes.OK},
		{"2048 characters with ampersands", strings.Repeat("a&b<", order.MaxFreeText/4), codes.OK},
		{"2049 characters", strings.Repeat("n", order.MaxFreeText+1), codes.InvalidField},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := newTestEnv(t)
			f := validCard()
			f["note"] = c.note
			r := parseRespon(t, env.do(t, "/v1/authorise", ctJSON, f.json(t), ""))
			if got := codes.Parse(r.ResultInfo).ID; got != c.wantCode.ID {
				t.Errorf("result code = %s (%q), want %s", got, r.ResultInfo, c.wantCode.ID)
			}
		})
	}
}

// TestAuthoriseDuplicates covers a reused order_no and results that do not
// use this request's card token.
func TestAuthoriseDuplicates(t *testing.T) {
	token := fakeToken(workflows.OrderWorkflowID(testMerchantID, testAccountID, "ORD-2026-0002"),
		vaultCard(testPAN, "12", "2031", testCVV))
	cases := []struct {
		name        string
		existing    bool
		result      func(in workflows.OrderInput) (workflows.PaymentResult, error)
		wantCode    codes.Code
		wantDeleted []string
	}{
		{
			name: "order mismatch deletes the token it created",
			result: func(workflows.OrderInput) (workflows.PaymentResult, error) {
				return workflows.PaymentResult{}, flows.ErrOrderMismatch
			},
			wantCode: codes.DuplicateOrder, wantDeleted: []string{token},
		},
		{
			name: "order mismatch keeps a token it did not create", existing: true,
			result: func(workflows.OrderInput) (workflows.PaymentResult, error) {
				return workflows.PaymentResult{}, flows.ErrOrderMismatch
			},
			wantCode: codes.DuplicateOrder,
		},
		{
			name: "result with another card token deletes this one",
			result: func(in workflows.OrderInput) (workflows.PaymentResult, error) {
				r := successResult(in)
				r.CardToken = "tok_of_the_first_request"
				return r, nil
			},
			wantCode: codes.OK, wantDeleted: []string{token},
		},
		{
			name:     "result with this card token keeps it",
			wantCode: codes.OK,
		},
		{
			name: "workflow error keeps the token an order may use",
			result: func(workflows.OrderInput) (workflows.PaymentResult, error) {
				return workflows.PaymentResult{}, errors.New("temporal unavailable")
			},
			wantCode: codes.SystemError,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := newTestEnv(t)
			env.vault.existing = c.existing
			env.orders.result = c.result
			rec := env.do(t, "/v1/authorise", ctJSON, validCard().json(t), "")
			if rec.Code != http.StatusOK {
				t.Errorf("HTTP status = %d, want 200", rec.Code)
			}
			r := parseRespon(t, rec)
			if got := codes.Parse(r.ResultInfo).ID; got != c.wantCode.ID {
				t.Errorf("result code = %s (%q), want %s", got, r.ResultInfo, c.wantCode.ID)
			}
			if _, deleted := env.vault.counts(); !slices.Equal(deleted, c.wantDeleted) {
				t.Errorf("deleted tokens = %v, want %v", deleted, c.wantDeleted)
			}
			if c.wantCode.ID != codes.OK.ID && r.OrderStatus != "0" {
				t.Errorf("order_status = %q, want 0", r.OrderStatus)
			}
		})
	}
}

// TestAuthoriseCardDataNeverLeaves checks that neither the PAN nor the CVV
// reaches the workflow input, the log or the answer.
func TestAuthoriseCardDataNeverLeaves(t *testing.T) {
	cases := []struct {
		name     string
		result   func(in workflows.OrderInput) (workflows.PaymentResult, error)
		wantCode codes.Code
	}{
		{"success", nil, codes.OK},
		{"declined", func(in workflows.OrderInput) (workflows.PaymentResult, error) { return declinedResult(in), nil }, codes.Declined},
		{"workflow error", func(workflows.OrderInput) (workflows.PaymentResult, error) {
			return workflows.PaymentResult{}, errors.New("update failed")
		}, codes.SystemError},
	}
	for _, c := range cases {
		for _, ct := range []string{ctJSON, ctForm} {
			t.Run(c.name+" "+ct, func(t *testing.T) {
				env := newTestEnv(t)
				env.orders.result = c.result
				f := validCard()
				body := f.json(t)
				if ct == ctForm {
					body = f.form(t)
				}
				rec := env.do(t, "/v1/authorise", ct, body, "")
				if got := codes.Parse(parseRespon(t, rec).ResultInfo).ID; got != c.wantCode.ID {
					t.Fatalf("result code = %s, want %s", got, c.wantCode.ID)
				}
				calls := env.orders.inputs()
				if len(calls) != 1 {
					t.Fatalf("Orders.Authorise called %d times, want 1", len(calls))
				}
				in, err := json.Marshal(calls[0])
				if err != nil {
					t.Fatal(err)
				}
				checkNoCardData(t, "OrderInput", string(in))
				checkNoCardData(t, "log", env.logs.String())
				checkNoCardData(t, "answer", rec.Body.String())
				if env.logs.String() == "" {
					t.Error("nothing was logged; the check proves nothing")
				}
			})
		}
	}
}

func checkNoCardData(t *testing.T, where, s string) {
	t.Helper()
	if strings.Contains(s, testPAN) {
		t.Errorf("%s contains the PAN: %s", where, s)
	}
	if strings.Contains(s, `"`+testCVV+`"`) || strings.Contains(s, ">"+testCVV+"<") {
		t.Errorf("%s contains the CVV as a value: %s", where, s)
	}
}

func vaultCard(number, month, year, cvv string) vault.Card {
	return vault.Card{Number: number, ExpiryMonth: month, ExpiryYear: year, CVV: cvv}
}

package integration

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/json"
	"encoding/xml"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/connectors/simacquirer"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

// browser is an HTTP client that keeps redirects visible, as a test of
// what a shopper's browser is told to do.
var browser = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func browse(t *testing.T, method, target string, form url.Values) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", formType)
	}
	resp, err := browser.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)"`)

// hiddenFields reads a page's hidden inputs (html-escaped values decoded).
func hiddenFields(page string) url.Values {
	v := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(page, -1) {
		v.Set(unescape(m[1]), unescape(m[2]))
	}
	return v
}

func unescape(s string) string { return html.UnescapeString(s) }

func orderStatus(t *testing.T, accountID, orderNo string) (int, *models.Order) {
	t.Helper()
	o := findOrder(t, accountID, orderNo)
	return int(o.PaymentStatus), o
}

// waitStatus waits until the order leaves 1000.
func waitStatus(t *testing.T, accountID, orderNo string) *models.Order {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, o := orderStatus(t, accountID, orderNo)
		if st != 1000 {
			return o
		}
		if time.Now().After(deadline) {
			t.Fatalf("order %s still pending", orderNo)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestThreeDSecureDirectPayment(t *testing.T) {
	t.Parallel()
	creds := env.auto
	tests := []struct {
		name          string
		pan, otp      string
		orderStatus   string // the first answer
		final         int
		result        string
		threeDSResult string
	}{
		{"challenge, right code", "4000000000003220", "123456", "-1", 3000, "0000:Success", "challenge:authenticated"},
		{"challenge, wrong code", "4000000000003220", "000000", "-1", 6000, "A0005:3-D Secure authentication failed", "challenge:failed"},
		{"frictionless card", "4242424242424242", "", "1", 3000, "0000:Success", "frictionless"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orderNo := newOrderNo(t)
			f := cardOrder(creds, orderNo, tc.pan)
			f["open3d"] = "do3DS"
			_, r := authorise(t, signCard(f, creds.SignKey))
			if r.OrderStatus != tc.orderStatus {
				t.Fatalf("first answer: order_status %s %s, want %s", r.OrderStatus, r.ResultInfo, tc.orderStatus)
			}
			checkResultSignature(t, r, creds.SignKey)
			if tc.otp != "" {
				// The issuer_url of the first answer leads to the ACS.
				acs := r.IssuerURL
				if !strings.HasPrefix(acs, env.simHTTP.URL+"/acs/") {
					t.Fatalf("issuer_url = %q, want the simulator's ACS", acs)
				}
				resp, page := browse(t, http.MethodGet, acs, nil)
				if resp.StatusCode != 200 || !strings.Contains(page, `id="otp"`) {
					t.Fatalf("ACS page: %d", resp.StatusCode)
				}
				_, result := browse(t, http.MethodPost, acs, url.Values{"otp": {tc.otp}})
				fields := hiddenFields(result)
				if fields.Get("authentication_id") == "" {
					t.Fatalf("the ACS answer has no result form:\n%s", result)
				}
				resp, _ = browse(t, http.MethodPost, env.api.URL+"/v1/3ds/callback", fields)
				if resp.StatusCode != http.StatusOK {
					t.Errorf("callback: HTTP %d", resp.StatusCode)
				}
			}
			o := waitStatus(t, creds.AccountID, orderNo)
			if int(o.PaymentStatus) != tc.final || o.ResultCode+":"+o.ResultMessage != tc.result || !o.Is3DS || o.ThreeDSResult != tc.threeDSResult {
				t.Errorf("record: %d %s:%s is3ds %v %q", o.PaymentStatus, o.ResultCode, o.ResultMessage, o.Is3DS, o.ThreeDSResult)
			}
			wantCharges := 1
			if tc.final == 6000 {
				wantCharges = 0
			}
			if n := chargesFor(o.TransactionID); n != wantCharges {
				t.Errorf("charges = %d, want %d", n, wantCharges)
			}
		})
	}
}

func TestThreeDSCallbackForged(t *testing.T) {
	t.Parallel()
	creds := env.auto
	orderNo := newOrderNo(t)
	f := cardOrder(creds, orderNo, "4000000000003220")
	f["open3d"] = "do3DS"
	_, r := authorise(t, signCard(f, creds.SignKey))
	resp, _ := browse(t, http.MethodPost, env.api.URL+"/v1/3ds/callback", url.Values{
		"authentication_id": {"au_forged"}, "status": {"authenticated"}, "cavv": {"x"},
		"reference": {r.TransactionID}, "signature": {strings.Repeat("0", 64)},
	})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("forged 3-D Secure result: HTTP %d, want 403", resp.StatusCode)
	}
	if st, _ := orderStatus(t, creds.AccountID, orderNo); st != 1000 {
		t.Errorf("order moved to %d on a forged result", st)
	}
}

func apmAccount(t *testing.T) merchant.Credentials {
	t.Helper()
	creds, err := env.gw.Accounts.Create(context.Background(), merchant.NewAccount{Mode: testmode.Test,
		MerchantID: "50001", AccountID: "50001" + randomHex(2), CaptureMode: models.CaptureAuto,
		AllowedQueryIPs: []string{"127.0.0.1"}, Currencies: []string{"BRL", "MXN", "EUR", "USD"}, Risk: quietRisk,
	})
	if err != nil {
		t.Fatal(err)
	}
	return creds
}

func apmOrder(creds merchant.Credentials, orderNo, method, currency, country string) map[string]string {
	f := map[string]string{
		"merchant_id": creds.MerchantID, "account_id": creds.AccountID, "order_no": orderNo,
		"currency": currency, "amount": "100.00", "payment_method": method,
		"return_url": "https://shop.example/return", "first_name": "Ana", "last_name": "Souza",
		"shopper_email": "ana@example.com", "billing_country": country,
		"notify_url": env.sink.URL + "/notify",
		"person":     `{"document_number":"12345678901","document_type":"CPF","email":"ana@example.com","address_country":"` + country + `"}`,
	}
	if method == "IDEAL" {
		f["bank_code"] = "INGBNL2A"
	}
	return f
}

func signAPM(f map[string]string, key string) map[string]string {
	f["encryption_data"] = signing.Sign(key, f["merchant_id"], f["account_id"], f["order_no"], f["currency"], f["amount"], f["payment_method"], f["return_url"])
	return f
}

type apmAnswer struct {
	OrderNo       string `xml:"order_no"`
	IssuerURL     string `xml:"issuer_url"`
	OrderStatus   string `xml:"order_status"`
	ResultInfo    string `xml:"result_info"`
	TransactionID string `xml:"transaction_id"`
}

func authoriseAPM(t *testing.T, f map[string]string) apmAnswer {
	t.Helper()
	_, b := post(t, "/v1/authorise", formType, form(f))
	var a apmAnswer
	if err := xml.Unmarshal(b, &a); err != nil {
		t.Fatalf("APM answer: %s", b)
	}
	return a
}

func TestAlternativePaymentMethods(t *testing.T) {
	t.Parallel()
	creds := apmAccount(t)
	tests := []struct {
		name, method, currency, country string
		pay                             bool
		final                           int
	}{
		{"PIX paid", "PIX", "BRL", "BR", true, 3000},
		{"OXXO paid", "OXXO", "MXN", "MX", true, 3000},
		{"iDEAL cancelled by the shopper", "IDEAL", "EUR", "NL", false, 6000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orderNo := newOrderNo(t)
			a := authoriseAPM(t, signAPM(apmOrder(creds, orderNo, tc.method, tc.currency, tc.country), creds.SignKey))
			if a.OrderStatus != "-1" || !strings.HasPrefix(a.IssuerURL, env.simHTTP.URL+"/apm/") {
				t.Fatalf("answer = %+v", a)
			}
			resp, page := browse(t, http.MethodGet, a.IssuerURL, nil)
			if resp.StatusCode != 200 || !strings.Contains(page, "apm-pay") {
				t.Fatalf("provider page: %d", resp.StatusCode)
			}
			action := "/cancel"
			if tc.pay {
				action = "/pay"
			}
			resp, _ = browse(t, http.MethodPost, a.IssuerURL+action, url.Values{})
			if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "https://shop.example/return" {
				t.Errorf("provider answer: %d %s", resp.StatusCode, resp.Header.Get("Location"))
			}
			o := waitStatus(t, creds.AccountID, orderNo)
			if int(o.PaymentStatus) != tc.final {
				t.Errorf("payment_status = %d, want %d (%s)", o.PaymentStatus, tc.final, o.ResultCode)
			}
		})
	}
}

func TestAlternativePaymentRefusals(t *testing.T) {
	t.Parallel()
	creds := apmAccount(t)
	tests := []struct {
		name   string
		change func(map[string]string)
		code   string
	}{
		{"unknown method", func(f map[string]string) { f["payment_method"] = "BITCOIN" }, "I0017"},
		{"currency of another method", func(f map[string]string) { f["currency"] = "MXN" }, "I0004"},
		{"country not served", func(f map[string]string) {
			f["billing_country"] = "AR"
			f["person"] = `{"document_number":"12345678901"}`
		}, "I0008"},
		{"missing document", func(f map[string]string) { f["person"] = `{"email":"ana@example.com"}` }, "I0008"},
		{"missing return_url", func(f map[string]string) { f["return_url"] = "" }, "I0001"},
		{"bad person object", func(f map[string]string) { f["person"] = `{"document_number":{}}` }, "I0010"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orderNo := newOrderNo(t)
			f := apmOrder(creds, orderNo, "PIX", "BRL", "BR")
			tc.change(f)
			a := authoriseAPM(t, signAPM(f, creds.SignKey))
			if !strings.HasPrefix(a.ResultInfo, tc.code) {
				t.Errorf("result_info = %q, want %s", a.ResultInfo, tc.code)
			}
			if _, err := models.FindOrderByNo(context.Background(), env.gw.DB, creds.AccountID, orderNo); err == nil {
				t.Error("a refused APM order was recorded")
			}
		})
	}
}

func TestForgedProviderCallbackRefused(t *testing.T) {
	t.Parallel()
	creds := apmAccount(t)
	orderNo := newOrderNo(t)
	a := authoriseAPM(t, signAPM(apmOrder(creds, orderNo, "OXXO", "MXN", "MX"), creds.SignKey))
	paymentID := a.IssuerURL[strings.LastIndex(a.IssuerURL, "/")+1:]
	body, _ := json.Marshal(map[string]any{"payment_id": paymentID, "reference": a.TransactionID, "status": "succeeded", "amount": 10000, "currency": "MXN", "method": "OXXO"})
	tests := []struct {
		name      string
		signature string
		status    int
	}{
		{"no signature", "", http.StatusUnauthorized},
		{"signed with another secret", simacquirer.SignProviderCallback("not-the-secret", body), http.StatusUnauthorized},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, env.api.URL+"/v1/apm/callback", strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			if tc.signature != "" {
				req.Header.Set("X-Provider-Signature", tc.signature)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("HTTP %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	if st, _ := orderStatus(t, creds.AccountID, orderNo); st != 1000 {
		t.Errorf("a forged callback moved the order to %d", st)
	}
}

// checkoutOrder is a signed hosted payment request.
func checkoutOrder(creds merchant.Credentials, orderNo string) url.Values {
	v := url.Values{}
	for k, val := range map[string]string{
		"merchant_id": creds.MerchantID, "account_id": creds.AccountID, "order_no": orderNo,
		"currency": "USD", "amount": "59.90", "return_url": env.sink.URL + "/return",
		"cancel_url": env.sink.URL + "/cancel", "notify_url": env.sink.URL + "/notify",
		"items": "Tea#,#T-1#,#29.95#,#2", "first_name": "Ada", "last_name": "Lovelace",
		"shopper_email": "ada@example.com", "default_lang": "en",
	} {
		v.Set(k, val)
	}
	v.Set("encryption_data", signing.Sign(creds.SignKey, creds.MerchantID, creds.AccountID, orderNo, "USD", "59.90", v.Get("return_url")))
	return v
}

// openCheckout posts the merchant's request and the forwarding page, and
// returns the payment page's session.
func openCheckout(t *testing.T, req url.Values) string {
	t.Helper()
	resp, forward := browse(t, http.MethodPost, env.api.URL+"/v1/checkout", req)
	fields := hiddenFields(forward)
	if resp.StatusCode != 200 || fields.Get("signInfo") != req.Get("encryption_data") || fields.Get("orderNo") != req.Get("order_no") {
		t.Fatalf("forwarding page (%d) fields: %v", resp.StatusCode, fields)
	}
	resp, page := browse(t, http.MethodPost, env.api.URL+"/v1/checkout", fields)
	session := hiddenFields(page).Get("session")
	if resp.StatusCode != 200 || session == "" || !strings.Contains(page, `id="card-number"`) {
		t.Fatalf("payment page (%d):\n%.400s", resp.StatusCode, page)
	}
	return session
}

func TestHostedCheckoutOverHTTP(t *testing.T) {
	t.Parallel()
	creds := env.auto
	tests := []struct {
		name      string
		pan       string
		threeDS   string
		cancel    bool
		landsOn   string
		orderStat string
		final     int
	}{
		{"approved card", "4242424242424242", "", false, "/return", "1", 3000},
		{"declined card", "4000000000000002", "", false, "/return", "0", 6000},
		{"challenge card, right code", "4000000000003220", "123456", false, "/return", "1", 3000},
		{"shopper cancels", "", "", true, "/cancel", "0", 6000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orderNo := newOrderNo(t)
			req := checkoutOrder(creds, orderNo)
			if tc.threeDS != "" {
				req.Set("open3d", "do3DS")
			}
			session := openCheckout(t, req)
			if st, _ := orderStatus(t, creds.AccountID, orderNo); st != 1000 {
				t.Fatalf("the checkout order is %d, want 1000", st)
			}
			var resp *http.Response
			if tc.cancel {
				resp, _ = browse(t, http.MethodPost, env.api.URL+"/v1/checkout/cancel", url.Values{"session": {session}})
			} else {
				resp, _ = browse(t, http.MethodPost, env.api.URL+"/v1/checkout/pay", url.Values{
					"session": {session}, "card_holder": {"Ada Lovelace"}, "card_number": {tc.pan},
					"expiry_month": {"12"}, "expiry_year": {"2031"}, "security_code": {"739"},
				})
			}
			if tc.threeDS != "" {
				acs := resp.Header.Get("Location")
				if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(acs, env.simHTTP.URL+"/acs/") {
					t.Fatalf("pay answer %d to %q, want the ACS", resp.StatusCode, acs)
				}
				_, result := browse(t, http.MethodPost, acs, url.Values{"otp": {tc.threeDS}})
				resp, _ = browse(t, http.MethodPost, env.api.URL+"/v1/3ds/callback", hiddenFields(result))
			}
			loc, err := url.Parse(resp.Header.Get("Location"))
			if resp.StatusCode != http.StatusSeeOther || err != nil || loc.Path != tc.landsOn {
				t.Fatalf("shopper sent to %d %q, want %s", resp.StatusCode, resp.Header.Get("Location"), tc.landsOn)
			}
			q := loc.Query()
			want := signing.SignUpper(creds.SignKey, q.Get("merchant_id"), q.Get("account_id"), q.Get("transaction_id"),
				q.Get("order_no"), q.Get("currency"), q.Get("amount"), q.Get("order_status"), q.Get("result_info"))
			if q.Get("encryption_data") != want || q.Get("order_status") != tc.orderStat || q.Get("order_no") != orderNo || q.Get("amount") != "59.90" {
				t.Errorf("result on return: %v", q)
			}
			if strings.Contains(loc.RawQuery, tc.pan) && tc.pan != "" {
				t.Error("the card number is in the return URL")
			}
			if st, _ := orderStatus(t, creds.AccountID, orderNo); st != tc.final {
				t.Errorf("order %d, want %d", st, tc.final)
			}
		})
	}
}

func TestCheckoutBadInputRecordsNothing(t *testing.T) {
	t.Parallel()
	creds := env.auto
	tests := []struct {
		name   string
		change func(v url.Values)
		code   string
	}{
		{"missing return_url", func(v url.Values) {
			v.Del("return_url")
			v.Set("encryption_data", signing.Sign(creds.SignKey, creds.MerchantID, creds.AccountID, v.Get("order_no"), "USD", "59.90", ""))
		}, "I0001"},
		{"wrong signature", func(v url.Values) { v.Set("amount", "1.00") }, "I0013"},
		{"unknown account", func(v url.Values) { v.Set("account_id", "nope") }, "I0002"},
		{"oversized note", func(v url.Values) { v.Set("note", strings.Repeat("n", 5000)) }, "I0008"},
		{"currency not enabled", func(v url.Values) {
			v.Set("currency", "GBP")
			v.Set("encryption_data", signing.Sign(creds.SignKey, creds.MerchantID, creds.AccountID, v.Get("order_no"), "GBP", "59.90", v.Get("return_url")))
		}, "I0004"},
		{"bad cancel_url", func(v url.Values) { v.Set("cancel_url", "javascript:alert(1)") }, "I0008"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orderNo := newOrderNo(t)
			v := checkoutOrder(creds, orderNo)
			tc.change(v)
			_, page := browse(t, http.MethodPost, env.api.URL+"/v1/checkout", v)
			if !strings.Contains(page, tc.code+":") {
				t.Errorf("page does not show %s:\n%.300s", tc.code, page)
			}
			if _, err := models.FindOrderByNo(context.Background(), env.gw.DB, creds.AccountID, orderNo); err == nil {
				t.Error("a refused checkout was recorded")
			}
		})
	}
	// A forged session cannot pay another order.
	resp, _ := browse(t, http.MethodPost, env.api.URL+"/v1/checkout/pay", url.Values{
		"session": {"1573876608864186368.00000000000000000000000000000000"}, "card_number": {"4242424242424242"},
	})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("forged session: HTTP %d, want 403", resp.StatusCode)
	}
}

// TestCheckoutSecondSubmitKeepsNoCard: submits of the payment page after
// the order took a card are refused, and the card each sealed is gone from
// the vault, while the order's card stays: the same card again (a double
// click; each submit seals under its own scope) or another one. The cards
// are made up for the run, so no other test seals them.
func TestCheckoutSecondSubmitKeepsNoCard(t *testing.T) {
	t.Parallel()
	creds := env.auto
	orderNo := newOrderNo(t)
	session := openCheckout(t, checkoutOrder(creds, orderNo))
	submit := func(pan string) {
		browse(t, http.MethodPost, env.api.URL+"/v1/checkout/pay", url.Values{
			"session": {session}, "card_holder": {"Ada Lovelace"}, "card_number": {pan},
			"expiry_month": {"12"}, "expiry_year": {"2031"}, "security_code": {"739"},
		})
	}
	sealed := func(pan string) int64 {
		var n int64
		if err := env.gw.DB.Model(&models.VaultCard{}).Where("fingerprint = ?", env.gw.Vault.Fingerprint(pan)).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	first, other := uniqueVisa(t), uniqueVisa(t)
	submit(first)
	o, err := models.FindOrderByNo(t.Context(), env.gw.DB, creds.AccountID, orderNo)
	if err != nil || o.PaymentStatus != 3000 {
		t.Fatalf("order after the first submit: %+v, %v; want 3000", o, err)
	}
	tests := []struct {
		name, pan string
		want      int64 // entries of the card in the vault afterwards
	}{
		{"the same card again", first, 1},
		{"another card", other, 0},
	}
	for _, tc := range tests {
		submit(tc.pan)
		if got := sealed(tc.pan); got != tc.want {
			t.Errorf("%s: %d vault entries of the card, want %d", tc.name, got, tc.want)
		}
	}
	if _, err := env.gw.Vault.Detokenize(t.Context(), o.CardToken); err != nil {
		t.Errorf("the order's card: %v", err)
	}
}

// uniqueVisa is a Luhn-valid Visa number made up for one test.
func uniqueVisa(t *testing.T) string {
	t.Helper()
	b := make([]byte, 14)
	if _, err := cryptorand.Read(b); err != nil {
		t.Fatal(err)
	}
	digits := []byte{'4'}
	for _, x := range b {
		digits = append(digits, '0'+x%10)
	}
	sum := 0
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if (len(digits)-i)%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return string(digits) + string(rune('0'+(10-sum%10)%10))
}

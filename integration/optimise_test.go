package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

// optimiseAnswer is the answer of POST /v1/optimise as a merchant reads it.
type optimiseAnswer struct {
	MerchantID     string `json:"merchant_id"`
	AccountID      string `json:"account_id"`
	RequestID      string `json:"request_id"`
	Currency       string `json:"currency"`
	Amount         string `json:"amount"`
	Country        string `json:"country"`
	WindowDays     int    `json:"window_days"`
	PaymentMethods []struct {
		Rank          int    `json:"rank"`
		PaymentMethod string `json:"payment_method"`
		Brand         string `json:"brand"`
		SuccessRate   string `json:"success_rate"`
		Succeeded     int64  `json:"succeeded"`
		SampleSize    int64  `json:"sample_size"`
	} `json:"payment_methods"`
	ResultInfo     string `json:"result_info"`
	EncryptionData string `json:"encryption_data"`
}

// ranking renders the methods one per line: "rank method brand rate
// succeeded/sample".
func (a optimiseAnswer) ranking() string {
	var b strings.Builder
	for _, m := range a.PaymentMethods {
		b.WriteString(strconv.Itoa(m.Rank) + " " + m.PaymentMethod + " " + m.Brand + " " + m.SuccessRate + " " +
			strconv.FormatInt(m.Succeeded, 10) + "/" + strconv.FormatInt(m.SampleSize, 10) + "\n")
	}
	return b.String()
}

// checkSignature verifies the answer's encryption_data: the optimise-result
// recipe under key.
func (a optimiseAnswer) checkSignature(t *testing.T, key string) {
	t.Helper()
	r := signing.OptimiseResult{MerchantID: a.MerchantID, AccountID: a.AccountID, RequestID: a.RequestID,
		Currency: a.Currency, Amount: a.Amount, ResultInfo: a.ResultInfo}
	for _, m := range a.PaymentMethods {
		r.Methods = append(r.Methods, signing.OptimiseMethod{PaymentMethod: m.PaymentMethod, Brand: m.Brand,
			SuccessRate: m.SuccessRate, SampleSize: strconv.FormatInt(m.SampleSize, 10)})
	}
	if want := signing.SignOptimiseResult(key, r); a.EncryptionData != want {
		t.Errorf("encryption_data %q, want %q", a.EncryptionData, want)
	}
}

// optimise asks which methods to offer for amount in currency (country
// "" names none), signed with the optimise recipe.
func optimise(t *testing.T, creds merchant.Credentials, currency, amount, country string) (int, optimiseAnswer) {
	t.Helper()
	rid := "OPT-" + randomHex(6)
	f := map[string]string{"merchant_id": creds.MerchantID, "account_id": creds.AccountID, "request_id": rid,
		"currency": currency, "amount": amount, "shopper_email": "ada@example.com",
		"encryption_data": signing.Sign(creds.SignKey, creds.MerchantID, creds.AccountID, rid, currency, amount,
			"ada@example.com")}
	if country != "" {
		f["country"] = country
	}
	status, body := post(t, "/v1/optimise", formType, form(f))
	var a optimiseAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("optimise answer (%d): %s", status, body)
	}
	if a.RequestID != rid && a.ResultInfo == "0000:Success" {
		t.Errorf("request_id %q, want %q", a.RequestID, rid)
	}
	return status, a
}

// TestOptimiseRanksByTheAccountsOwnOrders makes approved and declined card
// orders with the simulator's test cards and iDEAL orders paid and
// cancelled at the provider, then checks the ranking, rates and sample
// sizes POST /v1/optimise answers, exactly.
func TestOptimiseRanksByTheAccountsOwnOrders(t *testing.T) {
	t.Parallel()
	creds, err := env.gw.Accounts.Create(context.Background(), merchant.NewAccount{Mode: testmode.Test,
		MerchantID: "60001", AccountID: "60001" + randomHex(2), CaptureMode: models.CaptureAuto,
		AllowedQueryIPs: []string{"127.0.0.1"}, Currencies: []string{"EUR", "USD"},
		AmountLimits: map[string]int64{"EUR": 50000}, Risk: quietRisk,
	})
	if err != nil {
		t.Fatal(err)
	}

	// Before any order: every method unobserved, in name order; the
	// answer is signed with the key the request proved.
	status, a := optimise(t, creds, "EUR", "25.00", "NL")
	if status != http.StatusOK || a.ResultInfo != "0000:Success" || a.WindowDays != 30 || a.Country != "NL" {
		t.Fatalf("first answer %d %+v", status, a)
	}
	a.checkSignature(t, creds.SignKey)
	if got, want := a.ranking(), ""+
		"1 CARD amex  0/0\n2 CARD diners  0/0\n3 CARD discover  0/0\n4 CARD jcb  0/0\n5 CARD maestro  0/0\n"+
		"6 CARD mastercard  0/0\n7 CARD unionpay  0/0\n8 CARD visa  0/0\n9 IDEAL   0/0\n"; got != want {
		t.Errorf("ranking before any order:\n%s\nwant:\n%s", got, want)
	}

	pay := func(currency, amount, pan, wantResult string) {
		t.Helper()
		f := cardOrder(creds, newOrderNo(t), pan)
		f["currency"], f["amount"] = currency, amount
		_, r := authorise(t, signCard(f, creds.SignKey))
		if r.ResultInfo != wantResult {
			t.Fatalf("%s %s %s: %s, want %s", pan, currency, amount, r.ResultInfo, wantResult)
		}
	}
	// visa in EUR: 2 approved, 1 declined, 1 insufficient funds: 2 of 4.
	pay("EUR", "25.00", "4242424242424242", "0000:Success")
	pay("EUR", "30.00", "4242424242424242", "0000:Success")
	pay("EUR", "25.00", "4000000000000002", "A0001:Declined")
	pay("EUR", "25.00", "4000000000009995", "A0002:Insufficient funds")
	// mastercard in EUR: 1 approved: 1 of 1.
	pay("EUR", "25.00", "5555555555554444", "0000:Success")
	// Not counted for EUR: the account's own risk rule (over the EUR
	// limit), and a decline in USD.
	pay("EUR", "600.00", "4242424242424242", "R0001:Amount exceeds the account limit")
	pay("USD", "12.34", "4000000000000002", "A0001:Declined")

	// iDEAL in EUR: one paid at the provider, one cancelled there: 1 of 2.
	for _, action := range []string{"/pay", "/cancel"} {
		orderNo := newOrderNo(t)
		f := apmOrder(creds, orderNo, "IDEAL", "EUR", "NL")
		f["amount"] = "25.00"
		ans := authoriseAPM(t, signAPM(f, creds.SignKey))
		if ans.OrderStatus != "-1" || ans.IssuerURL == "" {
			t.Fatalf("iDEAL answer %+v", ans)
		}
		if resp, _ := browse(t, http.MethodPost, ans.IssuerURL+action, url.Values{}); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("provider %s: %d", action, resp.StatusCode)
		}
		o := waitStatus(t, creds.AccountID, orderNo)
		if want := map[string]int{"/pay": 3000, "/cancel": 6000}[action]; int(o.PaymentStatus) != want {
			t.Fatalf("iDEAL %s: payment_status %d (%s), want %d", action, o.PaymentStatus, o.ResultCode, want)
		}
	}

	// EUR in NL: mastercard 1/1 first; visa and iDEAL both at 0.5000, visa
	// first on its larger sample; then the unobserved brands by name.
	status, a = optimise(t, creds, "EUR", "25.00", "NL")
	if status != http.StatusOK || a.ResultInfo != "0000:Success" {
		t.Fatalf("answer %d %+v", status, a)
	}
	a.checkSignature(t, creds.SignKey)
	if got, want := a.ranking(), ""+
		"1 CARD mastercard 1.0000 1/1\n2 CARD visa 0.5000 2/4\n3 IDEAL  0.5000 1/2\n"+
		"4 CARD amex  0/0\n5 CARD diners  0/0\n6 CARD discover  0/0\n7 CARD jcb  0/0\n8 CARD maestro  0/0\n"+
		"9 CARD unionpay  0/0\n"; got != want {
		t.Errorf("EUR ranking:\n%s\nwant:\n%s", got, want)
	}

	// EUR in DE: iDEAL serves NL only, so the same cards without it.
	_, a = optimise(t, creds, "EUR", "25.00", "DE")
	if got := a.ranking(); !strings.HasPrefix(got, "1 CARD mastercard 1.0000 1/1\n2 CARD visa 0.5000 2/4\n3 CARD amex  0/0\n") ||
		strings.Contains(got, "IDEAL") || len(a.PaymentMethods) != 8 {
		t.Errorf("EUR in DE:\n%s", got)
	}

	// USD counts the USD decline only: visa 0 of 1, before the
	// unobserved; no APM takes USD.
	_, a = optimise(t, creds, "USD", "12.34", "")
	a.checkSignature(t, creds.SignKey)
	if got := a.ranking(); !strings.HasPrefix(got, "1 CARD visa 0.0000 0/1\n2 CARD amex  0/0\n") || len(a.PaymentMethods) != 8 {
		t.Errorf("USD ranking:\n%s", got)
	}

	// Over the account's EUR limit no method would take the payment.
	status, a = optimise(t, creds, "EUR", "500.01", "NL")
	if status != http.StatusOK || a.ResultInfo != "R0001:Amount exceeds the account limit" ||
		len(a.PaymentMethods) != 0 || a.EncryptionData != "" {
		t.Errorf("over the limit: %d %+v", status, a)
	}

	// A strong signature (Paygate-Signature header) proves the key too.
	body := form(map[string]string{"merchant_id": creds.MerchantID, "account_id": creds.AccountID,
		"request_id": "OPT-STRONG-" + randomHex(4), "currency": "EUR", "amount": "25.00",
		"shopper_email": "ada@example.com", "country": "NL"})
	strong := postWith(t, "/v1/optimise", formType, body, signing.StrongHeader,
		strongHeader(t, creds.SignKey, "/v1/optimise", time.Now(), "it-"+randomHex(12), body))
	var sa optimiseAnswer
	if err := json.Unmarshal(strong.body, &sa); err != nil || sa.ResultInfo != "0000:Success" ||
		!strings.HasPrefix(sa.ranking(), "1 CARD mastercard 1.0000 1/1\n") {
		t.Errorf("strong signature: %d %s", strong.status, strong.body)
	}
	sa.checkSignature(t, creds.SignKey)
}

// TestOptimiseTenantIsolation: another account's key proves nothing, and
// one account's orders never count for another's answer.
func TestOptimiseTenantIsolation(t *testing.T) {
	t.Parallel()
	other, err := env.gw.Accounts.Create(context.Background(), merchant.NewAccount{Mode: testmode.Test,
		MerchantID: "60002", AccountID: "60002" + randomHex(2), CaptureMode: models.CaptureAuto,
		AllowedQueryIPs: []string{"127.0.0.1"}, Currencies: []string{"EUR"}, Risk: quietRisk,
		Connector: "sim-bank",
	})
	if err != nil {
		t.Fatal(err)
	}
	// The account's own key: cards only (sim-bank takes no APM), nothing
	// observed.
	status, a := optimise(t, other, "EUR", "25.00", "NL")
	if status != http.StatusOK || a.ResultInfo != "0000:Success" || len(a.PaymentMethods) != 8 ||
		strings.Contains(a.ranking(), "IDEAL") || strings.Contains(a.ranking(), "/1") {
		t.Errorf("sim-bank account: %d\n%s", status, a.ranking())
	}
	// Another account's key on this account's ids: refused, unsigned.
	forged := other
	forged.SignKey = env.auto.SignKey
	status, a = optimise(t, forged, "EUR", "25.00", "NL")
	if status != http.StatusOK || a.ResultInfo != "I0013:Signature verification failed" || a.EncryptionData != "" ||
		len(a.PaymentMethods) != 0 {
		t.Errorf("another account's key: %d %+v", status, a)
	}
}

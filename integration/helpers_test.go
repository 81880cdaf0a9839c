package integration

import (
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/signing"
)

// respon is the direct payment answer as a merchant parses it.
type respon struct {
	MerchantID               string `xml:"merchant_id"`
	AccountID                string `xml:"account_id"`
	OrderNo                  string `xml:"order_no"`
	Amount                   string `xml:"amount"`
	Currency                 string `xml:"currency"`
	TransactionID            string `xml:"transaction_id"`
	Card                     string `xml:"card"`
	OrderStatus              string `xml:"order_status"`
	ResultInfo               string `xml:"result_info"`
	Connector                string `xml:"connector"`
	TokenID                  string `xml:"token_id"`
	ContractName             string `xml:"contract_name"`
	RecurringID              string `xml:"recurring_id"`
	RecurringDeductionPeriod string `xml:"recurring_deduction_period"`
	RecurringDeductionTime   string `xml:"recurring_deduction_time"`
	RiskAction               string `xml:"risk_action"`
	IssuerURL                string `xml:"issuer_url"`
	RiskScore                string `xml:"risk_score"`
	// RiskReasons reads the name and status pairs under risk_reasons.
	RiskReasons    api.RiskReasons `xml:"risk_reasons"`
	EncryptionData string          `xml:"encryption_data"`
}

var orderSeq atomic.Int64

// newOrderNo returns an order number no other test uses.
func newOrderNo(t *testing.T) string {
	return "IT-" + time.Now().UTC().Format("150405") + "-" + randomHex(3) + "-" + itoa(orderSeq.Add(1))
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// cardOrder is a valid signed direct card payment of 12.34 USD.
func cardOrder(creds merchant.Credentials, orderNo, pan string) map[string]string {
	return map[string]string{
		"merchant_id":      creds.MerchantID,
		"account_id":       creds.AccountID,
		"order_no":         orderNo,
		"currency":         "USD",
		"amount":           "12.34",
		"first_name":       "Ada",
		"last_name":        "Lovelace",
		"card":             pan,
		"expiration_year":  "2031",
		"expiration_month": "12",
		"security_code":    "739",
		"shopper_email":    "ada@example.com",
		"shopper_ip":       "203.0.113.7",
		"billing_country":  "GB",
		"notify_url":       env.sink.URL + "/notify",
		"note":             "integration",
	}
}

// signCard fills encryption_data with the authorise-card recipe.
func signCard(f map[string]string, key string) map[string]string {
	f["encryption_data"] = signing.Sign(key, f["merchant_id"], f["account_id"], f["order_no"], f["currency"],
		f["amount"], f["first_name"], f["last_name"], f["card"], f["expiration_year"], f["expiration_month"],
		f["security_code"], f["shopper_email"])
	return f
}

func form(f map[string]string) string {
	v := url.Values{}
	for k, val := range f {
		v.Set(k, val)
	}
	return v.Encode()
}

func jsonBody(t *testing.T, f any) string {
	t.Helper()
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// post sends a body to the API and returns the status and body.
func post(t *testing.T, path, contentType, body string) (int, []byte) {
	t.Helper()
	return postTo(t, env.api.URL, path, contentType, body)
}

// postTo is post to the API at base.
func postTo(t *testing.T, base, path, contentType, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

const formType = "application/x-www-form-urlencoded"

// authorise posts a form-encoded direct payment and parses the XML answer.
func authorise(t *testing.T, f map[string]string) (int, respon) {
	t.Helper()
	return authoriseBody(t, formType, form(f))
}

func authoriseBody(t *testing.T, contentType, body string) (int, respon) {
	t.Helper()
	code, b := post(t, "/v1/authorise", contentType, body)
	var r respon
	if err := xml.Unmarshal(b, &r); err != nil {
		t.Fatalf("answer is not XML respon (%d): %v\n%s", code, err, b)
	}
	return code, r
}

// checkResultSignature verifies the upper-case payment result signature.
func checkResultSignature(t *testing.T, r respon, key string) {
	t.Helper()
	want := signing.SignUpper(key, r.MerchantID, r.AccountID, r.TransactionID, r.OrderNo, r.Currency, r.Amount, r.OrderStatus, r.ResultInfo)
	if r.EncryptionData != want {
		t.Errorf("encryption_data = %q, want %q", r.EncryptionData, want)
	}
}

func decodeB64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }

// logSystemError shows, for a system error answer (S...), the gateway's log
// lines that name id: the answer alone does not say what failed.
func logSystemError(t *testing.T, resultInfo, id string) {
	t.Helper()
	if !strings.HasPrefix(resultInfo, "S") {
		return
	}
	// The lines naming the id, and the errors of the subscription routes
	// (a refusal before the handler, by the replay store say, does not
	// name it).
	var lines []string
	for _, line := range strings.Split(env.logs.String(), "\n") {
		problem := strings.Contains(line, `"level":"ERROR"`) || strings.Contains(line, `"level":"WARN"`)
		if problem && (strings.Contains(line, id) || strings.Contains(line, `"level":"ERROR"`) && strings.Contains(line, "subscription")) {
			lines = append(lines, line)
		}
	}
	t.Logf("answered %s; the gateway's log on %s:\n%s", resultInfo, id, strings.Join(lines, "\n"))
}

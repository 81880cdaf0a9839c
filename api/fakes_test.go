package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/adapters/vault"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// Test account and keys.
const (
	testMerchantID = "10086"
	testAccountID  = "10086001"
	testSignKey    = "k3y-for-tests-0123456789abcdef"
	otherSignKey   = "another-key-of-another-account"
	testTxID       = "1379868670095785984"
	testQueryIP    = "198.51.100.7"
	testPAN        = "4242424242424242"
	testCVV        = "739"
)

// testNow is the fixed clock of the tests.
var testNow = time.Date(2026, time.June, 15, 12, 0, 0, 0, time.UTC)

// fakeAccounts serves accounts from a map keyed by merchant_id/account_id.
type fakeAccounts struct {
	mu       sync.Mutex
	accounts map[string]*merchant.Account
	err      error
	loads    int
}

func (f *fakeAccounts) Load(_ context.Context, merchantID, accountID string) (*merchant.Account, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loads++
	if f.err != nil {
		return nil, f.err
	}
	a, ok := f.accounts[merchantID+"/"+accountID]
	if !ok {
		return nil, merchant.ErrUnknownAccount
	}
	return a, nil
}

// fakeOrders records every OrderInput and answers with result, or, when
// result is nil, with a successful payment built from the input.
type fakeOrders struct {
	mu     sync.Mutex
	calls  []workflows.OrderInput
	result func(in workflows.OrderInput) (workflows.PaymentResult, error)
}

func (f *fakeOrders) Authorise(_ context.Context, in workflows.OrderInput) (workflows.PaymentResult, error) {
	f.mu.Lock()
	f.calls = append(f.calls, in)
	answer := f.result
	f.mu.Unlock()
	if answer == nil {
		return successResult(in), nil
	}
	return answer(in)
}

func (f *fakeOrders) inputs() []workflows.OrderInput {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]workflows.OrderInput(nil), f.calls...)
}

// successResult is the answer of an approved payment for in.
func successResult(in workflows.OrderInput) workflows.PaymentResult {
	return workflows.PaymentResult{
		TransactionID: in.TransactionID,
		MerchantID:    in.MerchantID,
		AccountID:     in.AccountID,
		OrderNo:       in.OrderNo,
		Amount:        in.Amount,
		Currency:      in.Currency,
		PaymentStatus: status.Paid,
		OrderStatus:   status.OrderSuccess,
		ResultCode:    codes.OK.ID,
		ResultMessage: codes.OK.Message,
		CardMasked:    in.Card.Masked,
		CardToken:     in.Card.Token,
		Connector:     "simulator",
		ThreeDSResult: "not_enrolled",
		Risk: risk.Result{Action: "ACCEPT", Score: 12, Reasons: []risk.Reason{
			{Name: "velocity", Status: "ACCEPT"},
			{Name: "amount_limit", Status: "ACCEPT"},
		}},
	}
}

// declinedResult is the answer of a payment the acquirer declined.
func declinedResult(in workflows.OrderInput) workflows.PaymentResult {
	r := successResult(in)
	r.PaymentStatus = status.Failed
	r.OrderStatus = status.OrderFailure
	r.ResultCode, r.ResultMessage = codes.Declined.ID, codes.Declined.Message
	return r
}

// fakeVault hands out deterministic tokens and records what it was asked.
type fakeVault struct {
	mu        sync.Mutex
	tokenized int
	deleted   []string
	// existing makes Tokenize report the entry as already there.
	existing bool
}

func (f *fakeVault) Tokenize(_ context.Context, scope string, c vault.Card) (string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokenized++
	return fakeToken(scope, c), !f.existing, nil
}

func fakeToken(scope string, c vault.Card) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{scope, c.Number, c.ExpiryMonth, c.ExpiryYear, c.CVV}, "\x00")))
	return "tok_" + hex.EncodeToString(sum[:])[:32]
}

func (f *fakeVault) Fingerprint(number string) string {
	sum := sha256.Sum256([]byte("fp\x00" + number))
	return hex.EncodeToString(sum[:])
}

func (f *fakeVault) Delete(_ context.Context, token string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, token)
	return nil
}

func (f *fakeVault) counts() (int, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokenized, append([]string(nil), f.deleted...)
}

// fixedIDs always hands out the same transaction id.
type fixedIDs string

func (f fixedIDs) Next() string { return string(f) }

// syncBuffer is a bytes.Buffer safe for the logger and the test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testEnv is a Server wired to fakes, with its log captured.
type testEnv struct {
	srv      *Server
	handler  http.Handler
	accounts *fakeAccounts
	orders   *fakeOrders
	vault    *fakeVault
	ops      *fakeOps
	logs     *syncBuffer
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	account := merchant.NewTestAccount(models.Account{
		ID:              testAccountID,
		MerchantID:      testMerchantID,
		Name:            "Test account",
		Active:          true,
		CaptureMode:     models.CaptureAuto,
		AllowedQueryIPs: []string{testQueryIP},
		Currencies:      []string{"USD", "EUR", "JPY"},
		AmountLimits:    map[string]int64{},
	}, testSignKey)
	env := &testEnv{
		accounts: &fakeAccounts{accounts: map[string]*merchant.Account{testMerchantID + "/" + testAccountID: account}},
		orders:   &fakeOrders{},
		vault:    &fakeVault{},
		ops:      &fakeOps{},
		logs:     &syncBuffer{},
	}
	env.srv = &Server{
		Accounts: env.accounts,
		IDs:      fixedIDs(testTxID),
		Records:  nil,
		Logger:   slog.New(slog.NewJSONHandler(env.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:      func() time.Time { return testNow },
	}
	if testCapabilities != nil {
		env.srv.Capabilities = testCapabilities(env.srv, TestDoubles{Orders: env.orders, Vault: env.vault, Ops: env.ops})
	}
	env.handler = env.srv.Handler()
	return env
}

// testCapabilities gives a test server the capability packages' routes, as
// the gateway has them, over the test's doubles; the external tests set it
// (export_test.go), since this package cannot import the packages that
// import it.
var testCapabilities func(s *Server, d TestDoubles) []Capability

// do sends a POST and returns the recorded answer.
func (e *testEnv) do(t *testing.T, path, contentType string, body []byte, remoteAddr string) *httptest.ResponseRecorder {
	t.Helper()
	return serve(e, newPost(t, path, contentType, body, remoteAddr))
}

const (
	ctJSON = "application/json"
	ctForm = "application/x-www-form-urlencoded"
)

// fields is a request body before encoding. Values are strings, or any JSON
// value for the nested fields.
type fields map[string]any

func (f fields) clone() fields {
	out := make(fields, len(f))
	for k, v := range f {
		out[k] = v
	}
	return out
}

// str is the text of a field as signed: strings as they are, anything else empty.
func (f fields) str(name string) string {
	s, _ := f[name].(string)
	return s
}

// cardRecipe is the "authorise, card" signing recipe of docs/design.md §3.
var cardRecipe = []string{"merchant_id", "account_id", "order_no", "currency", "amount", "first_name",
	"last_name", "card", "expiration_year", "expiration_month", "security_code", "shopper_email"}

// apmRecipe is the "authorise, APM" signing recipe of docs/design.md §3.
var apmRecipe = []string{"merchant_id", "account_id", "order_no", "currency", "amount", "payment_method", "return_url"}

// signWith sets encryption_data to the signature of recipe under key.
func (f fields) signWith(key string, recipe []string) fields {
	values := make([]string, len(recipe))
	for i, name := range recipe {
		values[i] = f.str(name)
	}
	f["encryption_data"] = signing.Sign(key, values...)
	return f
}

func (f fields) json(t *testing.T) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any(f))
	if err != nil {
		t.Fatalf("marshal body: %v", err)
	}
	return b
}

// form encodes the fields as a form; nested values become JSON text.
func (f fields) form(t *testing.T) []byte {
	t.Helper()
	v := url.Values{}
	for k, val := range f {
		switch x := val.(type) {
		case string:
			v.Set(k, x)
		default:
			b, err := json.Marshal(x)
			if err != nil {
				t.Fatalf("marshal %s: %v", k, err)
			}
			v.Set(k, string(b))
		}
	}
	return []byte(v.Encode())
}

// validCard is a correctly signed direct card payment of 12.34 USD.
func validCard() fields {
	return fields{
		"merchant_id":      testMerchantID,
		"account_id":       testAccountID,
		"order_no":         "ORD-2026-0002",
		"currency":         "USD",
		"amount":           "12.34",
		"first_name":       "Ada",
		"last_name":        "Lovelace",
		"card":             testPAN,
		"expiration_year":  "2031",
		"expiration_month": "12",
		"security_code":    testCVV,
		"shopper_email":    "ada@example.com",
		"notify_url":       "https://shop.example/notify",
		"shopper_ip":       "203.0.113.10",
		"billing_country":  "GB",
		"note":             "gift wrap please",
	}.signWith(testSignKey, cardRecipe)
}

// xmlRespon is the XML answer as a test reads it.
type xmlRespon struct {
	XMLName                  xml.Name `xml:"respon"`
	MerchantID               string   `xml:"merchant_id"`
	AccountID                string   `xml:"account_id"`
	OrderNo                  string   `xml:"order_no"`
	Amount                   string   `xml:"amount"`
	Currency                 string   `xml:"currency"`
	TransactionID            string   `xml:"transaction_id"`
	Card                     string   `xml:"card"`
	OrderStatus              string   `xml:"order_status"`
	ResultInfo               string   `xml:"result_info"`
	ContractName             string   `xml:"contract_name"`
	RecurringID              string   `xml:"recurring_id"`
	RecurringDeductionPeriod string   `xml:"recurring_deduction_period"`
	RecurringDeductionTime   string   `xml:"recurring_deduction_time"`
	Note                     string   `xml:"note"`
	Custom                   string   `xml:"custom"`
	TokenID                  string   `xml:"token_id"`
	Connector                string   `xml:"connector"`
	ThreeDSResult            string   `xml:"threeds_result"`
	RiskAction               string   `xml:"risk_action"`
	RiskScore                string   `xml:"risk_score"`
	// RiskReasons reads the name and status pairs under risk_reasons.
	RiskReasons    RiskReasons `xml:"risk_reasons"`
	EncryptionData string      `xml:"encryption_data"`
}

func parseRespon(t *testing.T, rec *httptest.ResponseRecorder) xmlRespon {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/xml") {
		t.Fatalf("Content-Type = %q, want application/xml; body %s", ct, rec.Body.String())
	}
	var r xmlRespon
	if err := xml.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatalf("parse XML answer: %v; body %s", err, rec.Body.String())
	}
	return r
}

// elementPaths lists the element paths of an XML document in order, such as
// "respon/risk_reasons/reason/name".
func elementPaths(t *testing.T, body []byte) []string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(body))
	var stack, out []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("read XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			stack = append(stack, el.Name.Local)
			out = append(out, strings.Join(stack, "/"))
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
}

// newPost builds a POST from remoteAddr.
func newPost(t *testing.T, path, contentType string, body []byte, remoteAddr string) *http.Request {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if remoteAddr != "" {
		req.RemoteAddr = remoteAddr
	}
	return req
}

// serve runs req through the handler.
func serve(e *testEnv, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	return rec
}

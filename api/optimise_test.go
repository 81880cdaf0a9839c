package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/paygate/paygate/internal/adapters/connectors"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/optimise"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
)

// optimiseRecipe is the "optimise (compatible)" signing recipe of docs/design.md §3.
var optimiseRecipe = []string{"merchant_id", "account_id", "request_id", "currency", "amount", "shopper_email"}

// fakeOffer is a connector's offer.
type fakeOffer connector.Offer

func (f fakeOffer) Offer() connector.Offer { return connector.Offer(f) }

// fakeOffers serves offers by connector name; "" is sim-acquirer.
type fakeOffers map[string]fakeOffer

func (f fakeOffers) Get(name string) (ConnectorOffer, error) {
	if name == "" {
		name = "sim-acquirer"
	}
	o, ok := f[name]
	if !ok {
		return nil, connectors.ErrUnknown
	}
	return o, nil
}

var testOffers = fakeOffers{
	"sim-acquirer": {CardBrands: []string{"visa", "mastercard", "amex"}, APMs: []string{"IDEAL", "OXXO", "PIX"}},
	"sim-bank":     {CardBrands: []string{"visa", "mastercard", "amex"}},
}

// fakeTallies answers tallies and records what it was asked.
type fakeTallies struct {
	mu      sync.Mutex
	asked   []models.MethodTallyQuery
	tallies []optimise.Tally
	err     error
}

func (f *fakeTallies) MethodTallies(_ context.Context, q models.MethodTallyQuery) ([]optimise.Tally, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, q)
	return f.tallies, f.err
}

// validOptimise is a correctly signed optimise request for 25.00 EUR in NL.
func validOptimise() fields {
	return fields{
		"merchant_id": testMerchantID, "account_id": testAccountID, "request_id": "OPT-2026-0001",
		"currency": "EUR", "amount": "25.00", "shopper_email": "ada@example.com", "country": "NL",
	}.signWith(testSignKey, optimiseRecipe)
}

// newOptimiseEnv is the test server with the offers and tallies given; the
// test account takes USD, EUR and JPY, EUR up to 1,000.00, and blocks
// shoppers from KP.
func newOptimiseEnv(t *testing.T, tallies *fakeTallies) *testEnv {
	t.Helper()
	e := newTestEnv(t)
	e.srv.Offers = testOffers
	e.srv.Tallies = tallies
	a := e.accounts.accounts[testMerchantID+"/"+testAccountID]
	a.AmountLimits = map[string]int64{"EUR": 100000}
	a.Risk.BlockedCountries = []string{"KP"}
	return e
}

// decodeOptimise reads an optimise answer.
func decodeOptimise(t *testing.T, body []byte) OptimiseAnswer {
	t.Helper()
	var a OptimiseAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("answer %s: %v", body, err)
	}
	return a
}

// TestOptimiseRefusals: every way a request can be wrong is answered with
// its exact code, no method, and no signature.
func TestOptimiseRefusals(t *testing.T) {
	with := func(name, value string) func(fields) fields {
		return func(f fields) fields {
			f[name] = value
			return f.signWith(testSignKey, optimiseRecipe)
		}
	}
	without := func(name string) func(fields) fields {
		return func(f fields) fields {
			delete(f, name)
			return f.signWith(testSignKey, optimiseRecipe)
		}
	}
	tests := []struct {
		name   string
		change func(fields) fields
		status int
		want   string
	}{
		{"no signature", func(f fields) fields { delete(f, "encryption_data"); return f },
			http.StatusOK, "I0001:Missing required field: encryption_data"},
		{"junk signature", func(f fields) fields { f["encryption_data"] = "00"; return f },
			http.StatusOK, "I0013:Signature verification failed"},
		{"signed with another account's key", func(f fields) fields { return f.signWith(otherSignKey, optimiseRecipe) },
			http.StatusOK, "I0013:Signature verification failed"},
		{"amount changed after signing", func(f fields) fields { f["amount"] = "1.00"; return f },
			http.StatusOK, "I0013:Signature verification failed"},
		{"shopper_email changed after signing", func(f fields) fields { f["shopper_email"] = "eve@example.com"; return f },
			http.StatusOK, "I0013:Signature verification failed"},
		{"signed over the payout recipe", func(f fields) fields {
			f["encryption_data"] = signing.Sign(testSignKey, testMerchantID, testAccountID, "OPT-2026-0001", "EUR", "25.00")
			return f
		}, http.StatusOK, "I0013:Signature verification failed"},
		{"unknown account", with("account_id", "10086999"), http.StatusOK, "I0002:Unknown or inactive merchant account"},
		{"no merchant_id", without("merchant_id"), http.StatusOK, "I0001:Missing required field: merchant_id"},
		{"no account_id", without("account_id"), http.StatusOK, "I0001:Missing required field: account_id"},
		{"no request_id", without("request_id"), http.StatusOK, "I0001:Missing required field: request_id"},
		{"no currency", without("currency"), http.StatusOK, "I0001:Missing required field: currency"},
		{"no amount", without("amount"), http.StatusOK, "I0001:Missing required field: amount"},
		{"no shopper_email", without("shopper_email"), http.StatusOK, "I0001:Missing required field: shopper_email"},
		{"blank request_id", with("request_id", "   "), http.StatusOK, "I0001:Missing required field: request_id"},
		{"request_id with a space", with("request_id", "OPT 1"), http.StatusOK,
			"I0008:Invalid field value: request_id must be 1 to 64 printable characters without spaces"},
		{"request_id of 65 characters", with("request_id", strings.Repeat("r", 65)), http.StatusOK,
			"I0008:Invalid field value: request_id must be 1 to 64 printable characters without spaces"},
		{"unknown currency", with("currency", "XXX"), http.StatusOK, "I0004:Currency not supported for this account: XXX"},
		{"currency the account does not take", with("currency", "GBP"), http.StatusOK,
			"I0004:Currency not supported for this account: GBP"},
		{"lower-case currency", with("currency", "eur"), http.StatusOK, "I0004:Currency not supported for this account: eur"},
		{"zero amount", with("amount", "0.00"), http.StatusOK,
			"I0003:Invalid amount: amount must be a positive decimal with at most two fraction digits"},
		{"negative amount", with("amount", "-5.00"), http.StatusOK,
			"I0003:Invalid amount: amount must be a positive decimal with at most two fraction digits"},
		{"three fraction digits", with("amount", "25.001"), http.StatusOK,
			"I0003:Invalid amount: amount must be a positive decimal with at most two fraction digits"},
		{"exponent", with("amount", "2.5e1"), http.StatusOK,
			"I0003:Invalid amount: amount must be a positive decimal with at most two fraction digits"},
		{"cents of a currency without them", func(f fields) fields {
			f["currency"], f["amount"] = "JPY", "100.50"
			return f.signWith(testSignKey, optimiseRecipe)
		}, http.StatusOK, "I0003:Invalid amount: amount must be a positive decimal with at most two fraction digits"},
		{"shopper_email without @", with("shopper_email", "ada.example.com"), http.StatusOK,
			"I0008:Invalid field value: shopper_email"},
		{"shopper_email with a display name", with("shopper_email", "Ada <ada@example.com>"), http.StatusOK,
			"I0008:Invalid field value: shopper_email"},
		{"lower-case country", with("country", "nl"), http.StatusOK,
			"I0008:Invalid field value: country must be an ISO 3166-1 alpha-2 code in upper case"},
		{"unassigned country", with("country", "XK"), http.StatusOK,
			"I0008:Invalid field value: country must be an ISO 3166-1 alpha-2 code in upper case"},
		{"amount over the account's limit", with("amount", "1000.01"), http.StatusOK,
			"R0001:Amount exceeds the account limit"},
		{"country the account blocks", with("country", "KP"), http.StatusOK,
			"R0006:Billing or card country is blocked"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tallies := &fakeTallies{}
			e := newOptimiseEnv(t, tallies)
			rec := e.do(t, "/v1/optimise", ctJSON, tc.change(validOptimise()).json(t), "")
			if rec.Code != tc.status {
				t.Errorf("status %d, want %d", rec.Code, tc.status)
			}
			a := decodeOptimise(t, rec.Body.Bytes())
			if a.ResultInfo != tc.want {
				t.Errorf("result_info %q, want %q", a.ResultInfo, tc.want)
			}
			if a.EncryptionData != "" || len(a.PaymentMethods) != 0 || a.PaymentMethods == nil {
				t.Errorf("a refusal carries encryption_data %q and methods %v (want \"\" and [])", a.EncryptionData, a.PaymentMethods)
			}
			if len(tallies.asked) != 0 {
				t.Errorf("a refused request counted orders: %v", tallies.asked)
			}
		})
	}
}

// TestOptimiseUnreadableBodies: a body that is not a request is refused as
// malformed, never with a 500.
func TestOptimiseUnreadableBodies(t *testing.T) {
	for _, tc := range []struct {
		name, contentType, body string
		status                  int
		want                    string
	}{
		{"empty", ctForm, "", http.StatusOK, "I0010:Malformed request body: empty body"},
		{"broken JSON", ctJSON, `{"merchant_id": "10086"`, http.StatusOK, "I0010:Malformed request body: invalid JSON at byte 23"},
		{"amount as an object", ctJSON, `{"merchant_id": "10086", "account_id": "10086001", "amount": {}}`, http.StatusOK,
			"I0010:Malformed request body: field amount has the wrong type (object)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newOptimiseEnv(t, &fakeTallies{})
			rec := e.do(t, "/v1/optimise", tc.contentType, []byte(tc.body), "")
			a := decodeOptimise(t, rec.Body.Bytes())
			if rec.Code != tc.status || a.ResultInfo != tc.want || a.EncryptionData != "" {
				t.Errorf("%d %q %q, want %d %q unsigned", rec.Code, a.ResultInfo, a.EncryptionData, tc.status, tc.want)
			}
		})
	}
}

// TestOptimiseSystemErrors: what the gateway lacks is a 503 with S0001,
// unsigned, and the request may be sent again.
func TestOptimiseSystemErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(e *testEnv, tallies *fakeTallies)
	}{
		{"no connector offers", func(e *testEnv, _ *fakeTallies) { e.srv.Offers = nil }},
		{"the account's connector is not run here", func(e *testEnv, _ *fakeTallies) {
			e.accounts.accounts[testMerchantID+"/"+testAccountID].Connector = "acme-bank"
		}},
		{"the count fails", func(_ *testEnv, tallies *fakeTallies) { tallies.err = errors.New("connection refused") }},
		{"no tallies and no database", func(e *testEnv, _ *fakeTallies) { e.srv.Tallies = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tallies := &fakeTallies{}
			e := newOptimiseEnv(t, tallies)
			tc.setup(e, tallies)
			rec := e.do(t, "/v1/optimise", ctJSON, validOptimise().json(t), "")
			a := decodeOptimise(t, rec.Body.Bytes())
			if rec.Code != http.StatusServiceUnavailable || !strings.HasPrefix(a.ResultInfo, "S0001:") || a.EncryptionData != "" {
				t.Errorf("%d %q %q, want 503 S0001 unsigned", rec.Code, a.ResultInfo, a.EncryptionData)
			}
		})
	}
}

// TestOptimiseRanks: the answer lists every method the account's connector
// takes for the currency and country, ranked by the tallies, with rates and
// samples, signed with the optimise-result recipe.
func TestOptimiseRanks(t *testing.T) {
	card := func(brand string) optimise.Option { return optimise.Option{Method: optimise.CardMethod, Brand: brand} }
	apm := func(name string) optimise.Option { return optimise.Option{Method: name} }
	tallies := []optimise.Tally{
		{Option: card("visa"), Succeeded: 2, Failed: 1},
		{Option: card("mastercard"), Succeeded: 1, Failed: 1},
		{Option: apm("IDEAL"), Succeeded: 3, Failed: 0},
		{Option: apm("PIX"), Succeeded: 9, Failed: 0}, // BRL: not a candidate for EUR
	}
	type method struct {
		method, brand, rate string
		succeeded, sample   int64
	}
	tests := []struct {
		name      string
		connector string
		change    func(fields) fields
		country   string
		currency  string
		amount    string
		want      []method
	}{
		{
			name: "EUR in NL on the simulated acquirer: iDEAL, then cards by rate, amex unobserved",
			change: func(f fields) fields {
				return f
			},
			country: "NL", currency: "EUR", amount: "25.00",
			want: []method{
				{"IDEAL", "", "1.0000", 3, 3},
				{"CARD", "visa", "0.6667", 2, 3},
				{"CARD", "mastercard", "0.5000", 1, 2},
				{"CARD", "amex", "", 0, 0},
			},
		},
		{
			name: "EUR in DE: iDEAL does not serve DE",
			change: func(f fields) fields {
				f["country"] = "DE"
				return f
			},
			country: "DE", currency: "EUR", amount: "25.00",
			want: []method{
				{"CARD", "visa", "0.6667", 2, 3},
				{"CARD", "mastercard", "0.5000", 1, 2},
				{"CARD", "amex", "", 0, 0},
			},
		},
		{
			name:      "no country, card-only connector, amount sent as a JSON number",
			connector: "sim-bank",
			change: func(f fields) fields {
				delete(f, "country")
				f["amount"] = json.RawMessage("25")
				f["encryption_data"] = signing.Sign(testSignKey, testMerchantID, testAccountID, "OPT-2026-0001", "EUR", "25",
					"ada@example.com")
				return f
			},
			currency: "EUR", amount: "25.00",
			want: []method{
				{"CARD", "visa", "0.6667", 2, 3},
				{"CARD", "mastercard", "0.5000", 1, 2},
				{"CARD", "amex", "", 0, 0},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fakeTallies{tallies: tallies}
			e := newOptimiseEnv(t, ft)
			e.accounts.accounts[testMerchantID+"/"+testAccountID].Connector = tc.connector
			rec := e.do(t, "/v1/optimise", ctJSON, tc.change(validOptimise()).json(t), "")
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
			}
			a := decodeOptimise(t, rec.Body.Bytes())
			if a.ResultInfo != "0000:Success" || a.MerchantID != testMerchantID || a.AccountID != testAccountID ||
				a.RequestID != "OPT-2026-0001" || a.Currency != tc.currency || a.Amount != tc.amount ||
				a.Country != tc.country || a.WindowDays != 30 {
				t.Errorf("answer %+v", a)
			}
			if len(a.PaymentMethods) != len(tc.want) {
				t.Fatalf("methods %+v, want %d", a.PaymentMethods, len(tc.want))
			}
			signed := signing.OptimiseResult{MerchantID: a.MerchantID, AccountID: a.AccountID, RequestID: a.RequestID,
				Currency: a.Currency, Amount: a.Amount, ResultInfo: a.ResultInfo}
			for i, w := range tc.want {
				g := a.PaymentMethods[i]
				if g.Rank != i+1 || g.PaymentMethod != w.method || g.Brand != w.brand || g.SuccessRate != w.rate ||
					g.Succeeded != w.succeeded || g.SampleSize != w.sample {
					t.Errorf("method %d = %+v, want %+v", i, g, w)
				}
				signed.Methods = append(signed.Methods, signing.OptimiseMethod{PaymentMethod: g.PaymentMethod, Brand: g.Brand,
					SuccessRate: g.SuccessRate, SampleSize: itoa64(g.SampleSize)})
			}
			if want := signing.SignOptimiseResult(testSignKey, signed); a.EncryptionData != want {
				t.Errorf("encryption_data %s, want %s", a.EncryptionData, want)
			}
			if len(ft.asked) != 1 {
				t.Fatalf("counted %d times", len(ft.asked))
			}
			q := ft.asked[0]
			if q.AccountID != testAccountID || q.Currency != tc.currency || !q.Since.Equal(testNow.Add(-optimise.Window)) {
				t.Errorf("count asked %+v", q)
			}
		})
	}
}

// TestOptimiseForm: a form body takes the same path as JSON.
func TestOptimiseForm(t *testing.T) {
	e := newOptimiseEnv(t, &fakeTallies{})
	rec := e.do(t, "/v1/optimise", ctForm, validOptimise().form(t), "")
	a := decodeOptimise(t, rec.Body.Bytes())
	if rec.Code != http.StatusOK || a.ResultInfo != "0000:Success" || len(a.PaymentMethods) != 4 || a.EncryptionData == "" {
		t.Errorf("%d %+v", rec.Code, a)
	}
	// Nothing observed: every method unobserved, by name (cards before
	// iDEAL as CARD sorts before IDEAL).
	var names []string
	for _, m := range a.PaymentMethods {
		names = append(names, m.PaymentMethod+":"+m.Brand)
	}
	if got := strings.Join(names, ","); got != "CARD:amex,CARD:mastercard,CARD:visa,IDEAL:" {
		t.Errorf("order %s", got)
	}
}

func itoa64(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

package payments

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/apitest"
	"github.com/paygate/paygate/internal/adapters/vault"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

const (
	merchantID = apitest.MerchantID
	accountID  = apitest.AccountID
	txID       = "1379868670095785984"
)

// orders keeps every order it is asked to place and declines it.
type orders struct {
	mu     sync.Mutex
	placed []workflows.OrderInput
}

func (o *orders) Authorise(_ context.Context, in workflows.OrderInput) (workflows.PaymentResult, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.placed = append(o.placed, in)
	return workflows.PaymentResult{TransactionID: in.TransactionID, ResultCode: codes.Declined.ID, ResultMessage: codes.Declined.Message}, nil
}

// cards seals nothing: it counts what it is asked to seal.
type cards struct{ sealed int }

func (c *cards) Tokenize(context.Context, string, vault.Card) (string, bool, error) {
	c.sealed++
	return "tok_1", true, nil
}
func (c *cards) Fingerprint(string) string            { return "fp" }
func (c *cards) Delete(context.Context, string) error { return nil }

type ids string

func (i ids) Next() string { return string(i) }

// handler is the payment capability over a gate of the test account, shaped
// by edit, placing orders with a fake.
func handler(edit func(*models.Account)) *Handler {
	gate := apitest.Gate(apitest.Accounts{Edit: func(a *models.Account) {
		a.Name, a.Currencies, a.CaptureMode = "Test account", []string{"USD"}, models.CaptureAuto
		if edit != nil {
			edit(a)
		}
	}}, nil)
	gate.IDs = ids(txID)
	h := &Handler{Gate: gate, Orders: &orders{}, Vault: &cards{}}
	gate.Capabilities = []api.Capability{h}
	return h
}

// TestLiveSimulatorsForbiddenAtEveryDoor: with simulators forbidden to live
// accounts, a live account's card payment and hosted payment are refused
// with I0030 before any card is sealed or order started.
func TestLiveSimulatorsForbiddenAtEveryDoor(t *testing.T) {
	h := handler(func(a *models.Account) { a.Mode, a.Connector = testmode.Live, "sim-acquirer" })
	h.ForbidLiveSimulators = true
	card := map[string]string{"merchant_id": merchantID, "account_id": accountID, "order_no": "ORD-1", "currency": "USD",
		"amount": "5.00", "card": "4242424242424267", "expiration_month": "12", "expiration_year": "2035", "security_code": "123",
		"first_name": "Ada", "last_name": "Lovelace", "shopper_email": "ada@example.com"}
	card["encryption_data"] = signing.Sign(apitest.SignKey, merchantID, accountID, "ORD-1", "USD", "5.00", "Ada", "Lovelace",
		card["card"], "2035", "12", "123", "ada@example.com")
	hosted := map[string]string{"merchant_id": merchantID, "account_id": accountID, "order_no": "ORD-2", "currency": "USD",
		"amount": "5.00", "return_url": "https://shop.example/return"}
	hosted["encryption_data"] = signing.Sign(apitest.SignKey, merchantID, accountID, "ORD-2", "USD", "5.00", hosted["return_url"])
	want := codes.LiveAccountSimulator.String()
	tests := []struct {
		name, path string
		body       map[string]string
	}{
		{"card payment", "/v1/authorise", card},
		{"hosted payment", "/v1/checkout", hosted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := post(t, h.Gate.Handler(), tc.path, tc.body)
			if !strings.Contains(rec.Body.String(), want) {
				t.Errorf("answer %d %s, want %s", rec.Code, rec.Body.String(), want)
			}
		})
	}
	if n, sealed := len(h.Orders.(*orders).placed), h.Vault.(*cards).sealed; n != 0 || sealed != 0 {
		t.Errorf("%d orders started and %d cards sealed, want none", n, sealed)
	}
}

// post sends body as a form to path.
func post(t *testing.T, h http.Handler, path string, body map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	form := url.Values{}
	for k, v := range body {
		form.Set(k, v)
	}
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestPageOrderKey: the page's order is found only from what proves
// itself: the session of the card form, or a checkout request whose
// signature was accepted.
func TestPageOrderKey(t *testing.T) {
	tests := []struct {
		name          string
		body          string
		parsed        bool // the handler parsed the form
		authenticated bool
		wantSession   string
		wantAccount   string
		wantOrderNo   string
	}{
		{"session of the card form", "session=tok&card_number=4242", true, false, "tok", "", ""},
		{"signed checkout request", "account_id= 10086001 &order_no=A-1", false, true, "", "10086001", "A-1"},
		{"signed checkout request in JSON", `{"account_id":"10086001","order_no":"A-1"}`, false, true, "", "10086001", "A-1"},
		{"checkout request whose signature failed", "account_id=10086001&order_no=A-1", false, false, "", "", ""},
		{"nothing", "", false, true, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := gin.CreateTestContext(httptest.NewRecorder())
			c.Request = httptest.NewRequest(http.MethodPost, "/v1/checkout", strings.NewReader(tt.body))
			c.Request.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tt.parsed {
				_ = c.Request.ParseForm()
			}
			if tt.authenticated {
				c.Set(api.ContextAuthenticated, true)
			}
			session, account, orderNo := pageOrderKey(c, []byte(tt.body))
			if session != tt.wantSession || account != tt.wantAccount || orderNo != tt.wantOrderNo {
				t.Errorf("pageOrderKey = %q, %q, %q; want %q, %q, %q", session, account, orderNo, tt.wantSession, tt.wantAccount, tt.wantOrderNo)
			}
		})
	}
}

// returns reads a 3-D Secure return as a connector's when its form (body
// or query) says ours=1.
type returns struct{}

func (returns) ReadThreeDSResult(form url.Values) (connector.ThreeDSCallback, error) {
	if form.Get("ours") != "1" {
		return connector.ThreeDSCallback{}, connector.ErrCallbackUnsigned
	}
	return connector.ThreeDSCallback{AuthenticationID: form.Get("payment_intent"), Reference: "1379868670095785984"}, nil
}

func (returns) ReadAPMCallback([]byte, http.Header) (connector.APMCallback, error) {
	return connector.APMCallback{}, connector.ErrCallbackUnsigned
}

type readers struct{}

func (readers) Get(string) (CallbackReader, error) { return returns{}, nil }
func (readers) Names() []string                    { return []string{"stripe"} }

// noOrders knows no order.
type noOrders struct{ api.Records }

func (noOrders) FindOrderByID(context.Context, string) (*models.Order, error) {
	return nil, models.ErrNotFound
}

// TestThreeDSReturnByGet: a connector that sends the shopper back by GET
// (Stripe) is read from the query, as a POSTed ACS form is from the body.
func TestThreeDSReturnByGet(t *testing.T) {
	h := handler(nil)
	h.Callbacks = readers{}
	h.Gate.Records = noOrders{}
	tests := []struct {
		name, method, target, body string
		want                       int
	}{
		{"a return by GET, read from its query", http.MethodGet, "/v1/3ds/callback?ours=1&payment_intent=pi_1", "", http.StatusNotFound},
		{"a return by GET nobody signed", http.MethodGet, "/v1/3ds/callback?payment_intent=pi_1", "", http.StatusForbidden},
		{"a POSTed form", http.MethodPost, "/v1/3ds/callback", "ours=1&payment_intent=pi_1", http.StatusNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			rec := httptest.NewRecorder()
			h.Gate.Handler().ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Errorf("answer %d, want %d: %s", rec.Code, tc.want, rec.Body.String())
			}
		})
	}
}

// ReadWebhook: the event is "ours" when its header says so; its body is
// the reference of the order it names, or "irrelevant".
func (returns) ReadWebhook(body []byte, header http.Header) (connector.ThreeDSCallback, error) {
	switch {
	case header.Get("X-Ours") != "1":
		return connector.ThreeDSCallback{}, connector.ErrCallbackUnsigned
	case string(body) == "irrelevant":
		return connector.ThreeDSCallback{}, connector.ErrCallbackIrrelevant
	}
	return connector.ThreeDSCallback{AuthenticationID: "pi_1", Reference: string(body)}, nil
}

// someOrders holds a stripe order waiting for its shopper and one paid.
type someOrders struct{ api.Records }

func (someOrders) FindOrderByID(_ context.Context, tx string) (*models.Order, error) {
	switch tx {
	case "waiting":
		return &models.Order{TransactionID: tx, WorkflowID: "order/w", Connector: "stripe", PaymentStatus: status.Pending}, nil
	case "paid":
		return &models.Order{TransactionID: tx, WorkflowID: "order/p", Connector: "stripe", PaymentStatus: status.Paid}, nil
	}
	return nil, models.ErrNotFound
}

// woken keeps the orders woken; fail makes waking fail.
type woken struct {
	ShopperFlows
	signals []string
	fail    bool
}

func (w *woken) SignalThreeDS(_ context.Context, id string, r workflows.ThreeDSResult) error {
	if w.fail {
		return errors.New("temporal unreachable")
	}
	w.signals = append(w.signals, id+" "+r.AuthenticationID)
	return nil
}

// TestWebhook: a connector's provider event wakes an order of that
// connector waiting for its shopper, and nothing else.
func TestWebhook(t *testing.T) {
	tests := []struct {
		name, connector, body string
		ours, fail            bool
		want                  int
		wantSignals           []string
	}{
		{"wakes the waiting order", "stripe", "waiting", true, false, http.StatusOK, []string{"order/w pi_1"}},
		{"an event nothing waits for", "stripe", "irrelevant", true, false, http.StatusOK, nil},
		{"an order no longer waiting", "stripe", "paid", true, false, http.StatusOK, nil},
		{"an order nobody has", "stripe", "nobody", true, false, http.StatusOK, nil},
		{"a bad signature", "stripe", "waiting", false, false, http.StatusUnauthorized, nil},
		{"Temporal unreachable: sent again later", "stripe", "waiting", true, true, http.StatusServiceUnavailable, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := handler(nil)
			w := &woken{fail: tc.fail}
			h.Callbacks, h.Shopper, h.Gate.Records = readers{}, w, someOrders{}
			req := httptest.NewRequest(http.MethodPost, "/v1/webhooks/"+tc.connector, strings.NewReader(tc.body))
			if tc.ours {
				req.Header.Set("X-Ours", "1")
			}
			rec := httptest.NewRecorder()
			h.Gate.Handler().ServeHTTP(rec, req)
			if rec.Code != tc.want || !slices.Equal(w.signals, tc.wantSignals) {
				t.Errorf("answer %d (%s), signals %v; want %d, %v", rec.Code, rec.Body.String(), w.signals, tc.want, tc.wantSignals)
			}
		})
	}
}

package simulator

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/paygate/paygate/internal/dev/ports"
)

// receivedCallback is one callback as the receiver saw it.
type receivedCallback struct {
	signature string
	body      []byte
}

// callbackReceiver records the callbacks it gets and answers status.
type callbackReceiver struct {
	mu     sync.Mutex
	got    []receivedCallback
	status int
}

func newReceiver(t *testing.T, status int) (*callbackReceiver, *httptest.Server) {
	t.Helper()
	rc := &callbackReceiver{status: status}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, receivedCallback{r.Header.Get("X-Provider-Signature"), body})
		rc.mu.Unlock()
		w.WriteHeader(rc.status)
	}))
	t.Cleanup(ts.Close)
	return rc, ts
}

func (rc *callbackReceiver) callbacks() []receivedCallback {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]receivedCallback(nil), rc.got...)
}

func apmBody(key, method, currency, country, callbackURL string) apmRequest {
	return apmRequest{
		IdempotencyKey: key,
		Method:         method,
		Amount:         12345,
		Currency:       currency,
		Country:        country,
		Reference:      "order-" + key,
		CallbackURL:    callbackURL,
		ReturnURL:      "http://merchant.example/return?order=" + key,
		BankCode:       "INGBNL2A",
		Customer:       apmCustomer{Name: "Ana Silva", Email: "ana@example.com", Document: "12345678909"},
	}
}

func createAPM(t *testing.T, ts string, req apmRequest) APMPayment {
	t.Helper()
	a := call(t, http.MethodPost, ts+"/v1/apm/payments", req)
	if a.status != http.StatusOK {
		t.Fatalf("create apm payment: status %d body %s", a.status, a.body)
	}
	return decode[APMPayment](t, a)
}

func TestAPMMethods(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	a := call(t, http.MethodGet, ts.URL+"/v1/apm/methods", nil)
	want := `{"methods":[{"method":"PIX","currencies":["BRL"],"countries":["BR"]},` +
		`{"method":"OXXO","currencies":["MXN"],"countries":["MX"]},` +
		`{"method":"IDEAL","currencies":["EUR"],"countries":["NL"]}]}`
	if a.status != http.StatusOK || string(bytes.TrimSpace(a.body)) != want {
		t.Errorf("methods = %d %s, want 200 %s", a.status, a.body, want)
	}
}

func TestAPMPaymentHappyPaths(t *testing.T) {
	const secret = "apm-secret"
	_, ts := newTestServer(t, Options{Secret: secret})
	rc, receiver := newReceiver(t, http.StatusNoContent)
	tests := []struct {
		name     string
		method   string
		currency string
		country  string
		title    string
		amount   string
	}{
		{"pix", "PIX", "BRL", "BR", "<title>PIX payment</title>", "123.45 BRL"},
		{"oxxo", "OXXO", "MXN", "MX", "<title>OXXO payment</title>", "123.45 MXN"},
		{"ideal", "IDEAL", "EUR", "NL", "<title>IDEAL payment</title>", "123.45 EUR"},
		{"lower-case method", "ideal", "EUR", "NL", "<title>IDEAL payment</title>", "123.45 EUR"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := apmBody("apm-happy-"+strings.ReplaceAll(tt.name, " ", "-"), tt.method, tt.currency, tt.country, receiver.URL+"/callback")
			p := createAPM(t, ts.URL, req)
			wantMethod := strings.ToUpper(tt.method)
			if !strings.HasPrefix(p.PaymentID, "ap_") || p.Status != APMPending || p.Method != wantMethod ||
				p.Amount != 12345 || p.Currency != tt.currency || p.RedirectURL != ts.URL+"/apm/"+p.PaymentID || p.CreatedAt.IsZero() {
				t.Fatalf("payment = %+v, want pending %s 12345 %s redirecting to this simulator", p, wantMethod, tt.currency)
			}
			again := call(t, http.MethodPost, ts.URL+"/v1/apm/payments", req)
			if again.header.Get("Idempotent-Replayed") != "true" || decode[APMPayment](t, again) != p {
				t.Errorf("replay = %s, want the same payment replayed", again.body)
			}

			page := call(t, http.MethodGet, p.RedirectURL, nil)
			for _, s := range []string{
				tt.title,
				`<span class="amount" id="amount">` + tt.amount + `</span>`,
				`<form method="post" action="/apm/` + p.PaymentID + `/pay">`,
				`<button type="submit" id="apm-pay">Pay</button>`,
				`<form method="post" action="/apm/` + p.PaymentID + `/cancel">`,
				`<button type="submit" id="apm-cancel">Cancel</button>`,
			} {
				if !strings.Contains(string(page.body), s) {
					t.Errorf("page lacks %q:\n%s", s, page.body)
				}
			}

			a := postForm(t, p.RedirectURL+"/pay", nil)
			if a.status != http.StatusSeeOther || a.header.Get("Location") != req.ReturnURL {
				t.Errorf("pay = %d Location %q, want 303 %q", a.status, a.header.Get("Location"), req.ReturnURL)
			}
			cbs := rc.callbacks()
			if len(cbs) != i+1 {
				t.Fatalf("callbacks = %d, want %d", len(cbs), i+1)
			}
			cb := cbs[i]
			mac := hmac.New(sha256.New, []byte(secret))
			mac.Write(cb.body)
			if want := hex.EncodeToString(mac.Sum(nil)); cb.signature != want {
				t.Errorf("X-Provider-Signature = %q, want %q", cb.signature, want)
			}
			want := `{"payment_id":"` + p.PaymentID + `","reference":"` + req.Reference + `","status":"succeeded","amount":12345,"currency":"` +
				tt.currency + `","method":"` + wantMethod + `"}`
			if string(cb.body) != want {
				t.Errorf("callback body = %s, want %s", cb.body, want)
			}

			got := decode[APMPayment](t, call(t, http.MethodGet, ts.URL+"/v1/apm/payments/"+p.PaymentID, nil))
			if got.Status != APMSucceeded || got.CallbackStatus != http.StatusNoContent {
				t.Errorf("payment after pay = %+v, want succeeded with callback_status 204", got)
			}
			if page := call(t, http.MethodGet, p.RedirectURL, nil); !strings.Contains(string(page.body), "Already completed") {
				t.Errorf("page after pay = %s, want the already completed page", page.body)
			}
		})
	}
}

func TestAPMCancelAndFinalStates(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	rc, receiver := newReceiver(t, http.StatusOK)
	req := apmBody("apm-cancel", "OXXO", "MXN", "MX", receiver.URL)
	p := createAPM(t, ts.URL, req)
	tests := []struct {
		name      string
		path      string
		status    string
		callbacks int
	}{
		{"cancel", "/cancel", APMCancelled, 1},
		{"pay after cancel changes nothing", "/pay", APMCancelled, 1},
		{"cancel again changes nothing", "/cancel", APMCancelled, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := postForm(t, p.RedirectURL+tt.path, nil)
			if a.status != http.StatusSeeOther || a.header.Get("Location") != req.ReturnURL {
				t.Errorf("answer = %d Location %q, want 303 %q", a.status, a.header.Get("Location"), req.ReturnURL)
			}
			got, ok := srv.APMPayment(p.PaymentID)
			if !ok || got.Status != tt.status {
				t.Errorf("payment = %+v, want status %s", got, tt.status)
			}
			cbs := rc.callbacks()
			if len(cbs) != tt.callbacks {
				t.Fatalf("callbacks = %d, want %d", len(cbs), tt.callbacks)
			}
			var body apmCallback
			if err := json.Unmarshal(cbs[0].body, &body); err != nil || body.Status != APMCancelled {
				t.Errorf("callback = %s, want status cancelled", cbs[0].body)
			}
		})
	}
}

// TestAPMCancelByTheMerchant: POST /v1/apm/payments/{id}/cancel calls off
// a pending payment without a callback, after which the shopper cannot pay
// it; a payment the shopper completed first answers as it stands.
func TestAPMCancelByTheMerchant(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	rc, receiver := newReceiver(t, http.StatusOK)
	pending := createAPM(t, ts.URL, apmBody("apm-merchant-cancel", "PIX", "BRL", "BR", receiver.URL))
	paid := createAPM(t, ts.URL, apmBody("apm-merchant-cancel-paid", "PIX", "BRL", "BR", receiver.URL))
	postForm(t, paid.RedirectURL+"/pay", nil)
	tests := []struct {
		name, id, want string
	}{
		{"a pending payment is cancelled", pending.PaymentID, APMCancelled},
		{"cancelled again: the same", pending.PaymentID, APMCancelled},
		{"a paid payment stays paid", paid.PaymentID, APMSucceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decode[APMPayment](t, call(t, http.MethodPost, ts.URL+"/v1/apm/payments/"+tt.id+"/cancel", nil))
			if got.Status != tt.want || got.PaymentID != tt.id {
				t.Errorf("answer = %+v, want %s", got, tt.want)
			}
		})
	}
	postForm(t, pending.RedirectURL+"/pay", nil)
	if got, _ := srv.APMPayment(pending.PaymentID); got.Status != APMCancelled {
		t.Errorf("paid after the merchant's cancel: %s", got.Status)
	}
	if n := len(rc.callbacks()); n != 1 {
		t.Errorf("%d callbacks, want the paid payment's only", n)
	}
	if a := call(t, http.MethodPost, ts.URL+"/v1/apm/payments/ap_none/cancel", nil); a.status != http.StatusNotFound {
		t.Errorf("cancel of an unknown payment = %d, want 404", a.status)
	}
}

func TestAPMCallbackFailures(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	redirecting := httptest.NewServer(http.RedirectHandler("http://127.0.0.1:1/elsewhere", http.StatusTemporaryRedirect))
	t.Cleanup(redirecting.Close)
	_, failing := newReceiver(t, http.StatusInternalServerError)
	closed, err := ports.Closed()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closed.Close() })
	closedURL := "http://" + closed.Addr()
	tests := []struct {
		name        string
		callbackURL string
		status      int
	}{
		{"receiver error", failing.URL, http.StatusInternalServerError},
		{"redirect not followed", redirecting.URL, http.StatusTemporaryRedirect},
		{"unreachable", closedURL, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := apmBody("apm-fail-"+strings.ReplaceAll(tt.name, " ", "-"), "PIX", "BRL", "BR", tt.callbackURL)
			p := createAPM(t, ts.URL, req)
			a := postForm(t, p.RedirectURL+"/pay", nil)
			if a.status != http.StatusSeeOther || a.header.Get("Location") != req.ReturnURL {
				t.Errorf("pay = %d Location %q, want 303 %q", a.status, a.header.Get("Location"), req.ReturnURL)
			}
			got, _ := srv.APMPayment(p.PaymentID)
			if got.Status != APMSucceeded || got.CallbackStatus != tt.status {
				t.Errorf("status/callback_status = %s/%d, want succeeded/%d", got.Status, got.CallbackStatus, tt.status)
			}
		})
	}
}

func TestAPMPaymentValidation(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	pix := apmBody("apm-v", "PIX", "BRL", "BR", "http://merchant.example/cb")
	ideal := apmBody("apm-v", "IDEAL", "EUR", "NL", "http://merchant.example/cb")
	tests := []struct {
		name    string
		body    apmRequest
		error   string
		message string
	}{
		{"unsupported method", func() apmRequest { r := pix; r.Method = "BOLETO"; return r }(), "unsupported_method", "method must be one of PIX, OXXO, IDEAL"},
		{"pix in euros", func() apmRequest { r := pix; r.Currency = "EUR"; return r }(), "currency_not_supported", "PIX accepts BRL"},
		{"oxxo in dollars", func() apmRequest { r := pix; r.Method, r.Currency, r.Country = "OXXO", "USD", "MX"; return r }(), "currency_not_supported", "OXXO accepts MXN"},
		{"pix in portugal", func() apmRequest { r := pix; r.Country = "PT"; return r }(), "country_not_supported", "PIX is offered in BR"},
		{"ideal in germany", func() apmRequest { r := ideal; r.Country = "DE"; return r }(), "country_not_supported", "IDEAL is offered in NL"},
		{"pix without document", func() apmRequest { r := pix; r.Customer.Document = ""; return r }(), "invalid_request", "customer.document must be 11 digits for PIX"},
		{"pix with short document", func() apmRequest { r := pix; r.Customer.Document = "1234567890"; return r }(), "invalid_request", "customer.document must be 11 digits for PIX"},
		{"pix with formatted document", func() apmRequest { r := pix; r.Customer.Document = "123.456.789-09"; return r }(), "invalid_request", "customer.document must be 11 digits for PIX"},
		{"ideal without bank code", func() apmRequest { r := ideal; r.BankCode = " "; return r }(), "invalid_request", "bank_code is required for IDEAL"},
		{"missing key", func() apmRequest { r := pix; r.IdempotencyKey = ""; return r }(), "invalid_request", "idempotency_key is required"},
		{"missing method", func() apmRequest { r := pix; r.Method = ""; return r }(), "invalid_request", "method is required"},
		{"zero amount", func() apmRequest { r := pix; r.Amount = 0; return r }(), "invalid_request", "amount must be a positive number of minor units"},
		{"bad currency", func() apmRequest { r := pix; r.Currency = "brl"; return r }(), "invalid_request", "currency must be 3 upper-case letters"},
		{"bad country", func() apmRequest { r := pix; r.Country = "BRA"; return r }(), "invalid_request", "country must be 2 upper-case letters"},
		{"bad callback url", func() apmRequest { r := pix; r.CallbackURL = "ftp://merchant.example"; return r }(), "invalid_request", "callback_url must be an absolute http or https URL"},
		{"missing return url", func() apmRequest { r := pix; r.ReturnURL = ""; return r }(), "invalid_request", "return_url must be an absolute http or https URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := call(t, http.MethodPost, ts.URL+"/v1/apm/payments", tt.body)
			if a.status != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400; body %s", a.status, a.body)
			}
			if got, want := decode[errorBody](t, a), (errorBody{tt.error, tt.message}); got != want {
				t.Errorf("body = %+v, want %+v", got, want)
			}
		})
	}
}

func TestAPMNotFound(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	tests := []struct {
		name   string
		method string
		path   string
	}{
		{"get payment", http.MethodGet, "/v1/apm/payments/ap_nope"},
		{"page", http.MethodGet, "/apm/ap_nope"},
		{"pay", http.MethodPost, "/apm/ap_nope/pay"},
		{"cancel", http.MethodPost, "/apm/ap_nope/cancel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if a := call(t, tt.method, ts.URL+tt.path, nil); a.status != http.StatusNotFound {
				t.Errorf("status = %d, want 404", a.status)
			}
		})
	}
}

// TestPublicURLAndCallbackVia: behind a container's port mapping the pages
// are linked at the public URL, and the provider's callback goes to the
// gateway's internal address with the callback URL's path.
func TestPublicURLAndCallbackVia(t *testing.T) {
	rc, internal := newReceiver(t, http.StatusOK)
	_, ts := newTestServer(t, Options{PublicURL: "http://localhost:18090/", CallbackVia: internal.URL})
	a := authenticate(t, ts.URL, authBody("auth-public", "4000000000003220"))
	if !strings.HasPrefix(a.ACSURL, "http://localhost:18090/acs/") {
		t.Errorf("ACS URL %s, want it at the public URL", a.ACSURL)
	}
	p := createAPM(t, ts.URL, apmBody("apm-via", "IDEAL", "EUR", "NL", "http://gateway.public.example/v1/apm/callback"))
	if want := "http://localhost:18090/apm/" + p.PaymentID; p.RedirectURL != want {
		t.Errorf("redirect URL %s, want %s", p.RedirectURL, want)
	}
	// The page is served here; the form posts to this simulator.
	if got := postForm(t, ts.URL+"/apm/"+p.PaymentID+"/pay", nil); got.status != http.StatusSeeOther {
		t.Fatalf("pay: %d %s", got.status, got.body)
	}
	if n := len(rc.callbacks()); n != 1 {
		t.Fatalf("%d callbacks reached the internal address, want 1", n)
	}
}

package simacquirer

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sim "github.com/paygate/paygate/internal/dev/simulator"
)

func apmReq(key, method, currency, country, callbackURL string) APMRequest {
	return APMRequest{
		IdempotencyKey: key,
		Method:         method,
		Amount:         5000,
		Currency:       currency,
		Country:        country,
		Reference:      "order-" + key,
		CallbackURL:    callbackURL,
		ReturnURL:      "https://merchant.example/return/" + key,
		BankCode:       "RABONL2U",
		Customer:       APMCustomer{Name: "Ana Silva", Email: "ana@example.com", Document: "12345678909"},
	}
}

func TestCreateAPMPayment(t *testing.T) {
	_, c := newEnv(t, sim.Options{}, 0)
	ctx := context.Background()
	tests := []struct {
		name     string
		method   string
		currency string
		country  string
	}{
		{"pix", "PIX", "BRL", "BR"},
		{"oxxo", "OXXO", "MXN", "MX"},
		{"ideal", "IDEAL", "EUR", "NL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := apmReq("apm-"+tt.name, tt.method, tt.currency, tt.country, "http://127.0.0.1:1/cb")
			p, err := c.CreateAPMPayment(ctx, req)
			if err != nil {
				t.Fatalf("CreateAPMPayment: %v", err)
			}
			if !strings.HasPrefix(p.PaymentID, "ap_") || p.Status != APMPending || p.Method != tt.method || p.Amount != 5000 ||
				p.Currency != tt.currency || p.Reference != req.Reference || p.RedirectURL != c.baseURL.String()+"/apm/"+p.PaymentID {
				t.Errorf("payment = %+v, want pending %s 5000 %s", p, tt.method, tt.currency)
			}
			again, err := c.CreateAPMPayment(ctx, req)
			if err != nil || again != p {
				t.Errorf("replay = %+v, %v, want %+v", again, err, p)
			}
			got, err := c.GetAPMPayment(ctx, p.PaymentID)
			if err != nil || got != p {
				t.Errorf("GetAPMPayment = %+v, %v, want %+v", got, err, p)
			}
		})
	}
}

func TestCreateAPMPaymentRejected(t *testing.T) {
	_, c := newEnv(t, sim.Options{}, 0)
	ctx := context.Background()
	tests := []struct {
		name string
		req  APMRequest
		code string
		err  error
	}{
		{"unsupported method", apmReq("r-1", "SOFORT", "EUR", "DE", "http://x.example/cb"), "unsupported_method", ErrRejected},
		{"currency", apmReq("r-2", "PIX", "USD", "BR", "http://x.example/cb"), "currency_not_supported", ErrRejected},
		{"country", apmReq("r-3", "OXXO", "MXN", "US", "http://x.example/cb"), "country_not_supported", ErrRejected},
		{"missing document", func() APMRequest {
			r := apmReq("r-4", "PIX", "BRL", "BR", "http://x.example/cb")
			r.Customer.Document = ""
			return r
		}(), "invalid_request", ErrRejected},
		{"missing bank code", func() APMRequest {
			r := apmReq("r-5", "IDEAL", "EUR", "NL", "http://x.example/cb")
			r.BankCode = ""
			return r
		}(), "invalid_request", ErrRejected},
		{"empty key", apmReq("", "PIX", "BRL", "BR", "http://x.example/cb"), "empty idempotency key", ErrRejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.CreateAPMPayment(ctx, tt.req)
			if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.code) {
				t.Errorf("err = %v, want %v holding %q", err, tt.err, tt.code)
			}
		})
	}
	t.Run("get unknown", func(t *testing.T) {
		if _, err := c.GetAPMPayment(ctx, "ap_nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("err = %v, want ErrNotFound", err)
		}
	})
}

func TestAPMCallbackVerifies(t *testing.T) {
	_, c := newEnv(t, sim.Options{Secret: testSecret}, 0)
	var (
		mu       sync.Mutex
		verified []APMCallback
	)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !VerifyProviderSignature(testSecret, body, r.Header.Get("X-Provider-Signature")) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var cb APMCallback
		if err := json.Unmarshal(body, &cb); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		verified = append(verified, cb)
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(receiver.Close)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	tests := []struct {
		name   string
		action string
		status string
	}{
		{"pay", "/pay", APMSucceeded},
		{"cancel", "/cancel", APMCancelled},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := apmReq("cb-"+tt.name, "PIX", "BRL", "BR", receiver.URL)
			p, err := c.CreateAPMPayment(context.Background(), req)
			if err != nil {
				t.Fatalf("CreateAPMPayment: %v", err)
			}
			resp, err := noRedirect.Post(p.RedirectURL+tt.action, "application/x-www-form-urlencoded", nil)
			if err != nil {
				t.Fatalf("POST: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != req.ReturnURL {
				t.Errorf("answer = %d %q, want 303 %q", resp.StatusCode, resp.Header.Get("Location"), req.ReturnURL)
			}
			mu.Lock()
			got := append([]APMCallback(nil), verified...)
			mu.Unlock()
			want := APMCallback{PaymentID: p.PaymentID, Reference: req.Reference, Status: tt.status, Amount: 5000, Currency: "BRL", Method: "PIX"}
			if len(got) != i+1 || got[i] != want {
				t.Fatalf("verified callbacks = %+v, want the last to be %+v", got, want)
			}
			after, err := c.GetAPMPayment(context.Background(), p.PaymentID)
			if err != nil || after.Status != tt.status || after.CallbackStatus != http.StatusOK {
				t.Errorf("payment = %+v, %v, want %s with callback_status 200", after, err, tt.status)
			}
		})
	}
}

func TestVerifyProviderSignature(t *testing.T) {
	body := []byte(`{"payment_id":"ap_1","reference":"order-1","status":"succeeded","amount":5000,"currency":"BRL","method":"PIX"}`)
	sig := SignProviderCallback(testSecret, body)
	flipped := append([]byte(nil), body...)
	flipped[len(flipped)-3] ^= 0x01
	sigFlipped := []byte(sig)
	sigFlipped[0] ^= 0x01
	tests := []struct {
		name      string
		secret    string
		body      []byte
		signature string
		want      bool
	}{
		{"valid", testSecret, body, sig, true},
		{"body one byte changed", testSecret, flipped, sig, false},
		{"signature one byte changed", testSecret, body, string(sigFlipped), false},
		{"body with trailing newline", testSecret, append(append([]byte(nil), body...), '\n'), sig, false},
		{"other secret", "other", body, sig, false},
		{"upper-case hex", testSecret, body, strings.ToUpper(sig), false},
		{"empty signature", testSecret, body, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := VerifyProviderSignature(tt.secret, tt.body, tt.signature); got != tt.want {
				t.Errorf("VerifyProviderSignature = %t, want %t", got, tt.want)
			}
		})
	}
	if len(sig) != 64 || strings.ToLower(sig) != sig {
		t.Errorf("signature = %q, want 64 lower-case hex characters", sig)
	}
}

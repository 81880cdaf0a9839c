package simbank

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/outbound"
)

// TestWireShape pins sim-bank's wire format, raw over HTTP: form bodies,
// the X-Request-Id header, decimal amounts written exactly, and form
// answers with upper-case states and response codes.
func TestWireShape(t *testing.T) {
	srv := NewServer(Options{Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	payment := func(amount, currency string) string {
		return url.Values{"txn_type": {"SALE"}, "merchant_ref": {"ref-1"}, "pan": {"4242424242424242"}, "exp": {"0931"},
			"cvc": {"123"}, "amount": {amount}, "currency": {currency}}.Encode()
	}
	tests := []struct {
		name        string
		contentType string
		requestID   string
		body        string
		wantStatus  int
		want        url.Values // fields the answer must hold
		wantReplay  bool
	}{
		{"JSON is refused", "application/json", "w-1", `{"amount":"12.34"}`, http.StatusUnsupportedMediaType,
			url.Values{"error": {"UNSUPPORTED_MEDIA_TYPE"}}, false},
		{"no request id", "application/x-www-form-urlencoded", "", payment("12.34", "USD"), http.StatusBadRequest,
			url.Values{"error": {"MISSING_REQUEST_ID"}}, false},
		{"one decimal too few", "application/x-www-form-urlencoded", "w-2", payment("12.3", "USD"), http.StatusBadRequest,
			url.Values{"error": {"INVALID_FIELD"}, "field": {"amount"}}, false},
		{"decimals on yen", "application/x-www-form-urlencoded", "w-3", payment("12.00", "JPY"), http.StatusBadRequest,
			url.Values{"error": {"INVALID_FIELD"}, "field": {"amount"}}, false},
		{"minor units are not an amount", "application/x-www-form-urlencoded", "w-4", payment("1234", "USD") + "&extra=1", http.StatusBadRequest,
			url.Values{"error": {"INVALID_FIELD"}}, false},
		{"a sale", "application/x-www-form-urlencoded", "w-5", payment("12.34", "USD"), http.StatusOK,
			url.Values{"state": {"CAPTURED"}, "response_code": {"00"}, "amount": {"12.34"}, "captured": {"12.34"},
				"refunded": {"0.00"}, "currency": {"USD"}, "request_id": {"w-5"}, "merchant_ref": {"ref-1"}, "card_last4": {"4242"}}, false},
		{"the same sale again", "application/x-www-form-urlencoded", "w-5", payment("12.34", "USD"), http.StatusOK,
			url.Values{"state": {"CAPTURED"}, "amount": {"12.34"}}, true},
		{"the same request id, another amount", "application/x-www-form-urlencoded", "w-5", payment("12.35", "USD"), http.StatusConflict,
			url.Values{"error": {"REQUEST_ID_REUSED"}}, false},
		{"a yen sale", "application/x-www-form-urlencoded", "w-6", payment("1234", "JPY"), http.StatusOK,
			url.Values{"state": {"CAPTURED"}, "amount": {"1234"}, "captured": {"1234"}, "refunded": {"0"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, ts.URL+Prefix+"/payments", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", tc.contentType)
			if tc.requestID != "" {
				req.Header.Set("X-Request-Id", tc.requestID)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("HTTP %d %s, want %d", resp.StatusCode, raw, tc.wantStatus)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
				t.Errorf("Content-Type %q", ct)
			}
			got, err := url.ParseQuery(string(raw))
			if err != nil {
				t.Fatalf("answer is not a form: %s", raw)
			}
			for k := range tc.want {
				if got.Get(k) != tc.want.Get(k) {
					t.Errorf("%s = %q, want %q (answer %s)", k, got.Get(k), tc.want.Get(k), raw)
				}
			}
			if replayed := resp.Header.Get("X-Replayed") == "1"; replayed != tc.wantReplay {
				t.Errorf("X-Replayed %t, want %t", replayed, tc.wantReplay)
			}
			if strings.Contains(string(raw), "4242424242424242") {
				t.Error("the answer shows the card number")
			}
		})
	}
	if n := len(srv.Payments()); n != 2 {
		t.Errorf("%d payments recorded, want 2", n)
	}
}

// TestPaymentPastItsDeadline: a payment that reaches sim-bank after the
// deadline its caller stamped is refused and not made (the inquiry finds
// nothing); the request id stays free for the same payment sent in time.
func TestPaymentPastItsDeadline(t *testing.T) {
	srv := NewServer(Options{Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	body := url.Values{"txn_type": {"SALE"}, "merchant_ref": {"ref-dl"}, "pan": {"4242424242424242"}, "exp": {"0931"},
		"cvc": {"123"}, "amount": {"12.34"}, "currency": {"USD"}}.Encode()
	steps := []struct {
		name       string
		deadline   time.Time
		wantStatus int
		wantMade   int
	}{
		{"past its deadline", time.Now().Add(-time.Millisecond), http.StatusRequestTimeout, 0},
		{"the same payment in time", time.Now().Add(time.Minute), http.StatusOK, 1},
	}
	for _, st := range steps {
		req, err := http.NewRequest(http.MethodPost, ts.URL+Prefix+"/payments", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Request-Id", "dl-1")
		req.Header.Set(outbound.DeadlineHeader, st.deadline.UTC().Format(time.RFC3339Nano))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != st.wantStatus || len(srv.Payments()) != st.wantMade {
			t.Fatalf("%s: HTTP %d with %d payments, want %d with %d", st.name, resp.StatusCode, len(srv.Payments()), st.wantStatus, st.wantMade)
		}
	}
}

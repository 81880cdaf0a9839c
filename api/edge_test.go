package api

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/models"
)

// commonHeaders are set on every answer.
var commonHeaders = map[string]string{
	"X-Content-Type-Options": "nosniff",
	"X-Frame-Options":        "DENY",
	"Referrer-Policy":        "no-referrer",
}

// directives splits a Content-Security-Policy into its directives.
func directives(t *testing.T, csp string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range strings.Split(csp, ";") {
		d = strings.TrimSpace(d)
		name, value, _ := strings.Cut(d, " ")
		if name == "" {
			continue
		}
		if _, dup := out[name]; dup {
			t.Errorf("policy %q: %s twice", csp, name)
		}
		out[name] = value
	}
	return out
}

// TestEdgeHeaders sends requests through the whole handler and checks the
// headers of API answers and of the shopper's pages.
func TestEdgeHeaders(t *testing.T) {
	env := newTestEnv(t)
	env.srv.PublicURL = "https://pay.example"
	env.srv.FormOrigins = []string{"https://acs.example:8443/base"}
	tests := []struct {
		name, path, contentType string
		body                    []byte
		page                    bool
	}{
		{"health", "/healthz", "", nil, false},
		{"authorise (XML)", "/v1/authorise", ctForm, []byte("merchant_id=1"), false},
		{"apm callback (JSON)", "/v1/apm/callback", ctJSON, []byte("{}"), false},
		{"unknown route", "/v1/nothing", ctForm, nil, false},
		{"checkout page", "/v1/checkout", ctForm, []byte("merchant_id="), true},
		{"checkout pay page", "/v1/checkout/pay", ctForm, []byte("session=forged"), true},
		{"checkout cancel page", "/v1/checkout/cancel", ctForm, []byte("session=forged"), true},
		{"3-D Secure return page", "/v1/3ds/callback", ctForm, []byte("authentication_id=x"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := http.MethodPost
			if tt.path == "/healthz" {
				method = http.MethodGet
			}
			req := httptest.NewRequest(method, tt.path, bytes.NewReader(tt.body))
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			rec := serve(env, req)
			for name, want := range commonHeaders {
				if got := rec.Header().Get(name); got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
			csp := directives(t, rec.Header().Get("Content-Security-Policy"))
			if csp["frame-ancestors"] != "'none'" || csp["default-src"] != "'none'" || csp["base-uri"] != "'none'" {
				t.Errorf("policy %v lacks default-src, frame-ancestors or base-uri 'none'", csp)
			}
			if !tt.page {
				if csp["form-action"] != "'none'" || csp["script-src"] != "" {
					t.Errorf("API answer policy %v", csp)
				}
				return
			}
			if got, want := csp["form-action"], "'self' https://pay.example https://acs.example:8443"; got != want {
				t.Errorf("form-action %q, want %q", got, want)
			}
			if strings.Contains(csp["script-src"], "unsafe") || !strings.Contains(csp["script-src"], "'sha256-") {
				t.Errorf("script-src %q", csp["script-src"])
			}
			if !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
				t.Errorf("Content-Type %q: want a page", rec.Header().Get("Content-Type"))
			}
		})
	}
}

// TestEdgeBodyLimit checks that every body is read through the limit:
// MaxBodyBytes+1 bytes reach the handler (so it can say the body is too
// large itself), one more is a read error.
func TestEdgeBodyLimit(t *testing.T) {
	s := &Server{}
	r := gin.New()
	r.Use(s.edge)
	var read int
	var readErr error
	r.POST("/read", func(c *gin.Context) {
		b, err := io.ReadAll(c.Request.Body)
		read, readErr = len(b), err
		c.Status(http.StatusNoContent)
	})
	tests := []struct {
		name    string
		size    int
		tooMuch bool
	}{
		{"empty", 0, false},
		{"the limit", MaxBodyBytes, false},
		{"one over the limit", MaxBodyBytes + 1, false},
		{"two over the limit", MaxBodyBytes + 2, true},
		{"8 MiB", 8 << 20, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/read", bytes.NewReader(make([]byte, tt.size))))
			var tooLarge *http.MaxBytesError
			if tt.tooMuch {
				if !errors.As(readErr, &tooLarge) || read > MaxBodyBytes+1 {
					t.Fatalf("read %d bytes, err %v; want at most %d and a MaxBytesError", read, readErr, MaxBodyBytes+1)
				}
				return
			}
			if readErr != nil || read != tt.size {
				t.Fatalf("read %d bytes, err %v; want %d", read, readErr, tt.size)
			}
		})
	}
}

// TestEdgeOversizeAnswers checks that oversize bodies on the real routes
// get their clear answers, never a 500.
func TestEdgeOversizeAnswers(t *testing.T) {
	env := newTestEnv(t)
	big := bytes.Repeat([]byte("a"), 2<<20)
	for _, path := range []string{"/v1/authorise", "/v1/checkout", "/v1/3ds/callback", "/v1/apm/callback", "/v1/refund", "/v1/retrievalTrans"} {
		t.Run(path, func(t *testing.T) {
			rec := env.do(t, path, ctForm, big, testQueryIP+":1234")
			if rec.Code >= 500 {
				t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
			}
			if rec.Code != http.StatusRequestEntityTooLarge {
				t.Errorf("status %d, want 413", rec.Code)
			}
		})
	}
}

// TestEdgePaymentPagePolicy checks that a payment page's form-action names
// the order's return_url and cancel_url, since the card and cancel forms are
// answered with redirects there.
func TestEdgePaymentPagePolicy(t *testing.T) {
	o := &models.Order{Details: order.Details{
		ReturnURL: "https://Shop.example/return?order=1", CancelURL: "http://shop.example:8080/cancel",
	}}
	defer func(f func(*Server, *gin.Context, []byte) *models.Order) { lookupPageOrder = f }(lookupPageOrder)
	var lookedUp []string // the bodies lookups were made with
	lookupPageOrder = func(_ *Server, _ *gin.Context, body []byte) *models.Order {
		lookedUp = append(lookedUp, string(body))
		return o
	}
	s := &Server{PublicURL: "http://127.0.0.1:8080", FormOrigins: []string{"http://127.0.0.1:8090"}}
	r := gin.New()
	r.Use(s.edge)
	// The handlers write their answers in the orders the real ones do.
	r.POST("/v1/checkout", func(c *gin.Context) { // header, then status, then body
		_, _ = io.ReadAll(c.Request.Body)
		c.Header("Content-Type", "text/html; charset=utf-8")
		c.Status(http.StatusOK)
		_, _ = c.Writer.WriteString("<form>")
	})
	r.POST("/v1/checkout/pay", func(c *gin.Context) { // a redirect
		_ = c.Request.ParseForm()
		c.Redirect(http.StatusSeeOther, o.Details.ReturnURL)
	})
	r.POST("/v1/checkout/cancel", func(c *gin.Context) { // status, then header, then body
		_ = c.Request.ParseForm()
		c.Status(http.StatusForbidden)
		c.Header("Content-Type", "text/html; charset=utf-8")
		_, _ = c.Writer.Write([]byte("<p>"))
	})
	r.POST("/v1/3ds/callback", func(c *gin.Context) {
		c.Header("Content-Type", "text/html; charset=utf-8")
		c.String(http.StatusOK, "<p>")
	})
	tests := []struct {
		path, body string
		formAction string
		lookup     bool
	}{
		{"/v1/checkout", "account_id=1&order_no=2", "'self' http://127.0.0.1:8080 http://127.0.0.1:8090 https://shop.example http://shop.example:8080", true},
		{"/v1/checkout/pay", "session=x", "'self' http://127.0.0.1:8080 http://127.0.0.1:8090", false},
		{"/v1/checkout/cancel", "session=x", "'self' http://127.0.0.1:8080 http://127.0.0.1:8090", false},
		{"/v1/3ds/callback", "a=b", "'self' http://127.0.0.1:8080 http://127.0.0.1:8090", false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			lookedUp = nil
			req := httptest.NewRequest(http.MethodPost, tt.path, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", ctForm)
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req)
			// The recorder keeps the header as it was when written.
			if got := directives(t, rec.Header().Get("Content-Security-Policy"))["form-action"]; got != tt.formAction {
				t.Errorf("form-action %q, want %q", got, tt.formAction)
			}
			if (len(lookedUp) > 0) != tt.lookup {
				t.Errorf("looked up the order %d times, want lookup %v", len(lookedUp), tt.lookup)
			}
			if tt.lookup && lookedUp[0] != tt.body {
				t.Errorf("looked up with body %q, want the request's %q", lookedUp[0], tt.body)
			}
		})
	}
}

func TestSourceOf(t *testing.T) {
	tests := []struct{ url, want string }{
		{"https://shop.example/return?x=1#top", "https://shop.example"},
		{"HTTPS://Shop.Example:8443/r", "https://shop.example:8443"},
		{"http://127.0.0.1:9000/return", "http://127.0.0.1:9000"},
		{"  https://shop.example/r  ", "https://shop.example"},
		{"https://user:pw@shop.example/r", "https://shop.example"},
		{"https://[2001:db8::1]:8443/r", "https:"},
		{"https://shop.example;script-src/r", "https:"},
		{"https://shop.example%20x/r", ""},
		{"javascript:alert(1)", ""},
		{"data:text/html,x", ""},
		{"/relative", ""},
		{"", ""},
		{"ftp://shop.example/", ""},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			got := sourceOf(tt.url)
			if got != tt.want {
				t.Errorf("sourceOf(%q) = %q, want %q", tt.url, got, tt.want)
			}
			if strings.ContainsAny(got, " ;,'\"") {
				t.Errorf("sourceOf(%q) = %q could break the header", tt.url, got)
			}
		})
	}
	// Whatever a merchant puts in return_url, the policy keeps its shape.
	s := &Server{PublicURL: "http://127.0.0.1:8080"}
	for _, raw := range []string{"https://a.example; script-src 'unsafe-inline'", "https://a.example/'none'", "https://a.example,b"} {
		u, err := url.Parse(raw)
		if err == nil && u.Host != "" && strings.ContainsAny(sourceOf(raw), " ;,'") {
			t.Errorf("sourceOf(%q) = %q", raw, sourceOf(raw))
		}
		csp := directives(t, s.pagePolicy(&models.Order{Details: order.Details{ReturnURL: raw}}))
		if strings.Contains(csp["script-src"], "unsafe") || len(strings.Fields(csp["form-action"])) > 3 {
			t.Errorf("return_url %q gives %v", raw, csp)
		}
	}
}

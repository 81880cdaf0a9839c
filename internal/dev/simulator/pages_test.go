package simulator

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var (
	inlineStyle  = regexp.MustCompile(`(?s)<style>(.*?)</style>`)
	inlineScript = regexp.MustCompile(`(?s)<script>(.*?)</script>`)
)

// TestPagesSendSecurityHeaders checks every HTML page of the simulator:
// none may be framed, sniffed or leak its URL, and its CSP allows exactly the
// inline style and script the page holds.
func TestPagesSendSecurityHeaders(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	challenge := authenticate(t, ts.URL, authBody("headers-1", cardChallenge))
	done := authenticate(t, ts.URL, authBody("headers-2", cardChallenge))
	result := postForm(t, done.ACSURL, url.Values{"otp": {challengeOTP}})
	_, receiver := newReceiver(t, http.StatusOK)
	p := createAPM(t, ts.URL, apmBody("headers-3", "PIX", "BRL", "BR", receiver.URL+"/callback"))

	pages := []struct {
		name   string
		answer answer
		script bool
	}{
		{"ACS challenge", call(t, http.MethodGet, challenge.ACSURL, nil), false},
		{"ACS result", result, true},
		{"ACS already completed", call(t, http.MethodGet, done.ACSURL, nil), false},
		{"ACS not found", call(t, http.MethodGet, ts.URL+"/acs/au_nope", nil), false},
		{"APM page", call(t, http.MethodGet, p.RedirectURL, nil), false},
		{"APM not found", call(t, http.MethodGet, ts.URL+"/apm/ap_nope", nil), false},
	}
	for _, tc := range pages {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.answer.header
			for name, want := range map[string]string{
				"X-Frame-Options":        "DENY",
				"X-Content-Type-Options": "nosniff",
				"Referrer-Policy":        "no-referrer",
				"Cache-Control":          "no-store",
				"Content-Type":           "text/html; charset=utf-8",
			} {
				if got := h.Get(name); got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
			csp := h.Get("Content-Security-Policy")
			for _, d := range []string{"frame-ancestors 'none'", "default-src 'none'", "base-uri 'none'"} {
				if !strings.Contains(csp, d) {
					t.Errorf("Content-Security-Policy %q lacks %q", csp, d)
				}
			}
			// The page's inline style and script run only if the CSP
			// names their hashes.
			for _, m := range inlineStyle.FindAllSubmatch(tc.answer.body, -1) {
				if !strings.Contains(csp, "style-src "+hashOf(m[1])) {
					t.Errorf("CSP %q does not allow the page's style", csp)
				}
			}
			scripts := inlineScript.FindAllSubmatch(tc.answer.body, -1)
			if tc.script != (len(scripts) > 0) {
				t.Fatalf("page has %d inline scripts", len(scripts))
			}
			for _, m := range scripts {
				if !strings.Contains(csp, "script-src "+hashOf(m[1])) {
					t.Errorf("CSP %q does not allow the page's script", csp)
				}
			}
		})
	}
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// TestStatusEndpointsReportTheProvidersWord checks the status endpoints an
// order asks after a callback: they say what the ACS and the provider
// decided, whatever anyone posted to the gateway.
func TestStatusEndpointsReportTheProvidersWord(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	_, receiver := newReceiver(t, http.StatusOK)
	statusOf := func(path string) string {
		t.Helper()
		a := call(t, http.MethodGet, ts.URL+path, nil)
		if a.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, a.status, a.body)
		}
		return decode[struct {
			Status string `json:"status"`
		}](t, a).Status
	}

	au := authenticate(t, ts.URL, authBody("status-1", cardChallenge))
	if got := statusOf("/v1/3ds/authentications/" + au.AuthenticationID); got != AuthChallengeRequired {
		t.Errorf("authentication before the challenge: %q, want %q", got, AuthChallengeRequired)
	}
	postForm(t, au.ACSURL, url.Values{"otp": {"000000"}})
	if got := statusOf("/v1/3ds/authentications/" + au.AuthenticationID); got != AuthFailed {
		t.Errorf("authentication after a wrong code: %q, want %q", got, AuthFailed)
	}

	p := createAPM(t, ts.URL, apmBody("status-2", "PIX", "BRL", "BR", receiver.URL+"/callback"))
	if got := statusOf("/v1/apm/payments/" + p.PaymentID); got != APMPending {
		t.Errorf("APM payment before it is paid: %q, want %q", got, APMPending)
	}
	postForm(t, ts.URL+"/apm/"+p.PaymentID+"/pay", url.Values{})
	if got := statusOf("/v1/apm/payments/" + p.PaymentID); got != APMSucceeded {
		t.Errorf("APM payment after it is paid: %q, want %q", got, APMSucceeded)
	}
}

package simulator

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

const (
	cardVisa      = "4242424242424242"
	testReturnURL = "http://merchant.example/3ds/return?o=1"
)

func authBody(key, card string) authenticationRequest {
	return authenticationRequest{
		IdempotencyKey: key,
		CardNumber:     card,
		ExpiryMonth:    "12",
		ExpiryYear:     "2030",
		Amount:         4599,
		Currency:       "EUR",
		Reference:      "order-" + key,
		ReturnURL:      testReturnURL,
	}
}

func authenticate(t *testing.T, ts string, req authenticationRequest) Authentication {
	t.Helper()
	a := call(t, http.MethodPost, ts+"/v1/3ds/authentications", req)
	if a.status != http.StatusOK {
		t.Fatalf("authenticate: status %d body %s", a.status, a.body)
	}
	return decode[Authentication](t, a)
}

// noRedirect is a client that reports redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func postForm(t *testing.T, u string, form url.Values) answer {
	t.Helper()
	resp, err := noRedirect.PostForm(u, form)
	if err != nil {
		t.Fatalf("POST %s: %v", u, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: raw}
}

var (
	hiddenInput = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)
	formAction  = regexp.MustCompile(`<form id="threeds-result" method="post" action="([^"]*)">`)
)

// resultForm returns the action and the hidden fields of the auto-post form.
func resultForm(t *testing.T, page []byte) (string, map[string]string) {
	t.Helper()
	m := formAction.FindSubmatch(page)
	if m == nil {
		t.Fatalf("no result form in page:\n%s", page)
	}
	fields := make(map[string]string)
	for _, f := range hiddenInput.FindAllSubmatch(page, -1) {
		fields[string(f[1])] = html.UnescapeString(string(f[2]))
	}
	return html.UnescapeString(string(m[1])), fields
}

func wantSignature(secret, id, status, cavv, reference string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(id + "|" + status + "|" + cavv + "|" + reference))
	return hex.EncodeToString(m.Sum(nil))
}

func TestAuthenticationFrictionlessAndChallenge(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	uuidLike := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	tests := []struct {
		name    string
		card    string
		status  string
		eci     string
		cavvLen int
		acs     bool
	}{
		{"visa frictionless", cardVisa, AuthAuthenticated, "05", 28, false},
		{"mastercard frictionless", "5555555555554444", AuthAuthenticated, "05", 28, false},
		{"challenge card", cardChallenge, AuthChallengeRequired, "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := authenticate(t, ts.URL, authBody("auth-"+tt.card, tt.card))
			if a.Status != tt.status || a.ECI != tt.eci || len(a.CAVV) != tt.cavvLen {
				t.Errorf("status/eci/cavv = %q/%q/%q, want %q/%q/%d characters", a.Status, a.ECI, a.CAVV, tt.status, tt.eci, tt.cavvLen)
			}
			if !strings.HasPrefix(a.AuthenticationID, "au_") || !uuidLike.MatchString(a.DSTransID) {
				t.Errorf("authentication_id/ds_trans_id = %q/%q, want au_ prefix and a UUID", a.AuthenticationID, a.DSTransID)
			}
			wantACS := ""
			if tt.acs {
				wantACS = ts.URL + "/acs/" + a.AuthenticationID
			}
			if a.ACSURL != wantACS {
				t.Errorf("acs_url = %q, want %q", a.ACSURL, wantACS)
			}
			got := call(t, http.MethodGet, ts.URL+"/v1/3ds/authentications/"+a.AuthenticationID, nil)
			if got.status != http.StatusOK || decode[Authentication](t, got) != a {
				t.Errorf("GET = %d %s, want 200 %+v", got.status, got.body, a)
			}
			again := call(t, http.MethodPost, ts.URL+"/v1/3ds/authentications", authBody("auth-"+tt.card, tt.card))
			if again.header.Get("Idempotent-Replayed") != "true" || decode[Authentication](t, again) != a {
				t.Errorf("replay = %s, want the same authentication replayed", again.body)
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		a := call(t, http.MethodGet, ts.URL+"/v1/3ds/authentications/au_nope", nil)
		if a.status != http.StatusNotFound || decode[errorBody](t, a).Error != "not_found" {
			t.Errorf("status %d body %s, want 404 not_found", a.status, a.body)
		}
	})
}

func TestAuthenticationValidation(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	valid := authBody("v-1", cardVisa)
	tests := []struct {
		name    string
		body    authenticationRequest
		message string
	}{
		{"missing key", func() authenticationRequest { r := valid; r.IdempotencyKey = ""; return r }(), "idempotency_key is required"},
		{"bad card", func() authenticationRequest { r := valid; r.CardNumber = "4242x"; return r }(), "card_number must be 12 to 19 digits"},
		{"bad month", func() authenticationRequest { r := valid; r.ExpiryMonth = "0"; return r }(), "expiry_month must be 1 to 12"},
		{"bad year", func() authenticationRequest { r := valid; r.ExpiryYear = "1"; return r }(), "expiry_year must be 2 or 4 digits"},
		{"zero amount", func() authenticationRequest { r := valid; r.Amount = 0; return r }(), "amount must be a positive number of minor units"},
		{"bad currency", func() authenticationRequest { r := valid; r.Currency = "eur"; return r }(), "currency must be 3 upper-case letters"},
		{"missing return url", func() authenticationRequest { r := valid; r.ReturnURL = ""; return r }(), "return_url must be an absolute http or https URL"},
		{"javascript return url", func() authenticationRequest { r := valid; r.ReturnURL = "javascript:alert(1)"; return r }(), "return_url must be an absolute http or https URL"},
		{"relative return url", func() authenticationRequest { r := valid; r.ReturnURL = "/return"; return r }(), "return_url must be an absolute http or https URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := call(t, http.MethodPost, ts.URL+"/v1/3ds/authentications", tt.body)
			if a.status != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400; body %s", a.status, a.body)
			}
			if got, want := decode[errorBody](t, a), (errorBody{"invalid_request", tt.message}); got != want {
				t.Errorf("body = %+v, want %+v", got, want)
			}
		})
	}
}

func TestACSPage(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	challenge := authenticate(t, ts.URL, authBody("page-1", cardChallenge))
	frictionless := authenticate(t, ts.URL, authBody("page-2", cardVisa))
	tests := []struct {
		name     string
		id       string
		status   int
		contains []string
		absent   []string
	}{
		{"challenge", challenge.AuthenticationID, http.StatusOK, []string{
			"<title>Verify your payment</title>",
			`<span class="amount" id="amount">45.99 EUR</span>`,
			`<span id="last4">3220</span>`,
			`<label for="otp">One-time code</label>`,
			`id="otp" name="otp"`,
			`<form method="post" action="/acs/` + challenge.AuthenticationID + `">`,
			`<button type="submit" id="verify">Verify</button>`,
			`<input type="hidden" name="action" value="cancel">`,
			`<button type="submit" id="cancel-3ds">Cancel</button>`,
		}, []string{cardChallenge, "400000"}},
		{"frictionless is completed", frictionless.AuthenticationID, http.StatusOK, []string{"Already completed"}, []string{`id="otp"`}},
		{"unknown", "au_nope", http.StatusNotFound, []string{"Not found"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := call(t, http.MethodGet, ts.URL+"/acs/"+tt.id, nil)
			if a.status != tt.status {
				t.Fatalf("status = %d, want %d", a.status, tt.status)
			}
			if ct := a.header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("Content-Type = %q, want text/html; charset=utf-8", ct)
			}
			for _, s := range tt.contains {
				if !strings.Contains(string(a.body), s) {
					t.Errorf("page lacks %q:\n%s", s, a.body)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(string(a.body), s) {
					t.Errorf("page holds %q", s)
				}
			}
		})
	}
}

func TestACSChallengeOutcomes(t *testing.T) {
	const secret = "test-secret"
	_, ts := newTestServer(t, Options{Secret: secret})
	tests := []struct {
		name   string
		form   url.Values
		status string
	}{
		{"right otp", url.Values{"otp": {"123456"}}, AuthAuthenticated},
		{"wrong otp", url.Values{"otp": {"654321"}}, AuthFailed},
		{"empty otp", url.Values{}, AuthFailed},
		{"cancel", url.Values{"action": {"cancel"}, "otp": {"123456"}}, AuthFailed},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := authBody("challenge-"+string(rune('a'+i)), cardChallenge)
			au := authenticate(t, ts.URL, req)
			a := postForm(t, au.ACSURL, tt.form)
			if a.status != http.StatusOK {
				t.Fatalf("status = %d, want 200; body %s", a.status, a.body)
			}
			action, f := resultForm(t, a.body)
			if action != testReturnURL {
				t.Errorf("form action = %q, want %q", action, testReturnURL)
			}
			wantECI, wantCAVVLen := "", 0
			if tt.status == AuthAuthenticated {
				wantECI, wantCAVVLen = "05", 28
			}
			if f["authentication_id"] != au.AuthenticationID || f["status"] != tt.status || f["eci"] != wantECI ||
				len(f["cavv"]) != wantCAVVLen || f["ds_trans_id"] != au.DSTransID || f["reference"] != req.Reference {
				t.Errorf("fields = %v, want id %s status %s eci %q cavv of %d characters", f, au.AuthenticationID, tt.status, wantECI, wantCAVVLen)
			}
			if want := wantSignature(secret, au.AuthenticationID, tt.status, f["cavv"], req.Reference); f["signature"] != want {
				t.Errorf("signature = %q, want %q", f["signature"], want)
			}
			if !strings.Contains(string(a.body), `<button type="submit" id="continue">Continue</button>`) ||
				!strings.Contains(string(a.body), `document.getElementById("threeds-result").submit()`) {
				t.Errorf("page lacks the Continue button or the auto-submit:\n%s", a.body)
			}
			got := decode[Authentication](t, call(t, http.MethodGet, ts.URL+"/v1/3ds/authentications/"+au.AuthenticationID, nil))
			if got.Status != tt.status || got.CAVV != f["cavv"] || got.ECI != wantECI {
				t.Errorf("authentication = %+v, want status %s and the posted cavv", got, tt.status)
			}
			again := postForm(t, au.ACSURL, url.Values{"otp": {"123456"}})
			if !strings.Contains(string(again.body), "Already completed") {
				t.Errorf("second submit = %s, want the already completed page", again.body)
			}
		})
	}
}

func TestDefaultSecret(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	req := authBody("default-secret", cardChallenge)
	au := authenticate(t, ts.URL, req)
	_, f := resultForm(t, postForm(t, au.ACSURL, url.Values{"otp": {"123456"}}).body)
	if want := wantSignature("sim-secret", au.AuthenticationID, AuthAuthenticated, f["cavv"], req.Reference); f["signature"] != want {
		t.Errorf("signature = %q, want %q", f["signature"], want)
	}
}

func TestChargeWithThreeDS(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	challenged := authenticate(t, ts.URL, authBody("3ds-c", cardChallenge))
	_, fields := resultForm(t, postForm(t, challenged.ACSURL, url.Values{"otp": {"123456"}}).body)
	passed := threeDSData{AuthenticationID: challenged.AuthenticationID, ECI: fields["eci"], CAVV: fields["cavv"]}

	failedAuth := authenticate(t, ts.URL, authBody("3ds-f", cardChallenge))
	postForm(t, failedAuth.ACSURL, url.Values{"otp": {"000000"}})
	pending := authenticate(t, ts.URL, authBody("3ds-p", cardChallenge))
	visaAuth := authenticate(t, ts.URL, authBody("3ds-v", cardVisa))
	visa3DS := threeDSData{AuthenticationID: visaAuth.AuthenticationID, ECI: visaAuth.ECI, CAVV: visaAuth.CAVV}
	honorAuth := authenticate(t, ts.URL, authBody("3ds-h", "4000000000000002"))
	honor3DS := threeDSData{AuthenticationID: honorAuth.AuthenticationID, ECI: honorAuth.ECI, CAVV: honorAuth.CAVV}

	forged := passed
	forged.CAVV = "AAAAAAAAAAAAAAAAAAAAAAAAAAA="
	tests := []struct {
		name        string
		card        string
		threeDS     *threeDSData
		status      string
		declineCode string
		threeDSFlag bool
	}{
		{"challenge card without 3ds", cardChallenge, nil, StatusDeclined, "authentication_required", false},
		{"challenge card authenticated", cardChallenge, &passed, StatusApproved, "", true},
		{"challenge card without eci", cardChallenge, &threeDSData{AuthenticationID: passed.AuthenticationID, CAVV: passed.CAVV}, StatusApproved, "", true},
		{"challenge card forged cavv", cardChallenge, &forged, StatusDeclined, "authentication_required", false},
		{"challenge card wrong eci", cardChallenge, &threeDSData{AuthenticationID: passed.AuthenticationID, ECI: "07", CAVV: passed.CAVV}, StatusDeclined, "authentication_required", false},
		{"challenge card failed challenge", cardChallenge, &threeDSData{AuthenticationID: failedAuth.AuthenticationID}, StatusDeclined, "authentication_required", false},
		{"challenge card pending challenge", cardChallenge, &threeDSData{AuthenticationID: pending.AuthenticationID}, StatusDeclined, "authentication_required", false},
		{"challenge card with another card's authentication", cardChallenge, &visa3DS, StatusDeclined, "authentication_required", false},
		{"visa without 3ds", cardVisa, nil, StatusApproved, "", false},
		{"visa frictionless", cardVisa, &visa3DS, StatusApproved, "", true},
		{"visa unknown authentication", cardVisa, &threeDSData{AuthenticationID: "au_nope", ECI: "05", CAVV: visa3DS.CAVV}, StatusDeclined, "authentication_failed", false},
		{"visa with the challenge card's authentication", cardVisa, &passed, StatusDeclined, "authentication_failed", false},
		{"declining card with empty 3ds", "4000000000000002", &threeDSData{}, StatusDeclined, "authentication_failed", false},
		{"declining card keeps its decline", "4000000000000002", &honor3DS, StatusDeclined, "do_not_honor", true},
		// The merchant's own 3-D Secure server's result (issue 29).
		{"challenge card, the merchant's own authentication", cardChallenge,
			&threeDSData{External: true, ECI: "05", CAVV: "AAABBEg0VhI0VniQEjRWAAAAAAA=", DSTransID: "f25084f0-5b16-4c0a-ae5d-b24808a95e4b"}, StatusApproved, "", true},
		{"visa, the merchant's own attempt", cardVisa, &threeDSData{External: true, ECI: "06", CAVV: "AAABBEg0VhI0VniQEjRWAAAAAAA=", XID: "MDAwMDAwMDAwMDAwMDAwMDAwMDE="}, StatusApproved, "", true},
		{"the merchant's own, not authenticated", cardVisa, &threeDSData{External: true, ECI: "07", CAVV: "x"}, StatusDeclined, "authentication_failed", false},
		{"the merchant's own, no cavv", cardVisa, &threeDSData{External: true, ECI: "05"}, StatusDeclined, "authentication_failed", false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := chargeBody("3ds-charge-"+string(rune('a'+i)), tt.card, 4599, true)
			body.ThreeDS = tt.threeDS
			a := call(t, http.MethodPost, ts.URL+"/v1/charges", body)
			if a.status != http.StatusOK {
				t.Fatalf("status = %d, want 200; body %s", a.status, a.body)
			}
			c := decode[Charge](t, a)
			if c.Status != tt.status || c.DeclineCode != tt.declineCode || c.ThreeDS != tt.threeDSFlag {
				t.Errorf("status/decline/three_ds = %q/%q/%t, want %q/%q/%t", c.Status, c.DeclineCode, c.ThreeDS, tt.status, tt.declineCode, tt.threeDSFlag)
			}
		})
	}
	for _, c := range srv.Charges() {
		if b := mustJSON(t, c); strings.Contains(string(b), cardChallenge) || strings.Contains(string(b), cardVisa) {
			t.Errorf("stored charge holds the card number: %s", b)
		}
	}
}

// TestChargeInInstallments: a charge in installments keeps their number;
// one or more than 60 is refused.
func TestChargeInInstallments(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	tests := []struct {
		name   string
		n      int
		status int
	}{
		{"three", 3, http.StatusOK},
		{"none", 0, http.StatusOK},
		{"one is no installments", 1, http.StatusBadRequest},
		{"over 60", 61, http.StatusBadRequest},
		{"negative", -2, http.StatusBadRequest},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := chargeBody("inst-"+string(rune('a'+i)), cardVisa, 12000, true)
			body.Installments = tt.n
			if a := call(t, http.MethodPost, ts.URL+"/v1/charges", body); a.status != tt.status {
				t.Fatalf("status = %d, want %d; body %s", a.status, tt.status, a.body)
			}
		})
	}
	if got := srv.Charges(); len(got) != 2 || got[0].Installments != 3 || got[1].Installments != 0 {
		t.Errorf("charges %+v, want installments 3 then none", got)
	}
}

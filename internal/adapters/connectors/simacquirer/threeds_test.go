package simacquirer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	sim "github.com/paygate/paygate/internal/dev/simulator"
)

const (
	cardChallenge = "4000000000003220"
	testSecret    = "connector-test-secret"
)

func authReq(key, card string) AuthenticationRequest {
	return AuthenticationRequest{
		IdempotencyKey: key,
		CardNumber:     card,
		ExpiryMonth:    "09",
		ExpiryYear:     "2031",
		Amount:         1999,
		Currency:       "GBP",
		Reference:      "order-" + key,
		ReturnURL:      "https://merchant.example/3ds-return",
	}
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)

// completeChallenge posts form to the ACS page and returns the hidden fields
// of the result form it answers.
func completeChallenge(t *testing.T, acsURL string, form url.Values) map[string]string {
	t.Helper()
	resp, err := http.PostForm(acsURL, form)
	if err != nil {
		t.Fatalf("POST %s: %v", acsURL, err)
	}
	defer resp.Body.Close()
	page, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("ACS answer: %d %v", resp.StatusCode, err)
	}
	fields := make(map[string]string)
	for _, m := range hiddenInput.FindAllSubmatch(page, -1) {
		fields[string(m[1])] = html.UnescapeString(string(m[2]))
	}
	return fields
}

func TestAuthenticate(t *testing.T) {
	_, c := newEnv(t, sim.Options{}, 0)
	ctx := context.Background()
	tests := []struct {
		name   string
		card   string
		status string
		eci    string
		acs    bool
	}{
		{"frictionless", cardVisa, AuthAuthenticated, "05", false},
		{"challenge", cardChallenge, AuthChallengeRequired, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := c.Authenticate(ctx, authReq("auth-"+tt.name, tt.card))
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			if a.Status != tt.status || a.ECI != tt.eci || (a.ACSURL != "") != tt.acs || a.Authenticated() != (tt.status == AuthAuthenticated) {
				t.Errorf("authentication = %+v, want status %s eci %q acs_url set %t", a, tt.status, tt.eci, tt.acs)
			}
			if tt.acs && a.ACSURL != c.baseURL.String()+"/acs/"+a.AuthenticationID {
				t.Errorf("acs_url = %q, want the simulator's /acs/%s", a.ACSURL, a.AuthenticationID)
			}
			got, err := c.GetAuthentication(ctx, a.AuthenticationID)
			if err != nil || got != a {
				t.Errorf("GetAuthentication = %+v, %v, want %+v", got, err, a)
			}
		})
	}
	t.Run("rejected", func(t *testing.T) {
		req := authReq("auth-bad", cardVisa)
		req.ReturnURL = "mailto:x@example.com"
		_, err := c.Authenticate(ctx, req)
		if !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), "invalid_request") || strings.Contains(err.Error(), cardVisa) {
			t.Errorf("err = %v, want ErrRejected with invalid_request and no card", err)
		}
	})
	t.Run("not found", func(t *testing.T) {
		if _, err := c.GetAuthentication(ctx, "au_nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("err = %v, want ErrNotFound", err)
		}
	})
	t.Run("empty ids", func(t *testing.T) {
		if _, err := c.Authenticate(ctx, authReq("", cardVisa)); !errors.Is(err, ErrRejected) {
			t.Errorf("Authenticate err = %v, want ErrRejected", err)
		}
		if _, err := c.GetAuthentication(ctx, ""); !errors.Is(err, ErrRejected) {
			t.Errorf("GetAuthentication err = %v, want ErrRejected", err)
		}
	})
}

func TestChallengeThenCharge(t *testing.T) {
	srv, c := newEnv(t, sim.Options{Secret: testSecret}, 0)
	ctx := context.Background()
	tests := []struct {
		name        string
		form        url.Values
		status      string
		chargeCode  string
		chargeState string
	}{
		{"right otp", url.Values{"otp": {"123456"}}, AuthAuthenticated, "", StatusApproved},
		{"wrong otp", url.Values{"otp": {"111111"}}, AuthFailed, "authentication_required", StatusDeclined},
		{"cancel", url.Values{"action": {"cancel"}}, AuthFailed, "authentication_required", StatusDeclined},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprintf("challenge-%d", i)
			req := authReq(key, cardChallenge)
			a, err := c.Authenticate(ctx, req)
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			f := completeChallenge(t, a.ACSURL, tt.form)
			if f["status"] != tt.status || f["authentication_id"] != a.AuthenticationID || f["reference"] != req.Reference {
				t.Fatalf("result fields = %v, want status %s for %s", f, tt.status, a.AuthenticationID)
			}
			if !VerifyThreeDSResult(testSecret, f["authentication_id"], f["status"], f["cavv"], f["reference"], f["signature"]) {
				t.Errorf("VerifyThreeDSResult rejected the ACS's own result %v", f)
			}
			if VerifyThreeDSResult(testSecret, f["authentication_id"], AuthAuthenticated, "forged", f["reference"], f["signature"]) {
				t.Errorf("VerifyThreeDSResult accepted a forged cavv")
			}
			got, err := c.GetAuthentication(ctx, a.AuthenticationID)
			if err != nil || got.Status != tt.status || got.CAVV != f["cavv"] {
				t.Errorf("GetAuthentication = %+v, %v, want status %s cavv %q", got, err, tt.status, f["cavv"])
			}
			ch := chargeReq("charge-"+key, cardChallenge, 1999, true)
			ch.ThreeDS = got.ThreeDSData()
			charge := mustCharge(t, c, ch)
			if charge.Status != tt.chargeState || charge.DeclineCode != tt.chargeCode || charge.ThreeDS != (tt.chargeState == StatusApproved) {
				t.Errorf("charge = %+v, want %s %q", charge, tt.chargeState, tt.chargeCode)
			}
		})
	}
	t.Run("without three_ds", func(t *testing.T) {
		charge := mustCharge(t, c, chargeReq("charge-plain", cardChallenge, 1999, true))
		if charge.Status != StatusDeclined || charge.DeclineCode != "authentication_required" || charge.ThreeDS {
			t.Errorf("charge = %+v, want declined authentication_required", charge)
		}
	})
	t.Run("frictionless visa", func(t *testing.T) {
		a, err := c.Authenticate(ctx, authReq("frictionless", cardVisa))
		if err != nil {
			t.Fatalf("Authenticate: %v", err)
		}
		ch := chargeReq("charge-frictionless", cardVisa, 1999, true)
		ch.ThreeDS = a.ThreeDSData()
		if charge := mustCharge(t, c, ch); charge.Status != StatusApproved || !charge.ThreeDS {
			t.Errorf("charge = %+v, want approved with three_ds", charge)
		}
		ch = chargeReq("charge-forged", cardVisa, 1999, true)
		ch.ThreeDS = &ThreeDSData{AuthenticationID: a.AuthenticationID, ECI: a.ECI, CAVV: "Zm9yZ2VkZm9yZ2VkZm9yZ2VkZm9yZ2U="}
		if charge := mustCharge(t, c, ch); charge.Status != StatusDeclined || charge.DeclineCode != "authentication_failed" {
			t.Errorf("charge = %+v, want declined authentication_failed", charge)
		}
	})
	for _, ch := range srv.Charges() {
		if b, _ := json.Marshal(ch); bytes.Contains(b, []byte(cardChallenge)) {
			t.Errorf("stored charge holds the card number: %s", b)
		}
	}
}

func TestVerifyThreeDSResult(t *testing.T) {
	valid := SignProviderCallback(testSecret, []byte("au_1|authenticated|CAVV|order-1"))
	if got := SignThreeDSResult(testSecret, "au_1", "authenticated", "CAVV", "order-1"); got != valid {
		t.Fatalf("SignThreeDSResult = %s, want %s", got, valid)
	}
	tests := []struct {
		name                          string
		secret, id, status, cavv, ref string
		signature                     string
		want                          bool
	}{
		{"valid", testSecret, "au_1", "authenticated", "CAVV", "order-1", valid, true},
		{"upper-case hex", testSecret, "au_1", "authenticated", "CAVV", "order-1", strings.ToUpper(valid), false},
		{"other secret", "other", "au_1", "authenticated", "CAVV", "order-1", valid, false},
		{"status changed", testSecret, "au_1", "failed", "CAVV", "order-1", valid, false},
		{"cavv changed", testSecret, "au_1", "authenticated", "CAVW", "order-1", valid, false},
		{"reference changed", testSecret, "au_1", "authenticated", "CAVV", "order-2", valid, false},
		{"fields shifted across separator", testSecret, "au_1|authenticated", "", "CAVV", "order-1", valid, false},
		{"empty signature", testSecret, "au_1", "authenticated", "CAVV", "order-1", "", false},
		{"truncated signature", testSecret, "au_1", "authenticated", "CAVV", "order-1", valid[:len(valid)-2], false},
		{"short garbage", testSecret, "au_1", "authenticated", "CAVV", "order-1", "ab", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := VerifyThreeDSResult(tt.secret, tt.id, tt.status, tt.cavv, tt.ref, tt.signature); got != tt.want {
				t.Errorf("VerifyThreeDSResult = %t, want %t", got, tt.want)
			}
		})
	}
}

func TestAuthenticationRequestHidesCard(t *testing.T) {
	req := authReq("hide-3ds", cardChallenge)
	var logBuf bytes.Buffer
	timelessLogger(&logBuf).Info("authenticating", "req", req)
	jsonBytes, err := json.Marshal(req)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	tests := []struct {
		name string
		out  string
	}{
		{"%v", fmt.Sprintf("%v", req)},
		{"%+v", fmt.Sprintf("%+v", req)},
		{"%#v", fmt.Sprintf("%#v", req)},
		{"%s pointer", fmt.Sprintf("%s", &req)},
		{"slog", logBuf.String()},
		{"json", string(jsonBytes)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Contains(tt.out, cardChallenge) || strings.Contains(tt.out, "2031") {
				t.Errorf("output leaks card data: %s", tt.out)
			}
			if !strings.Contains(tt.out, "hide-3ds") {
				t.Errorf("output lost the idempotency key: %s", tt.out)
			}
		})
	}
	want := `AuthenticationRequest{IdempotencyKey:"hide-3ds" Reference:"order-hide-3ds" Card:****3220 Amount:1999 Currency:"GBP" ReturnURL:"https://merchant.example/3ds-return"}`
	if req.String() != want {
		t.Errorf("String() = %s, want %s", req.String(), want)
	}
}

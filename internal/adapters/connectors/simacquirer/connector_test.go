package simacquirer

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	sim "github.com/paygate/paygate/internal/dev/simulator"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/refund"
)

// newConnector runs a simulator and returns the connector in front of it.
func newConnector(t *testing.T, secret string) *Connector {
	t.Helper()
	srv := sim.NewServer(sim.Options{Logger: slog.New(slog.DiscardHandler), SettleDelay: 50 * time.Millisecond, Secret: testSecret})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	c, err := New(Config{BaseURL: ts.URL, CallbackSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNameIsTheDefault(t *testing.T) {
	// Accounts and orders that name no connector were made for this one.
	if Name != connector.DefaultName {
		t.Errorf("Name = %q, connector.DefaultName = %q", Name, connector.DefaultName)
	}
	if c := newConnector(t, testSecret); c.Name() != Name {
		t.Errorf("Name() = %q", c.Name())
	}
}

// TestConnectorCharges checks the mapping of the simulator's answers onto
// the connector vocabulary, card by card.
func TestConnectorCharges(t *testing.T) {
	c := newConnector(t, testSecret)
	tests := []struct {
		card         string
		capture      bool
		wantStatus   connector.ChargeStatus
		wantReason   connector.DeclineReason
		wantCaptured int64
	}{
		{cardVisa, true, connector.Approved, "", 1234},
		{cardMastercard, false, connector.Approved, "", 0},
		{cardDoNotHonor, true, connector.Declined, connector.DeclineGeneric, 0},
		{cardInsufficient, true, connector.Declined, connector.DeclineInsufficientFunds, 0},
		{"4000000000000069", true, connector.Declined, connector.DeclineExpiredCard, 0},
		{"4000000000000127", true, connector.Declined, connector.DeclineIncorrectCVC, 0},
		{cardChallenge, true, connector.Declined, connector.DeclineAuthenticationRequired, 0},
	}
	for _, tc := range tests {
		t.Run(tc.card, func(t *testing.T) {
			ctx := context.Background()
			key := "conn-" + tc.card + map[bool]string{true: "-sale", false: "-auth"}[tc.capture]
			ch, err := c.Charge(ctx, connector.ChargeRequest{
				IdempotencyKey: key, Reference: "ref-" + key,
				Card:   connector.Card{Number: tc.card, ExpiryMonth: "09", ExpiryYear: "2031", CVV: "321"},
				Amount: 1234, Currency: "EUR", Capture: tc.capture,
			})
			if err != nil {
				t.Fatalf("Charge: %v", err)
			}
			if ch.Status != tc.wantStatus || ch.DeclineReason != tc.wantReason || ch.CapturedAmount != tc.wantCaptured ||
				ch.Amount != 1234 || ch.Currency != "EUR" || ch.ID == "" {
				t.Errorf("charge = %+v, want %s %q captured %d", ch, tc.wantStatus, tc.wantReason, tc.wantCaptured)
			}
			if (ch.AuthCode != "") != ch.Approved() {
				t.Errorf("auth code %q on a %s charge", ch.AuthCode, ch.Status)
			}
			again, err := c.Inquire(ctx, key)
			if err != nil || again != ch {
				t.Errorf("Inquire = %+v, %v, want %+v", again, err, ch)
			}
		})
	}
	if _, err := c.Inquire(context.Background(), "never-sent"); !errors.Is(err, connector.ErrNotFound) {
		t.Errorf("Inquire of an unknown key: %v, want connector.ErrNotFound", err)
	}
}

func TestConnectorCaptureVoidRefund(t *testing.T) {
	ctx := context.Background()
	c := newConnector(t, testSecret)
	charge := func(key string) connector.Charge {
		t.Helper()
		ch, err := c.Charge(ctx, connector.ChargeRequest{IdempotencyKey: key, Reference: key,
			Card: connector.Card{Number: cardVisa, ExpiryMonth: "9", ExpiryYear: "31", CVV: "123"}, Amount: 5000, Currency: "USD"})
		if err != nil || !ch.Approved() {
			t.Fatalf("Charge: %+v %v", ch, err)
		}
		return ch
	}

	ch := charge("ccvr-1")
	captured, err := c.Capture(ctx, connector.CaptureRequest{ChargeID: ch.ID, IdempotencyKey: "ccvr-1-cap", Amount: 4000})
	if err != nil || captured.CapturedAmount != 4000 {
		t.Fatalf("Capture = %+v, %v", captured, err)
	}
	if _, err := c.Void(ctx, connector.VoidRequest{ChargeID: ch.ID, IdempotencyKey: "ccvr-1-void"}); !errors.Is(err, connector.ErrConflict) {
		t.Errorf("Void of a captured charge: %v, want connector.ErrConflict", err)
	}
	tests := []struct {
		name   string
		key    string
		amount int64
		want   refund.Status
	}{
		{"settled at once", "ccvr-1-ref-1", 1000, refund.Succeeded},
		{"pending (minor units ending in 77)", "ccvr-1-ref-2", 1077, refund.Pending},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := c.Refund(ctx, connector.RefundRequest{ChargeID: ch.ID, IdempotencyKey: tc.key, Amount: tc.amount})
			if err != nil || r.Status != tc.want || r.Amount != tc.amount || r.Currency != "USD" || r.ChargeID != ch.ID {
				t.Fatalf("Refund = %+v, %v, want %s of %d", r, err, tc.want, tc.amount)
			}
			deadline := time.Now().Add(5 * time.Second)
			for r.Status == refund.Pending && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
				if r, err = c.GetRefund(ctx, r.ID); err != nil {
					t.Fatal(err)
				}
			}
			if r.Status != refund.Succeeded {
				t.Errorf("refund ends %s", r.Status)
			}
		})
	}
	if _, err := c.Refund(ctx, connector.RefundRequest{ChargeID: ch.ID, IdempotencyKey: "ccvr-1-too-much", Amount: 1924}); !errors.Is(err, connector.ErrConflict) {
		t.Errorf("refund over the captured amount: %v, want connector.ErrConflict", err)
	}

	voided, err := c.Void(ctx, connector.VoidRequest{ChargeID: charge("ccvr-2").ID, IdempotencyKey: "ccvr-2-void"})
	if err != nil || !voided.Voided {
		t.Errorf("Void = %+v, %v", voided, err)
	}
}

// TestConnectorVerifiesCallbacks checks the connector's callback checks
// with its own secret, another one and none.
func TestConnectorVerifiesCallbacks(t *testing.T) {
	form := url.Values{"authentication_id": {"au_1"}, "status": {"authenticated"}, "cavv": {"AAAB"}, "reference": {"123"}}
	form.Set("signature", SignThreeDSResult(testSecret, "au_1", "authenticated", "AAAB", "123"))
	body := []byte(`{"payment_id":"ap_1","reference":"123","status":"succeeded"}`)
	header := http.Header{"X-Provider-Signature": {SignProviderCallback(testSecret, body)}}

	tests := []struct {
		name   string
		secret string
		want   bool
	}{
		{"the simulator's secret", testSecret, true},
		{"another secret", "another-secret-entirely", false},
		{"no secret refuses everything", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newConnector(t, tc.secret)
			if got := c.VerifyThreeDSResult(form); got != tc.want {
				t.Errorf("VerifyThreeDSResult = %t, want %t", got, tc.want)
			}
			if got := c.VerifyAPMCallback(body, header); got != tc.want {
				t.Errorf("VerifyAPMCallback = %t, want %t", got, tc.want)
			}
		})
	}
	c := newConnector(t, testSecret)
	changed := url.Values{}
	for k, v := range form {
		changed[k] = v
	}
	changed.Set("status", "failed")
	if c.VerifyThreeDSResult(changed) {
		t.Error("a 3-D Secure result with a changed status verified")
	}
	if c.VerifyAPMCallback(append(body, ' '), header) {
		t.Error("an APM callback with a changed body verified")
	}
}

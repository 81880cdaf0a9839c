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

// TestConnectorReadsCallbacks checks the connector's reading of callbacks
// with its own secret, another one and none, and of signed callbacks that
// lack their ids or were changed.
func TestConnectorReadsCallbacks(t *testing.T) {
	signedForm := func(id, status, ref string) url.Values {
		f := url.Values{"authentication_id": {id}, "status": {status}, "cavv": {"AAAB"}, "reference": {ref}}
		f.Set("signature", SignThreeDSResult(testSecret, id, status, "AAAB", ref))
		return f
	}
	signedBody := func(body string) (string, http.Header) {
		return body, http.Header{"X-Provider-Signature": {SignProviderCallback(testSecret, []byte(body))}}
	}
	changed := signedForm("au_1", "authenticated", "123")
	changed.Set("status", "failed")
	goodBody, goodHeader := signedBody(`{"payment_id":"ap_1","reference":"123","status":"succeeded"}`)
	noIDBody, noIDHeader := signedBody(`{"reference":"123","status":"succeeded"}`)
	notJSON, notJSONHeader := signedBody(`payment_id=ap_1`)

	tests := []struct {
		name    string
		secret  string
		form    url.Values
		body    string
		header  http.Header
		want3DS connector.ThreeDSCallback
		wantAPM connector.APMCallback
		wantErr error
	}{
		{name: "the simulator's secret", secret: testSecret, form: signedForm("au_1", "authenticated", "123"), body: goodBody, header: goodHeader,
			want3DS: connector.ThreeDSCallback{AuthenticationID: "au_1", Reference: "123"}, wantAPM: connector.APMCallback{PaymentID: "ap_1", Reference: "123"}},
		{name: "another secret", secret: "another-secret-entirely", form: signedForm("au_1", "authenticated", "123"), body: goodBody, header: goodHeader,
			wantErr: connector.ErrCallbackUnsigned},
		{name: "no secret refuses everything", form: signedForm("au_1", "authenticated", "123"), body: goodBody, header: goodHeader,
			wantErr: connector.ErrCallbackUnsigned},
		{name: "changed after signing", secret: testSecret, form: changed, body: goodBody + " ", header: goodHeader,
			wantErr: connector.ErrCallbackUnsigned},
		{name: "signed without the ids", secret: testSecret, form: signedForm("", "authenticated", "123"), body: noIDBody, header: noIDHeader,
			wantErr: connector.ErrCallbackMalformed},
		{name: "signed, not JSON, no reference", secret: testSecret, form: signedForm("au_1", "authenticated", ""), body: notJSON, header: notJSONHeader,
			wantErr: connector.ErrCallbackMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newConnector(t, tc.secret)
			got3DS, err := c.ReadThreeDSResult(tc.form)
			if got3DS != tc.want3DS || !errors.Is(err, tc.wantErr) {
				t.Errorf("ReadThreeDSResult = %+v, %v; want %+v, %v", got3DS, err, tc.want3DS, tc.wantErr)
			}
			gotAPM, err := c.ReadAPMCallback([]byte(tc.body), tc.header)
			if gotAPM != tc.wantAPM || !errors.Is(err, tc.wantErr) {
				t.Errorf("ReadAPMCallback = %+v, %v; want %+v, %v", gotAPM, err, tc.wantAPM, tc.wantErr)
			}
		})
	}
}

// TestConnectorTakesARoutedChargesKey: a routed charge's key at a connector
// other than the order's first ends "/<connector>"; the simulated acquirer
// charges under it, finds the charge by it, and captures and refunds it
// under the operations' keys. It refused the charge as a bad request
// before, so no order ever failed over to it.
func TestConnectorTakesARoutedChargesKey(t *testing.T) {
	c := newConnector(t, testSecret)
	ctx := t.Context()
	tests := []struct{ name, key string }{
		{"the order's first connector", "order:M-1:A-1:ORD-7:authorise"},
		{"a connector the route moved on to", "order:M-1:A-1:ORD-7:authorise/sim-acquirer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch, err := c.Charge(ctx, connector.ChargeRequest{IdempotencyKey: tc.key, Reference: "ref-" + tc.name,
				Card: connector.Card{Number: cardVisa, ExpiryMonth: "09", ExpiryYear: "2031", CVV: "321"}, Amount: 1500, Currency: "EUR"})
			if err != nil || !ch.Approved() {
				t.Fatalf("Charge = %+v, %v", ch, err)
			}
			found, err := c.Inquire(ctx, tc.key)
			if err != nil || found.ID != ch.ID {
				t.Fatalf("Inquire = %+v, %v; want %s", found, err, ch.ID)
			}
			if _, err := c.Capture(ctx, connector.CaptureRequest{ChargeID: ch.ID, IdempotencyKey: tc.key + ":capture", Amount: 1500, Currency: "EUR"}); err != nil {
				t.Fatalf("Capture: %v", err)
			}
		})
	}
	// The two keys are two charges, not one.
	a, errA := c.Inquire(ctx, tests[0].key)
	b, errB := c.Inquire(ctx, tests[1].key)
	if errA != nil || errB != nil || a.ID == b.ID {
		t.Errorf("the keys' charges %s, %s (%v, %v); want two", a.ID, b.ID, errA, errB)
	}
}

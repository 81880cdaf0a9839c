package simbank

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/dev/ports"
	bank "github.com/paygate/paygate/internal/dev/simbank"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/refund"
)

const (
	cardVisa         = "4242424242424242"
	cardMastercard   = "5555555555554444"
	cardDoNotHonour  = "4000000000000002"
	cardInsufficient = "4000000000009995"
	cardExpired      = "4000000000000069"
	cardWrongCVV     = "4000000000000127"
	cardChallenge    = "4000000000003220"
	cardUnavailable  = "4000000000000119"
	cardTimeout      = "4000000000000341"
)

// newEnv runs sim-bank on loopback and returns it with a client of it.
func newEnv(t *testing.T, opts bank.Options, timeout time.Duration) (*bank.Server, *Client) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	srv := bank.NewServer(opts)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	c, err := New(Config{BaseURL: ts.URL, Timeout: timeout})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return srv, c
}

func chargeReq(key, card string, amount int64, currency string, capture bool) connector.ChargeRequest {
	return connector.ChargeRequest{
		IdempotencyKey: key,
		Reference:      "1379868670095785984",
		Card:           connector.Card{Number: card, ExpiryMonth: "9", ExpiryYear: "2031", CVV: "321"},
		Amount:         amount,
		Currency:       currency,
		Capture:        capture,
	}
}

func mustCharge(t *testing.T, c *Client, req connector.ChargeRequest) connector.Charge {
	t.Helper()
	ch, err := c.Charge(context.Background(), req)
	if err != nil {
		t.Fatalf("Charge(%s): %v", req.IdempotencyKey, err)
	}
	return ch
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr bool
	}{
		{"plain", Config{BaseURL: "http://127.0.0.1:8091"}, false},
		{"with a path and a trailing slash", Config{BaseURL: "https://bank.example/acq/", Timeout: time.Second}, false},
		{"negative timeout", Config{BaseURL: "http://127.0.0.1:8091", Timeout: -time.Second}, true},
		{"no scheme", Config{BaseURL: "127.0.0.1:8091"}, true},
		{"ftp", Config{BaseURL: "ftp://bank.example"}, true},
		{"user info", Config{BaseURL: "http://u:p@bank.example"}, true},
		{"query", Config{BaseURL: "http://bank.example?x=1"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.cfg)
			if (err != nil) != tc.wantErr {
				t.Fatalf("New(%+v) error = %v, want error %t", tc.cfg, err, tc.wantErr)
			}
			if err == nil && c.Name() != Name {
				t.Errorf("Name() = %q", c.Name())
			}
		})
	}
	if Name != "sim-bank" {
		t.Errorf("Name = %q: accounts store this name, it must not change", Name)
	}
}

// TestCharge sends each test card, as a sale and as an authorisation, in a
// currency with decimals and one without, and checks the answer in our
// words and the acquirer's own record, to the minor unit.
func TestCharge(t *testing.T) {
	srv, c := newEnv(t, bank.Options{}, 0)
	tests := []struct {
		name         string
		card         string
		amount       int64
		currency     string
		capture      bool
		wantStatus   connector.ChargeStatus
		wantReason   connector.DeclineReason
		wantMessage  string
		wantCaptured int64
		wantState    string // the acquirer's record
		wantCode     string
	}{
		{"sale USD", cardVisa, 1234, "USD", true, connector.Approved, "", "Approved", 1234, bank.StateCaptured, "00"},
		{"authorisation USD", cardMastercard, 1234, "USD", false, connector.Approved, "", "Approved", 0, bank.StateAuthorised, "00"},
		{"sale JPY (no decimals)", cardVisa, 1234, "JPY", true, connector.Approved, "", "Approved", 1234, bank.StateCaptured, "00"},
		{"sale of one cent", cardVisa, 1, "EUR", true, connector.Approved, "", "Approved", 1, bank.StateCaptured, "00"},
		{"large sale", cardVisa, 987654321, "GBP", true, connector.Approved, "", "Approved", 987654321, bank.StateCaptured, "00"},
		{"do not honour", cardDoNotHonour, 1234, "USD", true, connector.Declined, connector.DeclineGeneric, "Do not honour", 0, bank.StateRefused, "05"},
		{"insufficient funds", cardInsufficient, 1234, "USD", true, connector.Declined, connector.DeclineInsufficientFunds, "Insufficient funds", 0, bank.StateRefused, "51"},
		{"expired card", cardExpired, 1234, "USD", false, connector.Declined, connector.DeclineExpiredCard, "Expired card", 0, bank.StateRefused, "54"},
		{"wrong CVV", cardWrongCVV, 1234, "USD", true, connector.Declined, connector.DeclineIncorrectCVC, "CVV2 mismatch", 0, bank.StateRefused, "N7"},
		{"needs 3-D Secure", cardChallenge, 1234, "USD", true, connector.Declined, connector.DeclineAuthenticationRequired, "Strong customer authentication required", 0, bank.StateRefused, "1A"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key := "charge-" + strings.ReplaceAll(tc.name, " ", "-")
			ch := mustCharge(t, c, chargeReq(key, tc.card, tc.amount, tc.currency, tc.capture))
			if ch.Status != tc.wantStatus || ch.DeclineReason != tc.wantReason || ch.Message != tc.wantMessage ||
				ch.Amount != tc.amount || ch.Currency != tc.currency || ch.CapturedAmount != tc.wantCaptured ||
				ch.RefundedAmount != 0 || ch.Voided || !strings.HasPrefix(ch.ID, "pay_") {
				t.Errorf("charge = %+v", ch)
			}
			if ch.Approved() != (len(ch.AuthCode) == 6) {
				t.Errorf("auth code %q on a %s charge", ch.AuthCode, ch.Status)
			}
			rec := srv.Payments()
			if len(rec) != i+1 {
				t.Fatalf("the acquirer holds %d payments, want %d", len(rec), i+1)
			}
			p := rec[i]
			wantType := "AUTH"
			if tc.capture {
				wantType = "SALE"
			}
			if p.PaymentID != ch.ID || p.RequestID != key || p.MerchantRef != "1379868670095785984" || p.TxnType != wantType ||
				p.State != tc.wantState || p.ResponseCode != tc.wantCode || p.Amount != tc.amount || p.Currency != tc.currency ||
				p.Captured != tc.wantCaptured || p.CardLast4 != tc.card[12:] {
				t.Errorf("acquirer record = %+v", p)
			}
			again, err := c.Inquire(context.Background(), key)
			if err != nil || again != ch {
				t.Errorf("Inquire = %+v, %v, want %+v", again, err, ch)
			}
		})
	}
}

func TestChargeIdempotency(t *testing.T) {
	srv, c := newEnv(t, bank.Options{}, 0)
	ctx := context.Background()
	first := mustCharge(t, c, chargeReq("idem-1", cardVisa, 5000, "USD", true))
	second := mustCharge(t, c, chargeReq("idem-1", cardVisa, 5000, "USD", true))
	if second != first {
		t.Errorf("a repeated request answered %+v, want the first answer %+v", second, first)
	}
	if _, err := c.Charge(ctx, chargeReq("idem-1", cardVisa, 5001, "USD", true)); !errors.Is(err, connector.ErrConflict) {
		t.Errorf("the same request id with another amount: %v, want connector.ErrConflict", err)
	}
	if n := len(srv.Payments()); n != 1 {
		t.Errorf("the acquirer holds %d payments, want 1", n)
	}
}

func TestChargeRefusedBeforeSending(t *testing.T) {
	srv, c := newEnv(t, bank.Options{}, 0)
	withThreeDS := chargeReq("pre-3ds", cardVisa, 100, "USD", true)
	withThreeDS.ThreeDS = &connector.ThreeDSData{AuthenticationID: "au_1", ECI: "05", CAVV: "AAAB"}
	inInstallments := chargeReq("pre-inst", cardVisa, 100, "USD", true)
	inInstallments.Installments = 3
	tests := []struct {
		name string
		req  connector.ChargeRequest
		want error
	}{
		{"3-D Secure data", withThreeDS, connector.ErrUnsupported},
		{"installments", inInstallments, connector.ErrUnsupported},
		{"no idempotency key", chargeReq("", cardVisa, 100, "USD", true), connector.ErrRejected},
		{"a currency without a known exponent", chargeReq("pre-bhd", cardVisa, 100, "BHD", true), connector.ErrRejected},
		{"a zero amount", chargeReq("pre-zero", cardVisa, 0, "USD", true), connector.ErrRejected},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.Charge(context.Background(), tc.req); !errors.Is(err, tc.want) {
				t.Errorf("Charge: %v, want %v", err, tc.want)
			}
		})
	}
	if n := len(srv.Payments()); n != 0 {
		t.Errorf("the acquirer holds %d payments, want none", n)
	}
}

func TestChargeRejectedByTheAcquirer(t *testing.T) {
	srv, c := newEnv(t, bank.Options{}, 0)
	badCVC := chargeReq("rej-cvc", cardVisa, 100, "USD", true)
	badCVC.Card.CVV = "12"
	badExpiry := chargeReq("rej-exp", cardVisa, 100, "USD", true)
	badExpiry.Card.ExpiryMonth = "13"
	longRef := chargeReq("rej-ref", cardVisa, 100, "USD", true)
	longRef.Reference = strings.Repeat("r", 65)
	for _, req := range []connector.ChargeRequest{badCVC, badExpiry, longRef} {
		t.Run(req.IdempotencyKey, func(t *testing.T) {
			_, err := c.Charge(context.Background(), req)
			if !errors.Is(err, connector.ErrRejected) {
				t.Fatalf("Charge: %v, want connector.ErrRejected", err)
			}
			if strings.Contains(err.Error(), req.Card.Number) || strings.Contains(err.Error(), "424242424242") {
				t.Errorf("the error shows the card: %v", err)
			}
		})
	}
	if n := len(srv.Payments()); n != 0 {
		t.Errorf("the acquirer holds %d payments, want none", n)
	}
}

func TestChargeUnavailableThenApproved(t *testing.T) {
	srv, c := newEnv(t, bank.Options{}, 0)
	req := chargeReq("unavail-1", cardUnavailable, 2500, "EUR", true)
	if _, err := c.Charge(context.Background(), req); !errors.Is(err, connector.ErrUnavailable) {
		t.Fatalf("first attempt: %v, want connector.ErrUnavailable", err)
	}
	if _, err := c.Inquire(context.Background(), req.IdempotencyKey); !errors.Is(err, connector.ErrNotFound) {
		t.Errorf("inquiry after the refused attempt: %v, want connector.ErrNotFound", err)
	}
	ch := mustCharge(t, c, req)
	if !ch.Approved() || ch.CapturedAmount != 2500 {
		t.Errorf("retry = %+v", ch)
	}
	if n := len(srv.Payments()); n != 1 {
		t.Errorf("the acquirer holds %d payments, want 1", n)
	}
}

func TestChargeTimeoutThenInquire(t *testing.T) {
	srv, c := newEnv(t, bank.Options{TimeoutDelay: 3 * time.Second}, 200*time.Millisecond)
	req := chargeReq("timeout-1", cardTimeout, 4200, "USD", false)
	if _, err := c.Charge(context.Background(), req); !errors.Is(err, connector.ErrTimeout) {
		t.Fatalf("Charge: %v, want connector.ErrTimeout", err)
	}
	ch, err := c.Inquire(context.Background(), req.IdempotencyKey)
	if err != nil || !ch.Approved() || ch.Amount != 4200 || ch.CapturedAmount != 0 {
		t.Fatalf("Inquire = %+v, %v", ch, err)
	}
	if n := len(srv.Payments()); n != 1 {
		t.Errorf("the acquirer holds %d payments, want 1", n)
	}
}

func TestConnectionRefused(t *testing.T) {
	closed, err := ports.Closed()
	if err != nil {
		t.Fatal(err)
	}
	defer closed.Close()
	addr := closed.Addr()
	c, err := New(Config{BaseURL: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Charge(context.Background(), chargeReq("refused-1", cardVisa, 100, "USD", true)); !errors.Is(err, connector.ErrUnavailable) {
		t.Errorf("Charge: %v, want connector.ErrUnavailable", err)
	}
}

func TestCaptureAndVoid(t *testing.T) {
	_, c := newEnv(t, bank.Options{}, 0)
	ctx := context.Background()
	auth := mustCharge(t, c, chargeReq("cap-auth", cardVisa, 10000, "USD", false))
	sale := mustCharge(t, c, chargeReq("cap-sale", cardVisa, 10000, "USD", true))
	yen := mustCharge(t, c, chargeReq("cap-yen", cardVisa, 3000, "JPY", false))

	tests := []struct {
		name         string
		req          connector.CaptureRequest
		wantErr      error
		wantCaptured int64
	}{
		{"unknown payment", connector.CaptureRequest{ChargeID: "pay_nope", IdempotencyKey: "cap-1", Amount: 100, Currency: "USD"}, connector.ErrNotFound, 0},
		{"more than authorised", connector.CaptureRequest{ChargeID: auth.ID, IdempotencyKey: "cap-2", Amount: 10001, Currency: "USD"}, connector.ErrRejected, 0},
		{"another currency", connector.CaptureRequest{ChargeID: auth.ID, IdempotencyKey: "cap-3", Amount: 100, Currency: "EUR"}, connector.ErrRejected, 0},
		{"part of the authorisation", connector.CaptureRequest{ChargeID: auth.ID, IdempotencyKey: "cap-4", Amount: 7550, Currency: "USD"}, nil, 7550},
		{"the same capture again", connector.CaptureRequest{ChargeID: auth.ID, IdempotencyKey: "cap-4", Amount: 7550, Currency: "USD"}, nil, 7550},
		{"a second capture", connector.CaptureRequest{ChargeID: auth.ID, IdempotencyKey: "cap-5", Amount: 100, Currency: "USD"}, connector.ErrConflict, 0},
		{"a sale", connector.CaptureRequest{ChargeID: sale.ID, IdempotencyKey: "cap-6", Amount: 100, Currency: "USD"}, connector.ErrConflict, 0},
		{"yen, whole", connector.CaptureRequest{ChargeID: yen.ID, IdempotencyKey: "cap-7", Amount: 3000, Currency: "JPY"}, nil, 3000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch, err := c.Capture(ctx, tc.req)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Capture: %v, want %v", err, tc.wantErr)
			}
			if err == nil && (!ch.Approved() || ch.CapturedAmount != tc.wantCaptured || ch.ID != tc.req.ChargeID) {
				t.Errorf("Capture = %+v, want %d captured", ch, tc.wantCaptured)
			}
		})
	}

	toVoid := mustCharge(t, c, chargeReq("void-auth", cardVisa, 999, "USD", false))
	voided, err := c.Void(ctx, connector.VoidRequest{ChargeID: toVoid.ID, IdempotencyKey: "void-1"})
	if err != nil || !voided.Approved() || !voided.Voided || voided.CapturedAmount != 0 || voided.Amount != 999 {
		t.Errorf("Void = %+v, %v", voided, err)
	}
	if inquired, err := c.Inquire(ctx, "void-auth"); err != nil || !inquired.Voided {
		t.Errorf("Inquire after the void = %+v, %v", inquired, err)
	}
	if _, err := c.Void(ctx, connector.VoidRequest{ChargeID: sale.ID, IdempotencyKey: "void-2"}); !errors.Is(err, connector.ErrConflict) {
		t.Errorf("Void of a sale: %v, want connector.ErrConflict", err)
	}
	if _, err := c.Capture(ctx, connector.CaptureRequest{ChargeID: toVoid.ID, IdempotencyKey: "cap-8", Amount: 999, Currency: "USD"}); !errors.Is(err, connector.ErrConflict) {
		t.Errorf("Capture of a reversed payment: %v, want connector.ErrConflict", err)
	}
}

func TestRefunds(t *testing.T) {
	srv, c := newEnv(t, bank.Options{SettleDelay: 100 * time.Millisecond}, 0)
	ctx := context.Background()
	sale := mustCharge(t, c, chargeReq("ref-sale", cardVisa, 10000, "USD", true))
	auth := mustCharge(t, c, chargeReq("ref-auth", cardVisa, 10000, "USD", false))

	tests := []struct {
		name       string
		req        connector.RefundRequest
		wantErr    error
		wantStatus refund.Status
		wantFinal  refund.Status
	}{
		{"done at once", connector.RefundRequest{ChargeID: sale.ID, IdempotencyKey: "ref-1", Amount: 1000, Currency: "USD"}, nil, refund.Succeeded, refund.Succeeded},
		{"queued, then done (ends in 77)", connector.RefundRequest{ChargeID: sale.ID, IdempotencyKey: "ref-2", Amount: 1077, Currency: "USD"}, nil, refund.Pending, refund.Succeeded},
		{"rejected (ends in 99)", connector.RefundRequest{ChargeID: sale.ID, IdempotencyKey: "ref-3", Amount: 199, Currency: "USD"}, nil, refund.Failed, refund.Failed},
		{"more than is left", connector.RefundRequest{ChargeID: sale.ID, IdempotencyKey: "ref-4", Amount: 7924, Currency: "USD"}, connector.ErrConflict, "", ""},
		{"an uncaptured payment", connector.RefundRequest{ChargeID: auth.ID, IdempotencyKey: "ref-5", Amount: 100, Currency: "USD"}, connector.ErrConflict, "", ""},
		{"an unknown payment", connector.RefundRequest{ChargeID: "pay_nope", IdempotencyKey: "ref-6", Amount: 100, Currency: "USD"}, connector.ErrNotFound, "", ""},
		{"the rest, exactly", connector.RefundRequest{ChargeID: sale.ID, IdempotencyKey: "ref-7", Amount: 7923, Currency: "USD"}, nil, refund.Succeeded, refund.Succeeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := c.Refund(ctx, tc.req)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Refund: %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if r.Status != tc.wantStatus || r.Amount != tc.req.Amount || r.Currency != "USD" || r.ChargeID != sale.ID || !strings.HasPrefix(r.ID, "rf_") {
				t.Errorf("Refund = %+v, want %s of %d", r, tc.wantStatus, tc.req.Amount)
			}
			deadline := time.Now().Add(5 * time.Second)
			for r.Status == refund.Pending && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
				if r, err = c.GetRefund(ctx, r.ID); err != nil {
					t.Fatal(err)
				}
			}
			if r.Status != tc.wantFinal || r.Amount != tc.req.Amount {
				t.Errorf("refund ends %+v, want %s", r, tc.wantFinal)
			}
		})
	}
	ch, err := c.Inquire(ctx, "ref-sale")
	if err != nil || ch.RefundedAmount != 10000 || ch.CapturedAmount != 10000 {
		t.Errorf("the sale after its refunds = %+v, %v, want 100.00 captured and refunded", ch, err)
	}
	var done int64
	for _, r := range srv.Refunds() {
		if r.State == bank.RefundDone {
			done += r.Amount
		}
	}
	if done != 10000 {
		t.Errorf("the acquirer refunded %d minor units, want 10000", done)
	}
	if _, err := c.GetRefund(ctx, "rf_nope"); !errors.Is(err, connector.ErrNotFound) {
		t.Errorf("GetRefund of an unknown refund: %v, want connector.ErrNotFound", err)
	}
}

func TestNoCallbacks(t *testing.T) {
	_, c := newEnv(t, bank.Options{}, 0)
	if _, err := c.ReadThreeDSResult(nil); !errors.Is(err, connector.ErrCallbackUnsigned) {
		t.Errorf("ReadThreeDSResult: %v, want ErrCallbackUnsigned: sim-bank sends no callbacks", err)
	}
	if _, err := c.ReadAPMCallback([]byte(`{"payment_id":"ap_1","reference":"1"}`), nil); !errors.Is(err, connector.ErrCallbackUnsigned) {
		t.Errorf("ReadAPMCallback: %v, want ErrCallbackUnsigned: sim-bank sends no callbacks", err)
	}
}

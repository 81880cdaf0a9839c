package simacquirer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/outbound"
	sim "github.com/paygate/paygate/internal/dev/simulator"
)

const (
	cardVisa         = "4242424242424242"
	cardMastercard   = "5555555555554444"
	cardUnavailable  = "4000000000000119"
	cardTimeout      = "4000000000000341"
	cardDoNotHonor   = "4000000000000002"
	cardInsufficient = "4000000000009995"
)

func newEnv(t *testing.T, opts sim.Options, timeout time.Duration) (*sim.Server, *Client) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	srv := sim.NewServer(opts)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	c, err := NewClient(ts.URL, timeout)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return srv, c
}

func chargeReq(key, card string, amount int64, capture bool) ChargeRequest {
	return ChargeRequest{
		IdempotencyKey: key,
		Reference:      "order-" + key,
		CardNumber:     card,
		ExpiryMonth:    "09",
		ExpiryYear:     "2031",
		CVV:            "321",
		Amount:         amount,
		Currency:       "GBP",
		Capture:        capture,
	}
}

func mustCharge(t *testing.T, c *Client, req ChargeRequest) Charge {
	t.Helper()
	ch, err := c.Charge(context.Background(), req)
	if err != nil {
		t.Fatalf("Charge(%s): %v", req.IdempotencyKey, err)
	}
	return ch
}

func TestNewClient(t *testing.T) {
	tests := []struct {
		name        string
		url         string
		timeout     time.Duration
		wantErr     bool
		wantTimeout time.Duration
		wantBase    string
	}{
		{"default timeout", "http://127.0.0.1:8080", 0, false, 10 * time.Second, "http://127.0.0.1:8080"},
		{"explicit timeout and trailing slash", "https://acquirer.example/api/", 3 * time.Second, false, 3 * time.Second, "https://acquirer.example/api"},
		{"negative timeout", "http://127.0.0.1:8080", -time.Second, true, 0, ""},
		{"no scheme", "127.0.0.1:8080", 0, true, 0, ""},
		{"ftp scheme", "ftp://acquirer.example", 0, true, 0, ""},
		{"no host", "http:///v1", 0, true, 0, ""},
		{"query", "http://acquirer.example?x=1", 0, true, 0, ""},
		{"unparsable", "http://[::1", 0, true, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewClient(tt.url, tt.timeout)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("NewClient(%q) = nil error, want an error", tt.url)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewClient(%q): %v", tt.url, err)
			}
			if c.http.Timeout != tt.wantTimeout || c.baseURL.String() != tt.wantBase {
				t.Errorf("timeout/base = %s/%s, want %s/%s", c.http.Timeout, c.baseURL, tt.wantTimeout, tt.wantBase)
			}
		})
	}
}

func TestChargeOutcomes(t *testing.T) {
	srv, c := newEnv(t, sim.Options{}, 0)
	tests := []struct {
		name        string
		card        string
		capture     bool
		status      string
		declineCode string
		captured    int64
	}{
		{"visa sale", cardVisa, true, StatusApproved, "", 1999},
		{"mastercard authorisation", cardMastercard, false, StatusApproved, "", 0},
		{"unlisted card", "6011111111111117", true, StatusApproved, "", 1999},
		{"do not honor", cardDoNotHonor, true, StatusDeclined, "do_not_honor", 0},
		{"insufficient funds", cardInsufficient, true, StatusDeclined, "insufficient_funds", 0},
		{"expired card", "4000000000000069", true, StatusDeclined, "expired_card", 0},
		{"incorrect cvc", "4000000000000127", true, StatusDeclined, "incorrect_cvc", 0},
		{"authentication required", "4000000000003220", true, StatusDeclined, "authentication_required", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := "outcome-" + tt.card
			ch := mustCharge(t, c, chargeReq(key, tt.card, 1999, tt.capture))
			if ch.Status != tt.status || ch.DeclineCode != tt.declineCode || ch.CapturedAmount != tt.captured {
				t.Errorf("status/decline/captured = %q/%q/%d, want %q/%q/%d",
					ch.Status, ch.DeclineCode, ch.CapturedAmount, tt.status, tt.declineCode, tt.captured)
			}
			if ch.Approved() != (tt.status == StatusApproved) {
				t.Errorf("Approved() = %t for status %q", ch.Approved(), ch.Status)
			}
			wantAuth := 0
			if tt.status == StatusApproved {
				wantAuth = 6
			}
			if len(ch.AuthCode) != wantAuth {
				t.Errorf("auth code %q, want %d characters", ch.AuthCode, wantAuth)
			}
			if ch.IdempotencyKey != key || ch.Reference != "order-"+key || ch.Amount != 1999 || ch.Currency != "GBP" {
				t.Errorf("charge = %+v, want key, reference, 1999 GBP echoed", ch)
			}
			if ch.CardBIN != tt.card[:6] || ch.CardLast4 != tt.card[len(tt.card)-4:] {
				t.Errorf("bin/last4 = %q/%q", ch.CardBIN, ch.CardLast4)
			}
			if ch.CreatedAt.IsZero() || ch.RefundedAmount != 0 || ch.Voided {
				t.Errorf("charge = %+v, want created_at set, nothing refunded or voided", ch)
			}
		})
	}
	if got := len(srv.Charges()); got != len(tests) {
		t.Errorf("recorded charges = %d, want %d", got, len(tests))
	}
}

func TestChargeIdempotency(t *testing.T) {
	srv, c := newEnv(t, sim.Options{}, 0)
	ctx := context.Background()
	req := chargeReq("order-42", cardVisa, 4200, true)
	first := mustCharge(t, c, req)

	t.Run("replay returns the same charge", func(t *testing.T) {
		again, err := c.Charge(ctx, req)
		if err != nil {
			t.Fatalf("Charge: %v", err)
		}
		if again != first {
			t.Errorf("replay = %+v, want %+v", again, first)
		}
	})
	t.Run("changed body conflicts", func(t *testing.T) {
		changed := req
		changed.Amount = 4300
		_, err := c.Charge(ctx, changed)
		if !errors.Is(err, ErrConflict) {
			t.Fatalf("err = %v, want ErrConflict", err)
		}
		if want := "charge order-42: acquirer: conflict: idempotency_conflict"; err.Error() != want {
			t.Errorf("err = %q, want %q", err, want)
		}
	})
	t.Run("changed card conflicts", func(t *testing.T) {
		changed := req
		changed.CardNumber = cardMastercard
		if _, err := c.Charge(ctx, changed); !errors.Is(err, ErrConflict) {
			t.Fatalf("err = %v, want ErrConflict", err)
		}
	})
	if got := len(srv.Charges()); got != 1 {
		t.Errorf("recorded charges = %d, want 1", got)
	}
}

func TestChargeConcurrentSameKey(t *testing.T) {
	srv, c := newEnv(t, sim.Options{}, 0)
	req := chargeReq("order-concurrent", cardVisa, 1500, true)
	const n = 20
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ch, err := c.Charge(context.Background(), req)
			ids[i], errs[i] = ch.ChargeID, err
		})
	}
	wg.Wait()
	charges := srv.Charges()
	if len(charges) != 1 {
		t.Fatalf("recorded charges = %d, want 1", len(charges))
	}
	for i := range n {
		if errs[i] != nil || ids[i] != charges[0].ChargeID {
			t.Errorf("request %d = %q, %v; want %q, nil", i, ids[i], errs[i], charges[0].ChargeID)
		}
	}
}

func TestChargeRejected(t *testing.T) {
	srv, c := newEnv(t, sim.Options{}, 0)
	tests := []struct {
		name    string
		mutate  func(*ChargeRequest)
		wantErr string
	}{
		{"empty key", func(r *ChargeRequest) { r.IdempotencyKey = "" }, "charge: acquirer: request rejected: empty idempotency key"},
		{"non-digit card", func(r *ChargeRequest) { r.CardNumber = "4242x42424242424" }, "charge bad-1: acquirer: request rejected: invalid_request: card_number must be 12 to 19 digits"},
		{"zero amount", func(r *ChargeRequest) { r.Amount = 0 }, "charge bad-1: acquirer: request rejected: invalid_request: amount must be a positive number of minor units"},
		{"bad currency", func(r *ChargeRequest) { r.Currency = "gbp" }, "charge bad-1: acquirer: request rejected: invalid_request: currency must be 3 upper-case letters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := chargeReq("bad-1", cardVisa, 100, true)
			tt.mutate(&req)
			_, err := c.Charge(context.Background(), req)
			if !errors.Is(err, ErrRejected) {
				t.Fatalf("err = %v, want ErrRejected", err)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("err = %q, want %q", err, tt.wantErr)
			}
		})
	}
	if got := len(srv.Charges()); got != 0 {
		t.Errorf("recorded charges = %d, want 0", got)
	}
}

func TestChargeUnavailableThenApproved(t *testing.T) {
	srv, c := newEnv(t, sim.Options{}, 0)
	req := chargeReq("order-flaky", cardUnavailable, 800, true)

	_, err := c.Charge(context.Background(), req)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("first attempt err = %v, want ErrUnavailable", err)
	}
	if got := len(srv.Charges()); got != 0 {
		t.Fatalf("charges after 503 = %d, want 0", got)
	}
	ch := mustCharge(t, c, req)
	if ch.Status != StatusApproved || ch.CapturedAmount != 800 {
		t.Errorf("retry = %q captured %d, want approved captured 800", ch.Status, ch.CapturedAmount)
	}
	if got := len(srv.Charges()); got != 1 {
		t.Errorf("recorded charges = %d, want 1", got)
	}
}

func TestChargeTimeoutThenInquire(t *testing.T) {
	srv, c := newEnv(t, sim.Options{TimeoutDelay: 2 * time.Second}, 200*time.Millisecond)
	ctx := context.Background()
	req := chargeReq("order-slow", cardTimeout, 2600, true)

	start := time.Now()
	_, err := c.Charge(ctx, req)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("Charge returned after %s, want about 200ms", elapsed)
	}
	if strings.Contains(err.Error(), cardTimeout) {
		t.Errorf("error holds the card number: %v", err)
	}
	ch, err := c.Inquire(ctx, "order-slow")
	if err != nil {
		t.Fatalf("Inquire: %v", err)
	}
	if ch.Status != StatusApproved || ch.CapturedAmount != 2600 {
		t.Errorf("inquiry = %q captured %d, want approved captured 2600", ch.Status, ch.CapturedAmount)
	}
	// A retry with the same key is answered at once from the stored result.
	again, err := c.Charge(ctx, req)
	if err != nil || again.ChargeID != ch.ChargeID {
		t.Errorf("retry = %q, %v; want %q, nil", again.ChargeID, err, ch.ChargeID)
	}
	if got := len(srv.Charges()); got != 1 {
		t.Errorf("recorded charges = %d, want 1", got)
	}
}

func TestContextErrors(t *testing.T) {
	_, c := newEnv(t, sim.Options{TimeoutDelay: 2 * time.Second}, 5*time.Second)
	tests := []struct {
		name        string
		ctx         func() (context.Context, context.CancelFunc)
		wantCtxErr  error
		wantTimeout bool
	}{
		{
			name: "caller cancels",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(50*time.Millisecond, cancel)
				return ctx, cancel
			},
			wantCtxErr: context.Canceled,
		},
		{
			name: "caller deadline",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 50*time.Millisecond)
			},
			wantCtxErr:  context.DeadlineExceeded,
			wantTimeout: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := tt.ctx()
			defer cancel()
			_, err := c.Charge(ctx, chargeReq("ctx-"+strings.ReplaceAll(tt.name, " ", "-"), cardTimeout, 100, true))
			if !errors.Is(err, tt.wantCtxErr) {
				t.Errorf("err = %v, want %v", err, tt.wantCtxErr)
			}
			if errors.Is(err, ErrTimeout) != tt.wantTimeout {
				t.Errorf("errors.Is(err, ErrTimeout) = %t, want %t", errors.Is(err, ErrTimeout), tt.wantTimeout)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	ts := httptest.NewServer(nil)
	url := ts.URL
	ts.Close()
	c, err := NewClient(url, time.Second)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	_, err = c.Charge(context.Background(), chargeReq("order-down", cardVisa, 100, true))
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
}

func TestCapture(t *testing.T) {
	_, c := newEnv(t, sim.Options{}, 0)
	ctx := context.Background()
	auth := mustCharge(t, c, chargeReq("cap-auth", cardVisa, 1000, false))
	sale := mustCharge(t, c, chargeReq("cap-sale", cardVisa, 1000, true))
	declined := mustCharge(t, c, chargeReq("cap-declined", cardDoNotHonor, 1000, false))
	voided := mustCharge(t, c, chargeReq("cap-voided", cardVisa, 1000, false))
	if _, err := c.Void(ctx, voided.ChargeID, "void-cap-voided"); err != nil {
		t.Fatalf("Void: %v", err)
	}

	// Steps run in order against the same charges.
	tests := []struct {
		name     string
		chargeID string
		key      string
		amount   int64
		wantErr  error
		wantMsg  string
		captured int64
	}{
		{"zero amount", auth.ChargeID, "cap-1", 0, ErrRejected, "invalid_amount", 0},
		{"over authorised amount", auth.ChargeID, "cap-2", 1001, ErrRejected, "invalid_amount", 0},
		{"partial capture", auth.ChargeID, "cap-3", 600, nil, "", 600},
		{"same key replays", auth.ChargeID, "cap-3", 600, nil, "", 600},
		{"same key other amount", auth.ChargeID, "cap-3", 700, ErrConflict, "idempotency_conflict", 0},
		{"second capture", auth.ChargeID, "cap-4", 400, ErrConflict, "invalid_state", 0},
		{"already captured sale", sale.ChargeID, "cap-5", 1000, ErrConflict, "invalid_state", 0},
		{"declined charge", declined.ChargeID, "cap-6", 1000, ErrConflict, "invalid_state", 0},
		{"voided charge", voided.ChargeID, "cap-7", 1000, ErrConflict, "invalid_state", 0},
		{"unknown charge", "ch_missing", "cap-8", 1000, ErrNotFound, "", 0},
		{"empty charge id", "", "cap-9", 1000, ErrRejected, "empty charge id", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := c.Capture(ctx, tt.chargeID, tt.key, tt.amount)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("err = %v, want %v containing %q", err, tt.wantErr, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Capture: %v", err)
			}
			if ch.ChargeID != tt.chargeID || ch.CapturedAmount != tt.captured || ch.Amount != 1000 {
				t.Errorf("charge = %+v, want captured %d of 1000", ch, tt.captured)
			}
		})
	}
}

func TestVoid(t *testing.T) {
	_, c := newEnv(t, sim.Options{}, 0)
	ctx := context.Background()
	auth := mustCharge(t, c, chargeReq("void-auth", cardVisa, 1000, false))
	sale := mustCharge(t, c, chargeReq("void-sale", cardVisa, 1000, true))
	declined := mustCharge(t, c, chargeReq("void-declined", cardInsufficient, 1000, false))

	tests := []struct {
		name     string
		chargeID string
		key      string
		wantErr  error
		wantMsg  string
	}{
		{"void authorisation", auth.ChargeID, "void-1", nil, ""},
		{"same key replays", auth.ChargeID, "void-1", nil, ""},
		{"void again with new key", auth.ChargeID, "void-2", ErrConflict, "invalid_state"},
		{"captured sale", sale.ChargeID, "void-3", ErrConflict, "invalid_state"},
		{"declined charge", declined.ChargeID, "void-4", ErrConflict, "invalid_state"},
		{"same key other charge", sale.ChargeID, "void-1", ErrConflict, "idempotency_conflict"},
		{"unknown charge", "ch_missing", "void-5", ErrNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := c.Void(ctx, tt.chargeID, tt.key)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("err = %v, want %v containing %q", err, tt.wantErr, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Void: %v", err)
			}
			if ch.ChargeID != tt.chargeID || !ch.Voided || ch.CapturedAmount != 0 {
				t.Errorf("charge = %+v, want voided and uncaptured", ch)
			}
		})
	}
	t.Run("capture after void", func(t *testing.T) {
		if _, err := c.Capture(ctx, auth.ChargeID, "void-cap", 1000); !errors.Is(err, ErrConflict) {
			t.Errorf("err = %v, want ErrConflict", err)
		}
	})
}

func TestRefunds(t *testing.T) {
	srv, c := newEnv(t, sim.Options{}, 0)
	ctx := context.Background()
	sale := mustCharge(t, c, chargeReq("ref-sale", cardVisa, 1000, true))
	auth := mustCharge(t, c, chargeReq("ref-auth", cardVisa, 1000, false))
	partial := mustCharge(t, c, chargeReq("ref-partial", cardVisa, 1000, false))
	if _, err := c.Capture(ctx, partial.ChargeID, "ref-partial-cap", 300); err != nil {
		t.Fatalf("Capture: %v", err)
	}

	tests := []struct {
		name     string
		chargeID string
		key      string
		amount   int64
		wantErr  error
		wantMsg  string
		refunded int64
	}{
		{"first part", sale.ChargeID, "r-1", 600, nil, "", 600},
		{"same key replays", sale.ChargeID, "r-1", 600, nil, "", 600},
		{"same key other amount", sale.ChargeID, "r-1", 500, ErrConflict, "idempotency_conflict", 0},
		{"more than remains", sale.ChargeID, "r-2", 401, ErrConflict, "amount_exceeds_captured", 0},
		{"the rest", sale.ChargeID, "r-3", 400, nil, "", 1000},
		{"nothing left", sale.ChargeID, "r-4", 1, ErrConflict, "amount_exceeds_captured", 0},
		{"over partial capture", partial.ChargeID, "r-5", 301, ErrConflict, "amount_exceeds_captured", 0},
		{"within partial capture", partial.ChargeID, "r-6", 300, nil, "", 300},
		{"uncaptured charge", auth.ChargeID, "r-7", 100, ErrConflict, "invalid_state", 0},
		{"zero amount", sale.ChargeID, "r-8", 0, ErrRejected, "invalid_amount", 0},
		{"unknown charge", "ch_missing", "r-9", 100, ErrNotFound, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rf, err := c.Refund(ctx, tt.chargeID, tt.key, tt.amount)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("err = %v, want %v containing %q", err, tt.wantErr, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Refund: %v", err)
			}
			if !strings.HasPrefix(rf.RefundID, "re_") || rf.ChargeID != tt.chargeID || rf.IdempotencyKey != tt.key ||
				rf.Amount != tt.amount || rf.Currency != "GBP" || rf.Status != RefundSucceeded || rf.SettledAt == nil {
				t.Errorf("refund = %+v, want succeeded %d GBP", rf, tt.amount)
			}
			got, err := c.GetRefund(ctx, rf.RefundID)
			if err != nil || got.RefundID != rf.RefundID || got.Status != RefundSucceeded {
				t.Errorf("GetRefund = %+v, %v", got, err)
			}
			ch, err := c.Inquire(ctx, chargeKey(t, srv, tt.chargeID))
			if err != nil || ch.RefundedAmount != tt.refunded {
				t.Errorf("refunded_amount = %d, %v; want %d", ch.RefundedAmount, err, tt.refunded)
			}
		})
	}
	if got := len(srv.Refunds()); got != 3 {
		t.Errorf("recorded refunds = %d, want 3", got)
	}
}

func chargeKey(t *testing.T, srv *sim.Server, chargeID string) string {
	t.Helper()
	for _, ch := range srv.Charges() {
		if ch.ChargeID == chargeID {
			return ch.IdempotencyKey
		}
	}
	t.Fatalf("no charge %s", chargeID)
	return ""
}

func TestPendingRefundSettles(t *testing.T) {
	_, c := newEnv(t, sim.Options{SettleDelay: 50 * time.Millisecond}, 0)
	ctx := context.Background()
	sale := mustCharge(t, c, chargeReq("pending-sale", cardVisa, 5000, true))

	rf, err := c.Refund(ctx, sale.ChargeID, "pending-1", 1077)
	if err != nil {
		t.Fatalf("Refund: %v", err)
	}
	if rf.Status != RefundPending || rf.SettledAt != nil {
		t.Fatalf("refund = %+v, want pending without settled_at", rf)
	}
	t.Run("pending amount is reserved", func(t *testing.T) {
		if _, err := c.Refund(ctx, sale.ChargeID, "pending-2", 5000-1077+1); !errors.Is(err, ErrConflict) {
			t.Errorf("err = %v, want ErrConflict", err)
		}
	})
	t.Run("settles after delay", func(t *testing.T) {
		var got Refund
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			got, err = c.GetRefund(ctx, rf.RefundID)
			if err != nil {
				t.Fatalf("GetRefund: %v", err)
			}
			if got.Status == RefundSucceeded {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if got.Status != RefundSucceeded || got.SettledAt == nil || got.SettledAt.Before(got.CreatedAt) {
			t.Fatalf("refund = %+v, want succeeded with settled_at after created_at", got)
		}
		ch, err := c.Inquire(ctx, "pending-sale")
		if err != nil || ch.RefundedAmount != 1077 {
			t.Errorf("refunded_amount = %d, %v; want 1077", ch.RefundedAmount, err)
		}
	})
}

func TestNotFound(t *testing.T) {
	_, c := newEnv(t, sim.Options{}, 0)
	ctx := context.Background()
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"inquire", func() error { _, err := c.Inquire(ctx, "never-sent"); return err }, "inquire never-sent: acquirer: not found"},
		{"get refund", func() error { _, err := c.GetRefund(ctx, "re_missing"); return err }, "get refund re_missing: acquirer: not found"},
		{"capture", func() error { _, err := c.Capture(ctx, "ch_missing", "k1", 10); return err }, "capture ch_missing k1: acquirer: not found"},
		{"void", func() error { _, err := c.Void(ctx, "ch_missing", "k2"); return err }, "void ch_missing k2: acquirer: not found"},
		{"refund", func() error { _, err := c.Refund(ctx, "ch_missing", "k3", 10); return err }, "refund ch_missing k3: acquirer: not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("err = %v, want ErrNotFound", err)
			}
			if err.Error() != tt.want {
				t.Errorf("err = %q, want %q", err, tt.want)
			}
		})
	}
}

func TestChargeRequestHidesCard(t *testing.T) {
	req := chargeReq("hide-1", cardVisa, 100, true)
	var logBuf bytes.Buffer
	timelessLogger(&logBuf).Info("charging", "req", req)
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
			if strings.Contains(tt.out, cardVisa) || strings.Contains(tt.out, "321") || strings.Contains(tt.out, "2031") {
				t.Errorf("output leaks card data: %s", tt.out)
			}
			if !strings.Contains(tt.out, "hide-1") {
				t.Errorf("output lost the idempotency key: %s", tt.out)
			}
		})
	}
	if want := `ChargeRequest{IdempotencyKey:"hide-1" Reference:"order-hide-1" Card:****4242 Amount:100 Currency:"GBP" Capture:true}`; req.String() != want {
		t.Errorf("String() = %s, want %s", req.String(), want)
	}
}

// TestChargeCarriesItsDeadline: a charge tells the acquirer when the client
// stops waiting (its timeout), so that a charge arriving later is not made;
// an inquiry, which changes nothing, carries none.
func TestChargeCarriesItsDeadline(t *testing.T) {
	got := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got[r.Method] = r.Header.Get(outbound.DeadlineHeader)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"charge_id":"ch_1","status":"approved"}`))
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if _, err := c.Charge(t.Context(), ChargeRequest{IdempotencyKey: "k1", Reference: "r1", CardNumber: "4242424242424242", Amount: 100, Currency: "USD"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Inquire(t.Context(), "k1"); err != nil {
		t.Fatal(err)
	}
	deadline, err := time.Parse(time.RFC3339Nano, got[http.MethodPost])
	if err != nil {
		t.Fatalf("charge deadline %q: %v", got[http.MethodPost], err)
	}
	if left := deadline.Sub(before); left < 2*time.Second || left > 3*time.Second+time.Since(before) {
		t.Errorf("charge deadline %s after it was sent, want the 3s timeout", left)
	}
	if got[http.MethodGet] != "" {
		t.Errorf("inquiry deadline %q, want none", got[http.MethodGet])
	}
}

// timelessLogger logs JSON to w without the time: a timestamp holding a
// card's digits (17:09:56.321 and a CVV of 321) is no leak.
func timelessLogger(w io.Writer) *slog.Logger {
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{ReplaceAttr: noTime}))
}

// TestInquireKeysOfAnyCharacter: a charge is found by its key whatever the
// key holds (an order number may hold any printable character). Escaped
// twice, the inquiry asked for another key and answered not found for a
// charge the acquirer held, which the order took for "never charged".
func TestInquireKeysOfAnyCharacter(t *testing.T) {
	_, c := newEnv(t, sim.Options{}, 0)
	for _, key := range []string{
		"order:M-1:A-1:ORD-1:authorise",
		"order:M-1:A-1:INV#7?x=1&y=%20,;[]{}|\\\"':authorise",
		"order:M-1:A-1:50%2F50:authorise",
	} {
		t.Run(key, func(t *testing.T) {
			ch := mustCharge(t, c, chargeReq(key, cardVisa, 1000, false))
			got, err := c.Inquire(t.Context(), key)
			if err != nil || got.ChargeID != ch.ChargeID {
				t.Fatalf("Inquire(%q) = %q, %v; want %q", key, got.ChargeID, err, ch.ChargeID)
			}
		})
	}
}

package stripe

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/refund"
)

// TestContractWithStripe runs the connector's whole card life against a
// real Stripe account in test mode: set STRIPE_SECRET_KEY to an sk_test_
// key of an account with raw card data APIs enabled (docs/connectors.md).
// Without it the test is skipped; with a live key it refuses to run.
func TestContractWithStripe(t *testing.T) {
	key := os.Getenv("STRIPE_SECRET_KEY")
	if key == "" {
		t.Skip("STRIPE_SECRET_KEY is not set: the contract test needs a Stripe test account")
	}
	if !strings.HasPrefix(key, "sk_test_") && !strings.HasPrefix(key, "rk_test_") {
		t.Fatal("STRIPE_SECRET_KEY is not a test-mode key; the contract test moves no real money")
	}
	c, err := New(Config{SecretKey: key, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	run := fmt.Sprintf("paygate-contract-%d", time.Now().UnixNano())
	card := func(number string) connector.Card {
		return connector.Card{Number: number, ExpiryMonth: "12", ExpiryYear: fmt.Sprint(time.Now().Year() + 2), CVV: "123"}
	}

	// Authorise, capture part, refund part twice; the key sent again gets
	// the same PaymentIntent.
	req := connector.ChargeRequest{IdempotencyKey: run + "/charge", Reference: run, Card: card("4242424242424242"), Amount: 2000, Currency: "USD"}
	auth, err := c.Charge(ctx, req)
	if err != nil || auth.Status != connector.Approved || auth.ID == "" {
		t.Fatalf("authorise = %+v, %v", auth, err)
	}
	if again, err := c.Charge(ctx, req); err != nil || again.ID != auth.ID {
		t.Errorf("the same key sent again = %+v, %v; want %s", again, err, auth.ID)
	}
	captured, err := c.Capture(ctx, connector.CaptureRequest{ChargeID: auth.ID, IdempotencyKey: run + "/capture", Amount: 1500, Currency: "USD"})
	if err != nil || captured.CapturedAmount != 1500 {
		t.Fatalf("capture = %+v, %v", captured, err)
	}
	for i, amount := range []int64{500, 700} {
		r, err := c.Refund(ctx, connector.RefundRequest{ChargeID: auth.ID, IdempotencyKey: fmt.Sprintf("%s/refund/%d", run, i), Amount: amount, Currency: "USD"})
		if err != nil || r.Amount != amount || r.Status == refund.Failed {
			t.Fatalf("refund %d = %+v, %v", i, r, err)
		}
		if got, err := c.GetRefund(ctx, r.ID); err != nil || got.ID != r.ID {
			t.Errorf("refund %d state = %+v, %v", i, got, err)
		}
	}

	// A void of another authorisation; declines in our words.
	other, err := c.Charge(ctx, connector.ChargeRequest{IdempotencyKey: run + "/charge2", Reference: run + "-2", Card: card("4242424242424242"), Amount: 900, Currency: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := c.Void(ctx, connector.VoidRequest{ChargeID: other.ID, IdempotencyKey: run + "/void"}); err != nil || !v.Voided {
		t.Errorf("void = %+v, %v", v, err)
	}
	for _, tc := range []struct {
		number string
		want   connector.DeclineReason
	}{
		{"4000000000009995", connector.DeclineInsufficientFunds},
		{"4000000000000069", connector.DeclineExpiredCard},
		{"4000000000000127", connector.DeclineIncorrectCVC},
		{"4000000000000002", connector.DeclineGeneric},
	} {
		got, err := c.Charge(ctx, connector.ChargeRequest{IdempotencyKey: run + "/decline/" + tc.number, Reference: run, Card: card(tc.number), Amount: 100, Currency: "USD"})
		if err != nil || got.Status != connector.Declined || got.DeclineReason != tc.want {
			t.Errorf("card %s = %+v, %v; want declined %s", tc.number, got, err, tc.want)
		}
	}
}

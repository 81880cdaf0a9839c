package activities

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/adapters/connectors"
	"github.com/paygate/paygate/internal/adapters/vault"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/routing"
)

// flaky is a connector that answers each charge with the next of its
// answers: an error, or a decline when nil.
type flaky struct {
	answers []error
	charges int
}

func (f *flaky) Name() string { return "flaky" }
func (f *flaky) Charge(context.Context, connector.ChargeRequest) (connector.Charge, error) {
	err := f.answers[f.charges%len(f.answers)]
	f.charges++
	if err != nil {
		return connector.Charge{}, err
	}
	return connector.Charge{ID: fmt.Sprintf("ch_%d", f.charges), Status: connector.Declined, DeclineReason: connector.DeclineGeneric}, nil
}
func (f *flaky) Inquire(context.Context, string) (connector.Charge, error) {
	return connector.Charge{}, nil
}
func (f *flaky) Capture(context.Context, connector.CaptureRequest) (connector.Charge, error) {
	return connector.Charge{}, nil
}
func (f *flaky) Void(context.Context, connector.VoidRequest) (connector.Charge, error) {
	return connector.Charge{}, nil
}
func (f *flaky) Refund(context.Context, connector.RefundRequest) (connector.Refund, error) {
	return connector.Refund{}, nil
}
func (f *flaky) GetRefund(context.Context, string) (connector.Refund, error) {
	return connector.Refund{}, nil
}

// oneCard opens every token as the same card.
type oneCard struct{}

func (oneCard) Detokenize(context.Context, string) (vault.Card, error) {
	return vault.Card{Number: "4242424242424242", ExpiryMonth: "12", ExpiryYear: "2035", CVV: "123"}, nil
}
func (oneCard) DropCVV(context.Context, string) error { return nil }
func (oneCard) Delete(context.Context, string) error  { return nil }

// sends is a note of charges sent, by key.
type sends map[string]bool

func (s sends) NoteChargeSend(_ context.Context, key, _ string, _ time.Time) (bool, error) {
	earlier := s[key]
	s[key] = true
	return earlier, nil
}

func (s sends) ChargeSent(_ context.Context, key string) (bool, error) { return s[key], nil }

func (s sends) ForgetChargeSend(_ context.Context, key string) error {
	delete(s, key)
	return nil
}

// TestBreakerSkipsAConnectorThatIsDown: charges that find a connector down
// open its breaker; then a charge that may fail over is skipped without
// reaching it, while one that may not still goes; declines never count. A
// routed charge sent before (by a worker that died after sending it) is
// never skipped, and a connector down at its next attempt leaves its
// outcome unknown rather than "down": the payment must ask before it moves
// on.
func TestBreakerSkipsAConnectorThatIsDown(t *testing.T) {
	errType := func(err error) string {
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) {
			return appErr.Type()
		}
		if err != nil {
			return "retryable"
		}
		return ""
	}
	tests := []struct {
		name    string
		answers []error
		// want are the charges' error types, in order ("" answered), and
		// wantSent how many reached the connector.
		failover []bool
		want     []string
		wantSent int
		// sentBefore are the charges (by index) a dead worker sent.
		sentBefore []int
		// oneKey sends every charge under one key, as a route's visits
		// to one connector do.
		oneKey bool
	}{
		{"down three times opens it", []error{connector.ErrUnavailable},
			[]bool{true, true, true, true, false},
			[]string{ErrTypeAcquirerDown, ErrTypeAcquirerDown, ErrTypeAcquirerDown, ErrTypeAcquirerSkipped, "retryable"}, 4, nil, false},
		{"no answer counts too", []error{fmt.Errorf("x: %w", connector.ErrTimeout)},
			[]bool{true, true, true, true},
			[]string{ErrTypeAcquirerTimeout, ErrTypeAcquirerTimeout, ErrTypeAcquirerTimeout, ErrTypeAcquirerSkipped}, 3, nil, false},
		{"declines keep it closed", []error{nil},
			[]bool{true, true, true, true, true},
			[]string{"", "", "", "", ""}, 5, nil, false},
		{"a charge sent before is not skipped", []error{connector.ErrUnavailable},
			[]bool{true, true, true, true},
			[]string{ErrTypeAcquirerDown, ErrTypeAcquirerDown, ErrTypeAcquirerDown, ErrTypeAcquirerTimeout}, 4, []int{3}, false},
		// A key the acquirer saw before with other content (Stripe's
		// idempotency_error: a charge re-sent by the next worker after the
		// first dropped the security code) proves an earlier request
		// reached it: its outcome is unknown, never a refusal that lets
		// the route charge elsewhere. A refusal stays one.
		{"a key seen with other content is unknown", []error{fmt.Errorf("x: %w: idempotency_error", connector.ErrConflict)},
			[]bool{true, false},
			[]string{ErrTypeAcquirerTimeout, ErrTypeAcquirerTimeout}, 2, nil, false},
		{"a refusal is one", []error{fmt.Errorf("x: %w: invalid_request", connector.ErrRejected)},
			[]bool{true, false},
			[]string{ErrTypeAcquirerRejected, ErrTypeAcquirerRejected}, 2, nil, false},
		{"down after an earlier send is unknown", []error{connector.ErrUnavailable},
			[]bool{true},
			[]string{ErrTypeAcquirerTimeout}, 1, []int{0}, false},
		// A route that comes back to a connector sends the same key again:
		// a connector that was down did nothing, so it is down again, not
		// unknown.
		{"down twice under one key", []error{connector.ErrUnavailable},
			[]bool{true, true},
			[]string{ErrTypeAcquirerDown, ErrTypeAcquirerDown}, 2, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn := &flaky{answers: tc.answers}
			reg := connectors.New[Connector]("flaky")
			if err := reg.Register("flaky", conn); err != nil {
				t.Fatal(err)
			}
			now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
			cfg := routing.BreakerConfig{Window: time.Minute, Size: 10, MinFailures: 3, FailureRatio: 0.5, Pause: time.Minute}
			health := connectors.NewHealth(cfg, func() time.Time { return now }, nil)
			noted := sends{}
			for _, i := range tc.sentBefore {
				noted[fmt.Sprintf("k%d", i)] = true
			}
			a := &Activities{Connectors: reg, Vault: oneCard{}, Health: health, Sends: noted}
			var got []string
			for i, failover := range tc.failover {
				key := fmt.Sprintf("k%d", i)
				if tc.oneKey {
					key = "k0"
				}
				_, err := a.Authorise(context.Background(), AuthoriseInput{Connector: "flaky", CardToken: "tok",
					IdempotencyKey: key, Amount: 100, Currency: "USD", Failover: failover})
				got = append(got, errType(err))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || conn.charges != tc.wantSent {
				t.Errorf("charges came to %v with %d sent, want %v with %d", got, conn.charges, tc.want, tc.wantSent)
			}
		})
	}
}

// unknownAt is a connector that finds no charge; finalUnknown is one
// whose inquiry is final.
type unknownAt struct{ flaky }

func (u *unknownAt) Inquire(context.Context, string) (connector.Charge, error) {
	return connector.Charge{}, connector.ErrNotFound
}

type finalUnknown struct{ unknownAt }

func (finalUnknown) FinalInquiry() bool { return true }

// TestInquiryFinality: a charge a connector does not find was never made
// only where the connector's inquiry is final.
func TestInquiryFinality(t *testing.T) {
	tests := []struct {
		name string
		conn Connector
		want bool
	}{
		{"an inquiry that may lag", &unknownAt{}, false},
		{"a final inquiry", &finalUnknown{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := connectors.New[Connector]("flaky")
			if err := reg.Register("flaky", tc.conn); err != nil {
				t.Fatal(err)
			}
			a := &Activities{Connectors: reg}
			got, err := a.InquireCharge(context.Background(), InquireInput{Connector: "flaky", IdempotencyKey: "k"})
			if err != nil || got.Found || got.NeverCharged != tc.want {
				t.Errorf("InquireCharge = %+v, %v; want not found, never charged %v", got, err, tc.want)
			}
		})
	}
}

// deadlined is a final connector whose charges carry their deadline; it
// notes when it was asked.
type deadlined struct {
	finalUnknown
	timeout time.Duration
	asked   time.Time
}

func (d *deadlined) RequestTimeout() time.Duration { return d.timeout }

func (d *deadlined) Inquire(context.Context, string) (connector.Charge, error) {
	d.asked = time.Now()
	return connector.Charge{}, connector.ErrNotFound
}

// TestInquiryAfterEarlierDeadlines: an inquiry told that another attempt
// may have sent a charge before a moment asks a connector that honours
// request deadlines only once that charge's deadline has passed, so that a
// charge still on its way cannot be made after a "not found".
func TestInquiryAfterEarlierDeadlines(t *testing.T) {
	const timeout = 300 * time.Millisecond
	sentBefore := time.Now()
	tests := []struct {
		name          string
		sentBefore    time.Time
		attemptsEnded bool
		notBefore     time.Time
	}{
		{"no earlier attempt: asked at once", time.Time{}, false, time.Time{}},
		{"an earlier attempt: asked after its deadline", sentBefore, false, sentBefore.Add(timeout)},
		{"an earlier attempt long ago: asked at once", sentBefore.Add(-time.Hour), false, time.Time{}},
		// Attempts that timed out ended before the inquiry was scheduled,
		// but one may still be on its way.
		{"attempts ended: asked a timeout after the inquiry was scheduled", time.Time{}, true, sentBefore.Add(timeout)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn := &deadlined{timeout: timeout}
			reg := connectors.New[Connector]("sim")
			if err := reg.Register("sim", conn); err != nil {
				t.Fatal(err)
			}
			a := &Activities{Connectors: reg}
			got, err := a.InquireCharge(context.Background(), InquireInput{Connector: "sim", IdempotencyKey: "k", SentBefore: tc.sentBefore,
				AttemptsEnded: tc.attemptsEnded})
			if err != nil || got.Found || !got.NeverCharged {
				t.Fatalf("InquireCharge = %+v, %v; want never charged", got, err)
			}
			if conn.asked.Before(tc.notBefore) {
				t.Errorf("asked at %s, before the earlier charge's deadline %s", conn.asked.Format(time.StampMilli), tc.notBefore.Format(time.StampMilli))
			}
		})
	}
}

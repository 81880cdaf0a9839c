package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"slices"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/adapters/connectors"
	simbankclient "github.com/paygate/paygate/internal/adapters/connectors/simbank"
	"github.com/paygate/paygate/internal/dev/simbank"
	"github.com/paygate/paygate/internal/domain/connector"
)

// TestConnectorRouting runs the activities against a registry holding the
// real sim-bank client (and its simulator): an order naming a connector the
// registry lacks, or asking sim-bank for what it does not offer, is refused
// for good before any card is opened; the charge inquiry alone keeps
// retrying, since only the connector can say whether a card was charged.
func TestConnectorRouting(t *testing.T) {
	srv := simbank.NewServer(simbank.Options{Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	bank, err := simbankclient.New(simbankclient.Config{BaseURL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	reg := connectors.New[Connector]("sim-acquirer")
	if err := reg.Register(bank.Name(), bank); err != nil {
		t.Fatal(err)
	}
	// No vault: every refusal must come before a card is opened.
	a := &Activities{Connectors: reg}
	ctx := context.Background()

	tests := []struct {
		name         string
		run          func() error
		nonRetryable bool
		// missing: the connector is not configured here, which is no
		// acquirer's word (IsConnectorMissing).
		missing bool
	}{
		{"charge at an unknown connector", func() error {
			_, err := a.Authorise(ctx, AuthoriseInput{Connector: "acme-bank", CardToken: "tok", IdempotencyKey: "k"})
			return err
		}, true, true},
		{"charge at the default, not configured here", func() error {
			_, err := a.Authorise(ctx, AuthoriseInput{CardToken: "tok", IdempotencyKey: "k"})
			return err
		}, true, true},
		{"capture at an unknown connector", func() error {
			_, err := a.CaptureCharge(ctx, CaptureInput{Connector: "acme-bank", ChargeID: "c", IdempotencyKey: "k", Amount: 1, Currency: "USD"})
			return err
		}, true, true},
		{"refund at an unknown connector", func() error {
			_, err := a.RefundCharge(ctx, RefundInput{Connector: "acme-bank", ChargeID: "c", IdempotencyKey: "k", Amount: 1, Currency: "USD"})
			return err
		}, true, true},
		{"3-D Secure at sim-bank", func() error {
			_, err := a.Authenticate3DS(ctx, ThreeDSInput{Connector: "sim-bank", CardToken: "tok", IdempotencyKey: "k"})
			return err
		}, true, false},
		{"APM at sim-bank", func() error {
			_, err := a.CreateAPMPayment(ctx, APMInput{Connector: "sim-bank", IdempotencyKey: "k"})
			return err
		}, true, false},
		{"capture of an unknown payment at sim-bank", func() error {
			_, err := a.CaptureCharge(ctx, CaptureInput{Connector: "sim-bank", ChargeID: "pay_nope", IdempotencyKey: "k", Amount: 100, Currency: "USD"})
			return err
		}, true, false},
		{"inquiry at an unknown connector", func() error {
			_, err := a.InquireCharge(ctx, InquireInput{Connector: "acme-bank", IdempotencyKey: "k"})
			return err
		}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil {
				t.Fatal("no error")
			}
			var appErr *temporal.ApplicationError
			nonRetryable := errors.As(err, &appErr) && appErr.NonRetryable()
			if nonRetryable != tc.nonRetryable {
				t.Fatalf("error %v: non-retryable %t, want %t", err, nonRetryable, tc.nonRetryable)
			}
			if nonRetryable && appErr.Type() != ErrTypeAcquirerRejected {
				t.Errorf("error type %q, want %s", appErr.Type(), ErrTypeAcquirerRejected)
			}
			if IsConnectorMissing(err) != tc.missing {
				t.Errorf("error %v: connector missing %t, want %t", err, IsConnectorMissing(err), tc.missing)
			}
		})
	}

	found, err := a.InquireCharge(ctx, InquireInput{Connector: "sim-bank", IdempotencyKey: "never-sent"})
	if err != nil || found.Found || !found.NeverCharged || !found.Final {
		t.Errorf("inquiry of a charge sim-bank never saw = %+v, %v, want not found, finally", found, err)
	}
	if n := len(srv.Payments()); n != 0 {
		t.Errorf("sim-bank holds %d payments, want none", n)
	}
}

// readingConnector is an acquirer whose search by key lags (it shows the
// charge authorised) while its read by id shows the capture.
type readingConnector struct {
	Connector
	looked []string
}

func (c *readingConnector) Name() string { return "lagging" }

func (c *readingConnector) Inquire(context.Context, string) (connector.Charge, error) {
	return connector.Charge{ID: "pi_1", Status: connector.Approved, Amount: 1000, Currency: "USD"}, nil
}

func (c *readingConnector) LookCharge(_ context.Context, id string) (connector.Charge, error) {
	c.looked = append(c.looked, id)
	if id != "pi_1" {
		return connector.Charge{}, fmt.Errorf("look %s: %w", id, connector.ErrNotFound)
	}
	return connector.Charge{ID: "pi_1", Status: connector.Approved, Amount: 1000, Currency: "USD", CapturedAmount: 600}, nil
}

// TestInquiryByChargeID: an inquiry that knows the charge's id reads it
// by the id where the connector can, as it stands now (final); one that
// does not searches by the key; an id the acquirer does not know is no
// answer, never "not charged".
func TestInquiryByChargeID(t *testing.T) {
	conn := &readingConnector{}
	reg := connectors.New[Connector]("lagging")
	if err := reg.Register(conn.Name(), conn); err != nil {
		t.Fatal(err)
	}
	a := &Activities{Connectors: reg}
	tests := []struct {
		name     string
		in       InquireInput
		want     InquiryResult
		wantErr  bool
		wantLook []string
	}{
		{"by id: the capture shows, final", InquireInput{Connector: "lagging", IdempotencyKey: "k", ChargeID: "pi_1"},
			InquiryResult{Found: true, Outcome: ChargeOutcome{ChargeID: "pi_1", Approved: true, CapturedAmount: 600, Connector: "lagging"}, Final: true},
			false, []string{"pi_1"}},
		{"by key: the search's lagging view, not final", InquireInput{Connector: "lagging", IdempotencyKey: "k"},
			InquiryResult{Found: true, Outcome: ChargeOutcome{ChargeID: "pi_1", Approved: true, Connector: "lagging"}},
			false, nil},
		{"by an id the acquirer does not know: no answer", InquireInput{Connector: "lagging", IdempotencyKey: "k", ChargeID: "pi_2"},
			InquiryResult{}, true, []string{"pi_2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn.looked = nil
			got, err := a.InquireCharge(t.Context(), tc.in)
			if (err != nil) != tc.wantErr || got != tc.want || !slices.Equal(conn.looked, tc.wantLook) {
				t.Errorf("= %+v, %v (looked %v); want %+v, error %t (looked %v)", got, err, conn.looked, tc.want, tc.wantErr, tc.wantLook)
			}
		})
	}
}

package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/adapters/rail"
	"github.com/paygate/paygate/internal/domain/testmode"
)

// TestRailErrorRetriesAllButARefusal: only the rail's own refusal ends a
// payout; a call cut short on our side (a worker stopping cancels the
// activity's context) is retried like an unavailable rail.
func TestRailErrorRetriesAllButARefusal(t *testing.T) {
	cases := []struct {
		name      string
		err       error
		permanent bool
	}{
		{name: "rail refused the body", err: &rail.Error{Op: "submit", StatusCode: 400, Code: "invalid_request"}, permanent: true},
		{name: "rail unavailable", err: fmt.Errorf("submit: %w", rail.ErrUnavailable)},
		{name: "rail did not answer in time", err: fmt.Errorf("submit: %w", rail.ErrTimeout)},
		{name: "worker shutting down", err: fmt.Errorf("submit transfer k: %w", context.Canceled)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := railError(tc.err)
			var app *temporal.ApplicationError
			permanent := errors.As(got, &app) && app.NonRetryable()
			if permanent != tc.permanent {
				t.Errorf("railError(%v) non-retryable = %v, want %v", tc.err, permanent, tc.permanent)
			}
		})
	}
}

// fakeRail answers every call with its name, so a test sees which rail a
// payout reached.
type fakeRail struct{ name string }

func (f fakeRail) Submit(context.Context, rail.SubmitRequest) (rail.Transfer, error) {
	return rail.Transfer{ID: f.name, Status: rail.StatusSubmitted}, nil
}
func (f fakeRail) Get(context.Context, string) (rail.Transfer, error) {
	return rail.Transfer{ID: f.name, Status: rail.StatusCompleted}, nil
}
func (f fakeRail) FindByKey(context.Context, string) (rail.Transfer, error) {
	return rail.Transfer{}, rail.ErrNotFound
}

// TestPayoutRailByMode: a test account's payout reaches the simulated rail
// and nothing else, however it is called; a live account's, and one from
// before payouts knew their mode, the live rail.
func TestPayoutRailByMode(t *testing.T) {
	tests := []struct {
		name     string
		mode     string
		testRail PayoutRail
		want     string // the rail reached; "" refused
	}{
		{"test account", testmode.Test, fakeRail{"simulated"}, "simulated"},
		{"live account", testmode.Live, fakeRail{"simulated"}, "live"},
		{"payout from before modes", "", fakeRail{"simulated"}, "live"},
		{"test account, no simulated rail", testmode.Test, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &PayoutActivities{Rail: fakeRail{"live"}, TestRail: tt.testRail}
			sub, subErr := p.PayoutSubmit(t.Context(), PayoutSubmitInput{IdempotencyKey: "k", Mode: tt.mode, Amount: 100, Currency: "USD"})
			got, getErr := p.PayoutGetTransfer(t.Context(), PayoutGetInput{TransferID: "t", Mode: tt.mode})
			_, findErr := p.PayoutFindTransfer(t.Context(), PayoutFindInput{IdempotencyKey: "k", Mode: tt.mode})
			if tt.want == "" {
				for _, err := range []error{subErr, getErr, findErr} {
					var app *temporal.ApplicationError
					if !errors.As(err, &app) || !app.NonRetryable() || app.Type() != ErrTypePayoutRailRejected {
						t.Errorf("error %v, want a non-retryable rail refusal", err)
					}
				}
				return
			}
			if subErr != nil || getErr != nil || findErr != nil || sub.ID != tt.want || got.ID != tt.want {
				t.Errorf("submitted to %q (%v), got from %q (%v), find %v; want %q", sub.ID, subErr, got.ID, getErr, findErr, tt.want)
			}
		})
	}
}

// statusRail answers every read and look with a transfer of status, and
// counts the submissions it takes.
type statusRail struct {
	status  string
	submits int
}

func (s *statusRail) Submit(context.Context, rail.SubmitRequest) (rail.Transfer, error) {
	s.submits++
	return rail.Transfer{ID: "tr_1", Status: rail.StatusSubmitted, Attempt: 1}, nil
}
func (s *statusRail) Get(context.Context, string) (rail.Transfer, error) {
	return rail.Transfer{ID: "tr_1", Status: s.status, Attempt: 1}, nil
}
func (s *statusRail) FindByKey(context.Context, string) (rail.Transfer, error) {
	return rail.Transfer{ID: "tr_1", Status: s.status, Attempt: 1}, nil
}

// TestPayoutTransferStatusesRead: the three statuses the rail documents are
// read as they are; any other is an error retried like an outage, never a
// result: the workflow settles what is neither submitted nor failed, and no
// submission follows a look it could not read.
func TestPayoutTransferStatusesRead(t *testing.T) {
	tests := []struct {
		status  string
		wantErr bool
	}{
		{rail.StatusSubmitted, false},
		{rail.StatusCompleted, false},
		{rail.StatusFailed, false},
		{"returned", true},
		{"", true},
	}
	for _, tc := range tests {
		t.Run(cmp.Or(tc.status, "no status"), func(t *testing.T) {
			r := &statusRail{status: tc.status}
			p := &PayoutActivities{Rail: r}
			got, getErr := p.PayoutGetTransfer(t.Context(), PayoutGetInput{TransferID: "tr_1", Mode: testmode.Live})
			found, findErr := p.PayoutFindTransfer(t.Context(), PayoutFindInput{IdempotencyKey: "k", Mode: testmode.Live})
			sub, subErr := p.PayoutSubmit(t.Context(), PayoutSubmitInput{IdempotencyKey: "k", Mode: testmode.Live, Amount: 100,
				Currency: "USD", PriorAttempt: 1})
			for name, err := range map[string]error{"get": getErr, "find": findErr, "submit": subErr} {
				var app *temporal.ApplicationError
				if (err != nil) != tc.wantErr || errors.As(err, &app) && app.NonRetryable() {
					t.Errorf("%s: error %v, want a retryable error %v", name, err, tc.wantErr)
				}
			}
			if tc.wantErr {
				if r.submits != 0 {
					t.Errorf("%d submissions after an unreadable look", r.submits)
				}
				return
			}
			if got.Status != tc.status || found.Status != tc.status {
				t.Errorf("read %q and %q, want %q", got.Status, found.Status, tc.status)
			}
			// A failed attempt the run saw before it (PriorAttempt 1) is
			// submitted again; the others are this run's.
			if want := map[bool]int{true: 1, false: 0}[tc.status == rail.StatusFailed]; r.submits != want || sub.ID != "tr_1" {
				t.Errorf("submissions %d, want %d (%+v)", r.submits, want, sub)
			}
		})
	}
}

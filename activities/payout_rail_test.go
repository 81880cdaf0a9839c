package activities

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/adapters/rail"
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

package flows

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
)

// TestRetryBusy: a call Temporal answered
// too late or busy is made again until it succeeds or the wait runs out;
// a refusal is returned at once.
func TestRetryBusy(t *testing.T) {
	late := fmt.Errorf("describe: %w", context.DeadlineExceeded)
	unavailable := serviceerror.NewUnavailable("frontend starting")
	cases := []struct {
		name      string
		errs      []error
		wait      time.Duration
		wantCalls int
		wantErr   error
	}{
		{name: "served at once", wantCalls: 1},
		{name: "too late twice, then served", errs: []error{late, unavailable}, wantCalls: 3},
		{name: "the update's workflow task failed, then served", errs: []error{
			serviceerror.NewWorkflowNotReady("Unable to perform workflow execution update due to unexpected workflow task failure.")}, wantCalls: 2},
		{name: "refused: already running", errs: []error{temporal.ErrScheduleAlreadyRunning}, wantCalls: 1, wantErr: temporal.ErrScheduleAlreadyRunning},
		// Made at 0, 100, 300 and 700 ms; the next would be at 1.5 s.
		{name: "busy past the wait", errs: []error{late, late, late, late, late}, wait: time.Second, wantCalls: 4, wantErr: context.DeadlineExceeded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := RetryBusy(context.Background(), cmp.Or(tc.wait, 10*time.Second), func(context.Context) error {
				calls++
				if calls <= len(tc.errs) {
					return tc.errs[calls-1]
				}
				return nil
			})
			if !errors.Is(err, tc.wantErr) || tc.wantErr == nil && err != nil {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if calls != tc.wantCalls {
				t.Errorf("%d calls, want %d", calls, tc.wantCalls)
			}
		})
	}
}

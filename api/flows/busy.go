package flows

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// RetryBusy runs op again, after pauses from 100 ms doubling to 2 s, while
// it fails with Temporal busy (TemporalBusy) and wait has not run out. It
// returns op's last error.
func RetryBusy(ctx context.Context, wait time.Duration, op func(context.Context) error) error {
	deadline := time.Now().Add(wait)
	for pause := 100 * time.Millisecond; ; pause = min(2*pause, 2*time.Second) {
		err := op(ctx)
		if err == nil || ctx.Err() != nil || !TemporalBusy(err) || time.Now().Add(pause).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}

// TemporalBusy reports whether err says Temporal did not take or answer a
// call in time (unavailable, busy, a service timeout) rather than refused it.
// An update whose workflow task failed on the server (WorkflowNotReady:
// "unexpected workflow task failure", as when the task that took it was
// rejected for a signal that arrived meanwhile) was not applied either.
func TemporalBusy(err error) bool {
	var (
		timedOut    *client.WorkflowUpdateServiceTimeoutOrCanceledError
		unavailable *serviceerror.Unavailable
		exhausted   *serviceerror.ResourceExhausted
		deadline    *serviceerror.DeadlineExceeded
		notReady    *serviceerror.WorkflowNotReady
	)
	if errors.As(err, &timedOut) || errors.As(err, &unavailable) || errors.As(err, &exhausted) ||
		errors.As(err, &deadline) || errors.As(err, &notReady) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted:
		return true
	}
	return false
}

package app

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/api/serviceerror"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// scheduleWait bounds how long a worker's start keeps asking Temporal to
// make or update a schedule that it answered busy or too late.
const scheduleWait = 2 * time.Minute

// retrySchedule runs op, a call on a schedule, again while Temporal
// answers that it could not serve it in time: a dev server just restarted
// on its file answers a schedule's description only once its own internal
// workers run, and its first calls time out.
func retrySchedule(ctx context.Context, op func(context.Context) error) error {
	return retryBusy(ctx, scheduleWait, op)
}

// retryBusy runs op again, after growing pauses, while it fails with
// Temporal busy and wait has not run out.
func retryBusy(ctx context.Context, wait time.Duration, op func(context.Context) error) error {
	deadline := time.Now().Add(wait)
	for pause := 200 * time.Millisecond; ; pause = min(2*pause, 5*time.Second) {
		err := op(ctx)
		if err == nil || ctx.Err() != nil || !temporalBusy(err) || time.Now().Add(pause).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}

// temporalBusy reports whether err says Temporal did not serve a call in
// time (rather than refused it).
func temporalBusy(err error) bool {
	var (
		unavailable *serviceerror.Unavailable
		exhausted   *serviceerror.ResourceExhausted
		deadline    *serviceerror.DeadlineExceeded
	)
	if errors.As(err, &unavailable) || errors.As(err, &exhausted) || errors.As(err, &deadline) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted:
		return true
	}
	return false
}

package app

import (
	"context"
	"time"

	"github.com/paygate/paygate/api/flows"
)

// scheduleWait bounds how long a worker's start keeps asking Temporal to
// make or update a schedule that it answered busy or too late.
const scheduleWait = 2 * time.Minute

// retrySchedule runs op, a call on a schedule, again while Temporal
// answers that it could not serve it in time: a dev server just restarted
// on its file answers a schedule's description only once its own internal
// workers run, and its first calls time out.
func retrySchedule(ctx context.Context, op func(context.Context) error) error {
	return flows.RetryBusy(ctx, scheduleWait, op)
}

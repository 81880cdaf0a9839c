package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/models"
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

// PruneChargeSendsEvery deletes the notes of routed charges older than
// models.ChargeSendsKept, at start and then every interval, until ctx
// ends. A failed run is logged and tried again next time.
func (g *Gateway) PruneChargeSendsEvery(ctx context.Context, every time.Duration, logger *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := models.PruneChargeSends(ctx, g.DB, time.Now().Add(-models.ChargeSendsKept))
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Warn("prune charge notes", "error", err)
		case n > 0:
			logger.Info("pruned charge notes", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

package activities

import (
	"cmp"
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/adapters/reconcile"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/recon"
)

// Reconciler reconciles a connector's settlement day
// (internal/adapters/reconcile.Service).
type Reconciler interface {
	Reconcile(ctx context.Context, connector string, day time.Time) (reconcile.Summary, error)
	Post(ctx context.Context, connector string, day time.Time, progress func(id int64)) (reconcile.PostSummary, error)
	DaysDue(ctx context.Context, connector string, from, to time.Time) ([]time.Time, error)
	SettlementNotices(ctx context.Context, connector string, day time.Time) ([]string, error)
}

// ReconSummary and ReconPostSummary are what a day's reconciliation found
// and posted, as the workflows see them.
type (
	ReconSummary     = reconcile.Summary
	ReconPostSummary = reconcile.PostSummary
)

// ReconActivities run the settlement reconciliation.
type ReconActivities struct {
	Recon Reconciler
	// HeartbeatEvery is how often a day's matching beats its heart (30 s
	// when zero).
	HeartbeatEvery time.Duration
}

// ErrTypeNoSettlements: the connector gives no settlement reports here;
// reconciling it can never succeed.
const ErrTypeNoSettlements = "NoSettlements"

// ErrTypeBadReport: the acquirer's report of the day cannot be reconciled
// as it stands (recon.ErrBadReport); asking again gives the same report.
const ErrTypeBadReport = "BadReport"

// ReconDayInput names a connector's settlement day (YYYY-MM-DD).
type ReconDayInput struct {
	Connector string
	Day       string
	// NotifySchedule is the retry schedule of the day's settlement
	// notices (PAYGATE_NOTIFY_SCHEDULE); zero is notify's default.
	NotifySchedule notify.Schedule `json:",omitzero"`
}

func (in ReconDayInput) day() (time.Time, error) {
	d, err := time.Parse(time.DateOnly, in.Day)
	if err != nil {
		return time.Time{}, temporal.NewNonRetryableApplicationError("settlement day must be YYYY-MM-DD", ErrTypeNoSettlements, err)
	}
	return d, nil
}

func reconError(err error) error {
	switch {
	case errors.Is(err, reconcile.ErrUnknownConnector):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeNoSettlements, err)
	case errors.Is(err, recon.ErrBadReport):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadReport, err)
	}
	return err
}

// ReconcileSettlementDay reads the day's report and what is owed, matches
// them and stores the run. A report the acquirer cannot give yet is an
// error, retried; one that cannot be read is recorded on the day's run and
// not retried.
func (a *ReconActivities) ReconcileSettlementDay(ctx context.Context, in ReconDayInput) (reconcile.Summary, error) {
	d, err := in.day()
	if err != nil {
		return reconcile.Summary{}, err
	}
	// A day waits for its connector's lock while another day of it is
	// matched (reconcile.Service.Reconcile): its heart beats meanwhile, so
	// that the wait is not taken for a lost worker and the day started
	// again beside it.
	stop := beatEvery(ctx, cmp.Or(a.HeartbeatEvery, 30*time.Second))
	defer stop()
	s, err := a.Recon.Reconcile(ctx, in.Connector, d)
	return s, reconError(err)
}

// beatEvery records the activity's heartbeat every interval until stop is
// called or ctx ends.
func beatEvery(ctx context.Context, every time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
}

// PostSettlementDay posts the day's settled money to the ledger, beating
// its heart as it goes: a day of 100,000 lines takes a while.
func (a *ReconActivities) PostSettlementDay(ctx context.Context, in ReconDayInput) (reconcile.PostSummary, error) {
	d, err := in.day()
	if err != nil {
		return reconcile.PostSummary{}, err
	}
	var n int
	s, err := a.Recon.Post(ctx, in.Connector, d, func(id int64) {
		if n++; n%200 == 0 {
			activity.RecordHeartbeat(ctx, id)
		}
	})
	return s, reconError(err)
}

// RecordSettlementNotices records the notifications that tell merchant
// accounts what the day's settlement posted to them, and returns their
// notify ids for the workflow to deliver.
func (a *ReconActivities) RecordSettlementNotices(ctx context.Context, in ReconDayInput) ([]string, error) {
	d, err := in.day()
	if err != nil {
		return nil, err
	}
	return a.Recon.SettlementNotices(ctx, in.Connector, d)
}

// ReconDaysInput is a window of settlement days, From to To inclusive.
type ReconDaysInput struct {
	Connector string
	From, To  string
}

// ReconDaysDue lists the days of the window that have no reconciliation
// yet, or whose settled money the ledger could not all take (a capture
// posted late), oldest first.
func (a *ReconActivities) ReconDaysDue(ctx context.Context, in ReconDaysInput) ([]string, error) {
	from, err := time.Parse(time.DateOnly, in.From)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("from must be YYYY-MM-DD", ErrTypeNoSettlements, err)
	}
	to, err := time.Parse(time.DateOnly, in.To)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("to must be YYYY-MM-DD", ErrTypeNoSettlements, err)
	}
	if to.Sub(from) > 400*24*time.Hour {
		return nil, temporal.NewNonRetryableApplicationError("more than 400 days is too long a window", ErrTypeNoSettlements, nil)
	}
	due, err := a.Recon.DaysDue(ctx, in.Connector, from, to)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(due))
	for _, d := range due {
		out = append(out, d.Format(time.DateOnly))
	}
	return out, nil
}

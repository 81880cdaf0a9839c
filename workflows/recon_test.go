package workflows_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/workflows"
)

var racts *activities.ReconActivities

// TestSettlementNoticesFollowTheDeploymentsSchedule: a day's settlement
// notices are delivered on the retry schedule the deployment configured
// (PAYGATE_NOTIFY_SCHEDULE), passed from the daily schedule's input down
// to each notice's Redeliver child; a run without one keeps notify's
// default (zero).
func TestSettlementNoticesFollowTheDeploymentsSchedule(t *testing.T) {
	configured := notify.Schedule{Initial: 5 * time.Second, Max: 10 * time.Minute, Horizon: 24 * time.Hour}
	tests := []struct {
		name string
		in   workflows.ReconDueInput
		want notify.Schedule
	}{
		{"configured", workflows.ReconDueInput{Connector: "sim-acquirer", NotifySchedule: configured}, configured},
		{"a run begun before the setting reached it", workflows.ReconDueInput{Connector: "sim-acquirer"}, notify.Schedule{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newReconEnv()
			var mu sync.Mutex
			var got []workflows.RedeliverInput
			env.RegisterWorkflowWithOptions(func(_ workflow.Context, in workflows.RedeliverInput) (workflows.RedeliverResult, error) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, in)
				return workflows.RedeliverResult{}, nil
			}, workflow.RegisterOptions{Name: workflows.RedeliverWorkflowType})
			env.RegisterActivity(&activities.ReconActivities{})
			env.OnActivity(racts.ReconDaysDue, mock.Anything, mock.Anything).Return([]string{"2026-11-28"}, nil)
			env.OnActivity(racts.ReconcileSettlementDay, mock.Anything, mock.Anything).Return(activities.ReconSummary{}, nil)
			env.OnActivity(racts.PostSettlementDay, mock.Anything, mock.Anything).Return(activities.ReconPostSummary{}, nil)
			env.OnActivity(racts.RecordSettlementNotices, mock.Anything, mock.Anything).Return(
				func(context.Context, activities.ReconDayInput) ([]string, error) { return []string{"S-1", "S-2"}, nil })
			env.ExecuteWorkflow(workflows.ReconcileDueWorkflowType, tc.in)
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 2 {
				t.Fatalf("%d notices delivered, want 2", len(got))
			}
			for _, in := range got {
				if in.Schedule != tc.want {
					t.Errorf("notice %v delivered on %+v, want %+v", in.NotifyIDs, in.Schedule, tc.want)
				}
			}
		})
	}
}

// TestReconDaysDoNotFailOnData: a day whose report cannot be read
// completes with the reason in its result (the workflow never fails on
// data), and a scheduled run whose day failed for another cause (its
// acquirer unanswered for a day of retries) goes on to the next day.
func TestReconDaysDoNotFailOnData(t *testing.T) {
	badReport := temporal.NewNonRetryableApplicationError("settlement report of sim-bank 2026-11-27: the settlement report cannot be read: entry 2: line number 1 comes twice",
		activities.ErrTypeBadReport, nil)
	tests := []struct {
		name string
		// failing is each day's reconciliation error, by day.
		failing map[string]error
		// want is the days the run reports, with their errors.
		want map[string]string
	}{
		{"a report that cannot be read is the day's result", map[string]error{"2026-11-27": badReport},
			map[string]string{"2026-11-27": badReport.Error(), "2026-11-28": ""}},
		{"a day that failed holds up no other", map[string]error{"2026-11-27": errors.New("acquirer down")},
			map[string]string{"2026-11-28": ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newReconEnv()
			env.RegisterActivity(&activities.ReconActivities{})
			env.OnActivity(racts.ReconDaysDue, mock.Anything, mock.Anything).Return([]string{"2026-11-27", "2026-11-28"}, nil)
			env.OnActivity(racts.ReconcileSettlementDay, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in activities.ReconDayInput) (activities.ReconSummary, error) {
					if err := tc.failing[in.Day]; err != nil {
						if !temporal.IsApplicationError(err) {
							// Retries ran out: what the activity's last attempt left.
							err = temporal.NewNonRetryableApplicationError(err.Error(), "Unavailable", err)
						}
						return activities.ReconSummary{}, err
					}
					return activities.ReconSummary{Day: in.Day, Lines: 1}, nil
				})
			env.OnActivity(racts.PostSettlementDay, mock.Anything, mock.Anything).Return(activities.ReconPostSummary{Posted: 1}, nil)
			env.OnActivity(racts.RecordSettlementNotices, mock.Anything, mock.Anything).Return([]string(nil), nil)
			env.ExecuteWorkflow(workflows.ReconcileDueWorkflowType, workflows.ReconDueInput{Connector: "sim-bank"})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatalf("the run failed: %v", err)
			}
			var out workflows.ReconDueResult
			if err := env.GetWorkflowResult(&out); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for i, d := range out.Days {
				day := d.Summary.Day
				if day == "" {
					day = "2026-11-27" // a refused day's summary is empty; only that day fails here
				}
				got[day] = d.Error
				if d.Error == "" && d.Posted.Posted != 1 {
					t.Errorf("day %d posted %+v, want 1", i, d.Posted)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("days %v, want %v", got, tc.want)
			}
			for day, want := range tc.want {
				if g, ok := got[day]; !ok || !strings.Contains(g, want) {
					t.Errorf("day %s: error %q, want %q", day, g, want)
				}
			}
		})
	}
}

// newReconEnv is a test environment holding the reconciliation's two
// workflows.
func newReconEnv() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.ReconcileDue, workflow.RegisterOptions{Name: workflows.ReconcileDueWorkflowType})
	env.RegisterWorkflowWithOptions(workflows.ReconcileDay, workflow.RegisterOptions{Name: workflows.ReconcileDayWorkflowType})
	return env
}

// slowReconciler matches a day only once the activity's heart has beaten:
// a day waiting for its connector's lock must not look like a lost worker.
type slowReconciler struct {
	beat <-chan struct{}
}

func (r slowReconciler) Reconcile(ctx context.Context, _ string, _ time.Time) (activities.ReconSummary, error) {
	select {
	case <-r.beat:
		return activities.ReconSummary{Lines: 1}, nil
	case <-ctx.Done():
		return activities.ReconSummary{}, ctx.Err()
	}
}

func (slowReconciler) Post(context.Context, string, time.Time, func(int64)) (activities.ReconPostSummary, error) {
	return activities.ReconPostSummary{}, nil
}

func (slowReconciler) DaysDue(context.Context, string, time.Time, time.Time) ([]time.Time, error) {
	return nil, nil
}

func (slowReconciler) SettlementNotices(context.Context, string, time.Time) ([]string, error) {
	return nil, nil
}

// TestReconcilingADayBeatsItsHeart: ReconcileSettlementDay beats its heart
// while it matches (and waits for its connector's lock), so a day held
// behind another for longer than the heartbeat timeout is not started
// again beside it.
func TestReconcilingADayBeatsItsHeart(t *testing.T) {
	env := newReconEnv()
	beat := make(chan struct{})
	var once sync.Once
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { once.Do(func() { close(beat) }) })
	env.RegisterActivity(&activities.ReconActivities{Recon: slowReconciler{beat: beat}, HeartbeatEvery: 10 * time.Millisecond})
	env.ExecuteWorkflow(workflows.ReconcileDayWorkflowType, activities.ReconDayInput{Connector: "sim-bank", Day: "2026-11-20"})
	var res workflows.ReconDayResult
	if err := env.GetWorkflowResult(&res); err != nil || res.Error != "" || res.Summary.Lines != 1 {
		t.Fatalf("day = %+v, %v; want it matched after a heartbeat", res, err)
	}
}

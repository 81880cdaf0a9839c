package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
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
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.RegisterWorkflowWithOptions(workflows.ReconcileDue, workflow.RegisterOptions{Name: workflows.ReconcileDueWorkflowType})
			env.RegisterWorkflowWithOptions(workflows.ReconcileDay, workflow.RegisterOptions{Name: workflows.ReconcileDayWorkflowType})
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

package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/workflows"
)

// TestScheduledPayoutsPayTheScheduledDay: a run its schedule meant for a
// day pays that day even when it starts after midnight (a caught-up action
// after an outage): planned for the day it started on, a weekly or monthly
// schedule due the day before was skipped without a word. A run started by
// hand pays the day it starts on.
func TestScheduledPayoutsPayTheScheduledDay(t *testing.T) {
	late := time.Date(2027, 3, 8, 0, 30, 0, 0, time.UTC)
	tests := []struct {
		name      string
		scheduled time.Time // TemporalScheduledStartTime; zero: started by hand
		want      string
	}{
		{"caught up after midnight", time.Date(2027, 3, 7, 7, 0, 0, 0, time.UTC), "2027-03-07"},
		{"on time", time.Date(2027, 3, 8, 0, 0, 0, 0, time.UTC), "2027-03-08"},
		{"started by hand", time.Time{}, "2027-03-08"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.RegisterWorkflowWithOptions(workflows.ScheduledPayouts, workflow.RegisterOptions{Name: workflows.ScheduledPayoutsWorkflowType})
			var pa *activities.PayoutActivities
			env.RegisterActivity(pa)
			planned := ""
			env.OnActivity(pa.PlanScheduledPayouts, mock.Anything, mock.Anything).Return(
				func(_ context.Context, day string) (activities.ScheduledPayoutPlan, error) {
					planned = day
					return activities.ScheduledPayoutPlan{}, nil
				})
			env.SetStartTime(late)
			if !tc.scheduled.IsZero() {
				key := temporal.NewSearchAttributeKeyTime("TemporalScheduledStartTime")
				if err := env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(key.ValueSet(tc.scheduled))); err != nil {
					t.Fatal(err)
				}
			}
			env.ExecuteWorkflow(workflows.ScheduledPayoutsWorkflowType, workflows.ScheduledPayoutsInput{})
			var res workflows.ScheduledPayoutsResult
			if err := env.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			if planned != tc.want || res.Day != tc.want {
				t.Errorf("planned %q, result's day %q; want %q", planned, res.Day, tc.want)
			}
		})
	}
}

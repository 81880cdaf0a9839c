package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/workflows"
)

// PersonalDataEvery is how often the PersonalData workflow runs.
const PersonalDataEvery = 24 * time.Hour

// EnsurePersonalDataSchedule makes the schedule that runs the PersonalData
// workflow daily with the configured retention, or brings an existing one
// to this configuration: every worker calls it on start, and the last
// started sets the retention. A new schedule runs once at once, so that
// rows an upgrade left in clear are sealed without waiting a day.
func (g *Gateway) EnsurePersonalDataSchedule(ctx context.Context) error {
	in := workflows.PersonalDataInput{RetentionDays: g.Config.Worker.PersonalDataRetentionDays}
	action := &client.ScheduleWorkflowAction{
		ID:        workflows.PersonalDataWorkflowID,
		Workflow:  workflows.PersonalDataWorkflowType,
		Args:      []any{in},
		TaskQueue: workflows.TaskQueue,
		// A run that fails is not retried at once: the next day's run
		// takes up where it stopped.
		WorkflowExecutionTimeout: 12 * time.Hour,
	}
	sc := g.Temporal.ScheduleClient()
	err := retrySchedule(ctx, func(ctx context.Context) error {
		_, err := sc.Create(ctx, client.ScheduleOptions{
			ID:                 workflows.PersonalDataScheduleID,
			Spec:               client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: PersonalDataEvery}}},
			Action:             action,
			Overlap:            enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
			TriggerImmediately: true,
		})
		return err
	})
	if err == nil {
		return nil
	}
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return fmt.Errorf("create the personal-data schedule: %w", err)
	}
	err = retrySchedule(ctx, func(ctx context.Context) error {
		return sc.GetHandle(ctx, workflows.PersonalDataScheduleID).Update(ctx, client.ScheduleUpdateOptions{
			DoUpdate: func(u client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
				s := u.Description.Schedule
				s.Action = action
				s.Spec = &client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: PersonalDataEvery}}}
				return &client.ScheduleUpdate{Schedule: &s}, nil
			},
		})
	})
	if err != nil {
		return fmt.Errorf("update the personal-data schedule: %w", err)
	}
	return nil
}

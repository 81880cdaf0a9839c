package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/workflows"
)

// The daily reconciliation: at 06:00 UTC, when the acquirers have sent the
// day's reports, each connector's day is reconciled, with any day of the
// week before that was missed.
const (
	ReconCron         = "0 6 * * *"
	ReconBackfillDays = 7
)

// ScheduledPayoutsCron runs the accounts' payout schedules daily at 07:00
// UTC, after the morning's reconciliation has moved the settled money to
// the available balances.
const ScheduledPayoutsCron = "0 7 * * *"

// EnsureScheduledPayouts makes the schedule that runs the accounts' payout
// schedules daily, or brings an existing one to this configuration.
func (g *Gateway) EnsureScheduledPayouts(ctx context.Context) error {
	return g.ensureSchedule(ctx, workflows.ScheduledPayoutsScheduleID, ScheduledPayoutsCron, &client.ScheduleWorkflowAction{
		ID:                       "scheduled-payouts",
		Workflow:                 workflows.ScheduledPayoutsWorkflowType,
		Args:                     []any{workflows.ScheduledPayoutsInput{NotifySchedule: g.Config.NotifySchedule}},
		TaskQueue:                workflows.TaskQueue,
		WorkflowExecutionTimeout: 23 * time.Hour,
	})
}

// EnsureReconSchedules makes, for every connector that gives settlement
// reports, the schedule that reconciles it daily, or brings an existing one
// to this configuration: every worker calls it on start.
func (g *Gateway) EnsureReconSchedules(ctx context.Context) error {
	set, err := g.connectorSet()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(set.Settlements))
	for n := range set.Settlements {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := g.ensureReconSchedule(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

func (g *Gateway) ensureReconSchedule(ctx context.Context, connector string) error {
	return g.ensureSchedule(ctx, workflows.ReconScheduleID(connector), ReconCron, &client.ScheduleWorkflowAction{
		ID:       "recon-due/" + connector,
		Workflow: workflows.ReconcileDueWorkflowType,
		Args: []any{workflows.ReconDueInput{Connector: connector, BackfillDays: ReconBackfillDays,
			NotifySchedule: g.Config.NotifySchedule}},
		TaskQueue:                workflows.TaskQueue,
		WorkflowExecutionTimeout: 23 * time.Hour,
	})
}

// ensureSchedule makes a daily schedule of action at cron (UTC), or brings
// an existing one to it. A worker down at the hour for less than a day
// still runs the day when it comes back; runs never overlap.
func (g *Gateway) ensureSchedule(ctx context.Context, id, cron string, action *client.ScheduleWorkflowAction) error {
	spec := client.ScheduleSpec{CronExpressions: []string{cron}}
	sc := g.Temporal.ScheduleClient()
	err := retrySchedule(ctx, func(ctx context.Context) error {
		_, err := sc.Create(ctx, client.ScheduleOptions{
			ID: id, Spec: spec, Action: action,
			Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
			CatchupWindow: 24 * time.Hour,
		})
		return err
	})
	if err == nil {
		return nil
	}
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return fmt.Errorf("create the schedule %s: %w", id, err)
	}
	err = retrySchedule(ctx, func(ctx context.Context) error {
		return sc.GetHandle(ctx, id).Update(ctx, client.ScheduleUpdateOptions{
			DoUpdate: func(u client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
				s := u.Description.Schedule
				s.Action = action
				s.Spec = &spec
				return &client.ScheduleUpdate{Schedule: &s}, nil
			},
		})
	})
	if err != nil {
		return fmt.Errorf("update the schedule %s: %w", id, err)
	}
	return nil
}

package workflows

import (
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/notify"
)

// ra names the reconciliation activities; never dereferenced.
var ra *activities.ReconActivities

// ReconDayWorkflowID is the id of a connector's settlement day's
// reconciliation.
func ReconDayWorkflowID(connector, day string) string { return "recon/" + connector + "/" + day }

// ReconScheduleID is the id of the schedule that reconciles a connector
// daily.
func ReconScheduleID(connector string) string { return "paygate-recon-" + connector }

// ReconDayResult is what a day's reconciliation found and posted. Error is
// set, and the rest empty, when the day could not be reconciled for what it
// is (a connector without settlement reports, a malformed day, a report
// that cannot be read): the workflow completes, it does not fail on data.
type ReconDayResult struct {
	Summary activities.ReconSummary
	Posted  activities.ReconPostSummary
	// Notices are the settlement notifications recorded for the merchant
	// accounts the day paid.
	Notices []string `json:",omitempty"`
	Error   string   `json:",omitempty"`
}

// reconOptions: the report is fetched over HTTP from the acquirer, which
// may be down or not have the day's report yet, so it is retried with
// backoff for up to a day; posting a big day beats its heart.
var reconOptions = workflow.ActivityOptions{
	StartToCloseTimeout:    10 * time.Minute,
	HeartbeatTimeout:       2 * time.Minute,
	ScheduleToCloseTimeout: 24 * time.Hour,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval: 5 * time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Minute,
		NonRetryableErrorTypes: []string{activities.ErrTypeNoSettlements, activities.ErrTypeBadReport},
	},
}

// ReconcileDay reconciles one connector's settlement day: match, store,
// post. Running it again gives the same items and posts only what was not
// posted.
func ReconcileDay(ctx workflow.Context, in activities.ReconDayInput) (ReconDayResult, error) {
	ctx = workflow.WithActivityOptions(ctx, reconOptions)
	var out ReconDayResult
	if err := workflow.ExecuteActivity(ctx, ra.ReconcileSettlementDay, in).Get(ctx, &out.Summary); err != nil {
		return dataError(out, err)
	}
	if err := workflow.ExecuteActivity(ctx, ra.PostSettlementDay, in).Get(ctx, &out.Posted); err != nil {
		return dataError(out, err)
	}
	if err := workflow.ExecuteActivity(ctx, ra.RecordSettlementNotices, in).Get(ctx, &out.Notices); err != nil {
		return dataError(out, err)
	}
	// Each notice is delivered by a Redeliver child that outlives this run,
	// on the durable schedule orders use (the deployment's, since
	// 2026-11-29: the notify default before); one already under way (the
	// day run again) is left to itself.
	for _, id := range out.Notices {
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:        "notify/" + id,
			ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
		})
		child := workflow.ExecuteChildWorkflow(cctx, RedeliverWorkflowType, RedeliverInput{NotifyIDs: []string{id}, Schedule: in.NotifySchedule})
		if err := child.GetChildWorkflowExecution().Get(ctx, nil); err != nil && !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
			workflow.GetLogger(ctx).Error("settlement notice not started", "notify_id", id, "error", err)
		}
	}
	return out, nil
}

// dataError completes the workflow with the error in its result when the
// error is the input's, and fails it otherwise (the retries ran out).
func dataError(out ReconDayResult, err error) (ReconDayResult, error) {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && (app.Type() == activities.ErrTypeNoSettlements || app.Type() == activities.ErrTypeBadReport) {
		out.Error = app.Error()
		return out, nil
	}
	return out, err
}

// ReconDueInput is a connector and how many days back a scheduled run
// looks for days never reconciled.
type ReconDueInput struct {
	Connector    string
	BackfillDays int
	// NotifySchedule is the retry schedule of the settlement notices the
	// days send (PAYGATE_NOTIFY_SCHEDULE); zero is notify's default.
	NotifySchedule notify.Schedule `json:",omitzero"`
}

// ReconDueResult is every day a scheduled run reconciled.
type ReconDueResult struct {
	Days []ReconDayResult
}

// ReconcileDue reconciles today's settlement day and every day of the
// backfill window that was missed (the worker was down, the acquirer's
// report was late) or whose money the ledger could not all take, each as
// its own ReconcileDay child; a day already being reconciled is left to
// that run.
func ReconcileDue(ctx workflow.Context, in ReconDueInput) (ReconDueResult, error) {
	today := workflow.Now(ctx).UTC()
	from := today.AddDate(0, 0, -max(in.BackfillDays, 0))
	var days []string
	actx := workflow.WithActivityOptions(ctx, reconOptions)
	err := workflow.ExecuteActivity(actx, ra.ReconDaysDue, activities.ReconDaysInput{
		Connector: in.Connector, From: from.Format(time.DateOnly), To: today.Format(time.DateOnly),
	}).Get(ctx, &days)
	if err != nil {
		return ReconDueResult{}, err
	}
	var out ReconDueResult
	for _, d := range days {
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:            ReconDayWorkflowID(in.Connector, d),
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		})
		var r ReconDayResult
		err := workflow.ExecuteChildWorkflow(cctx, ReconcileDayWorkflowType, activities.ReconDayInput{Connector: in.Connector, Day: d,
			NotifySchedule: in.NotifySchedule}).Get(ctx, &r)
		if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
			continue
		}
		if err != nil && workflow.GetVersion(ctx, changeReconDayFailedGoesOn, workflow.DefaultVersion, 1) == 1 {
			// A day that failed (its acquirer did not answer for a day) is
			// due again tomorrow; it does not hold up the days after it.
			workflow.GetLogger(ctx).Error("settlement day not reconciled", "connector", in.Connector, "day", d, "error", err)
			continue
		}
		if err != nil {
			return out, err
		}
		out.Days = append(out.Days, r)
	}
	return out, nil
}

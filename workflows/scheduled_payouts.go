package workflows

import (
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/payout"
)

// ScheduledPayoutsInput is what the daily run of the accounts' payout
// schedules starts from.
type ScheduledPayoutsInput struct {
	NotifySchedule notify.Schedule
}

// ScheduledPayoutsResult is what a day's run started and why it started
// nothing for the other accounts that were due.
type ScheduledPayoutsResult struct {
	Day     string
	Started []string // payout workflow ids
	Skipped []string // merchant/account: why
}

// searchScheduledStart is the time a Temporal schedule meant an action to
// start, which the server sets on the workflows it starts.
var searchScheduledStart = temporal.NewSearchAttributeKeyTime("TemporalScheduledStartTime")

// scheduledDay is the day (UTC) a run pays for: the day its schedule meant
// it for, so a run caught up after midnight (an outage, a worker late)
// pays the day it missed, weekly and monthly schedules included; the day
// it starts on for a run started by hand.
func scheduledDay(ctx workflow.Context) time.Time {
	at, ok := workflow.GetTypedSearchAttributes(ctx).GetTime(searchScheduledStart)
	if !ok || at.IsZero() {
		at = workflow.Now(ctx)
	}
	return at.UTC()
}

// ScheduledPayouts pays out the available balance of every account whose
// payout schedule is due today, each through a Payout workflow of its own
// (the same one a merchant's request starts) that outlives this run. A
// day's payout has one request id per account, and a payout workflow id is
// never reused, so a run repeated pays nothing twice.
func ScheduledPayouts(ctx workflow.Context, in ScheduledPayoutsInput) (ScheduledPayoutsResult, error) {
	day := scheduledDay(ctx).Format(time.DateOnly)
	out := ScheduledPayoutsResult{Day: day}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 5 * time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute,
			NonRetryableErrorTypes: []string{"InvalidDay"}},
	})
	var plan activities.ScheduledPayoutPlan
	if err := workflow.ExecuteActivity(actx, pa.PlanScheduledPayouts, day).Get(ctx, &plan); err != nil {
		return out, err
	}
	for _, s := range plan.Skipped {
		out.Skipped = append(out.Skipped, s.MerchantID+"/"+s.AccountID+": "+s.Reason)
	}
	for _, p := range plan.Payouts {
		id := PayoutWorkflowID(p.MerchantID, p.RequestID)
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:            id,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
			// A payout of shape 1 finds itself by these from its start.
			TypedSearchAttributes: temporal.NewSearchAttributes(
				SearchMerchantID.ValueSet(p.MerchantID), SearchAccountID.ValueSet(p.AccountID),
				SearchRequestID.ValueSet(p.RequestID), SearchTransactionID.ValueSet(p.TransactionID),
				SearchPayoutStatus.ValueSet(string(payout.StatusNew))),
		})
		child := workflow.ExecuteChildWorkflow(cctx, PayoutWorkflowType, PayoutInput{
			ID: id, MerchantID: p.MerchantID, AccountID: p.AccountID, RequestID: p.RequestID, TransactionID: p.TransactionID,
			ShortReferenceID: p.ShortReferenceID, Instruction: p.Instruction, NotifyURL: p.Instruction.Request.NotifyURL,
			Mode: p.Mode, Run: 1, NotifySchedule: in.NotifySchedule,
			Shape: CurrentPayoutShape,
		})
		err := child.GetChildWorkflowExecution().Get(ctx, nil)
		switch {
		case err == nil:
			out.Started = append(out.Started, id)
		case temporal.IsWorkflowExecutionAlreadyStartedError(err):
			out.Skipped = append(out.Skipped, p.MerchantID+"/"+p.AccountID+": the day's payout is under way")
		default:
			return out, err
		}
	}
	return out, nil
}

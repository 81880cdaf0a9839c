package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
)

// PersonalDataInput is a run of the personal-data workflow.
type PersonalDataInput struct {
	// RetentionDays is how long closed orders and final payouts keep their
	// personal data after their last change; 0 keeps it until it is
	// erased on request.
	RetentionDays int
	// Batch is how many rows of each kind one activity handles; 0 is
	// DefaultPersonalDataBatch.
	Batch int
}

// PersonalDataResult counts what a run (up to its continuation) sealed and
// erased.
type PersonalDataResult struct {
	SealedOrders  int
	SealedPayouts int
	ErasedOrders  int
	ErasedPayouts int
}

// DefaultPersonalDataBatch keeps each activity's transaction short.
const DefaultPersonalDataBatch = 500

// personalDataBatchesPerRun bounds a run's history; a run with more to do
// continues as new.
const personalDataBatchesPerRun = 200

var personalDataOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 2 * time.Minute,
	RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute},
}

// PersonalData is the daily run the PersonalDataScheduleID schedule starts:
// it seals what older versions left in clear, then erases the personal
// data of closed orders and final payouts past the retention period, a
// batch at a time, until none is left.
func PersonalData(ctx workflow.Context, in PersonalDataInput) (PersonalDataResult, error) {
	ctx = workflow.WithActivityOptions(ctx, personalDataOptions)
	batch := in.Batch
	if batch <= 0 {
		batch = DefaultPersonalDataBatch
	}
	var res PersonalDataResult
	batches := 0
	for {
		if batches == personalDataBatchesPerRun {
			return res, workflow.NewContinueAsNewError(ctx, PersonalDataWorkflowType, in)
		}
		batches++
		var sealed activities.SealLegacyResult
		if err := workflow.ExecuteActivity(ctx, a.SealLegacyPersonalData, activities.SealLegacyInput{Limit: batch}).Get(ctx, &sealed); err != nil {
			return res, err
		}
		res.SealedOrders += sealed.Orders
		res.SealedPayouts += sealed.Payouts
		if sealed.Orders < batch && sealed.Payouts < batch {
			break
		}
	}
	if in.RetentionDays <= 0 {
		return res, nil
	}
	before := workflow.Now(ctx).Add(-time.Duration(in.RetentionDays) * 24 * time.Hour)
	for {
		if batches == personalDataBatchesPerRun {
			return res, workflow.NewContinueAsNewError(ctx, PersonalDataWorkflowType, in)
		}
		batches++
		var erased activities.EraseExpiredResult
		err := workflow.ExecuteActivity(ctx, a.EraseExpiredPersonalData, activities.EraseExpiredInput{Before: before, Limit: batch}).Get(ctx, &erased)
		if err != nil {
			return res, err
		}
		res.ErasedOrders += erased.Orders
		res.ErasedPayouts += erased.Payouts
		if erased.Orders < batch && erased.Payouts < batch {
			return res, nil
		}
	}
}

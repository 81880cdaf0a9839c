package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
)

// la is the nil pointer through which the workflows name the ledger
// activities.
var la *activities.LedgerActivities

// ledgerOptions run an order's ledger posting: the default retry policy
// (retried until it succeeds) since the posting is idempotent by its
// reference and the merchant's money must reach the ledger eventually.
var ledgerOptions = workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second}

// ledgerLocalOptions are the quick first try of a posting (postToLedger):
// three attempts within five seconds, so that a ledger in trouble holds
// the order's workflow task, and the merchant's answer, only briefly.
var ledgerLocalOptions = workflow.LocalActivityOptions{
	ScheduleToCloseTimeout: 5 * time.Second,
	StartToCloseTimeout:    2 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval: 100 * time.Millisecond, BackoffCoefficient: 2, MaximumAttempts: 3,
		NonRetryableErrorTypes: []string{activities.ErrTypeLedgerRefused},
	},
}

// ledgerMove is what an order posting does to the merchant's deposit.
type ledgerMove int

const (
	ledgerCredit ledgerMove = iota // a paid order
	ledgerDebit                    // a settled refund
)

// postToLedger posts an order's money to the ledger beside the order, not in
// its way: the posting runs in a goroutine of its own, so neither the
// merchant's answer nor the order's next step waits for it, and a ledger
// that is down never fails the payment.
// The order ends only once every posting is done (inFlight).
//
// From version 2 the posting is first tried as a local activity, a few
// quick attempts inside the order's workflow task: the common case then
// costs Temporal no activity task and no second workflow task. Only a
// posting those attempts cannot make (the ledger slow or down) goes on as
// a regular activity, retried until it succeeds.
func (w *orderWorkflow) postToLedger(ctx workflow.Context, move ledgerMove, in activities.LedgerOrderInput) {
	v := w.version(ctx, changeLedgerPosting, 2)
	if v == workflow.DefaultVersion {
		return
	}
	if in.Amount <= 0 {
		// A capture of nothing moves no money.
		return
	}
	w.inFlight++
	workflow.Go(ctx, func(ctx workflow.Context) {
		defer func() { w.inFlight-- }()
		act := la.LedgerCreditOrder
		if move == ledgerDebit {
			act = la.LedgerDebitRefund
		}
		var res activities.LedgerPostingResult
		var err error
		local := v >= 2
		if local {
			err = workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, ledgerLocalOptions), act, in).Get(ctx, &res)
		}
		if !local || err != nil && errorType(err) != activities.ErrTypeLedgerRefused {
			err = workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, ledgerOptions), act, in).Get(ctx, &res)
		}
		if err != nil {
			// Only a posting the ledger refuses for its values gets here
			// (LedgerRefused): the order goes on, and the log says what
			// an operator must reconcile.
			workflow.GetLogger(ctx).Error("ledger posting refused", "reference", in.Reference, "amount", in.Amount,
				"currency", in.Currency, "error", err)
		}
	})
}

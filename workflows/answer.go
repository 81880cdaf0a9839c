package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
)

// answerOptions run AnswerLocally once: it cannot fail, and an answer that
// did not reach the request is read by the request's update instead.
var answerOptions = workflow.LocalActivityOptions{
	StartToCloseTimeout: 5 * time.Second,
	RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
}

// answerLocally leaves the payment's answer for the request that started
// the order eagerly, if it waits in this worker's process; the request gets
// it once Temporal has recorded this task (localanswer.Board). The request
// falls back to the authorise update when nothing comes, so a failure here
// only costs it time.
func (w *orderWorkflow) answerLocally(ctx workflow.Context, res PaymentResult) {
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, answerOptions), a.AnswerLocally,
		activities.AnswerLocallyInput{WorkflowID: w.id, Result: res}).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Warn("answer not handed to the waiting request", "error", err)
	}
}

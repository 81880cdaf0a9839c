package activities

import (
	"context"

	"github.com/paygate/paygate/internal/domain/order"
)

// LocalAnswers is where a payment's answer is left for the API request
// that started the order eagerly in this process and waits for it; it goes
// to the request once Temporal has recorded the workflow task that made it
// (localanswer.Board).
type LocalAnswers interface {
	Stage(workflowID string, res order.Result) bool
}

// AnswerLocallyInput is a payment's answer for the request that waits for
// it in the worker's process, if one does.
type AnswerLocallyInput struct {
	WorkflowID string
	Result     order.Result
}

// AnswerLocally leaves a payment's answer for the request waiting for it in
// this process, to be handed over once this workflow task is recorded. It
// is only told what the record already holds, so it never fails: where
// nobody waits (another process started the order, or the request gave up
// and asks Temporal), the answer is dropped.
func (a *Activities) AnswerLocally(_ context.Context, in AnswerLocallyInput) error {
	if a.Answers != nil {
		a.Answers.Stage(in.WorkflowID, in.Result)
	}
	return nil
}

package activities

import (
	"context"

	"github.com/paygate/paygate/internal/domain/order"
)

// LocalAnswers is where a payment's answer is handed to the API request
// that started the order eagerly in this process and waits for it
// (localanswer.Board).
type LocalAnswers interface {
	Deliver(workflowID string, res order.Result) bool
}

// AnswerLocallyInput is a payment's answer for the request that waits for
// it in the worker's process, if one does.
type AnswerLocallyInput struct {
	WorkflowID string
	Result     order.Result
}

// AnswerLocally hands a payment's answer to the request waiting for it in
// this process. It is only told what the record already holds, so it
// never fails: where nobody waits (another process started the order, or
// the request gave up and asks Temporal), the answer is dropped.
func (a *Activities) AnswerLocally(_ context.Context, in AnswerLocallyInput) error {
	if a.Answers != nil {
		a.Answers.Deliver(in.WorkflowID, in.Result)
	}
	return nil
}

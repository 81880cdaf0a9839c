package workflows_test

import (
	"reflect"
	"testing"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/workflows"
)

// TestOrderAnswersLocally: an order started eagerly by an API with a
// worker in its process hands the payment's answer to the waiting request
// by AnswerLocally once, whatever the answer, and an order started the usual
// way hands none (its request reads the update).
func TestOrderAnswersLocally(t *testing.T) {
	tests := []struct {
		name        string
		eager       bool
		risk        risk.Result
		authorise   func(n int) (activities.ChargeOutcome, error)
		wantStatus  status.Payment
		wantCode    string
		wantAnswers int
	}{
		{name: "approved, started eagerly", eager: true, risk: accepted, authorise: answer(approved(amount)),
			wantStatus: status.Paid, wantCode: "0000", wantAnswers: 1},
		{name: "declined, started eagerly", eager: true, risk: accepted, authorise: answer(declined("insufficient_funds")),
			wantStatus: status.Failed, wantCode: "A0002", wantAnswers: 1},
		{name: "refused by risk, started eagerly", eager: true, risk: rejectedCard,
			wantStatus: status.Failed, wantCode: "R0002", wantAnswers: 1},
		{name: "approved, started by update", risk: accepted, authorise: answer(approved(amount)),
			wantStatus: status.Paid, wantCode: "0000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acq := &acquirer{risk: tc.risk, authorise: tc.authorise}
			env := newEnv(t, acq)
			in := orderInput("auto")
			in.Shape = workflows.CurrentOrderShape
			in.AnswerLocally = tc.eager
			res := run(t, env, in)
			if res.PaymentStatus != tc.wantStatus || res.ResultCode != tc.wantCode {
				t.Errorf("result %d %s, want %d %s", res.PaymentStatus, res.ResultCode, tc.wantStatus, tc.wantCode)
			}
			if len(acq.answers) != tc.wantAnswers {
				t.Fatalf("%d answers handed over locally, want %d", len(acq.answers), tc.wantAnswers)
			}
			for _, a := range acq.answers {
				if want := workflows.OrderWorkflowID(merchantID, accountID, orderNo); a.WorkflowID != want {
					t.Errorf("answer for workflow %q, want %q", a.WorkflowID, want)
				}
				if !reflect.DeepEqual(a.Result, res) {
					t.Errorf("answer handed over %+v, want the workflow's result %+v", a.Result, res)
				}
			}
		})
	}
}

package workflows_test

import (
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/workflows"
)

// TestOrderContinuesAsNew: an order that takes its run's share of refunds
// continues as new with its amounts, sequence numbers and deadlines; the
// next run takes further refunds where the first left off and ends when the
// order is refunded in full.
func TestOrderContinuesAsNew(t *testing.T) {
	const perRun = 3
	refundAt := func(env *testsuite.TestWorkflowEnvironment, after time.Duration, minor int64, results *[]workflows.OperationResult) {
		env.RegisterDelayedCallback(func() {
			env.UpdateWorkflow(workflows.UpdateRefund, "", &testsuite.TestUpdateCallback{
				OnAccept: func() {}, OnReject: func(err error) { t.Errorf("refund rejected: %v", err) },
				OnComplete: func(v any, err error) {
					if err != nil {
						t.Errorf("refund: %v", err)
						return
					}
					*results = append(*results, v.(workflows.OperationResult))
				},
			}, workflows.RefundRequest{Entry: entry, RefundAmount: minor})
		}, after)
	}

	// The first run: paid, then three refunds of 1.00, then it hands over.
	acq := &acquirer{risk: accepted, authorise: answer(approved(amount))}
	env := newEnv(t, acq)
	var first []workflows.OperationResult
	for i := range perRun {
		refundAt(env, time.Duration(i+1)*time.Hour, 100, &first)
	}
	in := orderInput("auto")
	in.OperationsPerRun = perRun
	env.ExecuteWorkflow(workflows.OrderWorkflowType, in)
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("first run ended with %v, want continue-as-new", err)
	}
	if len(first) != perRun {
		t.Fatalf("%d refunds answered in the first run, want %d", len(first), perRun)
	}
	var next workflows.OrderInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	r := next.Resume
	if r == nil || r.Status != status.PartiallyRefunded || r.Captured != amount || r.Refunded != 300 || r.RefundSeq != 3 ||
		r.ChargeID != chargeID || r.Runs != 1 || r.Result.TransactionID != txID || r.Card.Token != cardToken {
		t.Fatalf("carried state = %+v", r)
	}
	if next.TransactionID != txID || next.OperationsPerRun != perRun {
		t.Errorf("next input = %+v", next)
	}

	// The next run: one more refund numbered after the first three, then
	// the rest, and the order ends refunded.
	acq2 := &acquirer{risk: accepted}
	env2 := newEnv(t, acq2)
	env2.SetStartTime(r.Since.Add(4 * time.Hour))
	var second []workflows.OperationResult
	refundAt(env2, time.Hour, 100, &second)
	refundAt(env2, 2*time.Hour, amount-400, &second)
	res := run(t, env2, next)
	if res.TransactionID != txID || res.ResultCode != "0000" {
		t.Errorf("result of the later run = %+v", res)
	}
	if len(second) != 2 || second[0].RefundReferenceID != txID+"-04" || second[1].RefundReferenceID != txID+"-05" ||
		second[1].PaymentStatus != status.Refunded {
		t.Fatalf("refunds of the later run = %+v", second)
	}
	if len(acq2.records) != 0 || len(acq2.auths) != 0 || len(acq2.risks) != 0 {
		t.Errorf("the later run paid again: %d records, %d charges, %d risk checks", len(acq2.records), len(acq2.auths), len(acq2.risks))
	}
	if last := acq2.states[len(acq2.states)-1]; last.RefundedAmount != amount || last.Version <= r.Writes {
		t.Errorf("last state written = %+v (carried writes %d)", last, r.Writes)
	}
}

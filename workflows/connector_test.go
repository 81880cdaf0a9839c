package workflows_test

import (
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/capture"
	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/workflows"
)

// TestOrderKeepsItsConnector runs a manual-capture order through payment,
// capture and a refund that settles later, and checks that every acquirer
// activity goes to the connector the order's input names (the default when
// it names none, as orders started before accounts chose do), with the
// order's currency, and that the record and the answer show the connector
// that answered the charge.
func TestOrderKeepsItsConnector(t *testing.T) {
	tests := []struct {
		name       string
		input      string // the connector the order's input names
		answeredBy string // the name the Authorise activity reports
		want       string
	}{
		{"an order of a sim-bank account", "sim-bank", "sim-bank", "sim-bank"},
		{"an order naming no connector", "", "", workflows.DefaultConnector},
		{"the answering connector's name is recorded", "sim-bank", "sim-bank-2", "sim-bank-2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acq := &acquirer{
				risk: accepted,
				authorise: func(int) (activities.ChargeOutcome, error) {
					o := approved(0)
					o.Connector = tc.answeredBy
					return o, nil
				},
				refundStatus: func(int) refund.Status { return refund.Pending },
			}
			env := newEnv(t, acq)
			captureThenRefund(t, env)
			in := orderInput(capture.Manual)
			in.Connector = tc.input
			res := run(t, env, in)

			if res.Connector != tc.want {
				t.Errorf("result connector = %q, want %q", res.Connector, tc.want)
			}
			if len(acq.finish) != 1 || acq.finish[0].Connector != tc.want {
				t.Errorf("FinishOrder inputs = %+v, want the connector %q", acq.finish, tc.want)
			}
			route := tc.input
			if route == "" {
				route = workflows.DefaultConnector
			}
			if len(acq.auths) != 1 || acq.auths[0].Connector != route {
				t.Errorf("Authorise inputs = %+v, want one to %q", acq.auths, route)
			}
			if len(acq.captures) != 1 || acq.captures[0] != (activities.CaptureInput{Connector: route, ChargeID: chargeID,
				IdempotencyKey: "order:M100:A200:ORD-1:capture", Amount: amount, Currency: currency}) {
				t.Errorf("CaptureCharge inputs = %+v", acq.captures)
			}
			if len(acq.refunds) != 1 || acq.refunds[0].Connector != route || acq.refunds[0].Currency != currency ||
				acq.refunds[0].Amount != 1000 || acq.refunds[0].ChargeID != chargeID {
				t.Errorf("RefundCharge inputs = %+v", acq.refunds)
			}
			if len(acq.polls) == 0 {
				t.Fatal("the pending refund was never polled")
			}
			for _, p := range acq.polls {
				if p != (activities.RefundStatusInput{Connector: route, RefundID: "re_1"}) {
					t.Errorf("RefundStatus input = %+v", p)
				}
			}
		})
	}
}

// captureThenRefund has the order captured an hour in, and 10.00 of it
// refunded an hour later; each update must be taken.
func captureThenRefund(t *testing.T, env *testsuite.TestWorkflowEnvironment) {
	t.Helper()
	for _, s := range []step{
		{time.Hour, workflows.UpdateCapture, workflows.CaptureRequest{Entry: entry}},
		{2 * time.Hour, workflows.UpdateRefund, workflows.RefundRequest{Entry: entry, RefundAmount: 1000}},
	} {
		env.RegisterDelayedCallback(func() {
			env.UpdateWorkflow(s.name, "", &testsuite.TestUpdateCallback{
				OnAccept: func() {}, OnReject: func(err error) { t.Errorf("%s rejected: %v", s.name, err) },
				OnComplete: func(_ any, err error) {
					if err != nil {
						t.Errorf("%s: %v", s.name, err)
					}
				},
			}, s.arg)
		}, s.at)
	}
}

package workflows_test

import (
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/status"
	"github.com/paygate/paygate/workflows"
)

func finalState(t *testing.T, env *testsuite.TestWorkflowEnvironment) workflows.OrderState {
	t.Helper()
	v, err := env.QueryWorkflow(workflows.QueryOrderState)
	if err != nil {
		t.Fatal(err)
	}
	var st workflows.OrderState
	if err := v.Get(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

func apmInput() workflows.OrderInput {
	in := orderInput("auto")
	in.Kind = workflows.KindAPM
	in.Card = workflows.CardRef{}
	in.APM = &workflows.APMOrder{Method: "PIX", Country: "BR", Document: "12345678901", ReturnURL: "https://shop.example/r"}
	in.PublicURL = "https://gw.example"
	return in
}

func TestShopperSide(t *testing.T) {
	challenge := activities.ThreeDSOutcome{AuthenticationID: "au_1", Status: "challenge_required", ACSURL: "http://sim/acs/au_1"}
	tests := []struct {
		name       string
		in         func() workflows.OrderInput
		acq        *acquirer
		signal     string
		arg        any
		at         time.Duration
		firstOrder status.Order
		issuerURL  string
		final      status.Payment
		code       string
		auths      int
	}{
		{
			name: "APM paid at the provider",
			in:   apmInput, acq: &acquirer{risk: accepted},
			signal: workflows.SignalAPMResult, arg: workflows.APMResult{PaymentID: "ap_1", Status: "succeeded"}, at: time.Hour,
			firstOrder: status.OrderPending, issuerURL: "http://provider/apm/ap_1", final: status.Paid, code: "0000",
		},
		{
			name: "APM cancelled by the shopper",
			in:   apmInput, acq: &acquirer{risk: accepted},
			signal: workflows.SignalAPMResult, arg: workflows.APMResult{PaymentID: "ap_1", Status: "cancelled"}, at: time.Hour,
			firstOrder: status.OrderPending, issuerURL: "http://provider/apm/ap_1", final: status.Failed, code: "A0007",
		},
		{
			name: "APM abandoned: expires after its window",
			in:   apmInput, acq: &acquirer{risk: accepted, apmStatus: "pending"},
			firstOrder: status.OrderPending, issuerURL: "http://provider/apm/ap_1", final: status.Expired, code: "A0008",
		},
		{
			name: "APM settled but the callback was lost: found when the window ends",
			in:   apmInput, acq: &acquirer{risk: accepted, apmStatus: "succeeded"},
			firstOrder: status.OrderPending, issuerURL: "http://provider/apm/ap_1", final: status.Paid, code: "0000",
		},
		{
			name: "APM callback of another payment is ignored",
			in:   apmInput, acq: &acquirer{risk: accepted, apmStatus: "pending"},
			signal: workflows.SignalAPMResult, arg: workflows.APMResult{PaymentID: "ap_other", Status: "succeeded"}, at: time.Hour,
			firstOrder: status.OrderPending, issuerURL: "http://provider/apm/ap_1", final: status.Expired, code: "A0008",
		},
		{
			name: "3-D Secure challenge passed",
			in: func() workflows.OrderInput {
				in := orderInput("auto")
				in.ThreeDS = true
				return in
			},
			acq:    &acquirer{risk: accepted, threeDS: challenge, authorise: answer(approved(amount))},
			signal: workflows.SignalThreeDSResult, arg: workflows.ThreeDSResult{AuthenticationID: "au_1", Status: "authenticated", ECI: "05", CAVV: "cavv"},
			at: time.Minute, firstOrder: status.OrderPending, issuerURL: "http://sim/acs/au_1", final: status.Paid, code: "0000", auths: 1,
		},
		{
			name: "3-D Secure challenge failed",
			in: func() workflows.OrderInput {
				in := orderInput("auto")
				in.ThreeDS = true
				return in
			},
			acq:    &acquirer{risk: accepted, threeDS: challenge},
			signal: workflows.SignalThreeDSResult, arg: workflows.ThreeDSResult{AuthenticationID: "au_1", Status: "failed"},
			at: time.Minute, firstOrder: status.OrderPending, issuerURL: "http://sim/acs/au_1", final: status.Failed, code: "A0005",
		},
		{
			name: "3-D Secure challenge never answered: fails after the session window",
			in: func() workflows.OrderInput {
				in := orderInput("auto")
				in.ThreeDS = true
				return in
			},
			acq:        &acquirer{risk: accepted, threeDS: challenge},
			firstOrder: status.OrderPending, issuerURL: "http://sim/acs/au_1", final: status.Failed, code: "A0005",
		},
		{
			name: "frictionless 3-D Secure charges at once",
			in: func() workflows.OrderInput {
				in := orderInput("auto")
				in.ThreeDS = true
				return in
			},
			acq:        &acquirer{risk: accepted, threeDS: activities.ThreeDSOutcome{AuthenticationID: "au_2", Status: "authenticated", ECI: "05", CAVV: "c"}, authorise: answer(approved(amount))},
			firstOrder: status.OrderSuccess, final: status.Paid, code: "0000", auths: 1,
		},
		{
			name: "hosted page abandoned: expires after the session window",
			in: func() workflows.OrderInput {
				in := orderInput("auto")
				in.Kind = workflows.KindCheckout
				in.Card = workflows.CardRef{}
				return in
			},
			acq:        &acquirer{risk: accepted},
			firstOrder: status.OrderPending, final: status.Expired, code: "A0008",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, tc.acq)
			if tc.signal != "" {
				env.RegisterDelayedCallback(func() { env.SignalWorkflow(tc.signal, tc.arg) }, tc.at)
			}
			res := run(t, env, tc.in())
			if res.OrderStatus != tc.firstOrder || res.IssuerURL != tc.issuerURL {
				t.Errorf("first answer: order_status %v issuer_url %q, want %v %q", res.OrderStatus, res.IssuerURL, tc.firstOrder, tc.issuerURL)
			}
			st := finalState(t, env)
			if st.PaymentStatus != tc.final || st.Result == nil || st.Result.ResultCode != tc.code {
				t.Errorf("final: %v %+v, want %v %s", st.PaymentStatus, st.Result, tc.final, tc.code)
			}
			if len(tc.acq.auths) != tc.auths {
				t.Errorf("charges = %d, want %d", len(tc.acq.auths), tc.auths)
			}
			if tc.auths > 0 && tc.in().ThreeDS && tc.acq.auths[0].ThreeDS == nil {
				t.Error("the charge carries no 3-D Secure data")
			}
		})
	}
}

func TestHostedPagePay(t *testing.T) {
	acq := &acquirer{risk: accepted, authorise: answer(approved(amount))}
	env := newEnv(t, acq)
	in := orderInput("auto")
	in.Kind = workflows.KindCheckout
	card := in.Card
	in.Card = workflows.CardRef{}
	var got workflows.PaymentResult
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(workflows.UpdatePay, "", &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { t.Errorf("pay rejected: %v", err) },
			OnComplete: func(v any, err error) { got, _ = v.(workflows.PaymentResult) },
		}, workflows.PayRequest{Card: card})
	}, 5*time.Minute)
	res := run(t, env, in)
	if res.OrderStatus != status.OrderPending {
		t.Errorf("first answer %v, want pending", res.OrderStatus)
	}
	if got.PaymentStatus != status.Paid || got.CardMasked != card.Masked || got.ResultCode != "0000" {
		t.Errorf("pay answer = %+v", got)
	}
	if len(acq.attached) != 1 || acq.attached[0].CardToken != card.Token || len(acq.auths) != 1 || acq.auths[0].CardToken != card.Token {
		t.Errorf("attached %+v, charges %+v", acq.attached, acq.auths)
	}
}

package workflows_test

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/status"
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

// acs scripts the ACS's answers to Get3DSAuthentication by call number
// (from 0) and counts the inquiries.
type acs struct {
	answer func(n int) (activities.ThreeDSOutcome, error)

	mu    sync.Mutex
	asked []string // the authentication ids asked for
}

// withACS adds the ACS's status inquiry to env, which newEnv does not mock.
func withACS(env *testsuite.TestWorkflowEnvironment, ac *acs) {
	env.OnActivity(acts.Get3DSAuthentication, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ThreeDSStatusInput) (activities.ThreeDSOutcome, error) {
			ac.mu.Lock()
			defer ac.mu.Unlock()
			ac.asked = append(ac.asked, in.AuthenticationID)
			if ac.answer == nil {
				return activities.ThreeDSOutcome{}, temporal.NewNonRetryableApplicationError("no ACS", "Unexpected", nil)
			}
			return ac.answer(len(ac.asked) - 1)
		}).Maybe()
}

// acsSays is an ACS that always gives the authentication au_1 status.
func acsSays(status connector.AuthenticationStatus) *acs {
	return &acs{answer: func(int) (activities.ThreeDSOutcome, error) {
		out := activities.ThreeDSOutcome{AuthenticationID: "au_1", Status: status}
		if status == "authenticated" {
			out.ECI, out.CAVV = "05", "acs-cavv"
		}
		return out, nil
	}}
}

// inquiries counts the (non-local) activities of each type the order ran:
// the status inquiries callbacks wake.
type inquiries struct {
	mu sync.Mutex
	n  map[string]int
}

func countInquiries(env *testsuite.TestWorkflowEnvironment) *inquiries {
	q := &inquiries{n: map[string]int{}}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		q.mu.Lock()
		defer q.mu.Unlock()
		q.n[info.ActivityType.Name]++
	})
	return q
}

func (q *inquiries) of(name string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n[name]
}

func threeDSInput() workflows.OrderInput {
	in := orderInput("auto")
	in.ThreeDS = true
	return in
}

// checkoutInput is a payment page's order, waiting for its shopper, and the
// card the shopper would give there.
func checkoutInput() (workflows.OrderInput, workflows.CardRef) {
	in := orderInput("auto")
	card := in.Card
	in.Kind, in.Card, in.PublicURL = workflows.KindCheckout, workflows.CardRef{}, "https://gw.example"
	return in, card
}

// pixOnThePage is the shopper's choice of PIX on the payment page.
var pixOnThePage = workflows.PayAPMRequest{APM: workflows.APMOrder{Method: "PIX", Country: "BR", Document: "12345678901",
	ReturnURL: "https://gw.example/v1/checkout/apm/return?session=s"}}

var challenge = activities.ThreeDSOutcome{AuthenticationID: "au_1", Status: "challenge_required", ACSURL: "http://sim/acs/au_1"}

func TestShopperSide(t *testing.T) {
	tests := []struct {
		name       string
		in         func() workflows.OrderInput
		acq        *acquirer
		acs        *acs
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
			in:   apmInput, acq: &acquirer{risk: accepted, apmStatus: "succeeded"},
			signal: workflows.SignalAPMResult, arg: workflows.APMResult{PaymentID: "ap_1"}, at: time.Hour,
			firstOrder: status.OrderPending, issuerURL: "http://provider/apm/ap_1", final: status.Paid, code: "0000",
		},
		{
			name: "APM cancelled by the shopper",
			in:   apmInput, acq: &acquirer{risk: accepted, apmStatus: "cancelled"},
			signal: workflows.SignalAPMResult, arg: workflows.APMResult{PaymentID: "ap_1"}, at: time.Hour,
			firstOrder: status.OrderPending, issuerURL: "http://provider/apm/ap_1", final: status.Failed, code: "A0007",
		},
		{
			// A reviewer's approval would have no shopper to send to the
			// provider: the rules' hold is a refusal, with their code.
			name: "APM the rules would hold for review: refused, nothing started at the provider",
			in:   apmInput, acq: &acquirer{risk: risk.Result{Action: risk.Review, Score: 60, Rule: risk.RuleCardVelocity}},
			firstOrder: status.OrderFailure, final: status.Failed, code: "R0004",
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
			name: "3-D Secure challenge passed",
			in:   threeDSInput, acq: &acquirer{risk: accepted, threeDS: challenge, authorise: answer(approved(amount))},
			acs:    acsSays("authenticated"),
			signal: workflows.SignalThreeDSResult, arg: workflows.ThreeDSResult{AuthenticationID: "au_1"},
			at: time.Minute, firstOrder: status.OrderPending, issuerURL: "http://sim/acs/au_1", final: status.Paid, code: "0000", auths: 1,
		},
		{
			name: "3-D Secure challenge failed",
			in:   threeDSInput, acq: &acquirer{risk: accepted, threeDS: challenge}, acs: acsSays("failed"),
			signal: workflows.SignalThreeDSResult, arg: workflows.ThreeDSResult{AuthenticationID: "au_1"},
			at: time.Minute, firstOrder: status.OrderPending, issuerURL: "http://sim/acs/au_1", final: status.Failed, code: "A0005",
		},
		{
			name: "3-D Secure challenge never answered: fails after the session window",
			in:   threeDSInput, acq: &acquirer{risk: accepted, threeDS: challenge},
			firstOrder: status.OrderPending, issuerURL: "http://sim/acs/au_1", final: status.Failed, code: "A0005",
		},
		{
			// Stripe declines the card as it confirms the authentication.
			name: "3-D Secure failed as it started: fails at once, no challenge awaited",
			in:   threeDSInput, acq: &acquirer{risk: accepted, threeDS: activities.ThreeDSOutcome{AuthenticationID: "au_3", Status: "failed"}},
			firstOrder: status.OrderFailure, final: status.Failed, code: "A0005",
		},
		{
			name: "a challenge with no ACS to send the shopper to: fails at once",
			in:   threeDSInput, acq: &acquirer{risk: accepted, threeDS: activities.ThreeDSOutcome{AuthenticationID: "au_4", Status: "challenge_required"}},
			firstOrder: status.OrderFailure, final: status.Failed, code: "A0005",
		},
		{
			name:       "frictionless 3-D Secure charges at once",
			in:         threeDSInput,
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
			ac := tc.acs
			if ac == nil {
				ac = &acs{}
			}
			withACS(env, ac)
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
			if st.PaymentStatus == status.Failed && tc.acq.risk.Action != risk.Accept && len(tc.acq.apmCreated) != 0 {
				t.Errorf("%d APM payments started for an order the rules refused", len(tc.acq.apmCreated))
			}
			if tc.auths > 0 && tc.in().ThreeDS && tc.acq.auths[0].ThreeDS == nil {
				t.Error("the charge carries no 3-D Secure data")
			}
		})
	}
}

// TestCallbacksAreNotTrusted: a callback only wakes the order, which records
// what the ACS or the provider says, never what the callback claims.
func TestCallbacksAreNotTrusted(t *testing.T) {
	type check struct {
		at     time.Duration
		status status.Payment
	}
	tests := []struct {
		name string
		in   func() workflows.OrderInput
		acq  *acquirer
		acs  *acs
		// signals are sent at their times; settle, when set, changes what
		// the APM provider says at its time.
		signals  []signalAt
		settle   *signalAt
		checks   []check // the order's status while it runs
		final    status.Payment
		code     string
		threeDS  string
		auths    int
		inquired map[string]int // status inquiries made for callbacks, by activity
		paid     int            // outcomes recorded as paid
	}{
		{
			name: "APM callback says paid, provider says pending: the order stays pending and expires",
			in:   apmInput, acq: &acquirer{risk: accepted, apmStatus: "pending"},
			signals: []signalAt{{time.Hour, workflows.SignalAPMResult, workflows.APMResult{PaymentID: "ap_1", Status: "succeeded"}}},
			checks:  []check{{2 * time.Hour, status.Pending}, {23 * time.Hour, status.Pending}},
			final:   status.Expired, code: "A0008", inquired: map[string]int{"GetAPMPayment": 1},
		},
		{
			name: "APM callback says paid too early: paid only once the provider settles",
			in:   apmInput, acq: &acquirer{risk: accepted, apmStatus: "pending"},
			signals: []signalAt{
				{time.Hour, workflows.SignalAPMResult, workflows.APMResult{PaymentID: "ap_1", Status: "succeeded"}},
				{3 * time.Hour, workflows.SignalAPMResult, workflows.APMResult{PaymentID: "ap_1"}},
			},
			settle: &signalAt{at: 2 * time.Hour, arg: "succeeded"},
			checks: []check{{90 * time.Minute, status.Pending}, {150 * time.Minute, status.Pending}, {4 * time.Hour, status.Paid}},
			final:  status.Paid, code: "0000", inquired: map[string]int{"GetAPMPayment": 2}, paid: 1,
		},
		{
			name: "APM callback says cancelled, provider says paid: paid",
			in:   apmInput, acq: &acquirer{risk: accepted, apmStatus: "succeeded"},
			signals: []signalAt{{time.Hour, workflows.SignalAPMResult, workflows.APMResult{PaymentID: "ap_1", Status: "cancelled"}}},
			final:   status.Paid, code: "0000", inquired: map[string]int{"GetAPMPayment": 1}, paid: 1,
		},
		{
			name: "APM callback for another payment: ignored, the provider is not even asked",
			in:   apmInput, acq: &acquirer{risk: accepted, apmStatus: "succeeded"},
			signals: []signalAt{{time.Hour, workflows.SignalAPMResult, workflows.APMResult{PaymentID: "ap_other", Status: "succeeded"}}},
			checks:  []check{{2 * time.Hour, status.Pending}},
			// The window's end still asks the provider (a local activity).
			final: status.Paid, code: "0000", inquired: map[string]int{"GetAPMPayment": 0}, paid: 1,
		},
		{
			name: "APM callback repeated: the payment is recorded once",
			in:   apmInput, acq: &acquirer{risk: accepted, apmStatus: "succeeded"},
			signals: []signalAt{
				{time.Hour, workflows.SignalAPMResult, workflows.APMResult{PaymentID: "ap_1"}},
				{time.Hour, workflows.SignalAPMResult, workflows.APMResult{PaymentID: "ap_1"}},
				{2 * time.Hour, workflows.SignalAPMResult, workflows.APMResult{PaymentID: "ap_1"}},
			},
			final: status.Paid, code: "0000", inquired: map[string]int{"GetAPMPayment": 1}, paid: 1,
		},
		{
			name: "3-D Secure callback says authenticated, ACS says failed: A0005",
			in:   threeDSInput, acq: &acquirer{risk: accepted, threeDS: challenge}, acs: acsSays("failed"),
			signals: []signalAt{{time.Minute, workflows.SignalThreeDSResult,
				workflows.ThreeDSResult{AuthenticationID: "au_1", Status: "authenticated", ECI: "05", CAVV: "forged"}}},
			final: status.Failed, code: "A0005", threeDS: "challenge:failed", inquired: map[string]int{"Get3DSAuthentication": 1},
		},
		{
			name: "3-D Secure callback says authenticated, challenge still open: pending until the window lapses",
			in:   threeDSInput, acq: &acquirer{risk: accepted, threeDS: challenge}, acs: acsSays("challenge_required"),
			signals: []signalAt{{time.Minute, workflows.SignalThreeDSResult,
				workflows.ThreeDSResult{AuthenticationID: "au_1", Status: "authenticated", CAVV: "forged"}}},
			checks: []check{{2 * time.Minute, status.Pending}, {14 * time.Minute, status.Pending}},
			final:  status.Failed, code: "A0005", threeDS: "challenge:timeout", inquired: map[string]int{"Get3DSAuthentication": 1},
		},
		{
			// The ACS has the order's own authentication still at the
			// challenge: the window's end asks it, and fails the order.
			name: "3-D Secure callback for another authentication: ignored, the ACS is not asked",
			in:   threeDSInput, acq: &acquirer{risk: accepted, threeDS: challenge}, acs: acsSays("challenge_required"),
			signals: []signalAt{{time.Minute, workflows.SignalThreeDSResult,
				workflows.ThreeDSResult{AuthenticationID: "au_other", Status: "authenticated", CAVV: "c"}}},
			checks: []check{{2 * time.Minute, status.Pending}},
			final:  status.Failed, code: "A0005", threeDS: "challenge:timeout", inquired: map[string]int{"Get3DSAuthentication": 0},
		},
		{
			name: "3-D Secure inquiry fails twice, then the ACS answers: charged and recorded once",
			in:   threeDSInput, acq: &acquirer{risk: accepted, threeDS: challenge, authorise: answer(approved(amount))},
			acs: &acs{answer: func(n int) (activities.ThreeDSOutcome, error) {
				if n < 2 {
					return activities.ThreeDSOutcome{}, errors.New("acs unavailable")
				}
				return activities.ThreeDSOutcome{AuthenticationID: "au_1", Status: "authenticated", ECI: "05", CAVV: "acs-cavv"}, nil
			}},
			signals: []signalAt{{time.Minute, workflows.SignalThreeDSResult, workflows.ThreeDSResult{AuthenticationID: "au_1"}}},
			final:   status.Paid, code: "0000", threeDS: "challenge:authenticated", auths: 1,
			inquired: map[string]int{"Get3DSAuthentication": 3}, paid: 1,
		},
		{
			name: "3-D Secure inquiry refused by the ACS: the order keeps waiting, then lapses",
			in:   threeDSInput, acq: &acquirer{risk: accepted, threeDS: challenge}, acs: &acs{},
			signals: []signalAt{{time.Minute, workflows.SignalThreeDSResult, workflows.ThreeDSResult{AuthenticationID: "au_1", Status: "authenticated"}}},
			checks:  []check{{2 * time.Minute, status.Pending}},
			final:   status.Failed, code: "A0005", threeDS: "challenge:timeout", inquired: map[string]int{"Get3DSAuthentication": 1},
		},
		{
			name: "3-D Secure ACS down until the window lapses: the inquiry is dropped and the order ends",
			in:   threeDSInput, acq: &acquirer{risk: accepted, threeDS: challenge},
			acs: &acs{answer: func(int) (activities.ThreeDSOutcome, error) {
				return activities.ThreeDSOutcome{}, errors.New("acs unavailable")
			}},
			signals: []signalAt{{time.Minute, workflows.SignalThreeDSResult, workflows.ThreeDSResult{AuthenticationID: "au_1"}}},
			checks:  []check{{10 * time.Minute, status.Pending}},
			final:   status.Failed, code: "A0005", threeDS: "challenge:timeout",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, tc.acq)
			ac := tc.acs
			if ac == nil {
				ac = &acs{}
			}
			withACS(env, ac)
			q := countInquiries(env)
			for _, s := range tc.signals {
				env.RegisterDelayedCallback(func() { env.SignalWorkflow(s.name, s.arg) }, s.at)
			}
			if tc.settle != nil {
				env.RegisterDelayedCallback(func() {
					tc.acq.mu.Lock()
					defer tc.acq.mu.Unlock()
					tc.acq.apmStatus = connector.APMStatus(tc.settle.arg.(string))
				}, tc.settle.at)
			}
			for _, c := range tc.checks {
				env.RegisterDelayedCallback(func() {
					if st := finalState(t, env); st.PaymentStatus != c.status {
						t.Errorf("at %v: payment_status %v, want %v", c.at, st.PaymentStatus, c.status)
					}
				}, c.at)
			}
			run(t, env, tc.in())
			st := finalState(t, env)
			if st.PaymentStatus != tc.final || st.Result == nil || st.Result.ResultCode != tc.code {
				t.Fatalf("final: %v %+v, want %v %s", st.PaymentStatus, st.Result, tc.final, tc.code)
			}
			if tc.threeDS != "" && st.Result.ThreeDSResult != tc.threeDS {
				t.Errorf("threeds_result = %q, want %q", st.Result.ThreeDSResult, tc.threeDS)
			}
			for name, want := range tc.inquired {
				if got := q.of(name); got != want {
					t.Errorf("%s inquiries = %d, want %d", name, got, want)
				}
			}
			if len(tc.acq.auths) != tc.auths {
				t.Fatalf("charges = %d, want %d", len(tc.acq.auths), tc.auths)
			}
			if tc.auths > 0 {
				// The charge carries the ACS's authentication, not the callback's.
				if d := tc.acq.auths[0].ThreeDS; d == nil || d.AuthenticationID != "au_1" || d.CAVV != "acs-cavv" {
					t.Errorf("charge 3-D Secure data = %+v, want the ACS's", d)
				}
			}
			paid := 0
			for _, f := range tc.acq.finish {
				if f.PaymentStatus == status.Paid {
					paid++
				}
			}
			if paid != tc.paid {
				t.Errorf("outcomes recorded as paid = %d, want %d", paid, tc.paid)
			}
		})
	}
}

// signalAt is a signal sent at a time of the test clock.
type signalAt struct {
	at   time.Duration
	name string
	arg  any
}

// TestCallbacksBeforeTheInquiryReplay: an order that handled a callback
// before changeCallbackInquiry (GetVersion answers DefaultVersion) goes on
// with the callback's word, as it did when its history was written, and
// asks nobody.
func TestCallbacksBeforeTheInquiryReplay(t *testing.T) {
	tests := []struct {
		name   string
		in     func() workflows.OrderInput
		acq    *acquirer
		signal signalAt
		final  status.Payment
		code   string
	}{
		{"APM succeeded", apmInput, &acquirer{risk: accepted, apmStatus: "pending"},
			signalAt{time.Hour, workflows.SignalAPMResult, workflows.APMResult{PaymentID: "ap_1", Status: "succeeded"}}, status.Paid, "0000"},
		{"APM cancelled", apmInput, &acquirer{risk: accepted, apmStatus: "pending"},
			signalAt{time.Hour, workflows.SignalAPMResult, workflows.APMResult{PaymentID: "ap_1", Status: "cancelled"}}, status.Failed, "A0007"},
		{"3-D Secure authenticated", threeDSInput, &acquirer{risk: accepted, threeDS: challenge, authorise: answer(approved(amount))},
			signalAt{time.Minute, workflows.SignalThreeDSResult, workflows.ThreeDSResult{AuthenticationID: "au_1", Status: "authenticated", ECI: "05", CAVV: "acs-cavv"}},
			status.Paid, "0000"},
		{"3-D Secure failed", threeDSInput, &acquirer{risk: accepted, threeDS: challenge},
			signalAt{time.Minute, workflows.SignalThreeDSResult, workflows.ThreeDSResult{AuthenticationID: "au_1", Status: "failed"}},
			status.Failed, "A0005"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, tc.acq)
			ac := &acs{}
			withACS(env, ac)
			q := countInquiries(env)
			env.OnGetVersion("callback-inquiry", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(tc.signal.name, tc.signal.arg) }, tc.signal.at)
			// Such an order was started before shapes: it asks GetVersion.
			in := tc.in()
			in.Shape = 0
			run(t, env, in)
			st := finalState(t, env)
			if st.PaymentStatus != tc.final || st.Result == nil || st.Result.ResultCode != tc.code {
				t.Errorf("final: %v %+v, want %v %s", st.PaymentStatus, st.Result, tc.final, tc.code)
			}
			if n := q.of("GetAPMPayment") + q.of("Get3DSAuthentication"); n != 0 {
				t.Errorf("status inquiries = %d, want none", n)
			}
		})
	}
}

func TestHostedPagePay(t *testing.T) {
	acq := &acquirer{risk: accepted, authorise: answer(approved(amount))}
	env := newEnv(t, acq)
	in := orderInput("auto")
	in.Kind = workflows.KindCheckout
	in.Details.NotifyURL = "https://shop.example/notify"
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
	// The payment's notification names the card the shopper paid with.
	if len(acq.notes) != 1 || acq.notes[0].Fields["card"] != card.Masked {
		t.Errorf("notifications = %+v, want one with card %s", acq.notes, card.Masked)
	}
}

// TestCancelPendingOrder follows the interface's cancel as issue 29 reads
// it: "Cancel of an order still pending at the acquirer, as far as the
// connector allows". An order waiting for its shopper is cancelled (6000,
// A0009, nothing charged) once its connector has called off what it holds;
// a provider whose shopper paid first leaves the order paid; a connector
// that cannot cancel leaves it waiting (I0035).
func TestCancelPendingOrder(t *testing.T) {
	cannot := temporal.NewNonRetryableApplicationError("cannot", activities.ErrTypeCannotCancel, nil)
	checkout := func() workflows.OrderInput {
		in := orderInput("auto")
		in.Kind = workflows.KindCheckout
		in.Card = workflows.CardRef{}
		return in
	}
	tests := []struct {
		name       string
		in         func() workflows.OrderInput
		acq        *acquirer
		apmCancel  func() (activities.APMOutcome, error)
		wantStatus int
		wantCode   string
		final      status.Payment
		finalCode  string
		apmCancels int
		authCancel int
	}{
		{"APM pending at the provider: called off there", apmInput, &acquirer{risk: accepted, apmStatus: "pending"},
			func() (activities.APMOutcome, error) {
				return activities.APMOutcome{PaymentID: "ap_1", Status: "cancelled"}, nil
			},
			workflows.EntryDone, "0000", status.Failed, "A0009", 1, 0},
		{"APM the shopper paid first: the order is paid, the cancel refused", apmInput, &acquirer{risk: accepted, apmStatus: "pending"},
			func() (activities.APMOutcome, error) {
				return activities.APMOutcome{PaymentID: "ap_1", Status: "succeeded"}, nil
			},
			workflows.EntryRefused, "I0018", status.Paid, "0000", 1, 0},
		// The window's end asks the provider to call it off too.
		{"APM whose provider cannot cancel: the order waits on", apmInput, &acquirer{risk: accepted, apmStatus: "pending"},
			func() (activities.APMOutcome, error) { return activities.APMOutcome{}, cannot },
			workflows.EntryRefused, "I0035", status.Expired, "A0008", 2, 0},
		{"3-D Secure challenge: the authentication called off", threeDSInput, &acquirer{risk: accepted, threeDS: challenge}, nil,
			workflows.EntryDone, "0000", status.Failed, "A0009", 0, 1},
		{"payment page without a card: nothing at the connector", checkout, &acquirer{risk: accepted}, nil,
			workflows.EntryDone, "0000", status.Failed, "A0009", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.apmCancel != nil {
				tc.acq.apmCancel = func(int) (activities.APMOutcome, error) { return tc.apmCancel() }
			}
			env := newEnv(t, tc.acq)
			withACS(env, &acs{})
			var got workflows.OperationResult
			env.RegisterDelayedCallback(func() {
				env.UpdateWorkflow(workflows.UpdateCancel, "", &testsuite.TestUpdateCallback{
					OnAccept: func() {},
					OnReject: func(err error) { t.Errorf("cancel rejected: %v", err) },
					OnComplete: func(v any, err error) {
						if err != nil {
							t.Errorf("cancel: %v", err)
						}
						got, _ = v.(workflows.OperationResult)
					},
				}, workflows.CancelRequest{Entry: entry})
			}, time.Minute)
			run(t, env, tc.in())
			if got.Status != tc.wantStatus || got.ResultCode != tc.wantCode {
				t.Errorf("cancel answered %d %s (%s), want %d %s", got.Status, got.ResultCode, got.ResultMessage, tc.wantStatus, tc.wantCode)
			}
			st := finalState(t, env)
			if st.PaymentStatus != tc.final || st.Result == nil || st.Result.ResultCode != tc.finalCode {
				t.Errorf("final: %v %+v, want %v %s", st.PaymentStatus, st.Result, tc.final, tc.finalCode)
			}
			if len(tc.acq.apmCancels) != tc.apmCancels || len(tc.acq.authCancels) != tc.authCancel || len(tc.acq.auths) != 0 {
				t.Errorf("APM cancels %d, authentication cancels %d, charges %d; want %d, %d, 0",
					len(tc.acq.apmCancels), len(tc.acq.authCancels), len(tc.acq.auths), tc.apmCancels, tc.authCancel)
			}
			for _, c := range tc.acq.authCancels {
				if c.AuthenticationID != "au_1" {
					t.Errorf("called off %q, want au_1", c.AuthenticationID)
				}
			}
		})
	}
}

// TestHostedPageAPM follows the interface as issue 29 reads it: "the
// payment page offers the methods the account's connectors take ... and
// completes PIX, OXXO and iDEAL there as the direct path does". The APM
// the shopper chose starts at the provider; its result settles the order.
// An order that keeps a card takes cards only.
func TestHostedPageAPM(t *testing.T) {
	checkout := func(mut func(*workflows.OrderInput)) func() workflows.OrderInput {
		return func() workflows.OrderInput {
			in, _ := checkoutInput()
			if mut != nil {
				mut(&in)
			}
			return in
		}
	}
	pix := pixOnThePage
	tests := []struct {
		name      string
		in        func() workflows.OrderInput
		apmStatus connector.APMStatus
		rejected  bool
		final     status.Payment
		code      string
		created   int
	}{
		{"PIX chosen and paid at the provider", checkout(nil), "succeeded", false, status.Paid, "0000", 1},
		{"PIX chosen and left at the provider: expires after the APM window", checkout(nil), "pending", false, status.Expired, "A0008", 1},
		{"an order that keeps its card takes no APM", checkout(func(in *workflows.OrderInput) { in.Details.TokenFlag = "YES" }),
			"succeeded", true, status.Expired, "A0008", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acq := &acquirer{risk: accepted, apmStatus: tc.apmStatus}
			env := newEnv(t, acq)
			withACS(env, &acs{})
			env.OnActivity(acts.AttachPaymentMethod, mock.Anything, mock.Anything).Return(nil).Maybe()
			// A card sent after the shopper chose the APM is refused.
			var cardRefused error
			if !tc.rejected {
				env.RegisterDelayedCallback(func() {
					env.UpdateWorkflow(workflows.UpdatePay, "", &testsuite.TestUpdateCallback{
						OnAccept:   func() {},
						OnReject:   func(err error) { cardRefused = err },
						OnComplete: func(any, error) {},
					}, workflows.PayRequest{Card: workflows.CardRef{Token: "tok_late", Masked: "424242******4242", Fingerprint: "fp-late"}})
				}, 2*time.Minute)
			}
			var answer workflows.PaymentResult
			var rejected error
			env.RegisterDelayedCallback(func() {
				env.UpdateWorkflow(workflows.UpdatePayAPM, "", &testsuite.TestUpdateCallback{
					OnAccept: func() {},
					OnReject: func(err error) { rejected = err },
					OnComplete: func(v any, err error) {
						if err != nil {
							t.Errorf("pay-apm: %v", err)
						}
						answer, _ = v.(workflows.PaymentResult)
					},
				}, pix)
			}, time.Minute)
			if tc.apmStatus == "succeeded" {
				env.RegisterDelayedCallback(func() {
					env.SignalWorkflow(workflows.SignalAPMResult, workflows.APMResult{PaymentID: "ap_1"})
				}, time.Hour)
			}
			// Once at the provider, the order waits the APM window, not the
			// page's session of 15 minutes.
			var at30 status.Payment
			stateAt(t, env, 30*time.Minute, &at30)
			run(t, env, tc.in())
			if !tc.rejected && at30 != status.Pending {
				t.Errorf("status at 30 minutes %v, want pending", at30)
			}
			if (rejected != nil) != tc.rejected {
				t.Fatalf("rejected = %v, want %v", rejected, tc.rejected)
			}
			// Without the APM chosen, the card is the order's way to pay.
			if !tc.rejected && (cardRefused == nil || !strings.Contains(cardRefused.Error(), "not waiting for a card")) {
				t.Errorf("card after the APM's choice: %v, want refused as not waiting for a card", cardRefused)
			}
			if !tc.rejected && (answer.OrderStatus != status.OrderPending || answer.IssuerURL != "http://provider/apm/ap_1") {
				t.Errorf("pay-apm answered %+v, want the provider's page", answer)
			}
			st := finalState(t, env)
			if st.PaymentStatus != tc.final || st.Result == nil || st.Result.ResultCode != tc.code {
				t.Errorf("final: %v %+v, want %v %s", st.PaymentStatus, st.Result, tc.final, tc.code)
			}
			if len(acq.apmCreated) != tc.created {
				t.Fatalf("%d APM payments created, want %d", len(acq.apmCreated), tc.created)
			}
			if tc.created > 0 && (acq.apmCreated[0].Method != "PIX" || acq.apmCreated[0].ReturnURL != pix.APM.ReturnURL || acq.apmCreated[0].Amount != amount) {
				t.Errorf("APM payment = %+v", acq.apmCreated[0])
			}
		})
	}
}

// stateAt queries the order's status at d into *got.
func stateAt(t *testing.T, env *testsuite.TestWorkflowEnvironment, d time.Duration, got *status.Payment) {
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(workflows.QueryOrderState)
		if err != nil {
			t.Errorf("query at %v: %v", d, err)
			return
		}
		var st workflows.OrderState
		if err := v.Get(&st); err != nil {
			t.Errorf("query at %v: %v", d, err)
		}
		*got = st.PaymentStatus
	}, d)
}

// TestShopperWindowEnds: an order whose shopper did not finish in time
// first calls off what the shopper could still complete, so that a later
// payment at the provider, or a challenge passed at Stripe, takes no money
// the order no longer awaits. A provider that says the shopper paid first
// settles the order paid; one that does not answer is asked again, the
// order pending meanwhile; one that cannot call off is asked once.
func TestShopperWindowEnds(t *testing.T) {
	const attempts = 8 // acquirerOpOptions
	cannot := temporal.NewNonRetryableApplicationError("cannot", activities.ErrTypeCannotCancel, nil)
	silentCancel := func(calls int) func(int) (activities.APMOutcome, error) {
		return func(n int) (activities.APMOutcome, error) {
			if n < calls {
				return activities.APMOutcome{}, acquirerSilent
			}
			return activities.APMOutcome{PaymentID: "ap_1", Status: connector.APMCancelled}, nil
		}
	}
	tests := []struct {
		name        string
		in          func() workflows.OrderInput
		acq         *acquirer
		window      time.Duration
		final       status.Payment
		code        string
		apmCancels  int
		authCancels int
		// pendingAfter: the order is still pending this long after its
		// window's end (0: not checked).
		pendingAfter time.Duration
		// acs answers the window's end's question (none: no answer);
		// charges is how many charges follow.
		acs     *acs
		charges int
	}{
		{name: "APM left at the provider: called off, then expired", in: apmInput,
			acq: &acquirer{risk: accepted, apmStatus: "pending"}, window: 24 * time.Hour,
			final: status.Expired, code: "A0008", apmCancels: 1},
		{name: "APM paid while its callback was lost: the call-off says so, the order is paid", in: apmInput,
			acq: &acquirer{risk: accepted, apmStatus: "succeeded"}, window: 24 * time.Hour,
			final: status.Paid, code: "0000", apmCancels: 1},
		{name: "APM call-off unanswered: the order waits, asks again, then expires", in: apmInput,
			acq: &acquirer{risk: accepted, apmStatus: "pending", apmCancel: silentCancel(2 * attempts)}, window: 24 * time.Hour,
			final: status.Expired, code: "A0008", apmCancels: 2*attempts + 1, pendingAfter: 30 * time.Second},
		{name: "APM whose provider cannot call off: asked once, still pending, expired", in: apmInput,
			acq: &acquirer{risk: accepted, apmStatus: "pending",
				apmCancel: func(int) (activities.APMOutcome, error) { return activities.APMOutcome{}, cannot }},
			window: 24 * time.Hour, final: status.Expired, code: "A0008", apmCancels: 1},
		// A refusal is the provider's answer: nothing left to call off, or
		// no way to; the status decides, once.
		{name: "APM call-off refused (the payment unknown there): asked once, expired", in: apmInput,
			acq: &acquirer{risk: accepted, apmStatus: "pending",
				apmCancel: func(int) (activities.APMOutcome, error) { return activities.APMOutcome{}, refusedByAcquirer }},
			window: 24 * time.Hour, final: status.Expired, code: "A0008", apmCancels: 1},
		{name: "APM call-off refused, the shopper had paid: the order is paid", in: apmInput,
			acq: &acquirer{risk: accepted, apmStatus: "succeeded",
				apmCancel: func(int) (activities.APMOutcome, error) { return activities.APMOutcome{}, refusedByAcquirer }},
			window: 24 * time.Hour, final: status.Paid, code: "0000", apmCancels: 1},
		{name: "APM call-off never answered: after an hour of looks the status decides, expired", in: apmInput,
			acq: &acquirer{risk: accepted, apmStatus: "pending", apmCancel: silentCancel(1000)}, window: 24 * time.Hour,
			final: status.Expired, code: "A0008", apmCancels: 5 * attempts, pendingAfter: 50 * time.Minute},
		{name: "APM call-off unanswered while the shopper had paid: the look's status read settles it paid", in: apmInput,
			acq: &acquirer{risk: accepted, apmStatus: "succeeded", apmCancel: silentCancel(1000)}, window: 24 * time.Hour,
			final: status.Paid, code: "0000", apmCancels: 2 * attempts},
		{name: "3-D Secure call-off refused (already ended there): the order fails at once", in: threeDSInput,
			acq:    &acquirer{risk: accepted, threeDS: challenge, authCancelErr: func(int) error { return refusedByAcquirer }},
			window: 15 * time.Minute, final: status.Failed, code: "A0005", authCancels: 1},
		{name: "3-D Secure passed, the shopper never back: the ACS asked at the window's end, the card charged", in: threeDSInput,
			acq: &acquirer{risk: accepted, threeDS: challenge, authorise: answer(approved(amount))}, acs: acsSays("authenticated"),
			window: 15 * time.Minute, final: status.Paid, code: "0000", charges: 1},
		{name: "3-D Secure still at the challenge when the window ends: called off, failed", in: threeDSInput,
			acq: &acquirer{risk: accepted, threeDS: challenge}, acs: acsSays("challenge_required"),
			window: 15 * time.Minute, final: status.Failed, code: "A0005", authCancels: 1},
		{name: "3-D Secure challenge left: the authentication is called off", in: threeDSInput,
			acq: &acquirer{risk: accepted, threeDS: challenge}, window: 15 * time.Minute,
			final: status.Failed, code: "A0005", authCancels: 1},
		{name: "3-D Secure call-off unanswered, then made", in: threeDSInput,
			acq: &acquirer{risk: accepted, threeDS: challenge, authCancelErr: silentFor(attempts)}, window: 15 * time.Minute,
			final: status.Failed, code: "A0005", authCancels: attempts + 1, pendingAfter: 10 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, tc.acq)
			withACS(env, cmp.Or(tc.acs, &acs{}))
			var before, after status.Payment
			stateAt(t, env, tc.window-time.Minute, &before)
			if tc.pendingAfter > 0 {
				stateAt(t, env, tc.window+tc.pendingAfter, &after)
			}
			run(t, env, tc.in())
			st := finalState(t, env)
			if st.PaymentStatus != tc.final || st.Result == nil || st.Result.ResultCode != tc.code {
				t.Errorf("final: %v %+v, want %v %s", st.PaymentStatus, st.Result, tc.final, tc.code)
			}
			if before != status.Pending || tc.pendingAfter > 0 && after != status.Pending {
				t.Errorf("status before the window's end %v, after it %v; want pending", before, after)
			}
			if len(tc.acq.apmCancels) != tc.apmCancels || len(tc.acq.authCancels) != tc.authCancels || len(tc.acq.auths) != tc.charges {
				t.Errorf("APM call-offs %d, authentication call-offs %d, charges %d; want %d, %d, %d",
					len(tc.acq.apmCancels), len(tc.acq.authCancels), len(tc.acq.auths), tc.apmCancels, tc.authCancels, tc.charges)
			}
		})
	}
}

// TestShopperCancel: the shopper's cancel on the payment page ends the
// order (A0007) once nothing can still be paid: an APM the shopper chose
// is called off at its provider first (a payment made there first leaves
// the order paid; a provider that cannot call it off refuses the cancel),
// and a shopper sent to the 3-D Secure challenge by a pay that ran while
// the cancel waited is not cancelled under the challenge.
func TestShopperCancel(t *testing.T) {
	cannot := temporal.NewNonRetryableApplicationError("cannot", activities.ErrTypeCannotCancel, nil)
	checkout := func(threeDS bool) func() workflows.OrderInput {
		return func() workflows.OrderInput {
			in, _ := checkoutInput()
			in.ThreeDS = threeDS
			return in
		}
	}
	_, card := checkoutInput()
	tests := []struct {
		name string
		in   func() workflows.OrderInput
		acq  *acquirer
		// before is what the shopper did first: "pix", "card" (sent in
		// the same moment as the cancel) or nothing.
		before     string
		acs        *acs
		wantErr    string // the cancel's refusal; empty: answered
		wantStatus status.Payment
		final      status.Payment
		code       string
		apmCancels int
	}{
		{name: "page left before any choice", in: checkout(false), acq: &acquirer{risk: accepted},
			wantStatus: status.Failed, final: status.Failed, code: "A0007"},
		{name: "PIX chosen, then cancelled: called off at the provider", in: checkout(false), acq: &acquirer{risk: accepted, apmStatus: "pending"},
			before: "pix", wantStatus: status.Failed, final: status.Failed, code: "A0007", apmCancels: 1},
		{name: "PIX chosen and paid first: the order is paid", in: checkout(false), acq: &acquirer{risk: accepted, apmStatus: "pending",
			apmCancel: func(int) (activities.APMOutcome, error) {
				return activities.APMOutcome{PaymentID: "ap_1", Status: connector.APMSucceeded}, nil
			}},
			before: "pix", wantStatus: status.Paid, final: status.Paid, code: "0000", apmCancels: 1},
		{name: "PIX chosen at a provider that cannot call it off: refused, the order waits its window", in: checkout(false),
			acq: &acquirer{risk: accepted, apmStatus: "pending",
				apmCancel: func(int) (activities.APMOutcome, error) { return activities.APMOutcome{}, cannot }},
			before: "pix", wantErr: "I0035", final: status.Expired, code: "A0008", apmCancels: 2},
		{name: "a card sent to the challenge in the same moment: refused, the challenge decides", in: checkout(true),
			acq: &acquirer{risk: accepted, threeDS: challenge, authorise: answer(approved(amount))}, acs: acsSays("authenticated"),
			before: "card", wantErr: "I0018", final: status.Paid, code: "0000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, tc.acq)
			ac := tc.acs
			if ac == nil {
				ac = &acs{}
			}
			withACS(env, ac)
			env.OnActivity(acts.AttachPaymentMethod, mock.Anything, mock.Anything).Return(nil).Maybe()
			at := 2 * time.Minute
			switch tc.before {
			case "pix":
				env.RegisterDelayedCallback(func() {
					env.UpdateWorkflow(workflows.UpdatePayAPM, "", &testsuite.TestUpdateCallback{
						OnAccept: func() {}, OnReject: func(err error) { t.Errorf("pay-apm rejected: %v", err) }, OnComplete: func(any, error) {},
					}, pixOnThePage)
				}, time.Minute)
			case "card":
				at = time.Minute
				env.RegisterDelayedCallback(func() {
					env.UpdateWorkflow(workflows.UpdatePay, "", &testsuite.TestUpdateCallback{
						OnAccept: func() {}, OnReject: func(err error) { t.Errorf("pay rejected: %v", err) }, OnComplete: func(any, error) {},
					}, workflows.PayRequest{Card: card})
				}, at)
				env.RegisterDelayedCallback(func() {
					env.SignalWorkflow(workflows.SignalThreeDSResult, workflows.ThreeDSResult{AuthenticationID: "au_1"})
				}, 5*time.Minute)
			}
			var got workflows.PaymentResult
			var gotErr error
			env.RegisterDelayedCallback(func() {
				env.UpdateWorkflow(workflows.UpdateShopperCancel, "", &testsuite.TestUpdateCallback{
					OnAccept: func() {},
					OnReject: func(err error) { gotErr = err },
					OnComplete: func(v any, err error) {
						got, _ = v.(workflows.PaymentResult)
						gotErr = err
					},
				}, struct{}{})
			}, at)
			run(t, env, tc.in())
			switch {
			case tc.wantErr != "":
				if gotErr == nil || !strings.Contains(gotErr.Error(), tc.wantErr) && !hasCode(gotErr, tc.wantErr) {
					t.Errorf("cancel answered %+v, %v; want refused %s", got, gotErr, tc.wantErr)
				}
			case gotErr != nil || got.PaymentStatus != tc.wantStatus:
				t.Errorf("cancel answered %+v, %v; want %v", got, gotErr, tc.wantStatus)
			}
			st := finalState(t, env)
			if st.PaymentStatus != tc.final || st.Result == nil || st.Result.ResultCode != tc.code {
				t.Errorf("final: %v %+v, want %v %s", st.PaymentStatus, st.Result, tc.final, tc.code)
			}
			if len(tc.acq.apmCancels) != tc.apmCancels {
				t.Errorf("APM call-offs %d, want %d", len(tc.acq.apmCancels), tc.apmCancels)
			}
		})
	}
}

// hasCode reports whether err is an application error carrying result
// code id in its details.
func hasCode(err error, id string) bool {
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || !appErr.HasDetails() {
		return false
	}
	var got string
	return appErr.Details(&got) == nil && got == id
}

// TestHostedPageChallengeWindow: a shopper the payment page sends to the
// 3-D Secure challenge late in its session has the challenge's own window
// from then, not what was left of the page's.
func TestHostedPageChallengeWindow(t *testing.T) {
	tests := []struct {
		name     string
		answerAt time.Duration // the ACS's callback; 0: none
		final    status.Payment
		code     string
	}{
		{"challenge passed six minutes after a card given at 14 minutes", 20 * time.Minute, status.Paid, "0000"},
		{"challenge left: fails when its own window ends", 0, status.Failed, "A0005"},
	}
	// The ACS: authenticated once the shopper passes; still at the
	// challenge for the one who left.
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acq := &acquirer{risk: accepted, threeDS: challenge, authorise: answer(approved(amount))}
			env := newEnv(t, acq)
			withACS(env, acsSays(map[bool]connector.AuthenticationStatus{true: "authenticated", false: "challenge_required"}[tc.answerAt > 0]))
			in, card := checkoutInput()
			in.ThreeDS = true
			env.RegisterDelayedCallback(func() {
				env.UpdateWorkflow(workflows.UpdatePay, "", &testsuite.TestUpdateCallback{
					OnAccept: func() {}, OnReject: func(err error) { t.Errorf("pay rejected: %v", err) }, OnComplete: func(any, error) {},
				}, workflows.PayRequest{Card: card})
			}, 14*time.Minute)
			if tc.answerAt > 0 {
				env.RegisterDelayedCallback(func() {
					env.SignalWorkflow(workflows.SignalThreeDSResult, workflows.ThreeDSResult{AuthenticationID: "au_1"})
				}, tc.answerAt)
			}
			var at28 status.Payment
			stateAt(t, env, 28*time.Minute, &at28)
			run(t, env, in)
			st := finalState(t, env)
			if st.PaymentStatus != tc.final || st.Result == nil || st.Result.ResultCode != tc.code {
				t.Errorf("final: %v %+v, want %v %s", st.PaymentStatus, st.Result, tc.final, tc.code)
			}
			if want := map[bool]status.Payment{false: status.Pending, true: status.Paid}[tc.answerAt > 0]; at28 != want {
				t.Errorf("status at 28 minutes %v, want %v", at28, want)
			}
		})
	}
}

// TestHostedPageCardAndAPMTogether: a card given in one tab at the moment
// the shopper chooses an APM in another waits for the order's lock while
// the APM starts; it is then refused, as its validator refuses a card
// once an APM is chosen, and never attached to the APM's order.
func TestHostedPageCardAndAPMTogether(t *testing.T) {
	acq := &acquirer{risk: accepted, apmStatus: "pending"}
	env := newEnv(t, acq)
	withACS(env, &acs{})
	env.OnActivity(acts.AttachPaymentMethod, mock.Anything, mock.Anything).Return(nil).Maybe()
	in, card := checkoutInput()
	var cardErr error
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(workflows.UpdatePayAPM, "", &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { t.Errorf("pay-apm rejected: %v", err) }, OnComplete: func(any, error) {},
		}, pixOnThePage)
		env.UpdateWorkflow(workflows.UpdatePay, "", &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { cardErr = err },
			OnComplete: func(_ any, err error) { cardErr = err },
		}, workflows.PayRequest{Card: card})
	}, time.Minute)
	run(t, env, in)
	if cardErr == nil || !strings.Contains(cardErr.Error(), "not waiting for a card") {
		t.Errorf("the card: %v, want refused as not waiting for a card", cardErr)
	}
	if len(acq.attached) != 0 || len(acq.apmCreated) != 1 || len(acq.auths) != 0 {
		t.Errorf("cards attached %d, APM payments %d, charges %d; want 0, 1, 0", len(acq.attached), len(acq.apmCreated), len(acq.auths))
	}
}

// refusedByAcquirer is the acquirer's (or provider's) refusal of a request.
var refusedByAcquirer = temporal.NewNonRetryableApplicationError("refused by the provider", activities.ErrTypeAcquirerRejected, nil)

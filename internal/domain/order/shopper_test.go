package order

import (
	"testing"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/status"
)

// TestThreeDS: a frictionless authentication charges at once with its
// data; a challenge sends the shopper to the ACS and waits; the ACS's answer
// charges, fails the payment or leaves it waiting; a callback names the
// authentication it is for.
func TestThreeDS(t *testing.T) {
	data := &connector.ThreeDSData{AuthenticationID: "au_1", ECI: "05", CAVV: "AAAB"}
	start := []struct {
		name   string
		status connector.AuthenticationStatus
		want   ThreeDSStep
		next   Next
	}{
		{"frictionless", connector.Authenticated, ThreeDSStep{Used: true, Result: "frictionless", AuthenticationID: "au_1", Data: data}, ChargeCard},
		{"challenged", connector.AuthenticationStatus("challenge"), ThreeDSStep{Used: true, Result: "challenge", Awaiting: true, AuthenticationID: "au_1"}, SendToACS},
	}
	for _, tc := range start {
		t.Run(tc.name, func(t *testing.T) {
			got, out := State{Status: status.Pending}.ThreeDSStarted("au_1", tc.status, "05", "AAAB")
			if !equalStep(got.ThreeDS, tc.want) || out.Next != tc.next {
				t.Errorf("ThreeDSStarted = %+v, %+v; want %+v, %v", got.ThreeDS, out, tc.want, tc.next)
			}
		})
	}
	waiting, _ := State{Status: status.Pending}.ThreeDSStarted("au_1", connector.AuthenticationStatus("challenge"), "", "")
	if !waiting.AwaitsThreeDS("au_1") || waiting.AwaitsThreeDS("au_2") {
		t.Error("the order must wait for its own authentication only")
	}
	answers := []struct {
		name   string
		status connector.AuthenticationStatus
		result string
		out    Step
	}{
		{"authenticated", connector.Authenticated, "challenge:authenticated", Step{Next: ChargeCard}},
		{"failed", connector.AuthenticationFailed, "challenge:failed", Step{Next: FinishPayment, Status: status.Failed, Code: codes.ThreeDSFailed}},
		{"not answered yet", connector.AuthenticationStatus("challenge"), "challenge", Step{Next: WaitShopper}},
	}
	for _, tc := range answers {
		t.Run("answered "+tc.name, func(t *testing.T) {
			got, out := waiting.ThreeDSAnswered(tc.status, "05", "AAAB")
			if got.ThreeDS.Result != tc.result || out != tc.out {
				t.Errorf("ThreeDSAnswered = %q, %+v; want %q, %+v", got.ThreeDS.Result, out, tc.result, tc.out)
			}
			if stillWaits := got.AwaitsThreeDS("au_1"); stillWaits != (tc.out.Next == WaitShopper) {
				t.Errorf("still waiting = %v", stillWaits)
			}
			if tc.out.Next == ChargeCard && (got.ThreeDS.Data == nil || *got.ThreeDS.Data != *data) {
				t.Errorf("charge data = %+v, want %+v", got.ThreeDS.Data, data)
			}
		})
	}
}

func equalStep(a, b ThreeDSStep) bool {
	if (a.Data == nil) != (b.Data == nil) || a.Data != nil && *a.Data != *b.Data {
		return false
	}
	a.Data, b.Data = nil, nil
	return a == b
}

// TestAPM: a succeeded payment makes the order paid in full with the
// payment as its charge; a cancelled one fails it; any other status waits.
func TestAPM(t *testing.T) {
	waiting := State{Status: status.Pending}.APMStarted("pay_1")
	if !waiting.AwaitsAPM("pay_1") || waiting.AwaitsAPM("pay_2") {
		t.Fatal("the order must wait for its own payment only")
	}
	tests := []struct {
		name    string
		status  connector.APMStatus
		out     Step
		ledger  Ledger
		charge  string
		waiting bool
	}{
		{"succeeded", connector.APMSucceeded, Step{Next: FinishPayment, Status: status.Paid, Code: codes.OK},
			Ledger{Authorised: 2500, Captured: 2500}, "pay_1", false},
		{"cancelled", connector.APMCancelled, Step{Next: FinishPayment, Status: status.Failed, Code: codes.ShopperCancelled},
			Ledger{}, "", false},
		{"pending", connector.APMStatus("pending"), Step{Next: WaitShopper}, Ledger{}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, out := waiting.APMAnswered(tc.status, 2500)
			if out != tc.out || got.Ledger != tc.ledger || got.ChargeID != tc.charge || got.AwaitsAPM("pay_1") != tc.waiting {
				t.Errorf("APMAnswered = %+v, ledger %+v, charge %q, waiting %v", out, got.Ledger, got.ChargeID, got.AwaitsAPM("pay_1"))
			}
		})
	}
}

// TestShopperEndings: a shopper who runs out of time fails a 3-D Secure
// payment and expires any other; one who leaves cancels it.
func TestShopperEndings(t *testing.T) {
	challenged, _ := State{Status: status.Pending}.ThreeDSStarted("au_1", connector.AuthenticationStatus("challenge"), "", "")
	tests := []struct {
		name   string
		run    func() (State, Step)
		out    Step
		result string
	}{
		{"3-D Secure challenge timed out", challenged.ShopperLapsed,
			Step{Next: FinishPayment, Status: status.Failed, Code: codes.ThreeDSFailed}, "challenge:timeout"},
		{"APM never paid", State{Status: status.Pending}.APMStarted("pay_1").ShopperLapsed,
			Step{Next: FinishPayment, Status: status.Expired, Code: codes.SessionExpired}, ""},
		{"hosted page left", State{Status: status.Pending}.ShopperLeft,
			Step{Next: FinishPayment, Status: status.Failed, Code: codes.ShopperCancelled}, ""},
		{"3-D Secure failed as it started", func() (State, Step) { return State{Status: status.Pending}.ThreeDSFailedAtStart("au_1") },
			Step{Next: FinishPayment, Status: status.Failed, Code: codes.ThreeDSFailed}, "failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, out := tc.run()
			if out != tc.out || got.ThreeDS.Result != tc.result || got.ThreeDS.Awaiting || got.APM.Awaiting {
				t.Errorf("= %+v, result %q, waiting 3DS %v APM %v; want %+v, %q, nothing waited for",
					out, got.ThreeDS.Result, got.ThreeDS.Awaiting, got.APM.Awaiting, tc.out, tc.result)
			}
		})
	}
}

// TestCallbackWords: orders from before the inquiry took the callback's
// word; anything but the success word was a failure.
func TestCallbackWords(t *testing.T) {
	for word, want := range map[string]connector.AuthenticationStatus{
		"authenticated": connector.Authenticated, "failed": connector.AuthenticationFailed, "": connector.AuthenticationFailed, "weird": connector.AuthenticationFailed,
	} {
		if got := CallbackAuthentication(word); got != want {
			t.Errorf("CallbackAuthentication(%q) = %v, want %v", word, got, want)
		}
	}
	for word, want := range map[string]connector.APMStatus{
		"succeeded": connector.APMSucceeded, "cancelled": connector.APMCancelled, "": connector.APMCancelled,
	} {
		if got := CallbackAPMStatus(word); got != want {
			t.Errorf("CallbackAPMStatus(%q) = %v, want %v", word, got, want)
		}
	}
}

// TestRiskChecked: a rejection fails the payment with the deciding rule's
// code, a review holds it, anything else goes on to the charge; the verdict
// is kept either way.
func TestRiskChecked(t *testing.T) {
	tests := []struct {
		name    string
		verdict risk.Result
		step    Step
	}{
		{"rejected for a blocked card", risk.Result{Action: risk.Reject, Score: 100, Rule: risk.RuleBlockedCard},
			Step{Next: FinishPayment, Status: status.Failed, Code: codes.RiskBlockedCard}},
		{"rejected, no single rule", risk.Result{Action: risk.Reject, Score: 90},
			Step{Next: FinishPayment, Status: status.Failed, Code: codes.RiskRejected}},
		{"held for review", risk.Result{Action: risk.Review, Score: 60, Rule: risk.RuleCardVelocity},
			Step{Next: FinishPayment, Status: status.HeldForReview, Code: codes.RiskReview}},
		{"accepted", risk.Result{Action: "ACCEPT", Score: 5}, Step{Next: ChargeCard}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, step := State{Status: status.Pending}.RiskChecked(tc.verdict)
			if step != tc.step || got.Risk.Action != tc.verdict.Action || got.Risk.Rule != tc.verdict.Rule {
				t.Errorf("RiskChecked = %+v (kept %+v), want %+v", step, got.Risk, tc.step)
			}
		})
	}
}

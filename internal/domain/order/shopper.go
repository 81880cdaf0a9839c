package order

import (
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/status"
)

// ThreeDSStep is where an order's 3-D Secure authentication stands.
type ThreeDSStep struct {
	Used bool `json:",omitempty"`
	// Result is what threeds_result shows: frictionless, challenge,
	// challenge:authenticated, challenge:failed or challenge:timeout.
	Result string `json:",omitempty"`
	// Awaiting is set while the shopper is at the ACS.
	Awaiting         bool   `json:",omitempty"`
	AuthenticationID string `json:",omitempty"`
	// Data is the successful authentication the charge carries.
	Data *connector.ThreeDSData `json:",omitempty"`
}

// APMStep is where an order's alternative payment stands.
type APMStep struct {
	PaymentID string `json:",omitempty"`
	// Awaiting is set while the payment is open at the provider.
	Awaiting bool `json:",omitempty"`
}

// Next is what an order's payment does next, once its risk check, its
// 3-D Secure authentication or its shopper has moved.
type Next int

const (
	// WaitShopper: nothing is final yet; the order keeps waiting and its
	// session (or APM) window keeps running.
	WaitShopper Next = iota
	// ChargeCard: charge the card (with the authentication, when there
	// was one); a passed risk check also goes on to 3-D Secure or the APM,
	// as the order asked.
	ChargeCard
	// SendToACS: the issuer challenges the shopper; send the shopper to
	// the ACS and wait.
	SendToACS
	// FinishPayment: the payment ends with the step's status and code
	// (held for review is such an end, until a reviewer decides).
	FinishPayment
)

// Step is what follows a move of the payment, and, when the payment ends
// there, its status and result code.
type Step struct {
	Next   Next
	Status status.Payment
	Code   codes.Code
}

// ThreeDSStarted is the order once the directory server answered its
// authentication: an authenticated card is charged at once (frictionless),
// any other answer is a challenge the shopper meets at the ACS.
func (s State) ThreeDSStarted(authenticationID string, st connector.AuthenticationStatus, eci, cavv string) (State, Step) {
	s.ThreeDS.Used, s.ThreeDS.AuthenticationID = true, authenticationID
	if st == connector.Authenticated {
		s.ThreeDS.Result = "frictionless"
		s.ThreeDS.Data = &connector.ThreeDSData{AuthenticationID: authenticationID, ECI: eci, CAVV: cavv}
		return s, Step{Next: ChargeCard}
	}
	s.ThreeDS.Awaiting, s.ThreeDS.Result = true, "challenge"
	return s, Step{Next: SendToACS}
}

// ThreeDSFailedAtStart is the order whose authentication failed as it
// started (the card declined at the acquirer's confirmation), or asked for
// a challenge with nowhere to send the shopper: the payment fails at once
// (A0005), with no challenge to wait for.
func (s State) ThreeDSFailedAtStart(authenticationID string) (State, Step) {
	s.ThreeDS.Used, s.ThreeDS.AuthenticationID = true, authenticationID
	s.ThreeDS.Awaiting, s.ThreeDS.Result = false, "failed"
	return s, Step{Next: FinishPayment, Status: status.Failed, Code: codes.ThreeDSFailed}
}

// AwaitsThreeDS reports whether the order waits for the challenge of the
// authentication authenticationID; a callback for any other changes nothing.
func (s State) AwaitsThreeDS(authenticationID string) bool {
	return s.ThreeDS.Awaiting && s.ThreeDS.AuthenticationID == authenticationID
}

// ThreeDSAnswered is the order once the ACS told how the challenge ended
// (asked after its callback, never taken from the callback itself):
// authenticated (charge the card), failed (the payment fails, A0005), or
// not yet (keep waiting).
func (s State) ThreeDSAnswered(st connector.AuthenticationStatus, eci, cavv string) (State, Step) {
	switch st {
	case connector.Authenticated:
		s.ThreeDS.Awaiting, s.ThreeDS.Result = false, "challenge:authenticated"
		s.ThreeDS.Data = &connector.ThreeDSData{AuthenticationID: s.ThreeDS.AuthenticationID, ECI: eci, CAVV: cavv}
		return s, Step{Next: ChargeCard}
	case connector.AuthenticationFailed:
		s.ThreeDS.Awaiting, s.ThreeDS.Result = false, "challenge:failed"
		return s, Step{Next: FinishPayment, Status: status.Failed, Code: codes.ThreeDSFailed}
	}
	return s, Step{Next: WaitShopper}
}

// CallbackAuthentication is the authentication status an order started
// before orders asked the ACS took from the callback itself: authenticated
// or failed. Only replays of those orders use it.
func CallbackAuthentication(word string) connector.AuthenticationStatus {
	if connector.AuthenticationStatus(word) == connector.Authenticated {
		return connector.Authenticated
	}
	return connector.AuthenticationFailed
}

// CallbackAPMStatus is CallbackAuthentication for an APM payment:
// succeeded or cancelled.
func CallbackAPMStatus(word string) connector.APMStatus {
	if connector.APMStatus(word) == connector.APMSucceeded {
		return connector.APMSucceeded
	}
	return connector.APMCancelled
}

// APMStarted is the order once the provider opened its payment: the order
// waits for it.
func (s State) APMStarted(paymentID string) State {
	s.APM = APMStep{PaymentID: paymentID, Awaiting: true}
	return s
}

// AwaitsAPM reports whether the order waits for the APM payment paymentID.
func (s State) AwaitsAPM(paymentID string) bool {
	return s.APM.Awaiting && s.APM.PaymentID == paymentID
}

// APMAnswered is the order once the provider told the status of its
// payment of amount: succeeded (paid in full, the payment its charge),
// cancelled (the payment fails, A0007), or not yet (keep waiting).
func (s State) APMAnswered(st connector.APMStatus, amount int64) (State, Step) {
	switch st {
	case connector.APMSucceeded:
		s.APM.Awaiting = false
		s.ChargeID = s.APM.PaymentID
		s.Authorised, s.Ledger.Captured = amount, amount
		return s, Step{Next: FinishPayment, Status: status.Paid, Code: codes.OK}
	case connector.APMCancelled:
		s.APM.Awaiting = false
		return s, Step{Next: FinishPayment, Status: status.Failed, Code: codes.ShopperCancelled}
	}
	return s, Step{Next: WaitShopper}
}

// ShopperLapsed is the order whose shopper did not finish in time: one
// challenged by 3-D Secure fails (A0005), any other expires (A0008).
func (s State) ShopperLapsed() (State, Step) {
	s.ThreeDS.Awaiting, s.APM.Awaiting = false, false
	if s.ThreeDS.Used {
		s.ThreeDS.Result = "challenge:timeout"
		return s, Step{Next: FinishPayment, Status: status.Failed, Code: codes.ThreeDSFailed}
	}
	return s, Step{Next: FinishPayment, Status: status.Expired, Code: codes.SessionExpired}
}

// MerchantCancelled is the order its merchant cancelled while it waited for
// its shopper, once the connector called off what it held: the payment
// fails (A0009) and nothing was charged. A later word of the shopper's is
// awaited no more.
func (s State) MerchantCancelled() (State, Step) {
	s.ThreeDS.Awaiting, s.APM.Awaiting = false, false
	return s, Step{Next: FinishPayment, Status: status.Failed, Code: codes.MerchantCancelled}
}

// ShopperLeft is the order whose shopper left the payment page or the
// provider: the payment fails (A0007).
func (s State) ShopperLeft() (State, Step) {
	s.APM.Awaiting = false
	return s, Step{Next: FinishPayment, Status: status.Failed, Code: codes.ShopperCancelled}
}

// RiskPasses reports whether verdict lets an order go on to its charge:
// what RiskChecked decides, for a step that must know it before the
// workflow does (the record's local activity that also charges, shape 5).
func RiskPasses(verdict risk.Result) bool {
	_, step := State{}.RiskChecked(verdict)
	return step.Next == ChargeCard
}

// RiskChecked is the order once the risk rules judged it: rejected (the
// payment fails with the deciding rule's code), held for review (nothing
// is authorised until a reviewer approves), or passed.
func (s State) RiskChecked(verdict risk.Result) (State, Step) {
	s.Risk = verdict
	switch verdict.Action {
	case risk.Reject:
		return s, Step{Next: FinishPayment, Status: status.Failed, Code: risk.CodeFor(verdict.Rule)}
	case risk.Review:
		return s, Step{Next: FinishPayment, Status: status.HeldForReview, Code: codes.RiskReview}
	}
	return s, Step{Next: ChargeCard}
}

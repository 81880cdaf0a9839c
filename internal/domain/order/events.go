package order

import (
	"fmt"

	"github.com/paygate/paygate/internal/domain/capture"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/internal/domain/status"
)

// The rules below take the order's state and what happened (the acquirer
// answered a charge, a capture or a refund; a deadline passed) and give
// back the next state and the effects to carry out, in order. They run
// nothing: the order's workflow carries the effects out as activities.

// Effect is one thing a rule asks the workflow to carry out.
type Effect interface{ effect() }

// SaveOrder writes the order's status and amounts to the record, then
// moves the order to To: a move the state table refuses writes nothing,
// and a move to paid credits the captured amount to the merchant.
type SaveOrder struct{ To status.Payment }

// Notify tells the merchant the order's state as it stands then, with the
// notification's type, result and extra fields.
type Notify struct {
	Type  string
	Code  codes.Code
	Extra map[string]string
}

// SaveRefund writes a refund's row.
type SaveRefund struct{ Refund Refund }

// DebitLedger takes a settled refund's amount from the merchant.
type DebitLedger struct {
	Reference string
	Amount    int64
}

// WatchRefund asks the acquirer, on a growing timer, until it settles a
// refund it answered pending.
type WatchRefund struct{ Refund Refund }

// ResendRefund sends a refund whose outcome is unknown again, with the same
// idempotency key, on a growing timer until the acquirer answers.
type ResendRefund struct{ Refund Refund }

func (SaveOrder) effect()    {}
func (Notify) effect()       {}
func (SaveRefund) effect()   {}
func (DebitLedger) effect()  {}
func (WatchRefund) effect()  {}
func (ResendRefund) effect() {}

// Charge is the acquirer's answer to an order's charge.
type Charge struct {
	Connector      string // the connector that answered; empty if none did
	ChargeID       string
	Approved       bool
	Decline        connector.DeclineReason
	AuthCode       string
	CapturedAmount int64
}

// ChargeCode is the result code that answers a charge.
func ChargeCode(c Charge) codes.Code {
	if c.Approved {
		return codes.OK
	}
	switch c.Decline {
	case connector.DeclineInsufficientFunds:
		return codes.InsufficientFunds
	case connector.DeclineExpiredCard:
		return codes.ExpiredCard
	case connector.DeclineIncorrectCVC:
		return codes.WrongCVV
	case connector.DeclineAuthenticationRequired:
		return codes.ThreeDSNotAvailable
	}
	return codes.Declined
}

// Charged is the order once the acquirer answered its charge of amount, and
// the payment_status the order moves to: authorised, or paid when the
// charge captured too (capture mode auto); failed when it was declined.
func (s State) Charged(c Charge, amount int64, mode capture.Mode) (State, status.Payment) {
	if c.Connector != "" {
		s.AnsweredBy = c.Connector
	}
	if !c.Approved {
		return s, status.Failed
	}
	s.ChargeID = c.ChargeID
	s.Authorised = amount
	s.Captured = c.CapturedAmount
	if mode == capture.Auto {
		return s, status.Paid
	}
	return s, status.Authorised
}

// CaptureDone is the order once the acquirer captured captured minor units of
// its authorisation, whether on the merchant's request or, found at the end
// of the authorisation window, on its own: it is paid, and the merchant is
// told so.
func (s State) CaptureDone(captured int64, currency string) (State, []Effect) {
	s.Ledger.Captured = captured
	return s, []Effect{
		SaveOrder{To: status.Paid},
		Notify{Type: notify.TypeCapture, Code: codes.OK, Extra: map[string]string{
			"capture_amount": money.FromMinor(captured, currency).String(),
		}},
	}
}

// Voided is the order once the acquirer released its authorisation on the
// merchant's request: cancelled.
func (s State) Voided() (State, []Effect) {
	return s, []Effect{SaveOrder{To: status.Cancelled}, Notify{Type: notify.TypeCancel, Code: codes.OK}}
}

// Expired is the order once its authorisation window ended and the
// acquirer released the authorisation.
func (s State) Expired() (State, []Effect) {
	return s, []Effect{SaveOrder{To: status.Expired}, Notify{Type: notify.TypeExpiry, Code: codes.AuthorisationExpired}}
}

// Refund is one refund of an order as its row holds it.
type Refund struct {
	Reference   string // refund_reference_id: ours
	AcquirerRef string // refund_reference: the acquirer's
	Amount      int64
	Reason      string
	Status      refund.Status
	Settled     bool
	Code        codes.Code
}

// RefundAsked is the order once a refund of amount was admitted
// (CheckRefund), and that refund, numbered after the order's earlier ones.
func (s State) RefundAsked(transactionID string, amount int64, reason string) (State, Refund) {
	s.RefundSeq++
	return s, Refund{Reference: fmt.Sprintf("%s-%02d", transactionID, s.RefundSeq), Amount: amount, Reason: reason}
}

// RefundAnswer is what became of a refund request at the acquirer.
type RefundAnswer int

const (
	// RefundUnanswered: no answer through all the retries. The acquirer
	// may have made the refund.
	RefundUnanswered RefundAnswer = iota
	// RefundRefused: the acquirer refused the request.
	RefundRefused
	// RefundAnswered: the acquirer answered with the refund's status.
	RefundAnswered
)

// RefundSent is the order once the acquirer answered (or did not answer) a
// refund request, and the refund as it then stands.
//
// A refund without an answer is not failed: calling it failed would let
// the merchant refund again under a new key and be paid twice. Like one the
// acquirer keeps pending, its amount is held (RefundPending) until it
// settles.
func (s State) RefundSent(r Refund, answer RefundAnswer, settled refund.Status, acquirerRef string, currency string) (State, Refund, []Effect) {
	switch {
	case answer == RefundUnanswered:
		s.RefundPending += r.Amount
		r.Status, r.Code = refund.Pending, codes.RefundPending
		return s, r, []Effect{SaveRefund{Refund: r}, ResendRefund{Refund: r}}
	case answer == RefundRefused:
		r.Status, r.Settled, r.Code = refund.Failed, true, codes.ConnectorError
		return s, r, []Effect{SaveRefund{Refund: r}}
	}
	r.AcquirerRef = acquirerRef
	if settled == refund.Pending {
		s.RefundPending += r.Amount
		r.Status, r.Code = refund.Pending, codes.RefundPending
		return s, r, []Effect{SaveRefund{Refund: r}, WatchRefund{Refund: r}}
	}
	return s.RefundSettled(r, settled, false, currency)
}

// RefundSettled is the order once the acquirer settled a refund: succeeded
// (the money goes back and the ledger is debited) or anything else, which
// is failed. held says the refund's amount was held while it was pending.
// The order is then refunded in full or in part, or stays as it was, and
// the merchant is told the refund's outcome.
func (s State) RefundSettled(r Refund, settled refund.Status, held bool, currency string) (State, Refund, []Effect) {
	if held {
		s.RefundPending -= r.Amount
	}
	r.Settled = true
	if settled == refund.Succeeded {
		s.Refunded += r.Amount
		r.Status, r.Code = refund.Succeeded, codes.OK
	} else {
		r.Status, r.Code = refund.Failed, codes.ConnectorError
	}
	effects := []Effect{SaveRefund{Refund: r}}
	if r.Status == refund.Succeeded {
		effects = append(effects, DebitLedger{Reference: "refund/" + r.Reference, Amount: r.Amount})
	}
	refundStatus := "0"
	if r.Status == refund.Succeeded {
		refundStatus = "1"
	}
	effects = append(effects,
		SaveOrder{To: s.Standing(Entry{}).StatusAfterRefunds()},
		Notify{Type: notify.TypeRefund, Code: r.Code, Extra: map[string]string{
			"refund_amount":       money.FromMinor(r.Amount, currency).String(),
			"refund_reference_id": r.Reference,
			"refund_reference":    r.AcquirerRef,
			"refund_status":       refundStatus,
			"refund_message":      r.Code.String(),
			"refund_reason":       r.Reason,
		}})
	return s, r, effects
}

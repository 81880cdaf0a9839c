package order

import (
	"time"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/status"
)

// CardRef is the card as an order knows it: a vault token and what may be
// shown, never the number or the security code.
type CardRef struct {
	Token       string
	Masked      string
	Brand       string
	Fingerprint string
	// Stored is set for a card the merchant keeps (TokenID): it is charged
	// without a security code, and its vault entry outlives the order.
	Stored  bool   `json:",omitempty"`
	TokenID string `json:",omitempty"`
}

// Result is the answer to a payment request.
type Result struct {
	TransactionID string
	MerchantID    string
	AccountID     string
	OrderNo       string
	Amount        int64
	Currency      string
	PaymentStatus status.Payment
	OrderStatus   status.Order
	ResultCode    string
	ResultMessage string
	CardMasked    string
	CardToken     string
	Connector     string
	AuthCode      string
	Risk          risk.Result
	Is3DS         bool
	ThreeDSResult string
	// IssuerURL is where the shopper goes next (3-D Secure ACS, APM page).
	IssuerURL string
	// ExistingTransactionID is set when the order_no belongs to an older
	// order whose workflow Temporal no longer keeps; the record answers.
	ExistingTransactionID string
	// TokenID is the stored card the order made or charged.
	TokenID string `json:",omitempty"`
	// Recurring is the subscription the order started or belongs to.
	Recurring *RecurringResult `json:",omitempty"`
}

// Code returns the result as a result code.
func (r Result) Code() codes.Code {
	return codes.Code{ID: r.ResultCode, Message: r.ResultMessage}
}

// RecurringResult is what an answer tells of a subscription: the recurring_*
// fields of the interface.
type RecurringResult struct {
	ContractName string
	RecurringID  string
	// Period is recurring_deduction_period, e.g. "1 month".
	Period string
	// Next is recurring_deduction_time: when the next charge falls.
	Next time.Time
	// Status is recurring_status (docs/design.md §4).
	Status int
}

// State is everything an order's workflow knows of its order beyond the
// request that started it: where its payment stands, its money at the
// acquirer, and the counters that keep its writes and notifications in
// order. It is one serialisable value: a later run of the order starts from
// it as it is (continue-as-new), and the rules below take it and give back
// the next one.
//
// The JSON names are those of the hand-made copy that earlier versions
// carried between runs (OrderResume), so a run started by one of them
// reads its state here; Ledger is embedded for that reason.
type State struct {
	Status status.Payment
	// Since is when the order reached its status; its deadlines run from it.
	Since time.Time
	// Result is the answer to the payment request; nil until it is known.
	Result *Result
	Risk   risk.Result
	// Card comes with the request, or later from the payment page.
	Card CardRef
	// ChargeID is the acquirer's id of the authorisation.
	ChargeID string
	// AnsweredBy is the name of the connector that answered the charge.
	AnsweredBy string
	Ledger
	// RefundSeq numbers the order's refunds (RefundReference).
	RefundSeq int
	// Writes numbers the record writes, so that a write of a retried
	// workflow task can never overwrite a newer one.
	Writes int64
	// NoticeSeq numbers the order's notifications; Notifications are the
	// latest of them as the order-state query shows them.
	NoticeSeq     int
	Notifications []notify.Delivery
	// Unrecorded is set when no record holds the order: its first write
	// was refused. Such an order is not notified.
	Unrecorded bool
	// Runs counts the runs of the order before this one.
	Runs int
	// TokenID is the stored card the order made or charged; Recurring the
	// subscription it started or belongs to.
	TokenID   string           `json:",omitempty"`
	Recurring *RecurringResult `json:",omitempty"`
	// ThreeDS and APM are the shopper's side of the payment (shopper.go).
	ThreeDS ThreeDSStep
	APM     APMStep
}

// NewState is the state of an order whose payment has not started.
func NewState(card CardRef, now time.Time) State {
	return State{Status: status.Pending, Since: now, Card: card, TokenID: card.TokenID}
}

// Resumed is a state carried from an earlier run, completed where it was
// written by a version that kept the stored card and the subscription in
// the result only.
func (s State) Resumed() State {
	if s.Result != nil {
		if s.TokenID == "" {
			s.TokenID = s.Result.TokenID
		}
		if s.Recurring == nil {
			s.Recurring = s.Result.Recurring
		}
	}
	return s
}

// Carried is the state the order's next run starts from: its latest
// keepNotifications notifications only (all of them stay in the record),
// and one run more.
func (s State) Carried(keepNotifications int) State {
	notes := s.Notifications
	if len(notes) > keepNotifications {
		notes = notes[len(notes)-keepNotifications:]
	}
	s.Notifications = append([]notify.Delivery(nil), notes...)
	s.Runs++
	return s
}

// Standing is the state as the operation rules (operations.go) see it,
// with the order's own identity from its request.
func (s State) Standing(own Entry) Standing {
	return Standing{Entry: own, Status: s.Status, Ledger: s.Ledger, Refunds: s.RefundSeq}
}

// CheckMove returns nil when the order may move to payment_status to: the
// state table (docs/design.md §4) allows the move, or to is the status it
// already has. Restating the status is not a move: a pending order sent on
// to the 3-D Secure page is recorded pending again, and a failed refund
// records a paid order's amounts with its status. A refusal wraps
// status.ErrIllegalTransition.
func (s State) CheckMove(to status.Payment) error {
	if to == s.Status {
		return nil
	}
	return status.Check(s.Status, to)
}

// Moved is the state at payment_status to from now. A restated status
// starts again too: a pending order sent on to the 3-D Secure page has its
// session from then.
func (s State) Moved(to status.Payment, now time.Time) State {
	s.Status, s.Since = to, now
	return s
}

// CreditsOnMove reports whether a move to payment_status to credits the
// order's captured amount to the merchant: it makes the order paid.
func (s State) CreditsOnMove(to status.Payment) bool {
	return to == status.Paid && s.Status != status.Paid
}

package order

import (
	"fmt"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/status"
)

// Entry is what a merchant's operation request (a batch entry) says of the
// order it names; it must agree with the order on all four.
type Entry struct {
	TransactionID string
	OrderNo       string
	Currency      string
	Amount        int64 // the order's amount, in minor units
}

// Ledger is an order's money as its operations change it, in minor units.
type Ledger struct {
	Authorised    int64
	Captured      int64
	Refunded      int64
	RefundPending int64 // refunds sent and not yet settled
}

// Refundable is what may still be refunded: captured, less what is refunded
// or on its way back.
func (l Ledger) Refundable() int64 { return l.Captured - l.Refunded - l.RefundPending }

// Standing is what the operation rules need to know of an order: who it is,
// where its payment stands, and its money.
type Standing struct {
	Entry  Entry // the order's own transaction id, order_no, currency and amount
	Status status.Payment
	Ledger Ledger
	// Refunds is how many refunds the order has been asked for.
	Refunds int
	// AwaitsShopper is set while a pending order waits for its shopper:
	// at the 3-D Secure challenge, at the APM provider, or for a card on
	// the payment page.
	AwaitsShopper bool
}

// MaxRefunds is the most refunds one order takes: refund_reference_id is
// the transaction id, a hyphen and two digits (interface, Batch order
// entries), so the 100th would need a third.
const MaxRefunds = 99

// The checks below answer nil to admit an operation, or the result code,
// with its detail, that refuses it.

func refusal(c codes.Code, detail string) *codes.Code {
	r := c.With(detail)
	return &r
}

// matches refuses an entry that names another order.
func (s Standing) matches(e Entry) *codes.Code {
	switch {
	case e.TransactionID != s.Entry.TransactionID:
		return refusal(codes.OrderMismatch, "transaction_id")
	case e.OrderNo != s.Entry.OrderNo:
		return refusal(codes.OrderMismatch, "order_no")
	case e.Currency != s.Entry.Currency:
		return refusal(codes.OrderMismatch, "currency")
	case e.Amount != s.Entry.Amount:
		return refusal(codes.OrderMismatch, "amount")
	}
	return nil
}

// in refuses an operation the payment's status does not allow.
func (s Standing) in(allowed ...status.Payment) *codes.Code {
	for _, a := range allowed {
		if s.Status == a {
			return nil
		}
	}
	return refusal(codes.InvalidState, fmt.Sprintf("order is %s (%d)", s.Status.Name(), s.Status))
}

// CheckCapture admits a capture of amount (0: the whole authorisation) of
// an authorised order.
func (s Standing) CheckCapture(e Entry, amount int64) *codes.Code {
	if r := s.matches(e); r != nil {
		return r
	}
	if r := s.in(status.Authorised); r != nil {
		return r
	}
	if amount < 0 || amount > s.Ledger.Authorised {
		return refusal(codes.InvalidAmount, fmt.Sprintf("capture amount must be between 0.01 and the authorised %d minor units", s.Ledger.Authorised))
	}
	return nil
}

// CaptureAmount is what a capture of amount takes: the whole authorisation
// when amount is 0.
func (s Standing) CaptureAmount(amount int64) int64 {
	if amount == 0 {
		return s.Ledger.Authorised
	}
	return amount
}

// CheckCancel admits cancelling an order authorised or held for review,
// or pending while it waits for its shopper (nothing is charged yet, and
// the connector calls off what it holds). A pending order that waits for
// no shopper is at the acquirer, whose answer comes first.
func (s Standing) CheckCancel(e Entry) *codes.Code {
	if r := s.matches(e); r != nil {
		return r
	}
	if s.Status == status.Pending && s.AwaitsShopper {
		return nil
	}
	if s.Status == status.Pending {
		return refusal(codes.InvalidState, "order is pending (1000) at the acquirer; cancel it once it has answered")
	}
	return s.in(status.Authorised, status.HeldForReview)
}

// CheckReview admits a review decision on an order held for review.
func (s Standing) CheckReview(e Entry) *codes.Code {
	if r := s.matches(e); r != nil {
		return r
	}
	return s.in(status.HeldForReview)
}

// CheckRefund admits a refund of amount of a paid order, up to what is
// still refundable.
func (s Standing) CheckRefund(e Entry, amount int64) *codes.Code {
	if r := s.matches(e); r != nil {
		return r
	}
	if r := s.in(status.Paid, status.PartiallyRefunded); r != nil {
		return r
	}
	if amount <= 0 {
		return refusal(codes.InvalidAmount, "refund_amount must be greater than zero")
	}
	if amount > s.Ledger.Refundable() {
		return refusal(codes.InvalidAmount, fmt.Sprintf("refund_amount exceeds the refundable %d minor units", s.Ledger.Refundable()))
	}
	if s.Refunds >= MaxRefunds {
		return refusal(codes.TooManyRefunds, fmt.Sprintf("the order has had %d", s.Refunds))
	}
	return nil
}

// StatusAfterRefunds is the payment's status once refunds have settled:
// refunded in full, in part, or as it was when nothing came back.
func (s Standing) StatusAfterRefunds() status.Payment {
	switch {
	case s.Ledger.Refunded <= 0:
		return s.Status
	case s.Ledger.Refunded == s.Ledger.Captured:
		return status.Refunded
	}
	return status.PartiallyRefunded
}

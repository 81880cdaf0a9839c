package order

import (
	"testing"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/status"
)

var self = Entry{TransactionID: "1000000000000000001", OrderNo: "ORDER-1", Currency: "USD", Amount: 5000}

func standing(st status.Payment, l Ledger) Standing {
	return Standing{Entry: self, Status: st, Ledger: l}
}

func other(edit func(*Entry)) Entry {
	e := self
	edit(&e)
	return e
}

// refusedWith is the refusal's code with its detail, "" when admitted.
func refusedWith(c *codes.Code) string {
	if c == nil {
		return ""
	}
	return c.String()
}

// TestOperationChecks: each operation is admitted in the statuses and
// amounts it may run in, and refused with the exact code and detail
// otherwise; an entry naming another order is refused first.
func TestOperationChecks(t *testing.T) {
	authorised := standing(status.Authorised, Ledger{Authorised: 5000})
	paid := standing(status.Paid, Ledger{Authorised: 5000, Captured: 4000})
	partly := standing(status.PartiallyRefunded, Ledger{Authorised: 5000, Captured: 4000, Refunded: 1000, RefundPending: 500})
	held := standing(status.HeldForReview, Ledger{})
	pending := standing(status.Pending, Ledger{})
	waiting := pending
	waiting.AwaitsShopper = true
	// Interface, Batch order entries: refund_reference_id is
	// <transaction_id>-<two digits>.
	refunded98, refunded99 := partly, partly
	refunded98.Refunds, refunded99.Refunds = 98, 99
	tests := []struct {
		name string
		got  *codes.Code
		want string
	}{
		{"capture in full", authorised.CheckCapture(self, 0), ""},
		{"capture in part", authorised.CheckCapture(self, 1234), ""},
		{"capture all", authorised.CheckCapture(self, 5000), ""},
		{"capture over the authorisation", authorised.CheckCapture(self, 5001),
			"I0003:Invalid amount: capture amount must be between 0.01 and the authorised 5000 minor units"},
		{"capture a negative amount", authorised.CheckCapture(self, -1),
			"I0003:Invalid amount: capture amount must be between 0.01 and the authorised 5000 minor units"},
		{"capture a paid order", paid.CheckCapture(self, 0), "I0018:Operation not allowed in the order's current state: order is paid (3000)"},
		{"capture another transaction", authorised.CheckCapture(other(func(e *Entry) { e.TransactionID = "2" }), 0),
			"I0019:Entry does not match the order: transaction_id"},
		{"capture another order_no", authorised.CheckCapture(other(func(e *Entry) { e.OrderNo = "X" }), 0), "I0019:Entry does not match the order: order_no"},
		{"capture another currency", authorised.CheckCapture(other(func(e *Entry) { e.Currency = "EUR" }), 0), "I0019:Entry does not match the order: currency"},
		{"capture another amount", authorised.CheckCapture(other(func(e *Entry) { e.Amount = 1 }), 0), "I0019:Entry does not match the order: amount"},

		{"cancel an authorised order", authorised.CheckCancel(self), ""},
		{"cancel a held order", held.CheckCancel(self), ""},
		{"cancel a paid order", paid.CheckCancel(self), "I0018:Operation not allowed in the order's current state: order is paid (3000)"},
		// Interface, Cancel: an order still pending, as far as the
		// connector allows (issue 29).
		{"cancel a pending order waiting for its shopper", waiting.CheckCancel(self), ""},
		{"cancel a pending order at the acquirer", pending.CheckCancel(self),
			"I0018:Operation not allowed in the order's current state: order is pending (1000) at the acquirer; cancel it once it has answered"},

		{"review a held order", held.CheckReview(self), ""},
		{"review an authorised order", authorised.CheckReview(self), "I0018:Operation not allowed in the order's current state: order is authorised (2000)"},

		{"refund a paid order", paid.CheckRefund(self, 4000), ""},
		{"refund more than captured", paid.CheckRefund(self, 4001), "I0003:Invalid amount: refund_amount exceeds the refundable 4000 minor units"},
		{"refund what is left, pending refunds counted", partly.CheckRefund(self, 2500), ""},
		{"refund past what is pending", partly.CheckRefund(self, 2501), "I0003:Invalid amount: refund_amount exceeds the refundable 2500 minor units"},
		{"refund nothing", paid.CheckRefund(self, 0), "I0003:Invalid amount: refund_amount must be greater than zero"},
		{"the 99th refund", refunded98.CheckRefund(self, 1), ""},
		{"the 100th refund", refunded99.CheckRefund(self, 1), "I0032:An order takes at most 99 refunds: the order has had 99"},
		{"refund an authorised order", authorised.CheckRefund(self, 100), "I0018:Operation not allowed in the order's current state: order is authorised (2000)"},
		{"refund another order", paid.CheckRefund(other(func(e *Entry) { e.OrderNo = "X" }), 100), "I0019:Entry does not match the order: order_no"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := refusedWith(tt.got); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCaptureAmountAndRefunds(t *testing.T) {
	authorised := standing(status.Authorised, Ledger{Authorised: 5000})
	if got := authorised.CaptureAmount(0); got != 5000 {
		t.Errorf("CaptureAmount(0) = %d, want the authorisation", got)
	}
	if got := authorised.CaptureAmount(1200); got != 1200 {
		t.Errorf("CaptureAmount(1200) = %d", got)
	}
	tests := []struct {
		name string
		s    Standing
		want status.Payment
	}{
		{"nothing refunded yet", standing(status.Paid, Ledger{Captured: 4000, RefundPending: 4000}), status.Paid},
		{"refunded in part", standing(status.Paid, Ledger{Captured: 4000, Refunded: 1}), status.PartiallyRefunded},
		{"refunded in full", standing(status.PartiallyRefunded, Ledger{Captured: 4000, Refunded: 4000}), status.Refunded},
	}
	for _, tt := range tests {
		if got := tt.s.StatusAfterRefunds(); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

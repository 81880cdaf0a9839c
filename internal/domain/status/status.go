// Package status holds the order state machine: payment_status codes, the
// order_status of a payment result, and which transitions are allowed.
package status

import (
	"errors"
	"fmt"
	"strconv"
)

// Payment is a queried order's payment_status.
type Payment int

// The payment_status codes of docs/design.md §4.
const (
	Pending           Payment = 1000
	Authorised        Payment = 2000
	HeldForReview     Payment = 2100
	Paid              Payment = 3000
	Refunded          Payment = 4000
	PartiallyRefunded Payment = 4100
	Cancelled         Payment = 5000
	Failed            Payment = 6000
	Expired           Payment = 7000
)

// String renders the code as the interface carries it.
func (p Payment) String() string { return strconv.Itoa(int(p)) }

// Name is a short human name for logs and pages.
func (p Payment) Name() string {
	switch p {
	case Pending:
		return "pending"
	case Authorised:
		return "authorised"
	case HeldForReview:
		return "held for review"
	case Paid:
		return "paid"
	case Refunded:
		return "refunded"
	case PartiallyRefunded:
		return "partially refunded"
	case Cancelled:
		return "cancelled"
	case Failed:
		return "failed"
	case Expired:
		return "expired"
	}
	return "unknown"
}

// Order is the order_status of a payment result.
type Order int

// The order_status values of docs/design.md §4.
const (
	OrderFailure       Order = 0
	OrderSuccess       Order = 1
	OrderPending       Order = -1
	OrderToBeConfirmed Order = -2
)

// String renders the value as the interface carries it.
func (o Order) String() string { return strconv.Itoa(int(o)) }

// transitions is the state table of docs/design.md §4, with our one addition
// to the shared table: a held order that review approves is authorised then,
// and the acquirer may decline it, so 2100 may also become 6000
// (docs/decisions.md, "Domain vocabulary and the transition table").
var transitions = map[Payment][]Payment{
	Pending:           {Authorised, HeldForReview, Paid, Failed, Expired},
	HeldForReview:     {Authorised, Paid, Cancelled, Failed},
	Authorised:        {Paid, Cancelled, Expired},
	Paid:              {PartiallyRefunded, Refunded},
	PartiallyRefunded: {PartiallyRefunded, Refunded},
}

// ErrIllegalTransition is what Check's refusals wrap.
var ErrIllegalTransition = errors.New("illegal payment_status transition")

// CanTransition reports whether an order may move from one payment_status to another.
func CanTransition(from, to Payment) bool {
	for _, next := range transitions[from] {
		if next == to {
			return true
		}
	}
	return false
}

// Check returns nil when the table allows an order to move from one
// payment_status to another, and otherwise an error wrapping
// ErrIllegalTransition that names both statuses.
func Check(from, to Payment) error {
	if CanTransition(from, to) {
		return nil
	}
	return fmt.Errorf("%d (%s) to %d (%s): %w", from, from.Name(), to, to.Name(), ErrIllegalTransition)
}

// Final reports whether no transition leaves the status.
func (p Payment) Final() bool { return len(transitions[p]) == 0 }

// OrderStatusOf maps a payment_status to the order_status of a payment result.
func OrderStatusOf(p Payment) Order {
	switch p {
	case Pending:
		return OrderPending
	case HeldForReview:
		return OrderToBeConfirmed
	case Authorised, Paid, Refunded, PartiallyRefunded:
		return OrderSuccess
	}
	return OrderFailure
}

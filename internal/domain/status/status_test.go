package status

import (
	"errors"
	"fmt"
	"testing"
)

var allPayments = []Payment{
	Pending, Authorised, HeldForReview, Paid, Refunded, PartiallyRefunded, Cancelled, Failed, Expired,
}

func TestPaymentCodes(t *testing.T) {
	tests := []struct {
		p    Payment
		code int
		str  string
		name string
	}{
		{Pending, 1000, "1000", "pending"},
		{Authorised, 2000, "2000", "authorised"},
		{HeldForReview, 2100, "2100", "held for review"},
		{Paid, 3000, "3000", "paid"},
		{Refunded, 4000, "4000", "refunded"},
		{PartiallyRefunded, 4100, "4100", "partially refunded"},
		{Cancelled, 5000, "5000", "cancelled"},
		{Failed, 6000, "6000", "failed"},
		{Expired, 7000, "7000", "expired"},
		{Payment(1234), 1234, "1234", "unknown"},
	}
	for _, tc := range tests {
		t.Run(tc.str, func(t *testing.T) {
			if int(tc.p) != tc.code {
				t.Errorf("code = %d, want %d", int(tc.p), tc.code)
			}
			if got := tc.p.String(); got != tc.str {
				t.Errorf("String() = %q, want %q", got, tc.str)
			}
			if got := tc.p.Name(); got != tc.name {
				t.Errorf("Name() = %q, want %q", got, tc.name)
			}
		})
	}
}

func TestCanTransition(t *testing.T) {
	// docs/design.md §4: 1000→2000|2100|3000|6000|7000; 2100→2000|3000|5000;
	// 2000→3000|5000|7000; 3000→4100|4000; 4100→4100|4000; and ours,
	// 2100→6000 (an approved order the acquirer declines). Nothing else.
	allowed := map[[2]Payment]bool{
		{Pending, Authorised}:                  true,
		{Pending, HeldForReview}:               true,
		{Pending, Paid}:                        true,
		{Pending, Failed}:                      true,
		{Pending, Expired}:                     true,
		{HeldForReview, Authorised}:            true,
		{HeldForReview, Paid}:                  true,
		{HeldForReview, Cancelled}:             true,
		{HeldForReview, Failed}:                true,
		{Authorised, Paid}:                     true,
		{Authorised, Cancelled}:                true,
		{Authorised, Expired}:                  true,
		{Paid, PartiallyRefunded}:              true,
		{Paid, Refunded}:                       true,
		{PartiallyRefunded, PartiallyRefunded}: true,
		{PartiallyRefunded, Refunded}:          true,
	}
	if len(allowed) != 16 {
		t.Fatalf("allowed list has %d entries, docs/design.md §4 lists 15 and we add 2100→6000", len(allowed))
	}
	for _, from := range allPayments {
		for _, to := range allPayments {
			want := allowed[[2]Payment{from, to}]
			t.Run(fmt.Sprintf("%v->%v", from, to), func(t *testing.T) {
				if got := CanTransition(from, to); got != want {
					t.Errorf("CanTransition(%v, %v) = %v, want %v", from, to, got, want)
				}
			})
		}
	}
	// Codes outside the table go nowhere and nothing goes to them.
	for _, p := range allPayments {
		if CanTransition(Payment(0), p) || CanTransition(p, Payment(0)) || CanTransition(Payment(9999), p) {
			t.Errorf("transition between %v and an unknown code allowed", p)
		}
	}
}

// TestCheckRefuses names the moves the workflows must never make, each with
// the exact error the workflow logs.
func TestCheckRefuses(t *testing.T) {
	tests := []struct {
		name     string
		from, to Payment
		want     string
	}{
		{"a pending order is not cancelled", Pending, Cancelled,
			"1000 (pending) to 5000 (cancelled): illegal payment_status transition"},
		{"a pending order is not refunded", Pending, Refunded,
			"1000 (pending) to 4000 (refunded): illegal payment_status transition"},
		{"a held order does not expire", HeldForReview, Expired,
			"2100 (held for review) to 7000 (expired): illegal payment_status transition"},
		{"a held order is not refunded", HeldForReview, PartiallyRefunded,
			"2100 (held for review) to 4100 (partially refunded): illegal payment_status transition"},
		{"an authorisation is not refunded before capture", Authorised, Refunded,
			"2000 (authorised) to 4000 (refunded): illegal payment_status transition"},
		{"an authorised order does not fail", Authorised, Failed,
			"2000 (authorised) to 6000 (failed): illegal payment_status transition"},
		{"an authorised order is not held again", Authorised, HeldForReview,
			"2000 (authorised) to 2100 (held for review): illegal payment_status transition"},
		{"a paid order is not cancelled", Paid, Cancelled,
			"3000 (paid) to 5000 (cancelled): illegal payment_status transition"},
		{"a paid order does not fail", Paid, Failed,
			"3000 (paid) to 6000 (failed): illegal payment_status transition"},
		{"a paid order does not expire", Paid, Expired,
			"3000 (paid) to 7000 (expired): illegal payment_status transition"},
		{"a paid order is not authorised again", Paid, Authorised,
			"3000 (paid) to 2000 (authorised): illegal payment_status transition"},
		{"a paid order is not paid again", Paid, Paid,
			"3000 (paid) to 3000 (paid): illegal payment_status transition"},
		{"a partial refund does not go back to paid", PartiallyRefunded, Paid,
			"4100 (partially refunded) to 3000 (paid): illegal payment_status transition"},
		{"a full refund is final", Refunded, PartiallyRefunded,
			"4000 (refunded) to 4100 (partially refunded): illegal payment_status transition"},
		{"a cancelled order is not paid", Cancelled, Paid,
			"5000 (cancelled) to 3000 (paid): illegal payment_status transition"},
		{"a failed order is not paid", Failed, Paid,
			"6000 (failed) to 3000 (paid): illegal payment_status transition"},
		{"a failed order does not become pending", Failed, Pending,
			"6000 (failed) to 1000 (pending): illegal payment_status transition"},
		{"an expired order is not authorised", Expired, Authorised,
			"7000 (expired) to 2000 (authorised): illegal payment_status transition"},
		{"nothing moves to pending", Authorised, Pending,
			"2000 (authorised) to 1000 (pending): illegal payment_status transition"},
		{"an unknown code goes nowhere", Payment(0), Pending,
			"0 (unknown) to 1000 (pending): illegal payment_status transition"},
		{"nothing goes to an unknown code", Pending, Payment(9999),
			"1000 (pending) to 9999 (unknown): illegal payment_status transition"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.from, tc.to)
			if err == nil {
				t.Fatalf("Check(%v, %v) = nil, want a refusal", tc.from, tc.to)
			}
			if !errors.Is(err, ErrIllegalTransition) {
				t.Errorf("Check(%v, %v) = %v, does not wrap ErrIllegalTransition", tc.from, tc.to, err)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("Check(%v, %v) = %q, want %q", tc.from, tc.to, got, tc.want)
			}
		})
	}
}

// TestCheckAgreesWithCanTransition: Check refuses exactly what CanTransition
// does not allow.
func TestCheckAgreesWithCanTransition(t *testing.T) {
	for _, from := range allPayments {
		for _, to := range allPayments {
			err := Check(from, to)
			if allowed := CanTransition(from, to); allowed != (err == nil) {
				t.Errorf("Check(%v, %v) = %v, CanTransition = %v", from, to, err, allowed)
			}
		}
	}
}

func TestFinal(t *testing.T) {
	tests := []struct {
		p    Payment
		want bool
	}{
		{Pending, false},
		{Authorised, false},
		{HeldForReview, false},
		{Paid, false},
		{Refunded, true},
		{PartiallyRefunded, false},
		{Cancelled, true},
		{Failed, true},
		{Expired, true},
	}
	for _, tc := range tests {
		t.Run(tc.p.String(), func(t *testing.T) {
			if got := tc.p.Final(); got != tc.want {
				t.Errorf("%v.Final() = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
}

func TestOrderStatusOf(t *testing.T) {
	tests := []struct {
		p    Payment
		want Order
	}{
		{Pending, OrderPending},
		{Authorised, OrderSuccess},
		{HeldForReview, OrderToBeConfirmed},
		{Paid, OrderSuccess},
		{Refunded, OrderSuccess},
		{PartiallyRefunded, OrderSuccess},
		{Cancelled, OrderFailure},
		{Failed, OrderFailure},
		{Expired, OrderFailure},
		{Payment(0), OrderFailure},
	}
	for _, tc := range tests {
		t.Run(tc.p.String(), func(t *testing.T) {
			if got := OrderStatusOf(tc.p); got != tc.want {
				t.Errorf("OrderStatusOf(%v) = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
}

func TestOrderString(t *testing.T) {
	tests := []struct {
		o    Order
		want string
	}{
		{OrderSuccess, "1"},
		{OrderFailure, "0"},
		{OrderPending, "-1"},
		{OrderToBeConfirmed, "-2"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if got := tc.o.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

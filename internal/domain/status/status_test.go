package status

import (
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
	// DESIGN §4: 1000→2000|2100|3000|6000|7000; 2100→2000|3000|5000;
	// 2000→3000|5000|7000; 3000→4100|4000; 4100→4100|4000. Nothing else.
	allowed := map[[2]Payment]bool{
		{Pending, Authorised}:                  true,
		{Pending, HeldForReview}:               true,
		{Pending, Paid}:                        true,
		{Pending, Failed}:                      true,
		{Pending, Expired}:                     true,
		{HeldForReview, Authorised}:            true,
		{HeldForReview, Paid}:                  true,
		{HeldForReview, Cancelled}:             true,
		{Authorised, Paid}:                     true,
		{Authorised, Cancelled}:                true,
		{Authorised, Expired}:                  true,
		{Paid, PartiallyRefunded}:              true,
		{Paid, Refunded}:                       true,
		{PartiallyRefunded, PartiallyRefunded}: true,
		{PartiallyRefunded, Refunded}:          true,
	}
	if len(allowed) != 15 {
		t.Fatalf("allowed list has %d entries, DESIGN §4 lists 15", len(allowed))
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

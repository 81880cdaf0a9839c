package subscription

import (
	"errors"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/order"
)

// Fuzz target: go test -run='^$' -fuzz='^FuzzParse$' ./internal/domain/subscription
// (or make fuzz). Plain go test runs the seeds.

// FuzzParse checks that Parse never panics, that a refusal is a *FieldError,
// and that accepted terms charge a positive amount, have an interval count
// of at least 1, keep the cycle rules and put the second charge after the
// first.
func FuzzParse(f *testing.F) {
	f.Add("Gold", "10.00", "month", "", "", "", "", "", "USD", false)
	f.Add("Gold", "1000", "YEAR", "2", "12", "3", "2025-04-01", "2026-04-01T00:00:00Z", "JPY", false)
	f.Add("Gold", "0", "second", "0", "1", "1001", "2025-03-09", "2025-03-10", "USD", true)
	f.Add("", "-1", "hour", "366", "x", "13", "2026-03-11", "2025-02-30", "XXX", true)
	f.Add("G\x00", "1e3", "minute", "+1", "99999999999999999999", "-1", "2025-03-10T00:30:00+01:00", "2025", "usd", true)
	now := time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, name, amount, interval, count, billing, promo, start, end, currency string, allowTest bool) {
		s := order.Subscription{ContractName: name, ContractAmount: order.Text(amount), Interval: interval,
			IntervalCount: order.Text(count), BillingCycle: order.Text(billing), PromotionCycle: order.Text(promo),
			ContractStart: start, ContractEnd: end}
		terms, err := Parse(s, money.Amount{Minor: 100, Currency: currency}, now, allowTest)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field == "" || fe.Reason == "" {
				t.Fatalf("Parse(%+v) error = %v, want a *FieldError naming a field and why", s, err)
			}
			return
		}
		if terms.Amount.Minor <= 0 || terms.IntervalCount < 1 {
			t.Fatalf("Parse(%+v) = %+v: amount or interval count out of range", s, terms)
		}
		if terms.BillingCycles == 1 || (terms.BillingCycles > 0 && terms.PromotionCycles > terms.BillingCycles) {
			t.Fatalf("Parse(%+v) = %+v: cycles out of range", s, terms)
		}
		if !terms.Due(now, 2).After(now) {
			t.Fatalf("Parse(%+v) = %+v: second charge not after the first", s, terms)
		}
	})
}

package subscription

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/order"
)

// now is the moment every Parse test runs at.
var now = time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)

func usd(minor int64) money.Amount { return money.Amount{Minor: minor, Currency: "USD"} }

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// valid is a minimal subscription Parse accepts.
func valid() order.Subscription {
	return order.Subscription{ContractName: "Gold", ContractAmount: "10.00", Interval: "month"}
}

func TestParseAccepts(t *testing.T) {
	plus2 := time.FixedZone("", 2*60*60)
	tests := []struct {
		name      string
		edit      func(s *order.Subscription)
		first     money.Amount
		allowTest bool
		want      Terms
	}{
		{
			name:  "minimal: defaults filled in",
			edit:  func(s *order.Subscription) {},
			first: usd(100),
			want: Terms{ContractName: "Gold", Amount: usd(1000), PromoAmount: usd(100),
				Interval: Month, IntervalCount: 1},
		},
		{
			name: "every field, trimmed, interval in upper case",
			edit: func(s *order.Subscription) {
				*s = order.Subscription{Contract: " C-1 ", ContractName: " Gold plan ", ContractAmount: " 10.5 ",
					Interval: " MONTH ", IntervalCount: " 3 ", BillingCycle: " 12 ", PromotionCycle: " 3 ",
					ContractStart: " 2025-04-01 ", ContractEnd: " 2026-04-01T00:00:00Z ", PriceID: " price_1 "}
			},
			first: usd(100),
			want: Terms{Contract: "C-1", ContractName: "Gold plan", PriceID: "price_1", Amount: usd(1050),
				PromoAmount: usd(100), Interval: Month, IntervalCount: 3, BillingCycles: 12, PromotionCycles: 3,
				Start: date(2025, 4, 1), End: date(2026, 4, 1)},
		},
		{
			name:  "zero-exponent currency",
			edit:  func(s *order.Subscription) { s.ContractAmount = "1000" },
			first: money.Amount{Minor: 500, Currency: "JPY"},
			want: Terms{ContractName: "Gold", Amount: money.Amount{Minor: 1000, Currency: "JPY"},
				PromoAmount: money.Amount{Minor: 500, Currency: "JPY"}, Interval: Month, IntervalCount: 1},
		},
		{
			name:  "day, week and year intervals: week",
			edit:  func(s *order.Subscription) { s.Interval = "Week" },
			first: usd(100),
			want: Terms{ContractName: "Gold", Amount: usd(1000), PromoAmount: usd(100),
				Interval: Week, IntervalCount: 1},
		},
		{
			name:  "test interval when allowed",
			edit:  func(s *order.Subscription) { s.Interval, s.IntervalCount = "Second", "30" },
			first: usd(100), allowTest: true,
			want: Terms{ContractName: "Gold", Amount: usd(1000), PromoAmount: usd(100),
				Interval: Second, IntervalCount: 30},
		},
		{
			name:  "minute when allowed",
			edit:  func(s *order.Subscription) { s.Interval = "minute" },
			first: usd(100), allowTest: true,
			want: Terms{ContractName: "Gold", Amount: usd(1000), PromoAmount: usd(100),
				Interval: Minute, IntervalCount: 1},
		},
		{
			name: "limits: interval_count 365, billing_cycle 1000, promotion_cycle 1000, leading zeros",
			edit: func(s *order.Subscription) {
				s.IntervalCount, s.BillingCycle, s.PromotionCycle = "0365", "1000", "01000"
			},
			first: usd(100),
			want: Terms{ContractName: "Gold", Amount: usd(1000), PromoAmount: usd(100),
				Interval: Month, IntervalCount: 365, BillingCycles: 1000, PromotionCycles: 1000},
		},
		{
			name:  "billing_cycle 0 is no limit; promotion_cycle then only capped at 1000",
			edit:  func(s *order.Subscription) { s.BillingCycle, s.PromotionCycle = "0", "24" },
			first: usd(100),
			want: Terms{ContractName: "Gold", Amount: usd(1000), PromoAmount: usd(100),
				Interval: Month, IntervalCount: 1, PromotionCycles: 24},
		},
		{
			name:  "billing_cycle 2, promotion_cycle 0",
			edit:  func(s *order.Subscription) { s.BillingCycle, s.PromotionCycle = "2", "0" },
			first: usd(100),
			want: Terms{ContractName: "Gold", Amount: usd(1000), PromoAmount: usd(100),
				Interval: Month, IntervalCount: 1, BillingCycles: 2},
		},
		{
			name:  "contract_start today, before now",
			edit:  func(s *order.Subscription) { s.ContractStart = "2025-03-10" },
			first: usd(100),
			want: Terms{ContractName: "Gold", Amount: usd(1000), PromoAmount: usd(100),
				Interval: Month, IntervalCount: 1, Start: date(2025, 3, 10)},
		},
		{
			name:  "contract_start as the interface writes dates",
			edit:  func(s *order.Subscription) { s.ContractStart = "20250401" },
			first: usd(100),
			want: Terms{ContractName: "Gold", Amount: usd(1000), PromoAmount: usd(100),
				Interval: Month, IntervalCount: 1, Start: date(2025, 4, 1)},
		},
		{
			name:  "contract_start exactly one year ahead",
			edit:  func(s *order.Subscription) { s.ContractStart = "2026-03-10" },
			first: usd(100),
			want: Terms{ContractName: "Gold", Amount: usd(1000), PromoAmount: usd(100),
				Interval: Month, IntervalCount: 1, Start: date(2026, 3, 10)},
		},
		{
			name:  "contract_start on the last second of the day a year ahead",
			edit:  func(s *order.Subscription) { s.ContractStart = "2026-03-10T23:59:59Z" },
			first: usd(100),
			want: Terms{ContractName: "Gold", Amount: usd(1000), PromoAmount: usd(100),
				Interval: Month, IntervalCount: 1, Start: time.Date(2026, 3, 10, 23, 59, 59, 0, time.UTC)},
		},
		{
			name:  "RFC 3339 contract_start keeps its offset",
			edit:  func(s *order.Subscription) { s.ContractStart = "2025-03-31T09:00:00+02:00" },
			first: usd(100),
			want: Terms{ContractName: "Gold", Amount: usd(1000), PromoAmount: usd(100),
				Interval: Month, IntervalCount: 1, Start: time.Date(2025, 3, 31, 9, 0, 0, 0, plus2)},
		},
		{
			name:  "contract_end without contract_start",
			edit:  func(s *order.Subscription) { s.ContractEnd = "2025-03-10T12:00:01Z" },
			first: usd(100),
			want: Terms{ContractName: "Gold", Amount: usd(1000), PromoAmount: usd(100),
				Interval: Month, IntervalCount: 1, End: time.Date(2025, 3, 10, 12, 0, 1, 0, time.UTC)},
		},
		{
			name: "64 characters, not bytes",
			edit: func(s *order.Subscription) {
				s.ContractName, s.Contract, s.PriceID = strings.Repeat("é", 64), strings.Repeat("c", 64), strings.Repeat("p", 64)
			},
			first: usd(100),
			want: Terms{Contract: strings.Repeat("c", 64), ContractName: strings.Repeat("é", 64),
				PriceID: strings.Repeat("p", 64), Amount: usd(1000), PromoAmount: usd(100), Interval: Month, IntervalCount: 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := valid()
			tc.edit(&s)
			got, err := Parse(s, tc.first, now, tc.allowTest)
			if err != nil {
				t.Fatalf("Parse(%+v) error = %v", s, err)
			}
			if !termsEqual(got, tc.want) {
				t.Errorf("Parse(%+v) =\n%+v, want\n%+v", s, got, tc.want)
			}
		})
	}
}

// termsEqual compares terms, their times by instant and offset.
func termsEqual(a, b Terms) bool {
	sameTime := func(x, y time.Time) bool {
		_, xo := x.Zone()
		_, yo := y.Zone()
		return x.Equal(y) && xo == yo
	}
	if !sameTime(a.Start, b.Start) || !sameTime(a.End, b.End) {
		return false
	}
	a.Start, a.End, b.Start, b.End = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return a == b
}

func TestParseRefuses(t *testing.T) {
	const (
		reasonInterval     = "must be day, week, month or year"
		reasonIntervalTest = "must be day, week, month, year, second or minute"
		reasonCount        = "must be a whole number from 1 to 365"
		reasonCycles       = "must be a whole number from 0 to 1000"
		reasonDate         = "must be a date (2006-01-02 or 20060102) or an RFC 3339 time"
		reasonTooLong      = "must be at most 64 characters"
		reasonPrintable    = "must be printable text"
	)
	tests := []struct {
		name      string
		edit      func(s *order.Subscription)
		first     money.Amount
		allowTest bool
		field     string
		reason    string
	}{
		{"contract too long", func(s *order.Subscription) { s.Contract = strings.Repeat("c", 65) }, usd(100), false, "contract", reasonTooLong},
		{"contract with a NUL", func(s *order.Subscription) { s.Contract = "C\x001" }, usd(100), false, "contract", reasonPrintable},
		{"contract not UTF-8", func(s *order.Subscription) { s.Contract = "C\xff" }, usd(100), false, "contract", reasonPrintable},
		{"contract_name missing", func(s *order.Subscription) { s.ContractName = "" }, usd(100), false, "contract_name", "is required"},
		{"contract_name blank", func(s *order.Subscription) { s.ContractName = " \t " }, usd(100), false, "contract_name", "is required"},
		{"contract_name too long", func(s *order.Subscription) { s.ContractName = strings.Repeat("é", 65) }, usd(100), false, "contract_name", reasonTooLong},
		{"contract_name with a newline", func(s *order.Subscription) { s.ContractName = "Gold\nplan" }, usd(100), false, "contract_name", reasonPrintable},
		{"contract_name with a zero-width space", func(s *order.Subscription) { s.ContractName = "Gold\u200bplan" }, usd(100), false, "contract_name", reasonPrintable},
		{"contract_amount missing", func(s *order.Subscription) { s.ContractAmount = "" }, usd(100), false, "contract_amount", "is required"},
		{"contract_amount blank", func(s *order.Subscription) { s.ContractAmount = "  " }, usd(100), false, "contract_amount", "is required"},
		{"contract_amount zero", func(s *order.Subscription) { s.ContractAmount = "0.00" }, usd(100), false, "contract_amount", "must be a positive amount in USD"},
		{"contract_amount negative", func(s *order.Subscription) { s.ContractAmount = "-5" }, usd(100), false, "contract_amount", "must be a positive amount in USD"},
		{"contract_amount not a number", func(s *order.Subscription) { s.ContractAmount = "ten" }, usd(100), false, "contract_amount", "must be a positive amount in USD"},
		{"contract_amount three fraction digits", func(s *order.Subscription) { s.ContractAmount = "1.234" }, usd(100), false, "contract_amount", "must be a positive amount in USD"},
		{"contract_amount too large", func(s *order.Subscription) { s.ContractAmount = "99999999999999999" }, usd(100), false, "contract_amount", "must be a positive amount in USD"},
		{"contract_amount with cents in JPY", func(s *order.Subscription) { s.ContractAmount = "10.50" }, money.Amount{Minor: 500, Currency: "JPY"}, false, "contract_amount", "must be a positive amount in JPY"},
		{"first payment in an unknown currency", func(s *order.Subscription) {}, money.Amount{Minor: 100, Currency: "XXX"}, false, "contract_amount", "cannot be read: the payment's currency is unknown"},
		{"interval missing", func(s *order.Subscription) { s.Interval = "" }, usd(100), false, "interval", "is required"},
		{"interval unknown", func(s *order.Subscription) { s.Interval = "hour" }, usd(100), false, "interval", reasonInterval},
		{"interval plural", func(s *order.Subscription) { s.Interval = "months" }, usd(100), false, "interval", reasonInterval},
		{"second not allowed", func(s *order.Subscription) { s.Interval = "second" }, usd(100), false, "interval", reasonInterval},
		{"minute not allowed", func(s *order.Subscription) { s.Interval = "MINUTE" }, usd(100), false, "interval", reasonInterval},
		{"interval unknown with test intervals", func(s *order.Subscription) { s.Interval = "hour" }, usd(100), true, "interval", reasonIntervalTest},
		{"interval_count zero", func(s *order.Subscription) { s.IntervalCount = "0" }, usd(100), false, "interval_count", reasonCount},
		{"interval_count 366", func(s *order.Subscription) { s.IntervalCount = "366" }, usd(100), false, "interval_count", reasonCount},
		{"interval_count negative", func(s *order.Subscription) { s.IntervalCount = "-1" }, usd(100), false, "interval_count", reasonCount},
		{"interval_count with a plus sign", func(s *order.Subscription) { s.IntervalCount = "+1" }, usd(100), false, "interval_count", reasonCount},
		{"interval_count fraction", func(s *order.Subscription) { s.IntervalCount = "1.5" }, usd(100), false, "interval_count", reasonCount},
		{"interval_count huge", func(s *order.Subscription) { s.IntervalCount = "99999999999999999999999" }, usd(100), false, "interval_count", reasonCount},
		{"billing_cycle 1", func(s *order.Subscription) { s.BillingCycle = "1" }, usd(100), false, "billing_cycle", "must be 0 (no limit) or at least 2"},
		{"billing_cycle 1001", func(s *order.Subscription) { s.BillingCycle = "1001" }, usd(100), false, "billing_cycle", reasonCycles},
		{"billing_cycle negative", func(s *order.Subscription) { s.BillingCycle = "-2" }, usd(100), false, "billing_cycle", reasonCycles},
		{"billing_cycle not a number", func(s *order.Subscription) { s.BillingCycle = "twelve" }, usd(100), false, "billing_cycle", reasonCycles},
		{"promotion_cycle above billing_cycle", func(s *order.Subscription) { s.BillingCycle, s.PromotionCycle = "12", "13" }, usd(100), false, "promotion_cycle", "must not exceed billing_cycle"},
		{"promotion_cycle 1001 without a limit", func(s *order.Subscription) { s.PromotionCycle = "1001" }, usd(100), false, "promotion_cycle", reasonCycles},
		{"promotion_cycle not a number", func(s *order.Subscription) { s.PromotionCycle = "3x" }, usd(100), false, "promotion_cycle", reasonCycles},
		{"contract_start yesterday", func(s *order.Subscription) { s.ContractStart = "2025-03-09" }, usd(100), false, "contract_start", "must not be before today"},
		{"contract_start late yesterday in UTC", func(s *order.Subscription) { s.ContractStart = "2025-03-10T00:30:00+01:00" }, usd(100), false, "contract_start", "must not be before today"},
		{"contract_start a year and a day ahead", func(s *order.Subscription) { s.ContractStart = "2026-03-11" }, usd(100), false, "contract_start", "must be at most one year ahead"},
		{"contract_start in another layout", func(s *order.Subscription) { s.ContractStart = "10/03/2025" }, usd(100), false, "contract_start", reasonDate},
		{"contract_start not a day", func(s *order.Subscription) { s.ContractStart = "2025-02-30" }, usd(100), false, "contract_start", reasonDate},
		{"contract_start without an offset", func(s *order.Subscription) { s.ContractStart = "2025-04-01T10:00:00" }, usd(100), false, "contract_start", reasonDate},
		{"contract_end today at midnight", func(s *order.Subscription) { s.ContractEnd = "2025-03-10" }, usd(100), false, "contract_end", "must be after now"},
		{"contract_end now", func(s *order.Subscription) { s.ContractEnd = "2025-03-10T12:00:00Z" }, usd(100), false, "contract_end", "must be after now"},
		{"contract_end before contract_start", func(s *order.Subscription) { s.ContractStart, s.ContractEnd = "2025-05-01", "2025-04-30" }, usd(100), false, "contract_end", "must be after contract_start"},
		{"contract_end at contract_start", func(s *order.Subscription) { s.ContractStart, s.ContractEnd = "2025-05-01", "2025-05-01T00:00:00Z" }, usd(100), false, "contract_end", "must be after contract_start"},
		{"contract_end in another layout", func(s *order.Subscription) { s.ContractEnd = "2026" }, usd(100), false, "contract_end", reasonDate},
		{"price_id too long", func(s *order.Subscription) { s.PriceID = strings.Repeat("p", 65) }, usd(100), false, "price_id", reasonTooLong},
		{"price_id with a tab", func(s *order.Subscription) { s.PriceID = "price\t1" }, usd(100), false, "price_id", reasonPrintable},
		{"first wrong field in the interface's order", func(s *order.Subscription) { s.Contract, s.Interval = "C\x7f", "hour" }, usd(100), false, "contract", reasonPrintable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := valid()
			tc.edit(&s)
			got, err := Parse(s, tc.first, now, tc.allowTest)
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse(%+v) = %+v, %v; want a *FieldError", s, got, err)
			}
			if fe.Field != tc.field || fe.Reason != tc.reason {
				t.Errorf("Parse(%+v) error = {%q, %q}, want {%q, %q}", s, fe.Field, fe.Reason, tc.field, tc.reason)
			}
			if got != (Terms{}) {
				t.Errorf("Parse(%+v) terms = %+v, want zero terms with an error", s, got)
			}
		})
	}
}

func TestFieldErrorError(t *testing.T) {
	err := &FieldError{Field: "interval", Reason: "must be day, week, month or year"}
	if got, want := err.Error(), "interval must be day, week, month or year"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

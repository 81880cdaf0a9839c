package subscription

import (
	"math"
	"slices"
	"testing"
	"time"
)

func at(y int, m time.Month, d, hh, mm int) time.Time {
	return time.Date(y, m, d, hh, mm, 0, 0, time.UTC)
}

func TestAddMonths(t *testing.T) {
	plus2 := time.FixedZone("", 2*60*60)
	tests := []struct {
		name string
		from time.Time
		n    int
		want time.Time
	}{
		{"31 Jan +1 is 28 Feb", at(2025, 1, 31, 10, 30), 1, at(2025, 2, 28, 10, 30)},
		{"31 Jan +1 in a leap year is 29 Feb", at(2024, 1, 31, 10, 30), 1, at(2024, 2, 29, 10, 30)},
		{"31 Mar +1 is 30 Apr", at(2025, 3, 31, 0, 0), 1, at(2025, 4, 30, 0, 0)},
		{"31 Dec +2 is 28 Feb", at(2024, 12, 31, 0, 0), 2, at(2025, 2, 28, 0, 0)},
		{"31 Jan +2 is 31 Mar", at(2025, 1, 31, 0, 0), 2, at(2025, 3, 31, 0, 0)},
		{"29 Feb +12 is 28 Feb", at(2024, 2, 29, 0, 0), 12, at(2025, 2, 28, 0, 0)},
		{"29 Feb +48 is 29 Feb", at(2024, 2, 29, 0, 0), 48, at(2028, 2, 29, 0, 0)},
		{"15 Jan +0 is itself", at(2025, 1, 15, 8, 0), 0, at(2025, 1, 15, 8, 0)},
		{"31 Mar -1 is 28 Feb", at(2025, 3, 31, 0, 0), -1, at(2025, 2, 28, 0, 0)},
		{"15 Nov +3 crosses the year", at(2025, 11, 15, 0, 0), 3, at(2026, 2, 15, 0, 0)},
		{"keeps nanoseconds", time.Date(2025, 1, 31, 23, 59, 59, 999, time.UTC), 1, time.Date(2025, 2, 28, 23, 59, 59, 999, time.UTC)},
		{"in t's location", time.Date(2025, 1, 31, 1, 0, 0, 0, plus2), 1, time.Date(2025, 2, 28, 1, 0, 0, 0, plus2)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := AddMonths(tc.from, tc.n)
			if !got.Equal(tc.want) || got.Location() != tc.want.Location() {
				t.Errorf("AddMonths(%v, %d) = %v, want %v", tc.from, tc.n, got, tc.want)
			}
		})
	}
}

func TestDue(t *testing.T) {
	tests := []struct {
		name      string
		terms     Terms
		firstPaid time.Time
		// want[i] is the due date of cycle i+2.
		want []time.Time
	}{
		{
			name:      "a year of months from 31 January",
			terms:     Terms{Interval: Month, IntervalCount: 1},
			firstPaid: at(2025, 1, 31, 10, 30),
			want: []time.Time{
				at(2025, 2, 28, 10, 30), at(2025, 3, 31, 10, 30), at(2025, 4, 30, 10, 30), at(2025, 5, 31, 10, 30),
				at(2025, 6, 30, 10, 30), at(2025, 7, 31, 10, 30), at(2025, 8, 31, 10, 30), at(2025, 9, 30, 10, 30),
				at(2025, 10, 31, 10, 30), at(2025, 11, 30, 10, 30), at(2025, 12, 31, 10, 30), at(2026, 1, 31, 10, 30),
			},
		},
		{
			name:      "months from 31 January in a leap year",
			terms:     Terms{Interval: Month, IntervalCount: 1},
			firstPaid: at(2024, 1, 31, 0, 0),
			want:      []time.Time{at(2024, 2, 29, 0, 0), at(2024, 3, 31, 0, 0)},
		},
		{
			name:      "quarters from 31 January",
			terms:     Terms{Interval: Month, IntervalCount: 3},
			firstPaid: at(2025, 1, 31, 0, 0),
			want:      []time.Time{at(2025, 4, 30, 0, 0), at(2025, 7, 31, 0, 0), at(2025, 10, 31, 0, 0), at(2026, 1, 31, 0, 0)},
		},
		{
			name:      "days across the end of February",
			terms:     Terms{Interval: Day, IntervalCount: 1},
			firstPaid: at(2025, 2, 27, 9, 15),
			want:      []time.Time{at(2025, 2, 28, 9, 15), at(2025, 3, 1, 9, 15), at(2025, 3, 2, 9, 15)},
		},
		{
			name:      "every 3 days",
			terms:     Terms{Interval: Day, IntervalCount: 3},
			firstPaid: at(2025, 12, 30, 0, 0),
			want:      []time.Time{at(2026, 1, 2, 0, 0), at(2026, 1, 5, 0, 0)},
		},
		{
			name:      "weeks across the year",
			terms:     Terms{Interval: Week, IntervalCount: 1},
			firstPaid: at(2025, 12, 25, 18, 0),
			want:      []time.Time{at(2026, 1, 1, 18, 0), at(2026, 1, 8, 18, 0), at(2026, 1, 15, 18, 0)},
		},
		{
			name:      "fortnights",
			terms:     Terms{Interval: Week, IntervalCount: 2},
			firstPaid: at(2025, 3, 10, 0, 0),
			want:      []time.Time{at(2025, 3, 24, 0, 0), at(2025, 4, 7, 0, 0)},
		},
		{
			name:      "years from 29 February",
			terms:     Terms{Interval: Year, IntervalCount: 1},
			firstPaid: at(2024, 2, 29, 12, 0),
			want:      []time.Time{at(2025, 2, 28, 12, 0), at(2026, 2, 28, 12, 0), at(2027, 2, 28, 12, 0), at(2028, 2, 29, 12, 0)},
		},
		{
			name:      "every 30 seconds",
			terms:     Terms{Interval: Second, IntervalCount: 30},
			firstPaid: at(2025, 3, 10, 12, 0),
			want:      []time.Time{at(2025, 3, 10, 12, 0).Add(30 * time.Second), at(2025, 3, 10, 12, 1)},
		},
		{
			name:      "every minute",
			terms:     Terms{Interval: Minute, IntervalCount: 1},
			firstPaid: at(2025, 3, 10, 23, 59),
			want:      []time.Time{at(2025, 3, 11, 0, 0), at(2025, 3, 11, 0, 1)},
		},
		{
			name:      "contract_start after the first payment anchors cycle 2",
			terms:     Terms{Interval: Month, IntervalCount: 1, Start: at(2025, 3, 31, 0, 0)},
			firstPaid: at(2025, 3, 10, 12, 0),
			want:      []time.Time{at(2025, 3, 31, 0, 0), at(2025, 4, 30, 0, 0), at(2025, 5, 31, 0, 0), at(2025, 6, 30, 0, 0)},
		},
		{
			name:      "contract_start before the first payment is not the anchor",
			terms:     Terms{Interval: Month, IntervalCount: 1, Start: at(2025, 3, 10, 0, 0)},
			firstPaid: at(2025, 3, 10, 12, 0),
			want:      []time.Time{at(2025, 4, 10, 12, 0), at(2025, 5, 10, 12, 0)},
		},
		{
			name:      "contract_start at the first payment is not the anchor",
			terms:     Terms{Interval: Week, IntervalCount: 1, Start: at(2025, 3, 10, 12, 0)},
			firstPaid: at(2025, 3, 10, 12, 0),
			want:      []time.Time{at(2025, 3, 17, 12, 0)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for i, want := range tc.want {
				cycle := i + 2
				if got := tc.terms.Due(tc.firstPaid, cycle); !got.Equal(want) {
					t.Errorf("Due(%v, %d) = %v, want %v", tc.firstPaid, cycle, got, want)
				}
			}
			if got := tc.terms.Due(tc.firstPaid, 1); !got.Equal(tc.firstPaid) {
				t.Errorf("Due(%v, 1) = %v, want the first payment", tc.firstPaid, got)
			}
		})
	}
}

func TestAnchor(t *testing.T) {
	firstPaid := at(2025, 3, 10, 12, 0)
	tests := []struct {
		name  string
		start time.Time
		want  time.Time
	}{
		{"no contract_start", time.Time{}, firstPaid},
		{"contract_start later", at(2025, 4, 1, 0, 0), at(2025, 4, 1, 0, 0)},
		{"contract_start earlier the same day", at(2025, 3, 10, 0, 0), firstPaid},
		{"contract_start at the first payment", firstPaid, firstPaid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			terms := Terms{Interval: Month, IntervalCount: 1, Start: tc.start}
			if got := terms.Anchor(firstPaid); !got.Equal(tc.want) {
				t.Errorf("Anchor(%v) = %v, want %v", firstPaid, got, tc.want)
			}
		})
	}
}

func TestEnded(t *testing.T) {
	firstPaid := at(2025, 1, 31, 10, 30)
	tests := []struct {
		name  string
		terms Terms
		cycle int
		want  bool
	}{
		{"no limit, first payment", Terms{Interval: Month, IntervalCount: 1}, 1, false},
		{"no limit, cycle 1000", Terms{Interval: Month, IntervalCount: 1}, 1000, false},
		{"12 cycles, cycle 2", Terms{Interval: Month, IntervalCount: 1, BillingCycles: 12}, 2, false},
		{"12 cycles, cycle 12", Terms{Interval: Month, IntervalCount: 1, BillingCycles: 12}, 12, false},
		{"12 cycles, cycle 13", Terms{Interval: Month, IntervalCount: 1, BillingCycles: 12}, 13, true},
		{"2 cycles, cycle 3", Terms{Interval: Day, IntervalCount: 1, BillingCycles: 2}, 3, true},
		// Cycle 4 is due 30 April 10:30.
		{"contract_end after the due date", Terms{Interval: Month, IntervalCount: 1, End: at(2025, 4, 30, 10, 31)}, 4, false},
		{"contract_end at the due date", Terms{Interval: Month, IntervalCount: 1, End: at(2025, 4, 30, 10, 30)}, 4, false},
		{"contract_end before the due date", Terms{Interval: Month, IntervalCount: 1, End: at(2025, 4, 30, 0, 0)}, 4, true},
		{"contract_end a cycle earlier", Terms{Interval: Month, IntervalCount: 1, End: at(2025, 4, 30, 0, 0)}, 3, false},
		{"billing_cycle ends before contract_end", Terms{Interval: Month, IntervalCount: 1, BillingCycles: 3, End: at(2030, 1, 1, 0, 0)}, 4, true},
		{"contract_end ends before billing_cycle", Terms{Interval: Month, IntervalCount: 1, BillingCycles: 12, End: at(2025, 3, 1, 0, 0)}, 3, true},
		// With contract_start 1 June, cycle 3 is due 1 July.
		{"contract_end counted from contract_start", Terms{Interval: Month, IntervalCount: 1, Start: at(2025, 6, 1, 0, 0), End: at(2025, 6, 30, 0, 0)}, 3, true},
		{"contract_start's own cycle before contract_end", Terms{Interval: Month, IntervalCount: 1, Start: at(2025, 6, 1, 0, 0), End: at(2025, 6, 30, 0, 0)}, 2, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.terms.Ended(firstPaid, tc.cycle); got != tc.want {
				t.Errorf("Ended(%v, %d) = %t, want %t (due %v)", firstPaid, tc.cycle, got, tc.want, tc.terms.Due(firstPaid, tc.cycle))
			}
		})
	}
}

func TestAmountOf(t *testing.T) {
	tests := []struct {
		name  string
		promo int
		// want[i] is the amount of cycle i+1.
		want []int64
	}{
		{"no promotion", 0, []int64{100, 1000, 1000}},
		{"promotion of the first payment only", 1, []int64{100, 1000, 1000}},
		{"three promotion cycles", 3, []int64{100, 100, 100, 1000, 1000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			terms := Terms{Amount: usd(1000), PromoAmount: usd(100), Interval: Month, IntervalCount: 1, PromotionCycles: tc.promo}
			for i, want := range tc.want {
				if got := terms.AmountOf(i + 1); got != usd(want) {
					t.Errorf("AmountOf(%d) = %+v, want %+v", i+1, got, usd(want))
				}
			}
		})
	}
}

func TestPeriod(t *testing.T) {
	tests := []struct {
		name  string
		terms Terms
		want  string
	}{
		{"one month", Terms{Interval: Month, IntervalCount: 1}, "1 month"},
		{"three days", Terms{Interval: Day, IntervalCount: 3}, "3 day"},
		{"two weeks", Terms{Interval: Week, IntervalCount: 2}, "2 week"},
		{"one year", Terms{Interval: Year, IntervalCount: 1}, "1 year"},
		{"thirty seconds", Terms{Interval: Second, IntervalCount: 30}, "30 second"},
		{"no count is one", Terms{Interval: Week}, "1 week"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.terms.Period(); got != tc.want {
				t.Errorf("Period() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStep(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		name  string
		terms Terms
		want  time.Duration
	}{
		{"second", Terms{Interval: Second, IntervalCount: 30}, 30 * time.Second},
		{"minute", Terms{Interval: Minute, IntervalCount: 1}, time.Minute},
		{"day", Terms{Interval: Day, IntervalCount: 1}, day},
		{"3 days", Terms{Interval: Day, IntervalCount: 3}, 3 * day},
		{"week", Terms{Interval: Week, IntervalCount: 1}, 7 * day},
		{"month", Terms{Interval: Month, IntervalCount: 1}, 30 * day},
		{"year", Terms{Interval: Year, IntervalCount: 1}, 365 * day},
		{"365 years saturates", Terms{Interval: Year, IntervalCount: 365}, math.MaxInt64},
		{"no count is one", Terms{Interval: Day}, day},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.terms.Step(); got != tc.want {
				t.Errorf("Step() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDunningOffsets(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		name     string
		terms    Terms
		schedule []time.Duration
		want     []time.Duration
	}{
		{"month keeps the default", Terms{Interval: Month, IntervalCount: 1}, DefaultDunning, []time.Duration{day, 3 * day, 7 * day}},
		{"year keeps the default", Terms{Interval: Year, IntervalCount: 1}, DefaultDunning, []time.Duration{day, 3 * day, 7 * day}},
		{"365 years keep the default", Terms{Interval: Year, IntervalCount: 365}, DefaultDunning, []time.Duration{day, 3 * day, 7 * day}},
		{"day spreads the default", Terms{Interval: Day, IntervalCount: 1}, DefaultDunning, []time.Duration{6 * time.Hour, 12 * time.Hour, 18 * time.Hour}},
		{"2 days spread the default", Terms{Interval: Day, IntervalCount: 2}, DefaultDunning, []time.Duration{12 * time.Hour, 24 * time.Hour, 36 * time.Hour}},
		{"week: a last offset as long as the interval spreads", Terms{Interval: Week, IntervalCount: 1}, DefaultDunning, []time.Duration{42 * time.Hour, 84 * time.Hour, 126 * time.Hour}},
		{"2 weeks keep the default", Terms{Interval: Week, IntervalCount: 2}, DefaultDunning, []time.Duration{day, 3 * day, 7 * day}},
		{"minute spreads the default", Terms{Interval: Minute, IntervalCount: 1}, DefaultDunning, []time.Duration{15 * time.Second, 30 * time.Second, 45 * time.Second}},
		{"day keeps a short schedule", Terms{Interval: Day, IntervalCount: 1}, []time.Duration{time.Hour, 2 * time.Hour}, []time.Duration{time.Hour, 2 * time.Hour}},
		{"day spreads one retry", Terms{Interval: Day, IntervalCount: 1}, []time.Duration{day}, []time.Duration{12 * time.Hour}},
		{"empty schedule", Terms{Interval: Month, IntervalCount: 1}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.terms.DunningOffsets(tc.schedule); !slices.Equal(got, tc.want) {
				t.Errorf("DunningOffsets(%v) = %v, want %v", tc.schedule, got, tc.want)
			}
		})
	}
}

// TestDunningOffsetsReturnsACopy pins that changing the answer cannot
// change DefaultDunning, which every subscription shares.
func TestDunningOffsetsReturnsACopy(t *testing.T) {
	got := Terms{Interval: Month, IntervalCount: 1}.DunningOffsets(DefaultDunning)
	got[0] = time.Minute
	if want := []time.Duration{24 * time.Hour, 72 * time.Hour, 168 * time.Hour}; !slices.Equal(DefaultDunning, want) {
		t.Errorf("DefaultDunning = %v after changing an answer, want %v", DefaultDunning, want)
	}
}

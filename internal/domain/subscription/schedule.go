package subscription

import (
	"math"
	"strconv"
	"time"

	"github.com/paygate/paygate/internal/domain/money"
)

// DefaultDunning is the retry schedule of a failed charge when the merchant
// gives none: 1, 3 and 7 days after its due date.
var DefaultDunning = []time.Duration{24 * time.Hour, 72 * time.Hour, 168 * time.Hour}

// count is IntervalCount, at least 1: zero Terms still have a period.
func (t Terms) count() int {
	return max(t.IntervalCount, 1)
}

// Period is the recurring_deduction_period, for example "1 month" or
// "3 day".
func (t Terms) Period() string {
	return strconv.Itoa(t.count()) + " " + string(t.Interval)
}

// AmountOf is what charge cycle charges; cycle 1 is the first payment. The
// first max(PromotionCycles, 1) cycles charge PromoAmount, later ones Amount.
func (t Terms) AmountOf(cycle int) money.Amount {
	if cycle <= max(t.PromotionCycles, 1) {
		return t.PromoAmount
	}
	return t.Amount
}

// Anchor is what recurring charges are counted from: Start when it is after
// firstPaid, else firstPaid.
func (t Terms) Anchor(firstPaid time.Time) time.Time {
	if t.Start.After(firstPaid) {
		return t.Start
	}
	return firstPaid
}

// Due is when charge cycle (cycle >= 2) falls. When Start is the anchor,
// cycle 2 is at Start and cycle k at Start+(k-2) intervals; otherwise cycle k
// is at firstPaid+(k-1) intervals. Cycle 1 (or less) is firstPaid.
//
// Every date is computed from the anchor, never by adding to the previous
// date, so month ends stay stable: 31 January +1 month is 28 February (29 in
// leap years), +2 months is 31 March.
func (t Terms) Due(firstPaid time.Time, cycle int) time.Time {
	if cycle <= 1 {
		return firstPaid
	}
	if t.Start.After(firstPaid) {
		return t.add(t.Start, cycle-2)
	}
	return t.add(firstPaid, cycle-1)
}

// Ended reports whether charge cycle must not happen: it is beyond
// BillingCycles (when that is above 0) or its due date is after End (when
// set).
func (t Terms) Ended(firstPaid time.Time, cycle int) bool {
	if t.BillingCycles > 0 && cycle > t.BillingCycles {
		return true
	}
	return !t.End.IsZero() && t.Due(firstPaid, cycle).After(t.End)
}

// add adds n intervals to from. Days and weeks are calendar days (24 hours
// in UTC), months and years calendar months clamped to the month's last day.
func (t Terms) add(from time.Time, n int) time.Time {
	n *= t.count()
	switch t.Interval {
	case Second:
		return from.Add(time.Duration(n) * time.Second)
	case Minute:
		return from.Add(time.Duration(n) * time.Minute)
	case Week:
		return from.AddDate(0, 0, 7*n)
	case Month:
		return AddMonths(from, n)
	case Year:
		return AddMonths(from, 12*n)
	default:
		return from.AddDate(0, 0, n)
	}
}

// Step is one interval (IntervalCount units) as a rough duration: a day is
// 24 hours, a week 7 days, a month 30 days and a year 365 days. It is exact
// for seconds, minutes, days and weeks in UTC, and is used only to size the
// dunning schedule. It saturates at the largest duration.
func (t Terms) Step() time.Duration {
	unit := 24 * time.Hour
	switch t.Interval {
	case Second:
		unit = time.Second
	case Minute:
		unit = time.Minute
	case Week:
		unit = 7 * 24 * time.Hour
	case Month:
		unit = 30 * 24 * time.Hour
	case Year:
		unit = 365 * 24 * time.Hour
	}
	n := time.Duration(t.count())
	if n > math.MaxInt64/unit {
		return math.MaxInt64
	}
	return n * unit
}

// DunningOffsets are the delays after a failed charge's due date at which it
// is retried. They are schedule as given when its last offset is shorter
// than Step, so every retry happens before the next charge is due; otherwise
// len(schedule) retries spread evenly inside the interval, retry i (from 0)
// at Step*(i+1)/(len(schedule)+1): a daily subscription with the default
// schedule retries after 6, 12 and 18 hours. The result is a new slice.
func (t Terms) DunningOffsets(schedule []time.Duration) []time.Duration {
	if len(schedule) == 0 {
		return nil
	}
	step := t.Step()
	if schedule[len(schedule)-1] < step {
		return append([]time.Duration(nil), schedule...)
	}
	parts := time.Duration(len(schedule) + 1)
	out := make([]time.Duration, len(schedule))
	for i := range out {
		k := time.Duration(i + 1)
		if step <= math.MaxInt64/k {
			out[i] = step * k / parts
		} else {
			out[i] = step / parts * k
		}
	}
	return out
}

// AddMonths adds n months (n may be negative) to t, clamping the day to the
// last day of the target month, in t's location: 31 January +1 is 28
// February (29 in leap years), 31 March +1 is 30 April. The clock time is
// kept.
func AddMonths(t time.Time, n int) time.Time {
	y, m, d := t.Date()
	hh, mm, ss := t.Clock()
	// Day 0 of the month after the target is the target's last day.
	last := time.Date(y, m+time.Month(n)+1, 0, 0, 0, 0, 0, t.Location()).Day()
	return time.Date(y, m+time.Month(n), min(d, last), hh, mm, ss, t.Nanosecond(), t.Location())
}

// Package subscription turns the interface's subscription object into
// validated billing terms and computes their schedule: when each recurring
// charge falls, what it charges, when the subscription ends and when a failed
// charge is retried. It is pure, so workflows may call it.
package subscription

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/order"
)

// Interval is the unit of a subscription's billing period, in lower case.
type Interval string

// The intervals. Second and Minute exist for development and tests only;
// Parse admits them only when asked to.
const (
	Day    Interval = "day"
	Week   Interval = "week"
	Month  Interval = "month"
	Year   Interval = "year"
	Second Interval = "second"
	Minute Interval = "minute"
)

// Limits of the subscription fields.
const (
	// MaxIntervalCount is the largest interval_count.
	MaxIntervalCount = 365
	// MaxCycles is the largest billing_cycle and promotion_cycle.
	MaxCycles = 1000
	// MaxTextLen is the most characters contract, contract_name and
	// price_id may have.
	MaxTextLen = 64
)

// Layouts of contract_start and contract_end: a date (meaning 00:00 UTC) or
// an RFC 3339 time.
const (
	DateLayout = "2006-01-02"
	// CompactDateLayout is the date as the interface's examples write it.
	CompactDateLayout = "20060102"
	TimeLayout        = time.RFC3339
)

// Terms are a subscription's validated billing terms. Their fields are plain
// data, so they travel in workflow inputs as JSON.
type Terms struct {
	Contract, ContractName, PriceID string
	// Amount is contract_amount: each charge after the promotion.
	Amount money.Amount
	// PromoAmount is the first payment's amount, charged for the promotion
	// cycles.
	PromoAmount   money.Amount
	Interval      Interval
	IntervalCount int
	// BillingCycles is the total number of charges including the first
	// payment; 0 means no limit (until contract_end or a cancel).
	BillingCycles int
	// PromotionCycles is the number of charges at PromoAmount, counting the
	// first payment; 0 or 1 means only the first payment.
	PromotionCycles int
	// Start is contract_start; zero when absent.
	Start time.Time
	// End is contract_end; zero when absent.
	End time.Time
}

// FieldError says which subscription field is wrong and why. Field is the
// interface's name of the field (for example "interval").
type FieldError struct {
	Field, Reason string
}

// Error returns the field and the reason, for example "interval must be day,
// week, month or year".
func (e *FieldError) Error() string { return e.Field + " " + e.Reason }

func fieldError(field, reason string) error { return &FieldError{Field: field, Reason: reason} }

// Parse validates s for a first payment of first (its amount and currency)
// made at now, and returns the terms it makes. allowTestIntervals admits
// "second" and "minute" (development and tests only).
//
// A refusal is a *FieldError for the first wrong field, in the interface's
// order: contract, contract_name, contract_amount, interval, interval_count,
// billing_cycle, promotion_cycle, contract_start, contract_end, price_id.
// Surrounding whitespace of every value is ignored. The same input always
// gives the same answer.
//
// contract_amount is in first's currency; PromoAmount is first. Dates are
// compared with now: contract_start may not lie before now's date (UTC) nor
// more than a year after it; contract_end must be after now and after
// contract_start. Neither a billing_cycle limit nor a contract_end is needed:
// such a subscription runs until it is cancelled.
func Parse(s order.Subscription, first money.Amount, now time.Time, allowTestIntervals bool) (Terms, error) {
	t := Terms{PromoAmount: first}
	var err error

	if t.Contract, err = text("contract", s.Contract, false); err != nil {
		return Terms{}, err
	}
	if t.ContractName, err = text("contract_name", s.ContractName, true); err != nil {
		return Terms{}, err
	}

	amount := strings.TrimSpace(s.ContractAmount.String())
	if amount == "" {
		return Terms{}, fieldError("contract_amount", "is required")
	}
	if !money.KnownCurrency(first.Currency) {
		return Terms{}, fieldError("contract_amount", "cannot be read: the payment's currency is unknown")
	}
	if t.Amount, err = money.Parse(amount, first.Currency); err != nil || t.Amount.Minor <= 0 {
		return Terms{}, fieldError("contract_amount", "must be a positive amount in "+first.Currency)
	}

	if t.Interval, err = interval(s.Interval, allowTestIntervals); err != nil {
		return Terms{}, err
	}

	t.IntervalCount = 1
	if v := strings.TrimSpace(s.IntervalCount.String()); v != "" {
		n, ok := wholeNumber(v, 1, MaxIntervalCount)
		if !ok {
			return Terms{}, fieldError("interval_count", "must be a whole number from 1 to 365")
		}
		t.IntervalCount = n
	}

	if v := strings.TrimSpace(s.BillingCycle.String()); v != "" {
		n, ok := wholeNumber(v, 0, MaxCycles)
		if !ok {
			return Terms{}, fieldError("billing_cycle", "must be a whole number from 0 to 1000")
		}
		if n == 1 {
			return Terms{}, fieldError("billing_cycle", "must be 0 (no limit) or at least 2")
		}
		t.BillingCycles = n
	}

	if v := strings.TrimSpace(s.PromotionCycle.String()); v != "" {
		n, ok := wholeNumber(v, 0, MaxCycles)
		if !ok {
			return Terms{}, fieldError("promotion_cycle", "must be a whole number from 0 to 1000")
		}
		if t.BillingCycles > 0 && n > t.BillingCycles {
			return Terms{}, fieldError("promotion_cycle", "must not exceed billing_cycle")
		}
		t.PromotionCycles = n
	}

	y, m, d := now.UTC().Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	if v := strings.TrimSpace(s.ContractStart); v != "" {
		start, ok := parseTime(v)
		if !ok {
			return Terms{}, fieldError("contract_start", "must be a date (2006-01-02 or 20060102) or an RFC 3339 time")
		}
		if start.Before(today) {
			return Terms{}, fieldError("contract_start", "must not be before today")
		}
		// Its date (UTC) may be at most one year after today's (28
		// February for 29 February).
		if !start.Before(AddMonths(today, 12).AddDate(0, 0, 1)) {
			return Terms{}, fieldError("contract_start", "must be at most one year ahead")
		}
		t.Start = start
	}
	if v := strings.TrimSpace(s.ContractEnd); v != "" {
		end, ok := parseTime(v)
		if !ok {
			return Terms{}, fieldError("contract_end", "must be a date (2006-01-02 or 20060102) or an RFC 3339 time")
		}
		if !end.After(now) {
			return Terms{}, fieldError("contract_end", "must be after now")
		}
		if !t.Start.IsZero() && !end.After(t.Start) {
			return Terms{}, fieldError("contract_end", "must be after contract_start")
		}
		t.End = end
	}

	if t.PriceID, err = text("price_id", s.PriceID, false); err != nil {
		return Terms{}, err
	}
	return t, nil
}

// text checks a free-text field: at most MaxTextLen printable characters,
// present when required. It returns the value trimmed.
func text(field, v string, required bool) (string, error) {
	v = strings.TrimSpace(v)
	switch {
	case v == "" && required:
		return "", fieldError(field, "is required")
	case !printable(v):
		return "", fieldError(field, "must be printable text")
	case utf8.RuneCountInString(v) > MaxTextLen:
		return "", fieldError(field, "must be at most 64 characters")
	}
	return v, nil
}

// printable reports whether s is valid UTF-8 of graphic characters and
// spaces only: no control, format or unassigned characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsGraphic(r) {
			return false
		}
	}
	return true
}

// interval reads interval case-insensitively.
func interval(v string, allowTest bool) (Interval, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", fieldError("interval", "is required")
	}
	switch i := Interval(strings.ToLower(v)); i {
	case Day, Week, Month, Year:
		return i, nil
	case Second, Minute:
		if allowTest {
			return i, nil
		}
	}
	if allowTest {
		return "", fieldError("interval", "must be day, week, month, year, second or minute")
	}
	return "", fieldError("interval", "must be day, week, month or year")
}

// wholeNumber reads v, ASCII digits only (no sign), as a number from lo to
// hi.
func wholeNumber(v string, lo, hi int) (int, bool) {
	if v == "" {
		return 0, false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, false
		}
	}
	// Leading zeros are harmless; more digits than hi has are not, and
	// must not reach Atoi, which could overflow.
	digits := strings.TrimLeft(v, "0")
	if len(digits) > len(strconv.Itoa(hi)) {
		return 0, false
	}
	n := 0
	if digits != "" {
		var err error
		if n, err = strconv.Atoi(digits); err != nil {
			return 0, false
		}
	}
	return n, n >= lo && n <= hi
}

// parseTime reads a date (00:00 UTC, with or without dashes) or an RFC 3339 time. A time keeps its
// offset in a fixed zone (UTC for "Z" and "+00:00"), never the machine's
// local zone, which time.Parse would pick for an offset matching it: the
// schedule must not depend on where it is computed.
func parseTime(v string) (time.Time, bool) {
	for _, layout := range []string{DateLayout, CompactDateLayout} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	t, err := time.Parse(TimeLayout, v)
	if err != nil {
		return time.Time{}, false
	}
	if _, off := t.Zone(); off != 0 {
		return t.In(time.FixedZone("", off)), true
	}
	return t.UTC(), true
}

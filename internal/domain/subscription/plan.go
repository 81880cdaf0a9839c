package subscription

import (
	"fmt"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/domain/money"
)

// Plan is what the merchant changed of a subscription after it began: a
// new date for its next charge, cycles a pause skipped, a new amount. The
// zero Plan is the terms as agreed. It is plain data, so it travels in
// workflow inputs and the record as JSON.
type Plan struct {
	// Anchor, when set, is the date charge AnchorCycle falls on; later
	// charges follow it by the terms' interval.
	Anchor      time.Time `json:",omitzero"`
	AnchorCycle int       `json:",omitempty"`
	// Skip counts the schedule's dates a pause let pass uncharged: charge
	// k falls where the schedule puts k+Skip.
	Skip int `json:",omitempty"`
	// Amount, when set, is what every charge from AmountFrom on charges,
	// in place of the terms' promotion and contract amounts.
	Amount     money.Amount `json:",omitzero"`
	AmountFrom int          `json:",omitempty"`
	// Changes counts the merchant's changes (pause, resume, amend); each
	// is recorded and notified under its number.
	Changes int `json:",omitempty"`
}

// SameDates reports whether p and o put every charge on the same date.
func (p Plan) SameDates(o Plan) bool {
	return p.Anchor.Equal(o.Anchor) && p.AnchorCycle == o.AnchorCycle && p.Skip == o.Skip
}

// Due is when charge cycle (cycle >= 2) falls under the plan: the terms'
// schedule, moved by Anchor and Skip. Dates are always computed from an
// anchor, so month ends stay stable (Terms.Due).
func (p Plan) Due(t Terms, firstPaid time.Time, cycle int) time.Time {
	if !p.Anchor.IsZero() && cycle >= p.AnchorCycle {
		return t.add(p.Anchor, cycle+p.Skip-p.AnchorCycle)
	}
	return t.Due(firstPaid, cycle+p.Skip)
}

// AmountOf is what charge cycle charges under the plan.
func (p Plan) AmountOf(t Terms, cycle int) money.Amount {
	if p.Amount.Minor > 0 && cycle >= p.AmountFrom {
		return p.Amount
	}
	return t.AmountOf(cycle)
}

// Ended reports whether charge cycle must not happen under the plan: it is
// beyond BillingCycles, which counts charges, or falls after End.
func (p Plan) Ended(t Terms, firstPaid time.Time, cycle int) bool {
	if t.BillingCycles > 0 && cycle > t.BillingCycles {
		return true
	}
	return !t.End.IsZero() && p.Due(t, firstPaid, cycle).After(t.End)
}

// maxResumeSkip bounds the search for the first date after a pause: a
// thousand intervals of a second is long past any pause a test makes, and
// real intervals reach it only after decades.
const maxResumeSkip = 1_000_000

// resumed is the plan once a subscription paused before charge cycle is
// resumed at now: the dates that passed meanwhile are skipped, not charged
// late, and cycle falls on the schedule's first date not before now.
func (p Plan) resumed(t Terms, firstPaid time.Time, cycle int, now time.Time) Plan {
	for i := 0; i < maxResumeSkip && p.Due(t, firstPaid, cycle).Before(now); i++ {
		p.Skip++
	}
	return p
}

// Amendment is a merchant's change of a subscription's amount or next
// charge date; a zero field is left as it is.
type Amendment struct {
	Amount money.Amount
	Next   time.Time
}

// Empty reports whether the amendment changes nothing.
func (a Amendment) Empty() bool { return a.Amount.Minor == 0 && a.Next.IsZero() }

// ParseAmendment validates a change asked at now of a subscription with
// terms t: amount (contract_amount, in the terms' currency) and next
// (recurring_deduction_time: a date, "2006-01-02 15:04:05" UTC or RFC
// 3339), at least one of them. The next charge must be after now, at most
// a year ahead and not after contract_end. A refusal is a *FieldError.
func ParseAmendment(t Terms, amount, next string, now time.Time) (Amendment, error) {
	var a Amendment
	amount, next = strings.TrimSpace(amount), strings.TrimSpace(next)
	if amount == "" && next == "" {
		return a, fieldError("contract_amount", "or recurring_deduction_time is required")
	}
	if amount != "" {
		v, err := money.Parse(amount, t.Amount.Currency)
		if err != nil || v.Minor <= 0 {
			return Amendment{}, fieldError("contract_amount", "must be a positive amount in "+t.Amount.Currency)
		}
		a.Amount = v
	}
	if next != "" {
		at, ok := parseTime(next)
		if !ok {
			if at, ok = parseAnswerTime(next); !ok {
				return Amendment{}, fieldError("recurring_deduction_time", "must be a date, a time as 2006-01-02 15:04:05 (UTC) or an RFC 3339 time")
			}
		}
		switch {
		case !at.After(now):
			return Amendment{}, fieldError("recurring_deduction_time", "must be after now")
		case at.After(AddMonths(now, 12)):
			return Amendment{}, fieldError("recurring_deduction_time", "must be at most one year ahead")
		case !t.End.IsZero() && at.After(t.End):
			return Amendment{}, fieldError("recurring_deduction_time", fmt.Sprintf("must not be after contract_end (%s)", t.End.UTC().Format(time.RFC3339)))
		}
		a.Next = at
	}
	return a, nil
}

// AnswerTimeLayout is recurring_deduction_time as answers write it (UTC).
const AnswerTimeLayout = "2006-01-02 15:04:05"

func parseAnswerTime(v string) (time.Time, bool) {
	at, err := time.Parse(AnswerTimeLayout, v)
	return at, err == nil
}

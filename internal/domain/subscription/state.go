package subscription

import (
	"fmt"
	"regexp"
	"time"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
)

// ChargeResult is the result of one charge of a subscription: an order of
// its own, made for a billing cycle's attempt.
type ChargeResult struct {
	Cycle         int
	Attempt       int
	TransactionID string
	OrderNo       string
	Approved      bool
	ResultCode    string
	ResultMessage string
	// Unknown: the order could not learn whether the card was charged
	// (the acquirer never answered and never showed the charge). Another
	// attempt, under a new key, could charge the period twice.
	Unknown bool `json:",omitempty"`
}

// State is a subscription as its workflow knows it. The rules below take it
// and what happened and give back the next one.
type State struct {
	RecurringID string
	Status      Status
	// Cycle is the last cycle charged successfully (1: the first payment).
	Cycle int
	// Charges counts successful charges, the first payment included.
	Charges int
	// Attempts is the failed attempts of the cycle now due, since its
	// date was last set.
	Attempts int
	// Tried counts the charge orders made for the cycle now due, however
	// often its date moved: the next one is numbered Tried, so no two
	// share an order_no.
	Tried int `json:",omitempty"`
	// Next is when the next charge is made; zero once none will be.
	Next time.Time
	// History lists the charges of the workflow's run, newest last.
	History []ChargeResult
	// Plan is what the merchant changed since it began.
	Plan Plan
}

// Start is the state of a subscription whose last successful cycle is
// cycle, after charges successful charges.
func Start(recurringID string, cycle, charges int) State {
	return State{RecurringID: recurringID, Status: Active, Cycle: cycle, Charges: charges}
}

// ChargeOrderNo is the order_no of a subscription's charge: the cycle, and
// the retry when it is one. It is the charge order's idempotency key, so a
// charge is made once whatever is retried.
func ChargeOrderNo(recurringID string, cycle, attempt int) string {
	if attempt == 0 {
		return fmt.Sprintf("%s-c%d", recurringID, cycle)
	}
	return fmt.Sprintf("%s-c%d-r%d", recurringID, cycle, attempt)
}

// chargeOrderNo is the form of ChargeOrderNo's order numbers: "R" and the
// first payment's transaction id (19 digits), the cycle, maybe the attempt.
var chargeOrderNo = regexp.MustCompile(`^R[0-9]{19}-c[0-9]+(-r[0-9]+)?$`)

// IsChargeOrderNo reports whether orderNo has the form of a subscription's
// charge order. Those numbers are the gateway's: a merchant's own order
// under one would be taken for the subscription's charge of that cycle
// (counted paid, or declined, without the card being charged).
func IsChargeOrderNo(orderNo string) bool { return chargeOrderNo.MatchString(orderNo) }

// CycleDue is the subscription once a cycle falls due at due: its first
// attempt is then.
func (s State) CycleDue(due time.Time) State {
	s.Next, s.Attempts = due, 0
	return s
}

// AttemptAt is when attempt (0 the first) of a cycle due at due is made:
// at due, then after each of the dunning offsets (Terms.DunningOffsets).
func AttemptAt(due time.Time, offsets []time.Duration, attempt int) time.Time {
	if attempt == 0 {
		return due
	}
	return due.Add(offsets[attempt-1])
}

// Step is what follows a charge.
type Step int

const (
	// NextCycle: the charge was approved; the next cycle comes.
	NextCycle Step = iota
	// Retry: the charge failed; the cycle is tried again at Next.
	Retry
	// Suspend: the charge failed and no retry is left, or the stored
	// card is gone; the subscription is suspended.
	Suspend
)

// Charged is the subscription once attempt (0 the first) of cycle, due at
// due, came back res, and what follows it.
func (s State) Charged(cycle, attempt int, res ChargeResult, due time.Time, offsets []time.Duration) (State, Step) {
	s.History = append(append([]ChargeResult(nil), s.History...), res)
	if res.Approved {
		s.Cycle, s.Charges, s.Attempts, s.Tried = cycle, s.Charges+1, 0, 0
		return s, NextCycle
	}
	s.Attempts, s.Tried = attempt+1, s.Tried+1
	if res.ResultCode == codes.TokenDeleted.ID || attempt >= len(offsets) {
		// A deleted card can never be charged again; retrying would only
		// fail again.
		return s, Suspend
	}
	s.Next = due.Add(offsets[attempt])
	return s, Retry
}

// Ended is the subscription ended with st (finished, suspended or
// cancelled): no charge follows.
func (s State) Ended(st Status) State {
	s.Status, s.Next = st, time.Time{}
	return s
}

// Cancel is the subscription a merchant cancelled, and whether that changed
// it: one already ended stays as it ended.
func (s State) Cancel() (State, bool) {
	if s.Status.Final() {
		return s, false
	}
	return s.Ended(Cancelled), true
}

// Pause is the subscription a merchant paused, and whether that changed it:
// only an active one pauses. A paused subscription has no next charge date
// until it is resumed.
func (s State) Pause() (State, bool) {
	if s.Status != Active {
		return s, false
	}
	s.Status, s.Next, s.Attempts = Paused, time.Time{}, 0
	s.Plan.Changes++
	return s, true
}

// Resume is the subscription a merchant resumed at now, and whether that
// changed it: only a paused one resumes. The dates that passed while it was
// paused are skipped, not charged late; its next charge falls on the
// schedule's first date not before now.
func (s State) Resume(t Terms, firstPaid, now time.Time) (State, bool) {
	if s.Status != Paused {
		return s, false
	}
	s.Status, s.Attempts = Active, 0
	s.Plan = s.Plan.resumed(t, firstPaid, s.Cycle+1, now)
	s.Plan.Changes++
	s.Next = s.Plan.Due(t, firstPaid, s.Cycle+1)
	return s, true
}

// Amend is the subscription with a merchant's amendment, and whether that
// changed it: an ended one stays as it ended. A new amount is charged from
// the next charge on; a new date is the next charge's, and later charges
// follow it by the interval. A charge being retried starts over on the new
// date. A paused subscription keeps its new terms for when it resumes.
func (s State) Amend(t Terms, firstPaid time.Time, a Amendment) (State, bool) {
	if s.Status.Final() || a.Empty() {
		return s, false
	}
	next := s.Cycle + 1
	// The same amendment again (a merchant's retry) changes nothing.
	sameAmount := a.Amount.Minor == 0 || s.Plan.Amount == a.Amount && s.Plan.AmountFrom <= next
	sameDate := a.Next.IsZero() || s.Plan.Anchor.Equal(a.Next) && s.Plan.AnchorCycle == next && s.Plan.Skip == 0
	if sameAmount && sameDate {
		return s, false
	}
	if a.Amount.Minor > 0 {
		s.Plan.Amount, s.Plan.AmountFrom = a.Amount, next
	}
	if !a.Next.IsZero() {
		s.Plan.Anchor, s.Plan.AnchorCycle, s.Plan.Skip = a.Next, next, 0
		s.Attempts = 0
		if s.Status == Active {
			s.Next = s.Plan.Due(t, firstPaid, next)
		}
	}
	s.Plan.Changes++
	return s, true
}

// NextAmount is what the next charge will charge.
func (s State) NextAmount(t Terms) money.Amount { return s.Plan.AmountOf(t, s.Cycle+1) }

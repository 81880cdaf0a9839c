package payout

import (
	"errors"
	"fmt"
)

// Status is a payout's status field. The interface shows COMPLETED; the rest
// is ours.
type Status string

// The payout statuses, in the order a payout meets them.
const (
	// StatusNew: accepted and recorded; priced (quote and fee) but no money
	// has moved.
	StatusNew Status = "NEW"
	// StatusScheduled: the payer's funds are reserved and the payout waits
	// for its payment_date.
	StatusScheduled Status = "SCHEDULED"
	// StatusSubmitted: the funds are reserved and the transfer is with the
	// payout rail, whose answer is awaited.
	StatusSubmitted Status = "SUBMITTED"
	// StatusCompleted: the rail paid the beneficiary and the reservation is
	// settled. Final.
	StatusCompleted Status = "COMPLETED"
	// StatusFailed: the payout did not pay; failure_type and failure_reason
	// say why and any reservation is released. Final for the merchant, who is
	// notified; finance may re-run it (Rerun), which starts it again at NEW.
	StatusFailed Status = "FAILED"
)

// Statuses lists every status, in the order a payout meets them.
func Statuses() []Status {
	return []Status{StatusNew, StatusScheduled, StatusSubmitted, StatusCompleted, StatusFailed}
}

// transitions lists the statuses that may follow each status in a payout's
// own life. A re-run (FAILED → NEW) is not among them: only finance starts
// one, through Rerun.
var transitions = map[Status][]Status{
	StatusNew:       {StatusScheduled, StatusSubmitted, StatusFailed},
	StatusScheduled: {StatusSubmitted, StatusFailed},
	StatusSubmitted: {StatusCompleted, StatusFailed},
}

// Known reports whether s is one of the payout statuses.
func (s Status) Known() bool {
	for _, k := range Statuses() {
		if s == k {
			return true
		}
	}
	return false
}

// Final reports whether a payout in s has its outcome: no transition of its
// own life leaves s, and the merchant is notified.
func (s Status) Final() bool { return s.Known() && len(transitions[s]) == 0 }

// CanTransition reports whether a payout may move from one status to
// another in its own life. Staying in a status is not a transition.
func CanTransition(from, to Status) bool {
	for _, next := range transitions[from] {
		if next == to {
			return true
		}
	}
	return false
}

// Re-run refusals. Rerun wraps one of them, so a re-run command can report
// per payout why it was skipped.
var (
	ErrRerunCompleted = errors.New("payout already completed")
	ErrRerunInFlight  = errors.New("payout still in flight")
	ErrUnknownStatus  = errors.New("unknown payout status")
)

// Rerun returns the status a re-run of a payout in s starts from (NEW), or
// the reason it is refused: only a FAILED payout may be re-run; a completed
// one has paid, and one in flight (NEW, SCHEDULED, SUBMITTED) may still pay.
func Rerun(s Status) (Status, error) {
	switch {
	case s == StatusFailed:
		return StatusNew, nil
	case s == StatusCompleted:
		return "", ErrRerunCompleted
	case s.Known():
		return "", fmt.Errorf("%w: %s", ErrRerunInFlight, s)
	}
	return "", fmt.Errorf("%w: %q", ErrUnknownStatus, string(s))
}

// FailureType is a failed payout's failure_type. The interface shows UNKNOWN;
// the rest is ours.
type FailureType string

// Shown is the failure_type a payout's answers and notifications carry: the
// failure's, or UNKNOWN for a payout that has not failed, as the
// interface's sample of a completed payout shows it.
func (f FailureType) Shown() string {
	if f == "" {
		return string(FailureUnknown)
	}
	return string(f)
}

// The failure types.
const (
	// FailureInsufficientFunds: the deposit account's available balance was
	// below amount_payer_pays.
	FailureInsufficientFunds FailureType = "INSUFFICIENT_FUNDS"
	// FailureQuoteUnavailable: no exchange rate for the currency pair, or no
	// fee rule for the payment method and source currency.
	FailureQuoteUnavailable FailureType = "QUOTE_UNAVAILABLE"
	// FailureAmountNotPayable: the priced payout cannot be paid as asked: the
	// fee the beneficiary bears is not less than the transfer, the payer
	// would pay more than source_amount, or an amount is out of range.
	FailureAmountNotPayable FailureType = "AMOUNT_NOT_PAYABLE"
	// FailureBeneficiaryAccount: the beneficiary's bank refused the account
	// (closed, unknown, name mismatch).
	FailureBeneficiaryAccount FailureType = "BENEFICIARY_ACCOUNT_INVALID"
	// FailureRailRejected: the payout rail refused the transfer for its own
	// rules (compliance, corridor, limits).
	FailureRailRejected FailureType = "RAIL_REJECTED"
	// FailureRailUnavailable: the rail could not be reached or kept failing
	// beyond the retries.
	FailureRailUnavailable FailureType = "RAIL_UNAVAILABLE"
	// FailureUnknown: anything else.
	FailureUnknown FailureType = "UNKNOWN"
)

// FailureTypes lists every failure type.
func FailureTypes() []FailureType {
	return []FailureType{
		FailureInsufficientFunds, FailureQuoteUnavailable, FailureAmountNotPayable,
		FailureBeneficiaryAccount, FailureRailRejected, FailureRailUnavailable, FailureUnknown,
	}
}

// Reason is the default failure_reason of the type, for when the rail or
// the step that failed gave none.
func (f FailureType) Reason() string {
	switch f {
	case FailureInsufficientFunds:
		return "The deposit account's available balance is below the amount to pay"
	case FailureQuoteUnavailable:
		return "No exchange rate or fee is configured for this payout"
	case FailureAmountNotPayable:
		return "The payout cannot be paid for the amounts given"
	case FailureBeneficiaryAccount:
		return "The beneficiary's bank refused the account"
	case FailureRailRejected:
		return "The payout rail refused the transfer"
	case FailureRailUnavailable:
		return "The payout rail was not available"
	}
	return "The payout failed for an unknown reason"
}

// RerunMayHelp reports whether re-running a payout that failed so may
// succeed without changing it: after a top-up, a new rate or fee rule, or
// when the rail is back. A refused account or amount fails again the same way.
func (f FailureType) RerunMayHelp() bool {
	switch f {
	case FailureInsufficientFunds, FailureQuoteUnavailable, FailureRailUnavailable, FailureUnknown:
		return true
	}
	return false
}

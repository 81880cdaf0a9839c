package payout

import (
	"errors"
	"fmt"

	"github.com/paygate/paygate/internal/domain/money"
)

// Fee errors.
var (
	ErrNoFeeRule   = errors.New("fee: no fee rule for the payment method and currency")
	ErrFeeSchedule = errors.New("fee: invalid fee schedule")
)

// BasisPointsPerUnit is 100%: a basis point is a hundredth of a percent.
const BasisPointsPerUnit = 10_000

// FeeRule is the gateway's fee for payouts of one payment method funded in
// one currency. All amounts are minor units of Currency, which is the
// payout's source currency: the fee is taken from the deposit account the
// payout is funded from, so it is priced in that account's currency.
type FeeRule struct {
	PaymentMethod PaymentMethod `json:"payment_method"`
	Currency      string        `json:"currency"`
	// FixedMinor is charged on every payout.
	FixedMinor int64 `json:"fixed_minor"`
	// BasisPoints of the transfer's source amount are added to FixedMinor
	// (25 is 0.25%), the product rounded half up to the minor unit.
	BasisPoints int64 `json:"basis_points"`
	// MinimumMinor is the least the fee comes to.
	MinimumMinor int64 `json:"minimum_minor"`
	// MaximumMinor caps the fee; zero means no cap. The cap applies before
	// the SWIFT surcharge, which pays other banks.
	MaximumMinor int64 `json:"maximum_minor"`
	// SwiftPayerSurchargeMinor is added when a SWIFT payout's
	// swift_charge_option is PAYER ("OUR"): it covers the intermediary banks'
	// charges the payer takes over.
	SwiftPayerSurchargeMinor int64 `json:"swift_payer_surcharge_minor"`
}

// maxBasisPoints is 100%: a fee rate above the whole amount is a typing
// mistake in the schedule.
const maxBasisPoints = BasisPointsPerUnit

// check reports what is wrong with the rule, if anything.
func (r FeeRule) check() error {
	switch {
	case r.PaymentMethod != MethodSwift && r.PaymentMethod != MethodLocal:
		return fmt.Errorf("unknown payment method %q", r.PaymentMethod)
	case !money.KnownExtendedCurrency(r.Currency):
		return fmt.Errorf("unknown currency %q", r.Currency)
	case r.FixedMinor < 0 || r.MinimumMinor < 0 || r.MaximumMinor < 0 || r.SwiftPayerSurchargeMinor < 0:
		return errors.New("negative amount")
	case r.FixedMinor > money.MaxMinor || r.MinimumMinor > money.MaxMinor || r.MaximumMinor > money.MaxMinor ||
		r.SwiftPayerSurchargeMinor > money.MaxMinor:
		return errors.New("amount above money.MaxMinor")
	case r.BasisPoints < 0 || r.BasisPoints > maxBasisPoints:
		return fmt.Errorf("basis points %d outside 0 to %d", r.BasisPoints, maxBasisPoints)
	case r.MaximumMinor != 0 && r.MaximumMinor < r.MinimumMinor:
		return errors.New("maximum below minimum")
	case r.PaymentMethod != MethodSwift && r.SwiftPayerSurchargeMinor != 0:
		return errors.New("a SWIFT surcharge on a rule for another method")
	}
	return nil
}

// Fee computes the fee for a transfer of source (minor units of the rule's
// currency, not negative) under the SWIFT charge option given (empty for
// LOCAL):
//
//	fee = clamp(FixedMinor + round_half_up(source × BasisPoints / 10 000), MinimumMinor, MaximumMinor)
//	      + SwiftPayerSurchargeMinor when charge is PAYER
//
// Rounding is half up on the percentage part only, the one place a fraction
// of a minor unit arises: 0.5 cent becomes 1 cent, 0.49 cent becomes 0.
func (r FeeRule) Fee(source int64, charge SwiftChargeOption) (int64, error) {
	if source < 0 || source > money.MaxMinor {
		return 0, fmt.Errorf("%w: fee on %d minor units", money.ErrAmountTooLarge, source)
	}
	// source ≤ 10^13 and BasisPoints ≤ 10^4, so the product fits an int64.
	percent := (source*r.BasisPoints + BasisPointsPerUnit/2) / BasisPointsPerUnit
	fee := r.FixedMinor + percent
	fee = max(fee, r.MinimumMinor)
	if r.MaximumMinor > 0 {
		fee = min(fee, r.MaximumMinor)
	}
	if r.PaymentMethod == MethodSwift && charge == ChargePayer {
		fee += r.SwiftPayerSurchargeMinor
	}
	return fee, nil
}

// feeKey is what a fee rule applies to.
type feeKey struct {
	method   PaymentMethod
	currency string
}

// FeeSchedule holds the fee rules by payment method and currency. It is
// read-only once built, so it may be shared.
type FeeSchedule struct {
	rules map[feeKey]FeeRule
}

// NewFeeSchedule builds a schedule from rules, checked in order so the error
// names the first bad one. A method and currency given twice is refused.
func NewFeeSchedule(rules []FeeRule) (FeeSchedule, error) {
	s := FeeSchedule{rules: make(map[feeKey]FeeRule, len(rules))}
	for i, r := range rules {
		if err := r.check(); err != nil {
			return FeeSchedule{}, fmt.Errorf("%w: rule %d (%s %s): %w", ErrFeeSchedule, i, r.PaymentMethod, r.Currency, err)
		}
		k := feeKey{r.PaymentMethod, r.Currency}
		if _, dup := s.rules[k]; dup {
			return FeeSchedule{}, fmt.Errorf("%w: rule %d: %s %s given twice", ErrFeeSchedule, i, r.PaymentMethod, r.Currency)
		}
		s.rules[k] = r
	}
	return s, nil
}

// Rule returns the rule for payouts of method funded in currency.
func (s FeeSchedule) Rule(method PaymentMethod, currency string) (FeeRule, bool) {
	r, ok := s.rules[feeKey{method, currency}]
	return r, ok
}

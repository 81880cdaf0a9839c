package payout

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/domain/money"
)

// FX errors.
var (
	ErrInvalidRate = errors.New("fx: invalid rate")
	ErrNoRate      = errors.New("fx: no rate for the currency pair")
	ErrRateTable   = errors.New("fx: invalid rate table")
)

// RateScale is the fixed-point scale of a Rate: a Rate holds the rate times
// 10^8, so eight decimal places are exact.
const RateScale = 100_000_000

// rateDecimals is the number of decimal places RateScale holds.
const rateDecimals = 8

// maxRateIntegerDigits bounds a rate's integer part so that rate × 10^8 fits
// an int64 with room (10^10 × 10^8 = 10^18 < 9.2 × 10^18).
const maxRateIntegerDigits = 10

// Rate is an exchange rate from one currency to another: how many major
// units of the target one major unit of the source buys, times RateScale.
// "USD→JPY 151.25" is Rate(15_125_000_000).
type Rate int64

// ParseRate reads a rate written as a decimal: one to ten digits, and
// optionally "." with one to eight more. It must be greater than zero. Signs,
// exponents and separators are refused; the value is exact, never a float.
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	intPart, frac, hasDot := strings.Cut(s, ".")
	if !digitsOnly(intPart) || len(intPart) > maxRateIntegerDigits ||
		(hasDot && (len(frac) < 1 || len(frac) > rateDecimals || !digitsOnly(frac))) {
		return 0, fmt.Errorf("%w: %q", ErrInvalidRate, s)
	}
	frac += strings.Repeat("0", rateDecimals-len(frac))
	v, err := strconv.ParseInt(intPart+frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q", ErrInvalidRate, s)
	}
	if v <= 0 {
		return 0, fmt.Errorf("%w: %q is not greater than zero", ErrInvalidRate, s)
	}
	return Rate(v), nil
}

// String renders the rate as a decimal without trailing zeros: "151.25", "1".
func (r Rate) String() string {
	s := strconv.FormatInt(int64(r), 10)
	if len(s) <= rateDecimals {
		s = strings.Repeat("0", rateDecimals-len(s)+1) + s
	}
	intPart, frac := s[:len(s)-rateDecimals], strings.TrimRight(s[len(s)-rateDecimals:], "0")
	if frac == "" {
		return intPart
	}
	return intPart + "." + frac
}

// Rounding says how a division that does not come out even is rounded.
// Amounts are never negative here, so "down" is toward zero.
type Rounding int

const (
	// RoundDown drops the remainder (floor): a beneficiary gets no more than
	// what was paid for.
	RoundDown Rounding = iota
	// RoundUp takes the next minor unit on any remainder (ceiling): a payer
	// pays at least the exact price.
	RoundUp
	// RoundHalfUp rounds to the nearest minor unit, a half going up.
	RoundHalfUp
)

// divRound returns num / den rounded as asked; num ≥ 0 and den > 0.
func divRound(num, den *big.Int, mode Rounding) *big.Int {
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	if r.Sign() == 0 {
		return q
	}
	switch mode {
	case RoundUp:
		q.Add(q, big.NewInt(1))
	case RoundHalfUp:
		if new(big.Int).Lsh(r, 1).Cmp(den) >= 0 {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// pow10 is 10^n as a big.Int.
func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// exponentOf returns the currency's minor-unit digits over the extended set,
// which payouts use (three-digit currencies such as BHD included).
func exponentOf(currency string) (int, error) {
	e, ok := money.ExtendedExponent(currency)
	if !ok {
		return 0, fmt.Errorf("%w: %q", money.ErrUnknownCurrency, currency)
	}
	return e, nil
}

// Convert turns an amount into the currency to at rate (to per one unit of
// a.Currency), rounding the result as asked:
//
//	result = a.Minor × rate × 10^exp(to) / (RateScale × 10^exp(from))
//
// The product is computed exactly (math/big), so neither large amounts nor
// large rates overflow; a result above money.MaxMinor is refused with
// money.ErrAmountTooLarge. Negative amounts are refused.
func Convert(a money.Amount, to string, rate Rate, mode Rounding) (money.Amount, error) {
	fromExp, err := exponentOf(a.Currency)
	if err != nil {
		return money.Amount{}, err
	}
	toExp, err := exponentOf(to)
	if err != nil {
		return money.Amount{}, err
	}
	if a.Minor < 0 || rate <= 0 {
		return money.Amount{}, fmt.Errorf("%w: convert %d at %d", ErrInvalidRate, a.Minor, rate)
	}
	num := new(big.Int).Mul(big.NewInt(a.Minor), big.NewInt(int64(rate)))
	num.Mul(num, pow10(toExp))
	den := new(big.Int).Mul(big.NewInt(RateScale), pow10(fromExp))
	return fitAmount(divRound(num, den, mode), to)
}

// SourceFor returns the amount of currency from that buys target at rate
// (target currency per one unit of from), rounding as asked:
//
//	result = target.Minor × RateScale × 10^exp(from) / (rate × 10^exp(to))
//
// Rounded up, converting the result back at the same rate (rounded down)
// gives at least target: the inverse that never leaves a beneficiary short.
func SourceFor(target money.Amount, from string, rate Rate, mode Rounding) (money.Amount, error) {
	fromExp, err := exponentOf(from)
	if err != nil {
		return money.Amount{}, err
	}
	toExp, err := exponentOf(target.Currency)
	if err != nil {
		return money.Amount{}, err
	}
	if target.Minor < 0 || rate <= 0 {
		return money.Amount{}, fmt.Errorf("%w: source for %d at %d", ErrInvalidRate, target.Minor, rate)
	}
	num := new(big.Int).Mul(big.NewInt(target.Minor), big.NewInt(RateScale))
	num.Mul(num, pow10(fromExp))
	den := new(big.Int).Mul(big.NewInt(int64(rate)), pow10(toExp))
	return fitAmount(divRound(num, den, mode), from)
}

// fitAmount returns v as an amount of currency, or money.ErrAmountTooLarge
// when it is above money.MaxMinor.
func fitAmount(v *big.Int, currency string) (money.Amount, error) {
	if v.Cmp(big.NewInt(money.MaxMinor)) > 0 {
		return money.Amount{}, fmt.Errorf("%w: %s minor units of %s", money.ErrAmountTooLarge, v, currency)
	}
	return money.Amount{Minor: v.Int64(), Currency: currency}, nil
}

// RateEntry is one line of the rate table the operator maintains: one unit
// of Source buys Rate units of Target.
type RateEntry struct {
	Source string `json:"source"`
	Target string `json:"target"`
	Rate   string `json:"rate"`
}

// pair is a direction of exchange.
type pair struct{ source, target string }

// Rates is a table of exchange rates, by direction. It is read-only once
// built, so it may be shared.
type Rates struct {
	rates map[pair]Rate
}

// NewRates builds a rate table from the operator's entries.
//
// Each direction is its own entry: USD→EUR and EUR→USD are both listed when
// both are offered, because a dealer's two directions differ by the spread,
// and the inverse of an eight-decimal rate is not itself exact. Rates are
// never inverted or crossed through a third currency. Both currencies must be
// in the extended currency set and differ; a direction listed twice is
// refused. Entries are checked in order, so the error names the first bad one.
func NewRates(entries []RateEntry) (Rates, error) {
	t := Rates{rates: make(map[pair]Rate, len(entries))}
	for i, e := range entries {
		if !money.KnownExtendedCurrency(e.Source) || !money.KnownExtendedCurrency(e.Target) {
			return Rates{}, fmt.Errorf("%w: entry %d: unknown currency in %s→%s", ErrRateTable, i, e.Source, e.Target)
		}
		if e.Source == e.Target {
			return Rates{}, fmt.Errorf("%w: entry %d: %s→%s is the identity", ErrRateTable, i, e.Source, e.Target)
		}
		r, err := ParseRate(e.Rate)
		if err != nil {
			return Rates{}, fmt.Errorf("%w: entry %d (%s→%s): %w", ErrRateTable, i, e.Source, e.Target, err)
		}
		p := pair{e.Source, e.Target}
		if _, dup := t.rates[p]; dup {
			return Rates{}, fmt.Errorf("%w: entry %d: %s→%s listed twice", ErrRateTable, i, e.Source, e.Target)
		}
		t.rates[p] = r
	}
	return t, nil
}

// Rate returns the rate from source to target. The same currency always has
// rate 1.
func (t Rates) Rate(source, target string) (Rate, bool) {
	if source == target {
		return RateScale, true
	}
	r, ok := t.rates[pair{source, target}]
	return r, ok
}

// Quote records the exchange behind a payout: what the payer's side pays in
// the source currency for the payment amount in the payment currency.
type Quote struct {
	SourceCurrency  string `json:"source_currency"`
	PaymentCurrency string `json:"payment_currency"`
	// Rate is payment-currency units per source-currency unit; 1 when the
	// currencies are the same.
	Rate Rate `json:"rate"`
	// PaymentAmount is the amount quoted for, in the payment currency.
	PaymentAmount money.Amount `json:"payment_amount"`
	// SourceAmount buys PaymentAmount at Rate, rounded up to the source
	// currency's minor unit, so the payer covers every fraction and the
	// beneficiary is never short.
	SourceAmount money.Amount `json:"source_amount"`
	// QuotedAt is when the quote was made, as the caller's clock gave it
	// (workflow.Now in a workflow).
	QuotedAt time.Time `json:"quoted_at"`
}

// Quote prices payment (the amount the beneficiary is to receive, in the
// payment currency) in sourceCurrency at the table's rate, at the time the
// caller gives. The same currency gives rate 1 and the same amount.
func (t Rates) Quote(payment money.Amount, sourceCurrency string, at time.Time) (Quote, error) {
	rate, ok := t.Rate(sourceCurrency, payment.Currency)
	if !ok {
		return Quote{}, fmt.Errorf("%w: %s→%s", ErrNoRate, sourceCurrency, payment.Currency)
	}
	source, err := SourceFor(payment, sourceCurrency, rate, RoundUp)
	if err != nil {
		return Quote{}, err
	}
	return Quote{
		SourceCurrency:  sourceCurrency,
		PaymentCurrency: payment.Currency,
		Rate:            rate,
		PaymentAmount:   payment,
		SourceAmount:    source,
		QuotedAt:        at,
	}, nil
}

// digitsOnly reports whether s is non-empty and all ASCII digits.
func digitsOnly(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

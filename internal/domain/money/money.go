// Package money represents monetary amounts as integer minor units with an
// ISO 4217 currency code, and converts them to and from the decimal strings
// used on the wire. Floating point is never used.
package money

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxMinor is the largest amount, in minor units, that Parse accepts.
const MaxMinor int64 = 10_000_000_000_000 // 10^13

var (
	// ErrInvalidAmount is returned for a malformed decimal amount string.
	ErrInvalidAmount = errors.New("money: invalid amount")
	// ErrUnknownCurrency is returned for a currency code that is not supported.
	ErrUnknownCurrency = errors.New("money: unknown currency")
	// ErrAmountTooLarge is returned when an amount exceeds MaxMinor minor units.
	ErrAmountTooLarge = errors.New("money: amount too large")
)

// Amount is a monetary amount in minor units (for example cents) of an
// ISO 4217 currency.
type Amount struct {
	Minor    int64
	Currency string
}

// FromMinor returns the amount of minor units in currency. The currency is
// not validated.
func FromMinor(minor int64, currency string) Amount {
	return Amount{Minor: minor, Currency: currency}
}

// Parse converts the decimal string s into an Amount of currency.
//
// Surrounding whitespace of s is ignored; currency must be an exact known
// code. The amount is one or more digits, optionally followed by "." and one
// or two fraction digits. Signs, exponents, separators and hexadecimal are
// rejected with ErrInvalidAmount. Fraction digits beyond the currency's
// exponent are allowed only when they are zero ("100.00" JPY is 100). Amounts
// above MaxMinor minor units return ErrAmountTooLarge.
func Parse(s, currency string) (Amount, error) {
	exp, ok := Exponent(currency)
	if !ok {
		return Amount{}, fmt.Errorf("%w: %q", ErrUnknownCurrency, currency)
	}
	s = strings.TrimSpace(s)
	intPart, frac, hasDot := strings.Cut(s, ".")
	if !allDigits(intPart) || (hasDot && (len(frac) < 1 || len(frac) > 2 || !allDigits(frac))) {
		return Amount{}, fmt.Errorf("%w: %q", ErrInvalidAmount, s)
	}
	// Fraction digits beyond the exponent must be zero.
	if len(frac) > exp {
		if strings.Trim(frac[exp:], "0") != "" {
			return Amount{}, fmt.Errorf("%w: %q has more than %d fraction digits for %s", ErrInvalidAmount, s, exp, currency)
		}
		frac = frac[:exp]
	}
	frac += strings.Repeat("0", exp-len(frac))

	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return Amount{Currency: currency}, nil
	}
	// MaxMinor has 14 digits; anything longer is too large and must not be
	// handed to ParseInt, which could overflow.
	if len(digits) > 14 {
		return Amount{}, fmt.Errorf("%w: %q", ErrAmountTooLarge, s)
	}
	minor, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return Amount{}, fmt.Errorf("%w: %q", ErrInvalidAmount, s)
	}
	if minor > MaxMinor {
		return Amount{}, fmt.Errorf("%w: %q", ErrAmountTooLarge, s)
	}
	return Amount{Minor: minor, Currency: currency}, nil
}

// MustParse is like Parse but panics on error. It is meant for tests and
// examples.
func MustParse(s, currency string) Amount {
	a, err := Parse(s, currency)
	if err != nil {
		panic(err)
	}
	return a
}

// String returns the canonical decimal form of a with exactly the currency's
// exponent of fraction digits, for example "12.34" for USD and "100" for JPY.
// Negative amounts get a leading "-". Unknown currencies are rendered with
// two fraction digits.
func (a Amount) String() string {
	exp, ok := Exponent(a.Currency)
	if !ok {
		exp = 2
	}
	neg := a.Minor < 0
	u := uint64(a.Minor)
	if neg {
		u = -u // Correct for math.MinInt64 too.
	}
	digits := strconv.FormatUint(u, 10)
	if exp > 0 {
		if len(digits) <= exp {
			digits = strings.Repeat("0", exp-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-exp] + "." + digits[len(digits)-exp:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// allDigits reports whether s is non-empty and consists of ASCII digits only.
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

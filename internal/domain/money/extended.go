package money

import (
	"fmt"
	"strconv"
	"strings"
)

// threeDigitExponents lists the ISO 4217 currencies with three minor-unit
// digits. They are kept apart from exponents on purpose: orders carry at most
// two fraction digits and the acquirers take none of these currencies, so
// Parse, Exponent and KnownCurrency keep refusing them. Payouts and their
// exchange-rate quotes do need them (a payout to Bahrain is paid in fils), and
// use the Extended functions below.
var threeDigitExponents = map[string]int{
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
}

// ExtendedExponent reports the number of minor-unit digits of currency in the
// extended currency set: every currency Exponent knows plus the three-digit
// currencies (BHD, IQD, JOD, KWD, LYD, OMR, TND). The code must be an exact
// upper-case ISO 4217 code.
func ExtendedExponent(currency string) (int, bool) {
	if e, ok := exponents[currency]; ok {
		return e, true
	}
	e, ok := threeDigitExponents[currency]
	return e, ok
}

// KnownExtendedCurrency reports whether code is in the extended currency set
// of ExtendedExponent.
func KnownExtendedCurrency(code string) bool {
	_, ok := ExtendedExponent(code)
	return ok
}

// ParseExtended is Parse over the extended currency set. The wire grammar is
// the same (digits, then optionally "." and one or two fraction digits), so
// for every currency Parse knows it gives exactly what Parse gives; for a
// three-digit currency "12.5" BHD is 12500 fils. Amounts above MaxMinor minor
// units return ErrAmountTooLarge, whatever the currency's exponent.
func ParseExtended(s, currency string) (Amount, error) {
	exp, ok := ExtendedExponent(currency)
	if !ok {
		return Amount{}, fmt.Errorf("%w: %q", ErrUnknownCurrency, currency)
	}
	if exp <= 2 {
		return Parse(s, currency)
	}
	s = strings.TrimSpace(s)
	intPart, frac, hasDot := strings.Cut(s, ".")
	if !allDigits(intPart) || (hasDot && (len(frac) < 1 || len(frac) > 2 || !allDigits(frac))) {
		return Amount{}, fmt.Errorf("%w: %q", ErrInvalidAmount, s)
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

// ExtendedString is String with the extended currency set's exponents: three
// fraction digits for the three-digit currencies ("12.345" BHD), otherwise
// exactly what String gives. String itself keeps rendering every currency it
// does not know with two digits.
func (a Amount) ExtendedString() string {
	exp, ok := threeDigitExponents[a.Currency]
	if !ok {
		return a.String()
	}
	neg := a.Minor < 0
	u := uint64(a.Minor)
	if neg {
		u = -u // Correct for math.MinInt64 too.
	}
	digits := strconv.FormatUint(u, 10)
	if len(digits) <= exp {
		digits = strings.Repeat("0", exp-len(digits)+1) + digits
	}
	digits = digits[:len(digits)-exp] + "." + digits[len(digits)-exp:]
	if neg {
		return "-" + digits
	}
	return digits
}

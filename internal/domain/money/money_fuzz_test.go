package money

import (
	"errors"
	"math"
	"math/big"
	"regexp"
	"strings"
	"testing"
)

// Fuzz targets: go test -run='^$' -fuzz='^FuzzParse$' ./internal/domain/money (or
// make fuzz). Plain go test runs the seeds.

// wireAmount is the grammar of an amount on the wire (docs/design.md §3).
var wireAmount = regexp.MustCompile(`^[0-9]+(\.[0-9]{1,2})?$`)

// expectMinor computes, independently of Parse, what s means in currency:
// the minor units and whether s is a valid amount that fits.
func expectMinor(s, currency string) (int64, bool) {
	exp, ok := Exponent(currency)
	if !ok {
		return 0, false
	}
	s = strings.TrimSpace(s)
	if !wireAmount.MatchString(s) {
		return 0, false
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, false
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exp)), nil)))
	if !r.IsInt() || r.Num().Cmp(big.NewInt(MaxMinor)) > 0 {
		return 0, false
	}
	return r.Num().Int64(), true
}

// tooLarge reports whether s is a well-formed amount of currency whose
// value is over MaxMinor.
func tooLarge(s, currency string) bool {
	exp, _ := Exponent(currency)
	s = strings.TrimSpace(s)
	r, ok := new(big.Rat).SetString(s)
	if !wireAmount.MatchString(s) || !ok {
		return false
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exp)), nil)))
	return r.IsInt() && r.Num().Cmp(big.NewInt(MaxMinor)) > 0
}

// FuzzParse checks Parse against an independent reading of the wire grammar
// (digits, then "." and one or two digits): it accepts exactly the amounts
// that are valid and fit, with the value exact rational arithmetic gives;
// and whatever it accepts formats back to a string that parses to the same
// amount ("12.3" and "12.30" are one amount, "12.34" another).
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"12.34", "12.3", "12.30", "12.", ".5", "0", "0.00", "00012.34", " 12.34\t", "\u00a012.34\u2003",
		"", " ", "-1", "+1", "1e3", "1E400", "1e-400", "0x10", "1,000.00", "1_000", "12.345", "12.340",
		"100.00", "100.5", "99999999999.99", "100000000000.00", "100000000000.01", "9223372036854775807",
		"000000000000000000000000000001", "١٢.٣٤", "１２.３４", "12.3\x00", "\xff", "NaN", "Inf",
	} {
		for _, c := range []string{"USD", "JPY", "usd", "", "XXX"} {
			f.Add(s, c)
		}
	}
	f.Fuzz(func(t *testing.T, s, currency string) {
		a, err := Parse(s, currency)
		want, ok := expectMinor(s, currency)
		if err != nil {
			if ok {
				t.Fatalf("Parse(%q, %q) = %v, want %d minor units", s, currency, err, want)
			}
			var wantErr error
			switch {
			case !KnownCurrency(currency):
				wantErr = ErrUnknownCurrency
			case tooLarge(s, currency):
				wantErr = ErrAmountTooLarge
			default:
				wantErr = ErrInvalidAmount
			}
			if !errors.Is(err, wantErr) {
				t.Fatalf("Parse(%q, %q) = %v, want %v", s, currency, err, wantErr)
			}
			return
		}
		if !ok {
			t.Fatalf("Parse(%q, %q) = %+v, want an error", s, currency, a)
		}
		if a.Minor != want || a.Currency != currency {
			t.Fatalf("Parse(%q, %q) = %+v, want %d %s", s, currency, a, want, currency)
		}
		text := a.String()
		back, err := Parse(text, currency)
		if err != nil || back != a {
			t.Fatalf("Parse(%q) = %+v, %v; want %+v back from String", text, back, err, a)
		}
		if exp, _ := Exponent(currency); exp > 0 && !strings.Contains(text, ".") || exp == 0 && strings.Contains(text, ".") {
			t.Fatalf("String of %+v = %q, want %d fraction digits", a, text, exp)
		}
	})
}

// FuzzFormat checks Amount.String for every int64: it matches an exact
// big-number rendering with the currency's fraction digits (two for an
// unknown currency); amounts from 0 to MaxMinor parse back to themselves;
// negative amounts render with a sign and never parse.
func FuzzFormat(f *testing.F) {
	for _, m := range []int64{0, 1, 9, 10, 99, 100, 1234, 1230, MaxMinor, MaxMinor + 1, -1, -1234, math.MaxInt64, math.MinInt64} {
		for _, c := range []string{"USD", "JPY", "XXX", ""} {
			f.Add(m, c)
		}
	}
	f.Fuzz(func(t *testing.T, minor int64, currency string) {
		a := FromMinor(minor, currency)
		got := a.String()
		exp, known := Exponent(currency)
		if !known {
			exp = 2
		}
		abs := new(big.Int).Abs(big.NewInt(minor))
		digits := abs.String()
		if exp > 0 {
			if len(digits) <= exp {
				digits = strings.Repeat("0", exp+1-len(digits)) + digits
			}
			digits = digits[:len(digits)-exp] + "." + digits[len(digits)-exp:]
		}
		if minor < 0 {
			digits = "-" + digits
		}
		if got != digits {
			t.Fatalf("FromMinor(%d, %q).String() = %q, want %q", minor, currency, got, digits)
		}
		if !known {
			return
		}
		back, err := Parse(got, currency)
		switch {
		case minor < 0:
			if !errors.Is(err, ErrInvalidAmount) {
				t.Fatalf("Parse(%q, %q) = %+v, want negative amounts refused", got, currency, back)
			}
		case minor > MaxMinor:
			if !errors.Is(err, ErrAmountTooLarge) {
				t.Fatalf("Parse(%q, %q) = %+v, want ErrAmountTooLarge", got, currency, back)
			}
		default:
			if err != nil || back != a {
				t.Fatalf("Parse(%q, %q) = %+v, %v; want %+v", got, currency, back, err, a)
			}
		}
	})
}

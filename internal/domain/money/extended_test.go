package money

import (
	"errors"
	"math"
	"testing"
)

func TestExtendedExponent(t *testing.T) {
	tests := []struct {
		code   string
		want   int
		wantOK bool
	}{
		{"USD", 2, true},
		{"JPY", 0, true},
		{"BHD", 3, true},
		{"KWD", 3, true},
		{"JOD", 3, true},
		{"OMR", 3, true},
		{"TND", 3, true},
		{"IQD", 3, true},
		{"LYD", 3, true},
		{"bhd", 0, false},
		{"XXX", 0, false},
		{"", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.code, func(t *testing.T) {
			got, ok := ExtendedExponent(tc.code)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("ExtendedExponent(%q) = %d, %t, want %d, %t", tc.code, got, ok, tc.want, tc.wantOK)
			}
			if k := KnownExtendedCurrency(tc.code); k != tc.wantOK {
				t.Errorf("KnownExtendedCurrency(%q) = %t, want %t", tc.code, k, tc.wantOK)
			}
		})
	}
}

// TestThreeDigitCurrenciesStayOutOfOrders pins that adding the extended set
// changed nothing for orders: Parse, Exponent and KnownCurrency still refuse
// the three-digit currencies.
func TestThreeDigitCurrenciesStayOutOfOrders(t *testing.T) {
	for code := range threeDigitExponents {
		if KnownCurrency(code) {
			t.Errorf("KnownCurrency(%q) = true, want false", code)
		}
		if _, err := Parse("1", code); !errors.Is(err, ErrUnknownCurrency) {
			t.Errorf("Parse(1, %q) error = %v, want ErrUnknownCurrency", code, err)
		}
		if _, dup := exponents[code]; dup {
			t.Errorf("%s is in both tables", code)
		}
	}
}

func TestParseExtended(t *testing.T) {
	tests := []struct {
		name     string
		s        string
		currency string
		want     Amount
		wantErr  error
	}{
		{"BHD integer", "12", "BHD", Amount{12000, "BHD"}, nil},
		{"BHD one fraction digit", "12.5", "BHD", Amount{12500, "BHD"}, nil},
		{"BHD two fraction digits", "12.34", "BHD", Amount{12340, "BHD"}, nil},
		{"BHD three fraction digits", "12.345", "BHD", Amount{}, ErrInvalidAmount},
		{"BHD fils", "0.01", "KWD", Amount{10, "KWD"}, nil},
		{"BHD zero", "0", "BHD", Amount{0, "BHD"}, nil},
		{"BHD maximum", "10000000000.00", "BHD", Amount{MaxMinor, "BHD"}, nil},
		{"BHD above maximum", "10000000000.01", "BHD", Amount{}, ErrAmountTooLarge},
		{"BHD far above maximum", "99999999999999999999", "BHD", Amount{}, ErrAmountTooLarge},
		{"BHD negative", "-1", "BHD", Amount{}, ErrInvalidAmount},
		{"BHD exponent notation", "1e3", "BHD", Amount{}, ErrInvalidAmount},
		{"BHD empty", "", "BHD", Amount{}, ErrInvalidAmount},
		{"USD as Parse", "12.3", "USD", Amount{1230, "USD"}, nil},
		{"JPY as Parse", "100.00", "JPY", Amount{100, "JPY"}, nil},
		{"JPY fraction as Parse", "100.50", "JPY", Amount{}, ErrInvalidAmount},
		{"lower-case", "1", "bhd", Amount{}, ErrUnknownCurrency},
		{"unknown", "1", "XXX", Amount{}, ErrUnknownCurrency},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseExtended(tc.s, tc.currency)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("ParseExtended(%q, %q) error = %v, want %v", tc.s, tc.currency, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("ParseExtended(%q, %q) = %+v, want %+v", tc.s, tc.currency, got, tc.want)
			}
		})
	}
}

func TestExtendedString(t *testing.T) {
	tests := []struct {
		name string
		a    Amount
		want string
	}{
		{"BHD", Amount{12345, "BHD"}, "12.345"},
		{"BHD fils", Amount{5, "BHD"}, "0.005"},
		{"BHD zero", Amount{0, "BHD"}, "0.000"},
		{"BHD negative", Amount{-1500, "KWD"}, "-1.500"},
		{"BHD min int64", Amount{math.MinInt64, "BHD"}, "-9223372036854775.808"},
		{"USD as String", Amount{1234, "USD"}, "12.34"},
		{"JPY as String", Amount{1234, "JPY"}, "1234"},
		{"unknown as String", Amount{1234, "XXX"}, "12.34"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.ExtendedString(); got != tc.want {
				t.Errorf("%+v.ExtendedString() = %q, want %q", tc.a, got, tc.want)
			}
		})
	}
}

package money

import (
	"errors"
	"math"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		s        string
		currency string
		want     Amount
		wantErr  error
	}{
		{"integer", "12", "USD", Amount{1200, "USD"}, nil},
		{"one fraction digit", "12.3", "USD", Amount{1230, "USD"}, nil},
		{"two fraction digits", "12.34", "USD", Amount{1234, "USD"}, nil},
		{"surrounding whitespace", " \t12.34\n", "EUR", Amount{1234, "EUR"}, nil},
		{"leading zeros", "007.50", "GBP", Amount{750, "GBP"}, nil},
		{"zero", "0", "USD", Amount{0, "USD"}, nil},
		{"zero with fraction", "0.00", "USD", Amount{0, "USD"}, nil},
		{"many zeros", "0000000000000000000000.00", "USD", Amount{0, "USD"}, nil},
		{"one cent", "0.01", "USD", Amount{1, "USD"}, nil},
		{"JPY integer", "100", "JPY", Amount{100, "JPY"}, nil},
		{"JPY zero fraction", "100.00", "JPY", Amount{100, "JPY"}, nil},
		{"JPY one zero fraction", "100.0", "JPY", Amount{100, "JPY"}, nil},
		{"JPY non-zero fraction", "100.50", "JPY", Amount{}, ErrInvalidAmount},
		{"KRW non-zero fraction", "1.01", "KRW", Amount{}, ErrInvalidAmount},
		{"maximum", "100000000000.00", "USD", Amount{MaxMinor, "USD"}, nil},
		{"maximum JPY", "10000000000000", "JPY", Amount{MaxMinor, "JPY"}, nil},
		{"one above maximum", "100000000000.01", "USD", Amount{}, ErrAmountTooLarge},
		{"above maximum JPY", "10000000000001", "JPY", Amount{}, ErrAmountTooLarge},
		{"beyond int64", "99999999999999999999999999", "USD", Amount{}, ErrAmountTooLarge},
		{"large with leading zeros", "0000000000000000000001.00", "USD", Amount{100, "USD"}, nil},
		{"trailing dot", "12.", "USD", Amount{}, ErrInvalidAmount},
		{"leading dot", ".5", "USD", Amount{}, ErrInvalidAmount},
		{"exponent", "1e3", "USD", Amount{}, ErrInvalidAmount},
		{"negative", "-1", "USD", Amount{}, ErrInvalidAmount},
		{"plus sign", "+1", "USD", Amount{}, ErrInvalidAmount},
		{"thousands separator", "1,000", "USD", Amount{}, ErrInvalidAmount},
		{"three fraction digits", "12.345", "USD", Amount{}, ErrInvalidAmount},
		{"three zero fraction digits", "12.000", "JPY", Amount{}, ErrInvalidAmount},
		{"inner space", " 1 2", "USD", Amount{}, ErrInvalidAmount},
		{"empty", "", "USD", Amount{}, ErrInvalidAmount},
		{"only spaces", "   ", "USD", Amount{}, ErrInvalidAmount},
		{"hex", "0x10", "USD", Amount{}, ErrInvalidAmount},
		{"two dots", "1.2.3", "USD", Amount{}, ErrInvalidAmount},
		{"non-ASCII digit", "１2", "USD", Amount{}, ErrInvalidAmount},
		{"comma decimal", "12,34", "EUR", Amount{}, ErrInvalidAmount},
		{"lower-case currency", "12", "usd", Amount{}, ErrUnknownCurrency},
		{"unknown currency", "12", "XXX", Amount{}, ErrUnknownCurrency},
		{"exponent 3 currency", "12", "BHD", Amount{}, ErrUnknownCurrency},
		{"empty currency", "12", "", Amount{}, ErrUnknownCurrency},
		{"padded currency", "12", " USD", Amount{}, ErrUnknownCurrency},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.s, tt.currency)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Parse(%q, %q) error = %v, want %v", tt.s, tt.currency, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("Parse(%q, %q) = %+v, want %+v", tt.s, tt.currency, got, tt.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		name string
		a    Amount
		want string
	}{
		{"USD", Amount{1234, "USD"}, "12.34"},
		{"USD whole", Amount{1200, "USD"}, "12.00"},
		{"USD cents", Amount{5, "USD"}, "0.05"},
		{"USD zero", Amount{0, "USD"}, "0.00"},
		{"JPY", Amount{100, "JPY"}, "100"},
		{"JPY zero", Amount{0, "JPY"}, "0"},
		{"negative", Amount{-1234, "EUR"}, "-12.34"},
		{"negative cents", Amount{-5, "EUR"}, "-0.05"},
		{"negative JPY", Amount{-7, "JPY"}, "-7"},
		{"maximum", Amount{MaxMinor, "USD"}, "100000000000.00"},
		{"min int64", Amount{math.MinInt64, "USD"}, "-92233720368547758.08"},
		{"unknown currency", Amount{1234, "XXX"}, "12.34"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.String(); got != tt.want {
				t.Errorf("%+v.String() = %q, want %q", tt.a, got, tt.want)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name     string
		s        string
		currency string
		want     string
	}{
		{"USD", "12.3", "USD", "12.30"},
		{"leading zeros", "007.50", "EUR", "7.50"},
		{"JPY", "100.00", "JPY", "100"},
		{"CLP", "0015", "CLP", "15"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MustParse(tt.s, tt.currency).String()
			if got != tt.want {
				t.Errorf("MustParse(%q, %q).String() = %q, want %q", tt.s, tt.currency, got, tt.want)
			}
			if again := MustParse(got, tt.currency).String(); again != got {
				t.Errorf("String is not canonical: %q parses back to %q", got, again)
			}
		})
	}
}

func TestMustParsePanics(t *testing.T) {
	defer func() {
		r := recover()
		err, ok := r.(error)
		if !ok || !errors.Is(err, ErrInvalidAmount) {
			t.Errorf("MustParse panic = %v, want an ErrInvalidAmount error", r)
		}
	}()
	MustParse("1.234", "USD")
}

func TestFromMinor(t *testing.T) {
	if got, want := FromMinor(1234, "USD"), (Amount{Minor: 1234, Currency: "USD"}); got != want {
		t.Errorf("FromMinor(1234, USD) = %+v, want %+v", got, want)
	}
}

func TestExponent(t *testing.T) {
	tests := []struct {
		code   string
		want   int
		wantOK bool
	}{
		{"USD", 2, true},
		{"EUR", 2, true},
		{"JPY", 0, true},
		{"KRW", 0, true},
		{"VND", 0, true},
		{"CLP", 0, true},
		{"IDR", 2, true},
		{"HUF", 2, true},
		{"TWD", 2, true},
		{"BHD", 0, false},
		{"KWD", 0, false},
		{"JOD", 0, false},
		{"OMR", 0, false},
		{"TND", 0, false},
		{"usd", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			got, ok := Exponent(tt.code)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Exponent(%q) = %d, %t, want %d, %t", tt.code, got, ok, tt.want, tt.wantOK)
			}
			if k := KnownCurrency(tt.code); k != tt.wantOK {
				t.Errorf("KnownCurrency(%q) = %t, want %t", tt.code, k, tt.wantOK)
			}
		})
	}
}

func TestCurrencyTable(t *testing.T) {
	required := []string{
		"USD", "EUR", "GBP", "JPY", "CNY", "HKD", "SGD", "AUD", "CAD", "CHF",
		"SEK", "NOK", "DKK", "PLN", "CZK", "HUF", "RON", "BRL", "MXN", "ARS",
		"CLP", "COP", "PEN", "INR", "IDR", "MYR", "PHP", "THB", "VND", "KRW",
		"TWD", "NZD", "ZAR", "TRY", "AED", "SAR", "ILS", "NGN", "KES", "EGP",
	}
	for _, c := range required {
		if !KnownCurrency(c) {
			t.Errorf("KnownCurrency(%q) = false, want true", c)
		}
	}
	for code, e := range exponents {
		if len(code) != 3 || code[0] < 'A' || code[0] > 'Z' || code[1] < 'A' || code[1] > 'Z' || code[2] < 'A' || code[2] > 'Z' {
			t.Errorf("malformed currency code %q", code)
		}
		if e != 0 && e != 2 {
			t.Errorf("currency %s has exponent %d, want 0 or 2", code, e)
		}
	}
}

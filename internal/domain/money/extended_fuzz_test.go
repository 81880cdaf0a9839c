package money

import "testing"

// Fuzz target: go test -run='^$' -fuzz='^FuzzParseExtended$' ./internal/domain/money (or
// make fuzz). Plain go test runs the seeds.

// FuzzParseExtended checks that ParseExtended agrees with Parse on every
// currency Parse knows, and that what it accepts in a three-digit currency
// renders back (ExtendedString) to a string that parses to the same amount
// whenever the amount has no third fraction digit.
func FuzzParseExtended(f *testing.F) {
	for _, s := range []string{"12.34", "12.3", "0", "12.", ".5", "-1", "1e3", "100.00", "10000000000.00", "10000000000.01", " 7 "} {
		for _, c := range []string{"USD", "JPY", "BHD", "KWD", "XXX", ""} {
			f.Add(s, c)
		}
	}
	f.Fuzz(func(t *testing.T, s, currency string) {
		got, err := ParseExtended(s, currency)
		if KnownCurrency(currency) {
			want, wantErr := Parse(s, currency)
			if got != want || (err == nil) != (wantErr == nil) {
				t.Fatalf("ParseExtended(%q, %q) = %+v, %v; Parse gives %+v, %v", s, currency, got, err, want, wantErr)
			}
			return
		}
		if err != nil {
			return
		}
		if got.Minor < 0 || got.Minor > MaxMinor {
			t.Fatalf("ParseExtended(%q, %q) = %+v, out of range", s, currency, got)
		}
		if got.Minor%10 == 0 {
			back, err := ParseExtended(got.ExtendedString()[:len(got.ExtendedString())-1], currency)
			if err != nil || back != got {
				t.Fatalf("%+v renders as %q, which parses back to %+v, %v", got, got.ExtendedString(), back, err)
			}
		}
	})
}

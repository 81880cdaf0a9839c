package card

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Fuzz targets: go test -run='^$' -fuzz='^FuzzLuhn$' ./internal/domain/card (or make
// fuzz). Plain go test runs the seeds.

// panSeeds are card numbers and near misses: test cards, unicode digits,
// separators, NUL bytes, invalid UTF-8 and lengths around the limits.
var panSeeds = []string{
	"4242424242424242", "4242424242424241", "378282246310005", "5555555555554444", "6011111111111117",
	"3530111333300000", "36227206271667", "2223003122003222", "6200000000000005", "4000000000000002",
	"0", "00", "", " 4242424242424242", "4242 4242 4242 4242", "4242-4242-4242-4242",
	"٤٢٤٢٤٢٤٢٤٢٤٢٤٢٤٢", "４２４２４２４２４２４２４２４２", "4242424242424242\x00", "\xff\xfe", "42424242424242424242",
	"424242424242", "1234567890", "12345678901", "4242424242424242424", "é4242424242424242€",
}

// luhnRef is the Luhn check written the other way round: from the left,
// with the doubling decided by the parity of the length.
func luhnRef(pan string) bool {
	if pan == "" {
		return false
	}
	sum := 0
	for i, r := range []byte(pan) {
		if r < '0' || r > '9' {
			return false
		}
		d := int(r - '0')
		if (len(pan)-i)%2 == 0 {
			d = d * 2 % 9
			if r == '9' {
				d = 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// FuzzLuhn checks Luhn against luhnRef, ValidateNumber against its rule
// (12 to 19 ASCII digits, no leading zero, passing Luhn), that changing any one digit of a
// passing number makes it fail, and that a check digit can always be found.
func FuzzLuhn(f *testing.F) {
	for _, s := range panSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pan string) {
		ok := Luhn(pan)
		if ok != luhnRef(pan) {
			t.Fatalf("Luhn(%q) = %v, reference says %v", pan, ok, !ok)
		}
		wantValid := ok && len(pan) >= 12 && len(pan) <= 19 && pan[0] != '0'
		if err := ValidateNumber(pan); (err == nil) != wantValid || (err != nil && !errors.Is(err, ErrInvalidNumber)) {
			t.Fatalf("ValidateNumber(%q) = %v, want valid %v", pan, err, wantValid)
		}
		if !ok {
			return
		}
		for i := range len(pan) {
			for d := byte('0'); d <= '9'; d++ {
				if d == pan[i] {
					continue
				}
				changed := pan[:i] + string(d) + pan[i+1:]
				if Luhn(changed) {
					t.Fatalf("Luhn(%q) passes though one digit of %q changed", changed, pan)
				}
			}
		}
		if len(pan) < 40 {
			passing := 0
			for d := '0'; d <= '9'; d++ {
				if Luhn(pan + string(d)) {
					passing++
				}
			}
			if passing != 1 {
				t.Fatalf("%d check digits make %q pass, want exactly 1", passing, pan)
			}
		}
	})
}

// FuzzBrand checks that Brand names a known brand, depends only on the
// first four digits, answers "unknown" for anything but ASCII digits, and
// agrees with the brands' leading digits.
func FuzzBrand(f *testing.F) {
	for _, s := range panSeeds {
		f.Add(s)
	}
	brands := map[string]bool{"visa": true, "mastercard": true, "amex": true, "discover": true, "jcb": true,
		"unionpay": true, "diners": true, "maestro": true, "unknown": true}
	f.Fuzz(func(t *testing.T, pan string) {
		b := Brand(pan)
		if !brands[b] {
			t.Fatalf("Brand(%q) = %q, not a known brand", pan, b)
		}
		if !isDigits(pan) {
			if b != "unknown" {
				t.Fatalf("Brand(%q) = %q for a number that is not ASCII digits", pan, b)
			}
			return
		}
		if len(pan) >= 4 && Brand(pan[:4]) != b {
			t.Fatalf("Brand(%q) = %q but Brand(%q) = %q: more than the first four digits count", pan, b, pan[:4], Brand(pan[:4]))
		}
		if (b == "visa") != strings.HasPrefix(pan, "4") {
			t.Fatalf("Brand(%q) = %q", pan, b)
		}
		if (b == "amex") != (strings.HasPrefix(pan, "34") || strings.HasPrefix(pan, "37")) {
			t.Fatalf("Brand(%q) = %q", pan, b)
		}
	})
}

// FuzzMask checks that Mask keeps the length in characters, shows nothing of
// a number under 11 characters, and otherwise shows exactly the first six
// and the last four characters, each where it was, and '*' between: never
// more than ten characters of the number.
func FuzzMask(f *testing.F) {
	for _, s := range panSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pan string) {
		got := Mask(pan)
		in, out := []rune(pan), []rune(got)
		if len(out) != len(in) {
			t.Fatalf("Mask(%q) = %q: %d characters, want %d", pan, got, len(out), len(in))
		}
		shown := 0
		for i, r := range out {
			keep := len(in) >= 11 && (i < 6 || i >= len(in)-4)
			switch {
			case keep && r != in[i]:
				t.Fatalf("Mask(%q) = %q: character %d is %q, want %q", pan, got, i, r, in[i])
			case !keep && r != '*':
				t.Fatalf("Mask(%q) = %q: character %d is shown", pan, got, i)
			case keep:
				shown++
			}
		}
		if shown > 10 {
			t.Fatalf("Mask(%q) = %q shows %d characters", pan, got, shown)
		}
		if utf8.ValidString(pan) && len(in) >= 11 {
			if want := pan[:len(string(in[:6]))]; !strings.HasPrefix(got, want) {
				t.Fatalf("Mask(%q) = %q, want prefix %q", pan, got, want)
			}
		}
	})
}

// FuzzExpiry checks ParseExpiry's grammar (month 1 to 12 in one or two
// digits, year in two or four digits) against a rewrite of it, that what it
// parses reads back the same from its canonical form, and that CheckExpiry
// agrees with the end of the expiry month for any clock, never panicking.
func FuzzExpiry(f *testing.F) {
	for _, m := range []string{"1", "01", "12", "13", "0", "00", "", "1 ", "+1", "-1", "٠١", "1\x00", "\xff", "001"} {
		for _, y := range []string{"30", "2030", "2026", "99", "9999", "0000", "203", "20300", "", "２０３０", "-030"} {
			f.Add(m, y, time.Date(2026, time.May, 15, 0, 0, 0, 0, time.UTC).Unix())
		}
	}
	f.Add("12", "2026", time.Date(2026, time.December, 31, 23, 59, 59, 0, time.UTC).Unix())
	f.Add("12", "2026", time.Date(2027, time.January, 1, 0, 0, 0, 0, time.UTC).Unix())
	f.Add("1", "9999", int64(-1<<62))
	f.Add("1", "2000", int64(1<<62))
	f.Fuzz(func(t *testing.T, month, year string, unix int64) {
		m, y, err := ParseExpiry(month, year)
		mi, merr := strconv.Atoi(month)
		yi, yerr := strconv.Atoi(year)
		want := len(month) >= 1 && len(month) <= 2 && isDigits(month) && merr == nil && mi >= 1 && mi <= 12 &&
			(len(year) == 2 || len(year) == 4) && isDigits(year) && yerr == nil
		if (err == nil) != want {
			t.Fatalf("ParseExpiry(%q, %q) = %v, want valid %v", month, year, err, want)
		}
		now := time.Unix(unix, 0)
		cerr := CheckExpiry(month, year, now)
		if err != nil {
			if !errors.Is(err, ErrInvalidExpiry) || !errors.Is(cerr, ErrInvalidExpiry) {
				t.Fatalf("ParseExpiry(%q, %q) = %v, CheckExpiry = %v; want ErrInvalidExpiry", month, year, err, cerr)
			}
			return
		}
		if len(year) == 2 {
			yi += 2000
		}
		if m != mi || y != yi || y < 0 || y > 9999 {
			t.Fatalf("ParseExpiry(%q, %q) = %d, %d", month, year, m, y)
		}
		if m2, y2, err := ParseExpiry(fmt.Sprintf("%02d", m), fmt.Sprintf("%04d", y)); err != nil || m2 != m || y2 != y {
			t.Fatalf("ParseExpiry of the canonical %02d/%d = %d, %d, %v", m, y, m2, y2, err)
		}
		end := time.Date(y, time.Month(m)+1, 1, 0, 0, 0, 0, time.UTC)
		var wantErr error
		switch {
		case y > now.UTC().Year()+maxYearsAhead:
			wantErr = ErrInvalidExpiry
		case !now.Before(end):
			wantErr = ErrExpired
		}
		if !errors.Is(cerr, wantErr) || (wantErr == nil && cerr != nil) {
			t.Fatalf("CheckExpiry(%q, %q, %s) = %v, want %v", month, year, now.UTC(), cerr, wantErr)
		}
	})
}

// FuzzValidateCVV checks ValidateCVV against its rule: ASCII digits only,
// four for American Express and three for any other brand.
func FuzzValidateCVV(f *testing.F) {
	for _, c := range []string{"123", "1234", "12", "12345", "", "12a", "١٢٣", "12\x00", "\xff\xff\xff", " 123", "000"} {
		for _, b := range []string{"visa", "amex", "AMEX", "unknown", ""} {
			f.Add(c, b)
		}
	}
	f.Fuzz(func(t *testing.T, cvv, brand string) {
		want := 3
		if brand == "amex" {
			want = 4
		}
		ok := len(cvv) == want && strings.Trim(cvv, "0123456789") == ""
		err := ValidateCVV(cvv, brand)
		if (err == nil) != ok || (err != nil && !errors.Is(err, ErrInvalidCVV)) {
			t.Fatalf("ValidateCVV(%q, %q) = %v, want valid %v", cvv, brand, err, ok)
		}
	})
}

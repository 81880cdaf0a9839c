package payout

import (
	"errors"
	"fmt"
	"strings"
)

// IBAN errors. ParseIBAN wraps one of them, so callers can tell a typing
// mistake (ErrIBANChecksum) from an IBAN of a country we do not know.
var (
	ErrIBANFormat      = errors.New("iban: not letters and digits in IBAN form")
	ErrIBANCountry     = errors.New("iban: country has no IBAN")
	ErrIBANLength      = errors.New("iban: wrong length for its country")
	ErrIBANCheckDigits = errors.New("iban: check digits out of range")
	ErrIBANChecksum    = errors.New("iban: check digits do not match")
)

// ibanLengths is the length of an IBAN in each country of the SWIFT IBAN
// registry that is also an assigned ISO 3166-1 country (Kosovo's XK is a
// user-assigned code and is left out, as the country package leaves it out).
// Countries outside the registry (such as US, CA, AU, JP) have no IBAN.
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
	"BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
	"EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
	"GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
	"IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21,
	"LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28,
	"NL": 18, "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
	"RU": 33, "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25,
	"SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24,
}

// maxIBANInput bounds the text ParseIBAN looks at: the longest IBAN (33, RU)
// printed in groups of four with single spaces, with room to spare.
const maxIBANInput = 64

// IBAN is an International Bank Account Number in its electronic form:
// upper case, no spaces, for example "GB82WEST12345698765432".
type IBAN string

// IBANLength reports the length of an IBAN of country and whether the
// country has IBANs.
func IBANLength(country string) (int, bool) {
	n, ok := ibanLengths[country]
	return n, ok
}

// ParseIBAN checks s and returns its electronic form.
//
// Surrounding whitespace is ignored; inside, ASCII spaces (the printed
// form, groups of four) are dropped and lower-case letters are read as upper
// case, because both are how people copy IBANs from statements and neither
// changes which account is meant. Anything else (tabs, dashes, dots, non-ASCII)
// is refused. The country must be in the IBAN registry, the length must be
// its country's, the check digits must be 02–98 and the whole must pass the
// ISO 7064 mod-97 check. The national part (BBAN) is not checked further.
func ParseIBAN(s string) (IBAN, error) {
	s = strings.TrimSpace(s)
	if len(s) > maxIBANInput {
		return "", fmt.Errorf("%w: longer than %d characters", ErrIBANFormat, maxIBANInput)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ':
		case c >= 'a' && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			b.WriteByte(c)
		default:
			return "", fmt.Errorf("%w: character %q", ErrIBANFormat, rune(c))
		}
	}
	v := b.String()
	if len(v) < 5 || !isUpper(v[0]) || !isUpper(v[1]) || !isDigit(v[2]) || !isDigit(v[3]) {
		return "", fmt.Errorf("%w: want two letters, two digits and the account", ErrIBANFormat)
	}
	cc := v[:2]
	want, ok := ibanLengths[cc]
	if !ok {
		return "", fmt.Errorf("%w: %s", ErrIBANCountry, cc)
	}
	if len(v) != want {
		return "", fmt.Errorf("%w: %s IBANs have %d characters, got %d", ErrIBANLength, cc, want, len(v))
	}
	if cd := int(v[2]-'0')*10 + int(v[3]-'0'); cd < 2 || cd > 98 {
		return "", fmt.Errorf("%w: %02d", ErrIBANCheckDigits, cd)
	}
	if mod97(v) != 1 {
		return "", ErrIBANChecksum
	}
	return IBAN(v), nil
}

// mod97 computes the ISO 7064 MOD 97-10 remainder of an IBAN: the first four
// characters moved to the end, each letter read as two digits (A=10 ... Z=35),
// the resulting number taken modulo 97 digit by digit so it never overflows.
func mod97(v string) int {
	r := 0
	for _, c := range []byte(v[4:] + v[:4]) {
		if isDigit(c) {
			r = (r*10 + int(c-'0')) % 97
			continue
		}
		r = (r*100 + int(c-'A') + 10) % 97
	}
	return r
}

// Country is the IBAN's country code.
func (i IBAN) Country() string { return string(i[:2]) }

// CheckDigits are the IBAN's two check digits.
func (i IBAN) CheckDigits() string { return string(i[2:4]) }

// BBAN is the national account number inside the IBAN.
func (i IBAN) BBAN() string { return string(i[4:]) }

// Printed is the IBAN in groups of four separated by spaces, as on paper.
func (i IBAN) Printed() string {
	var b strings.Builder
	for n := 0; n < len(i); n += 4 {
		if n > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(string(i[n:min(n+4, len(i))]))
	}
	return b.String()
}

// String is the electronic form.
func (i IBAN) String() string { return string(i) }

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isUpper(c) || isDigit(c) }

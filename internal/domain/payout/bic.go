package payout

import (
	"errors"
	"fmt"
	"strings"

	"github.com/paygate/paygate/internal/domain/country"
)

// BIC errors. ParseBIC wraps one of them.
var (
	ErrBICFormat  = errors.New("bic: not a BIC of 8 or 11 characters")
	ErrBICCountry = errors.New("bic: unknown country")
)

// BIC is a SWIFT Business Identifier Code (ISO 9362) in upper case, 8 or 11
// characters: bank code (4 letters), country (2 letters), location (2
// letters or digits) and, for 11, branch (3 letters or digits).
type BIC string

// ParseBIC checks s and returns it in upper case.
//
// Surrounding whitespace is ignored and lower-case letters are read as upper
// case (BICs are case-insensitive); any space inside is refused, since a BIC
// is never printed in groups. The bank code must be four letters, the
// country an assigned ISO 3166-1 code, location and branch letters or
// digits. A location whose second character is "0" marks a test BIC; it is
// accepted here and left to the rail, which knows whether it takes them.
func ParseBIC(s string) (BIC, error) {
	s = strings.TrimSpace(s)
	if len(s) != 8 && len(s) != 11 {
		return "", fmt.Errorf("%w: %d characters", ErrBICFormat, len(s))
	}
	v := []byte(s)
	for i, c := range v {
		if c >= 'a' && c <= 'z' {
			v[i] = c - 'a' + 'A'
		}
	}
	for i, c := range v {
		switch {
		case i < 6 && !isUpper(c):
			return "", fmt.Errorf("%w: bank and country codes are letters, got %q at %d", ErrBICFormat, rune(c), i+1)
		case i >= 6 && !isAlnum(c):
			return "", fmt.Errorf("%w: location and branch are letters or digits, got %q at %d", ErrBICFormat, rune(c), i+1)
		}
	}
	if cc := string(v[4:6]); !country.Known(cc) {
		return "", fmt.Errorf("%w: %s", ErrBICCountry, cc)
	}
	return BIC(v), nil
}

// BankCode is the four-letter institution code.
func (b BIC) BankCode() string { return string(b[:4]) }

// Country is the BIC's country code.
func (b BIC) Country() string { return string(b[4:6]) }

// Location is the two-character location code.
func (b BIC) Location() string { return string(b[6:8]) }

// Branch is the branch code: the three characters of an 11-character BIC,
// "XXX" (the head office) for an 8-character one.
func (b BIC) Branch() string {
	if len(b) == 11 {
		return string(b[8:])
	}
	return "XXX"
}

// Test reports whether the BIC is a test BIC (second location character "0").
func (b BIC) Test() bool { return b[7] == '0' }

// String is the BIC as parsed.
func (b BIC) String() string { return string(b) }

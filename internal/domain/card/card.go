// Package card implements pure checks on payment card data: the Luhn
// checksum, brand detection, masking, expiry and CVV validation, and a keyed
// fingerprint that identifies a card without storing its number.
//
// Inputs are used as given: callers trim or strip separators beforehand.
package card

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

var (
	// ErrInvalidNumber is returned for a card number that is not 12 to 19
	// digits, starts with a zero or fails the Luhn check.
	ErrInvalidNumber = errors.New("card: invalid card number")
	// ErrInvalidExpiry is returned for a malformed or implausible expiry date.
	ErrInvalidExpiry = errors.New("card: invalid expiry date")
	// ErrExpired is returned for a card whose expiry month has passed.
	ErrExpired = errors.New("card: card expired")
	// ErrInvalidCVV is returned for a security code of the wrong form.
	ErrInvalidCVV = errors.New("card: invalid security code")
)

// maxYearsAhead is how far in the future an expiry year may be.
const maxYearsAhead = 20

// Luhn reports whether pan is a non-empty string of ASCII digits that passes
// the Luhn (mod 10) checksum.
func Luhn(pan string) bool {
	if !isDigits(pan) {
		return false
	}
	sum := 0
	double := false
	for i := len(pan) - 1; i >= 0; i-- {
		d := int(pan[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// WithCheckDigit completes body, a string of ASCII digits, with its Luhn
// check digit: the number Luhn accepts. Load tools use it to make a card per
// payment.
func WithCheckDigit(body string) string {
	for d := byte('0'); d <= '9'; d++ {
		if pan := body + string(d); Luhn(pan) {
			return pan
		}
	}
	return body
}

// ValidateNumber returns ErrInvalidNumber unless pan is 12 to 19 ASCII
// digits, not starting with a zero, that pass the Luhn check. No payment
// card number starts with a zero, and a leading zero keeps the Luhn sum: a
// zero put in front of a number is another string for the same card, which
// would pass for a card no list (test cards, velocity, blocked cards)
// knows. Every such check sees the one form this allows.
func ValidateNumber(pan string) error {
	if len(pan) < 12 || len(pan) > 19 || pan[0] == '0' || !Luhn(pan) {
		return ErrInvalidNumber
	}
	return nil
}

// iinRange is an inclusive range of card number prefixes of equal length.
type iinRange struct {
	lo, hi string
	brand  string
}

// iinRanges lists issuer identification number ranges. More specific ranges
// come before broader ones that contain them.
var iinRanges = []iinRange{
	{"34", "34", "amex"},
	{"37", "37", "amex"},
	{"4", "4", "visa"},
	{"2221", "2720", "mastercard"},
	{"51", "55", "mastercard"},
	{"6011", "6011", "discover"},
	{"644", "649", "discover"},
	{"65", "65", "discover"},
	{"3528", "3589", "jcb"},
	{"62", "62", "unionpay"},
	{"81", "81", "unionpay"},
	{"300", "305", "diners"},
	{"3095", "3095", "diners"},
	{"36", "36", "diners"},
	{"38", "39", "diners"},
	{"50", "50", "maestro"},
	{"56", "58", "maestro"},
	{"6304", "6304", "maestro"},
	{"639", "639", "maestro"},
	{"67", "67", "maestro"},
}

// Brand returns the card brand of pan by its issuer identification number:
// "visa", "mastercard", "amex", "discover", "jcb", "unionpay", "diners",
// "maestro", or "unknown" when no range matches or pan is not all digits.
func Brand(pan string) string {
	if !isDigits(pan) {
		return "unknown"
	}
	for _, r := range iinRanges {
		if len(pan) < len(r.lo) {
			continue
		}
		p := pan[:len(r.lo)]
		if p >= r.lo && p <= r.hi {
			return r.brand
		}
	}
	return "unknown"
}

// Brands lists every brand Brand can answer except "unknown", each once, in
// the order of the IIN table. It is derived from that table so that a brand
// added there is offered everywhere that lists brands (POST /v1/optimise).
func Brands() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range iinRanges {
		if !seen[r.brand] {
			seen[r.brand] = true
			out = append(out, r.brand)
		}
	}
	return out
}

// Mask returns pan with all but the first six and last four characters
// replaced by '*'. Numbers shorter than 11 characters are masked entirely, so
// that no more than the usual PCI DSS display digits are ever shown.
func Mask(pan string) string {
	r := []rune(pan)
	if len(r) < 11 {
		return strings.Repeat("*", len(r))
	}
	return string(r[:6]) + strings.Repeat("*", len(r)-10) + string(r[len(r)-4:])
}

// ParseExpiry parses an expiry month ("1" to "12", or "01" to "12") and year
// (four digits, or two digits meaning 20YY) and returns them as numbers. Any
// other form returns ErrInvalidExpiry.
func ParseExpiry(month, year string) (int, int, error) {
	if len(month) < 1 || len(month) > 2 || !isDigits(month) {
		return 0, 0, ErrInvalidExpiry
	}
	m, _ := strconv.Atoi(month)
	if m < 1 || m > 12 {
		return 0, 0, ErrInvalidExpiry
	}
	if (len(year) != 2 && len(year) != 4) || !isDigits(year) {
		return 0, 0, ErrInvalidExpiry
	}
	y, _ := strconv.Atoi(year)
	if len(year) == 2 {
		y += 2000
	}
	return m, y, nil
}

// CheckExpiry validates an expiry date against now. It returns
// ErrInvalidExpiry when the date is malformed or the year is more than 20
// years after now's year, and ErrExpired when the end of the expiry month
// (in UTC) is before now. A card is valid through the last instant of its
// expiry month.
func CheckExpiry(month, year string, now time.Time) error {
	m, y, err := ParseExpiry(month, year)
	if err != nil {
		return err
	}
	now = now.UTC()
	if y > now.Year()+maxYearsAhead {
		return ErrInvalidExpiry
	}
	// The first instant after the expiry month; time.Date normalises month 13.
	end := time.Date(y, time.Month(m)+1, 1, 0, 0, 0, 0, time.UTC)
	if !now.Before(end) {
		return ErrExpired
	}
	return nil
}

// ValidateCVV returns ErrInvalidCVV unless cvv is all ASCII digits and exactly
// 4 long for brand "amex" or exactly 3 long for any other brand.
func ValidateCVV(cvv, brand string) error {
	want := 3
	if brand == "amex" {
		want = 4
	}
	if len(cvv) != want || !isDigits(cvv) {
		return ErrInvalidCVV
	}
	return nil
}

// Fingerprint returns the lower-case hex HMAC-SHA256 of pan under key. It is
// a stable identity for a card, usable in risk lists without storing the
// number. The PAN is hashed exactly as given, so callers should pass a
// validated number without separators.
func Fingerprint(key []byte, pan string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(pan))
	return hex.EncodeToString(mac.Sum(nil))
}

// isDigits reports whether s is non-empty and consists of ASCII digits only.
func isDigits(s string) bool {
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

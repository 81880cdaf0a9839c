package payout

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/country"
	"github.com/paygate/paygate/internal/domain/money"
)

// FieldError is a refused request: the first field, in Validate's fixed
// order, that is missing or invalid. Field is its path in the request
// ("beneficiary.bank_details.iban", "beneficiary.person_documents[0].file_url"),
// Code the result-code table entry that answers it, Reason what is wrong in
// words, and Err the underlying error when there is one (ErrIBANChecksum,
// money.ErrInvalidAmount, ...), for errors.Is.
type FieldError struct {
	Field  string
	Code   codes.Code
	Reason string
	Err    error
}

// ErrMissing is the Err of a FieldError for a required field that is empty.
var ErrMissing = errors.New("required field is missing")

func (e *FieldError) Error() string { return "payout: " + e.Field + " " + e.Reason }

// Unwrap returns the underlying error.
func (e *FieldError) Unwrap() error { return e.Err }

// Result is the result code that answers the request: the table entry with
// the field, and for anything but a missing field what is wrong with it,
// as its detail ("I0008:Invalid field value: beneficiary.bank_details.iban
// fails the mod-97 check").
func (e *FieldError) Result() codes.Code {
	if e.Code.Is(codes.MissingField) {
		return e.Code.With(e.Field)
	}
	return e.Code.With(e.Field + " " + e.Reason)
}

// Field limits, in characters (Unicode code points). The interface gives
// none; these fit what banks and SWIFT carry (SWIFT's name and address lines
// are 4 × 35 = 140 characters, a remittance reference 140) and keep records
// bounded.
const (
	maxIDLength       = 64   // merchant_id, account_id, beneficiary_id, external ids
	maxPersonName     = 100  // first_name, last_name
	maxCompanyName    = 200  // company_name
	maxAccountName    = 140  // bank_details.account_name, bank_name
	maxAddressLine    = 200  // street, street_address, bank_street_address
	maxShortText      = 100  // city, state, complement, business_area, job
	maxCodeText       = 32   // personal_id_type, file_type, business_registration_type
	maxNumberText     = 20   // address number, postcode, bank_code
	maxReference      = 140  // reason, reference, transaction_reference
	maxClientData     = 2048 // client_data
	maxEmail          = 200
	maxURL            = 1024
	maxDocuments      = 10 // person_documents entries
	maxLabels         = 10 // labels per document
	maxLabel          = 64
	maxAccountNumber  = 34 // the longest IBAN's length; no account number is longer
	maxDocumentNumber = 64 // owner_document_number, personal_id_number, registration numbers
)

// validator checks fields in the order it is called and keeps only the
// first failure, so Validate reads as the list of fields in order and its
// answer never depends on anything but that order.
type validator struct {
	first *FieldError
}

// ok reports whether no field has failed yet.
func (v *validator) ok() bool { return v.first == nil }

// fail records a failure unless one is already recorded.
func (v *validator) fail(field string, code codes.Code, err error, format string, args ...any) {
	if v.first != nil {
		return
	}
	v.first = &FieldError{Field: field, Code: code, Reason: fmt.Sprintf(format, args...), Err: err}
}

// missing records a required field that is empty.
func (v *validator) missing(field string) {
	v.fail(field, codes.MissingField, ErrMissing, "is missing")
}

// present reports whether value is non-empty, recording it as missing when
// it is empty and required.
func (v *validator) present(field, value string, required bool) bool {
	if value != "" {
		return true
	}
	if required {
		v.missing(field)
	}
	return false
}

// text checks a free-text field: valid UTF-8, no control characters (tab,
// line feed and carriage return only when multiline), no bidirectional
// controls, at most max characters.
func (v *validator) text(field, value string, required bool, maxChars int) {
	v.textLines(field, value, required, maxChars, false)
}

func (v *validator) textLines(field, value string, required bool, maxChars int, multiline bool) {
	if !v.present(field, value, required) {
		return
	}
	if !utf8.ValidString(value) {
		v.fail(field, codes.InvalidField, nil, "is not valid UTF-8")
		return
	}
	for _, r := range value {
		if multiline && (r == '\t' || r == '\n' || r == '\r') {
			continue
		}
		if isControl(r) {
			v.fail(field, codes.InvalidField, nil, "contains a control character")
			return
		}
		if isBidiControl(r) {
			v.fail(field, codes.InvalidField, nil, "contains a bidirectional text control")
			return
		}
	}
	if n := utf8.RuneCountInString(value); n > maxChars {
		v.fail(field, codes.InvalidField, nil, "is longer than %d characters", maxChars)
	}
}

// isControl reports the C0 controls, DEL and the C1 controls: they cannot be
// stored in Postgres text (NUL) or corrupt a bank file's lines.
func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f)
}

// isBidiControl reports the Unicode embedding, override and isolate
// controls, which can make a name on a statement read differently from what
// it is (U+202E reverses what follows it). The plain direction marks (U+200E,
// U+200F) and the joiners (U+200C, U+200D) are kept: right-to-left, Persian
// and Indic names carry them.
func isBidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// token checks an identifier: 1 to max printable ASCII characters, no spaces.
func (v *validator) token(field, value string, required bool, maxLen int) {
	if !v.present(field, value, required) {
		return
	}
	if len(value) > maxLen {
		v.fail(field, codes.InvalidField, nil, "is longer than %d characters", maxLen)
		return
	}
	for i := 0; i < len(value); i++ {
		if value[i] <= ' ' || value[i] > '~' {
			v.fail(field, codes.InvalidField, nil, "must be printable ASCII without spaces")
			return
		}
	}
}

// charset checks that value is 1 to max characters from the ASCII classes
// allowed: letters, digits and the punctuation in extra.
func (v *validator) charset(field, value string, required bool, maxLen int, extra, what string) {
	if !v.present(field, value, required) {
		return
	}
	if len(value) > maxLen {
		v.fail(field, codes.InvalidField, nil, "is longer than %d characters", maxLen)
		return
	}
	for i := 0; i < len(value); i++ {
		c := value[i]
		if !isDigit(c) && !isUpper(c) && !(c >= 'a' && c <= 'z') && !strings.ContainsRune(extra, rune(c)) {
			v.fail(field, codes.InvalidField, nil, "must be %s", what)
			return
		}
	}
}

// digits checks that value is between minLen and maxLen ASCII digits.
func (v *validator) digits(field, value string, required bool, minLen, maxLen int) {
	if !v.present(field, value, required) {
		return
	}
	if !digitsOnly(value) || len(value) < minLen || len(value) > maxLen {
		if minLen == maxLen {
			v.fail(field, codes.InvalidField, nil, "must be %d digits", minLen)
		} else {
			v.fail(field, codes.InvalidField, nil, "must be %d to %d digits", minLen, maxLen)
		}
	}
}

// country checks an ISO 3166-1 alpha-2 code, exact upper case.
func (v *validator) country(field, value string, required bool) {
	if v.present(field, value, required) && !country.Known(value) {
		v.fail(field, codes.InvalidField, nil, "must be an ISO 3166-1 two-letter country code")
	}
}

// currency checks an ISO 4217 code of the extended set, exact upper case.
func (v *validator) currency(field, value string, required bool) {
	if v.present(field, value, required) && !money.KnownExtendedCurrency(value) {
		v.fail(field, codes.UnsupportedCurrency, money.ErrUnknownCurrency, "must be a supported ISO 4217 currency code")
	}
}

// date parses a YYYY-MM-DD calendar date (a real day: 2025-02-29 is refused).
func (v *validator) date(field, value string, required bool) (time.Time, bool) {
	if !v.present(field, value, required) {
		return time.Time{}, false
	}
	d, err := time.Parse(DateLayout, value)
	if err != nil {
		v.fail(field, codes.InvalidField, err, "must be a date as YYYY-MM-DD")
		return time.Time{}, false
	}
	return d, true
}

// birthDate checks a date of birth: a date, not after today, not before 1900.
func (v *validator) birthDate(field, value string, today time.Time) {
	d, ok := v.date(field, value, false)
	if !ok {
		return
	}
	if d.After(today) {
		v.fail(field, codes.InvalidField, nil, "must not be in the future")
	} else if d.Year() < 1900 {
		v.fail(field, codes.InvalidField, nil, "must not be before 1900")
	}
}

// email checks the shape of an address: one "@", a local part and a domain
// of dot-separated labels, printable ASCII without spaces. Whether anyone
// reads it is not ours to know.
func (v *validator) email(field, value string) {
	if !v.present(field, value, false) {
		return
	}
	local, domain, ok := strings.Cut(value, "@")
	valid := ok && len(value) <= maxEmail && local != "" && len(local) <= 64 && !strings.Contains(domain, "@") &&
		strings.Contains(domain, ".") && !strings.HasPrefix(domain, ".") && !strings.HasSuffix(domain, ".") &&
		!strings.Contains(domain, "..")
	for i := 0; valid && i < len(value); i++ {
		valid = value[i] > ' ' && value[i] <= '~' && !strings.ContainsRune(`"(),:;<>[\]`, rune(value[i]))
	}
	for i := 0; valid && i < len(domain); i++ {
		c := domain[i]
		valid = isDigit(c) || isUpper(c) || (c >= 'a' && c <= 'z') || c == '-' || c == '.'
	}
	if !valid {
		v.fail(field, codes.InvalidField, nil, "must be an email address")
	}
}

// phone checks a telephone number: an optional "+", then digits with spaces,
// hyphens or parentheses between them, 4 to 20 digits in all.
func (v *validator) phone(field, value string) {
	if !v.present(field, value, false) {
		return
	}
	n := 0
	valid := len(value) <= 32
	for i := 0; valid && i < len(value); i++ {
		c := value[i]
		switch {
		case isDigit(c):
			n++
		case c == '+' && i == 0:
		case c == ' ' || c == '-' || c == '(' || c == ')':
		default:
			valid = false
		}
	}
	if !valid || n < 4 || n > 20 {
		v.fail(field, codes.InvalidField, nil, "must be a telephone number of 4 to 20 digits")
	}
}

// url checks an http or https URL with a host, at most maxURL bytes.
func (v *validator) url(field, value string, required bool) {
	if !v.present(field, value, required) {
		return
	}
	u, err := url.Parse(value)
	if len(value) > maxURL || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		v.fail(field, codes.InvalidField, err, "must be an http or https URL without user info, of at most %d characters", maxURL)
	}
}

// decimal checks a non-negative decimal with at most two fraction digits
// and fifteen integer digits, such as an income; it names no currency.
func (v *validator) decimal(field, value string) {
	if !v.present(field, value, false) {
		return
	}
	intPart, frac, hasDot := strings.Cut(value, ".")
	if !digitsOnly(intPart) || len(intPart) > 15 || (hasDot && (len(frac) < 1 || len(frac) > 2 || !digitsOnly(frac))) {
		v.fail(field, codes.InvalidField, nil, "must be a decimal number with at most two fraction digits")
	}
}

// abaChecksumOK reports whether a nine-digit ABA routing number passes its
// check: 3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) is a multiple of 10.
func abaChecksumOK(s string) bool {
	if len(s) != 9 || !digitsOnly(s) {
		return false
	}
	weights := [3]int{3, 7, 1}
	sum := 0
	for i := 0; i < 9; i++ {
		sum += weights[i%3] * int(s[i]-'0')
	}
	return sum%10 == 0
}

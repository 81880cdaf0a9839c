package payout

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// ErrRequestID is returned for a request_id that is not a UUID.
var ErrRequestID = errors.New("request_id: not a UUID")

// ParseRequestID checks that s is a UUID in its standard text form
// (8-4-4-4-12 hexadecimal digits, RFC 9562) and returns it in lower case.
//
// The form is exact: no braces, no "urn:uuid:" prefix, no missing hyphens.
// That keeps the payout signature unambiguous: request_id is always 36
// characters between account_id and the three-letter payment_currency, so no
// character can move between signed fields. Either case is accepted, as RFC
// 9562 asks, and the lower-case form is the payout's key, so a retry that
// changes only the case still finds the first payout. The version and variant
// bits are not checked (merchants use v4 and v7 alike); the nil UUID is
// refused, because it is what an unset field prints and would make every such
// request one payout.
func ParseRequestID(s string) (string, error) {
	s = strings.TrimSpace(s)
	if len(s) != 36 {
		return "", fmt.Errorf("%w: want 36 characters, got %d", ErrRequestID, len(s))
	}
	b := []byte(s)
	for i, c := range b {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return "", fmt.Errorf("%w: want a hyphen at %d", ErrRequestID, i+1)
			}
			continue
		}
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			b[i] = c - 'A' + 'a'
		default:
			return "", fmt.Errorf("%w: %q is not a hexadecimal digit", ErrRequestID, rune(c))
		}
	}
	v := string(b)
	if v == "00000000-0000-0000-0000-000000000000" {
		return "", fmt.Errorf("%w: the nil UUID", ErrRequestID)
	}
	return v, nil
}

// shortReferenceAlphabet holds the characters of a short reference's random
// part: upper-case letters and digits, 36 in all.
const shortReferenceAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// ShortReferenceLength is the length of a short reference: "YYYYMMDD-" and six characters.
const ShortReferenceLength = 15

// NewShortReference returns a short_reference_id for a payout created at
// created: its UTC date as YYYYMMDD, a hyphen, and six upper-case letters or
// digits read from random (crypto/rand.Reader in production, a fixed reader in
// tests and through a workflow side effect).
//
// Each character is drawn uniformly: a byte is used only when it is below
// 252 (7 × 36), so no character is more likely than another. With 36^6
// (about 2.2 billion) values per day, two payouts of one day share a
// reference with probability about n²/4.4e9 for n payouts; it is a reference
// for people, not a key, and a store that wants it unique retries on a
// conflict.
func NewShortReference(created time.Time, random io.Reader) (string, error) {
	var out [ShortReferenceLength]byte
	copy(out[:], created.UTC().Format("20060102")+"-")
	n := 9
	var buf [16]byte
	for n < len(out) {
		if _, err := io.ReadFull(random, buf[:]); err != nil {
			return "", fmt.Errorf("short reference: read random bytes: %w", err)
		}
		for _, c := range buf {
			if c >= 252 || n == len(out) {
				continue
			}
			out[n] = shortReferenceAlphabet[c%36]
			n++
		}
	}
	return string(out[:]), nil
}

// ValidShortReference reports whether s has the form of a short_reference_id:
// a real calendar date as eight digits, a hyphen and six upper-case letters
// or digits.
func ValidShortReference(s string) bool {
	if len(s) != ShortReferenceLength || s[8] != '-' {
		return false
	}
	if _, err := time.Parse("20060102", s[:8]); err != nil {
		return false
	}
	for i := 9; i < len(s); i++ {
		if !isAlnum(s[i]) {
			return false
		}
	}
	return true
}

// TimestampLayout is the layout of created_at and last_updated_at: date, "T",
// time to the second, and a numeric UTC offset with a colon (RFC 3339, never
// "Z"), for example "2026-03-14T09:26:53+00:00".
const TimestampLayout = "2006-01-02T15:04:05-07:00"

// FormatTimestamp renders t for created_at and last_updated_at, in UTC.
// Times are stored and compared in UTC; rendering them in UTC too means a
// payout's timestamps never change with the server's zone.
func FormatTimestamp(t time.Time) string {
	return t.UTC().Format(TimestampLayout)
}

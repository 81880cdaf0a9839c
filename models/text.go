package models

import (
	"strings"
	"unicode/utf8"
)

// CutText fits s to a column of n bytes: bytes that are not text are
// replaced, and it is cut at a character's boundary (half a character is
// not text, and Postgres refuses it).
func CutText(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

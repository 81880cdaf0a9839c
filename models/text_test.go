package models

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCutTextKeepsText: a reason (a batch item's, a reconciliation run's)
// is cut to its column at a character's boundary (half a character is not
// text, and the record refuses it).
func TestCutTextKeepsText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"short, as it is", "rail down", "rail down"},
		{"ASCII cut at the limit", strings.Repeat("a", 12), strings.Repeat("a", 10)},
		{"an accent across the limit", strings.Repeat("a", 9) + "é", strings.Repeat("a", 9)},
		{"a euro sign across the limit", strings.Repeat("a", 8) + "€", strings.Repeat("a", 8)},
		{"bytes that are not text replaced", "a\xffb", "a?b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CutText(tc.in, 10)
			if got != tc.want || !utf8.ValidString(got) {
				t.Errorf("CutText(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

package payoutrerun

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTruncateKeepsText: a batch item's reason is cut to its column at a
// character's boundary (half a character is not text, and the record
// refuses it).
func TestTruncateKeepsText(t *testing.T) {
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
			got := truncate(tc.in, 10)
			if got != tc.want || !utf8.ValidString(got) {
				t.Errorf("truncate(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

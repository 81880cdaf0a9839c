package country

import (
	"strings"
	"testing"
)

func TestKnown(t *testing.T) {
	tests := []struct {
		code string
		want bool
	}{
		{"US", true},
		{"GB", true},
		{"DE", true},
		{"BR", true},
		{"CN", true},
		{"SS", true},     // South Sudan, assigned 2011.
		{"BQ", true},     // Bonaire, Sint Eustatius and Saba.
		{"AX", true},     // Åland Islands.
		{"AQ", true},     // Antarctica.
		{"UM", true},     // United States Minor Outlying Islands.
		{"ZW", true},     // Last in order.
		{"AD", true},     // First in order.
		{"UK", false},    // Exceptionally reserved, use GB.
		{"EU", false},    // Exceptionally reserved.
		{"XK", false},    // User-assigned (Kosovo), not official.
		{"AN", false},    // Netherlands Antilles, withdrawn.
		{"YU", false},    // Yugoslavia, withdrawn.
		{"ZZ", false},    // User-assigned.
		{"AA", false},    // User-assigned.
		{"us", false},    // Lower case.
		{"Us", false},    // Mixed case.
		{" US", false},   // Padded.
		{"USA", false},   // Alpha-3.
		{"840", false},   // Numeric.
		{"", false},      // Empty.
		{"U", false},     // Too short.
		{"AD AE", false}, // Two codes.
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			if got := Known(tt.code); got != tt.want {
				t.Errorf("Known(%q) = %t, want %t", tt.code, got, tt.want)
			}
		})
	}
}

func TestTable(t *testing.T) {
	fields := strings.Fields(codes)
	if len(fields) != 249 || len(known) != 249 {
		t.Errorf("table has %d codes (%d distinct), want 249", len(fields), len(known))
	}
	for i, c := range fields {
		if len(c) != 2 || c[0] < 'A' || c[0] > 'Z' || c[1] < 'A' || c[1] > 'Z' {
			t.Errorf("malformed code %q", c)
		}
		if i > 0 && c <= fields[i-1] {
			t.Errorf("code %q is not in order after %q", c, fields[i-1])
		}
	}
}

package txid

import "testing"

func TestValid(t *testing.T) {
	cases := []struct {
		name string
		id   string
		want bool
	}{
		{"19 digits", "1234567890123456789", true},
		{"a generated id", NewGenerator(7).Next(), true},
		{"18 digits", "123456789012345678", false},
		{"20 digits", "12345678901234567890", false},
		{"empty", "", false},
		{"a letter", "123456789012345678a", false},
		{"a sign", "+234567890123456789", false},
		{"Arabic-Indic digit", "123456789012345678\u0661", false},
		{"space", " 123456789012345678", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Valid(tc.id); got != tc.want {
				t.Fatalf("Valid(%q) = %v, want %v", tc.id, got, tc.want)
			}
		})
	}
}

package risk

import (
	"testing"

	"github.com/paygate/paygate/internal/domain/card"
)

func TestBIN(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"masked card", "424242******4242", "424242"},
		{"full number", "4000000000000002", "400000"},
		{"six digits", "555555", "555555"},
		{"too short", "42424", ""},
		{"fully masked short number", "**********", ""},
		{"not digits", "4242a2******4242", ""},
		{"empty", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := BIN(tc.in); got != tc.want {
				t.Errorf("BIN(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestCardCountry goes from the test cards, through the mask the workflow
// sees, to the country.
func TestCardCountry(t *testing.T) {
	tests := []struct {
		name string
		pan  string
		want string
	}{
		{"visa test card", "4242424242424242", "US"},
		{"mastercard test card", "5555555555554444", "US"},
		{"simulator decline card", "4000000000000002", "US"},
		{"simulator 3-D Secure card", "4000000000003220", "US"},
		{"american express test card", "378282246310005", "US"},
		{"GB test card", "4008260000000004", "GB"},
		{"DE test card", "4002760000000009", "DE"},
		{"BR test card", "4000760000000001", "BR"},
		{"unknown BIN", "4111111111111111", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := card.ValidateNumber(tc.pan); err != nil {
				t.Fatalf("test card %s is not valid: %v", tc.pan, err)
			}
			if got := CardCountry(BIN(card.Mask(tc.pan))); got != tc.want {
				t.Errorf("CardCountry(BIN(%s)) = %q, want %q", card.Mask(tc.pan), got, tc.want)
			}
		})
	}
}

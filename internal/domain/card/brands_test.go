package card

import (
	"slices"
	"testing"
)

// TestBrands: the list holds every brand Brand answers, once each, in the
// IIN table's order, and never "unknown".
func TestBrands(t *testing.T) {
	want := []string{"amex", "visa", "mastercard", "discover", "jcb", "unionpay", "diners", "maestro"}
	if got := Brands(); !slices.Equal(got, want) {
		t.Errorf("Brands() = %v, want %v", got, want)
	}
	for _, r := range iinRanges {
		if !slices.Contains(Brands(), Brand(r.lo+"000000000000")) {
			t.Errorf("Brand of range %s-%s (%s) is not listed", r.lo, r.hi, r.brand)
		}
	}
}

package txid

import (
	"fmt"
	"strconv"
	"testing"
)

// Fuzz target: go test -run='^$' -fuzz='^FuzzValid$' ./internal/domain/txid (or make
// fuzz). Plain go test runs the seeds.

// FuzzValid checks that Valid accepts exactly 19 ASCII digits: such an id
// reads as a decimal number that formats back to itself once zero-padded,
// and nothing else (signs, spaces, unicode digits, other lengths) passes.
func FuzzValid(f *testing.F) {
	for _, s := range []string{
		"1234567890123456789", "0000000000000000000", "9999999999999999999", "123456789012345678", "12345678901234567890",
		"+234567890123456789", "-234567890123456789", " 234567890123456789", "123456789012345678\x00", "١٢٣٤٥٦٧٨٩٠١٢٣٤٥٦٧٨٩",
		"１２３４５６７８９０１２３４５６７８９", "0x34567890123456789", "1_34567890123456789", "", "\xff\xff\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ok := Valid(s)
		digits := len(s) == Length
		for i := 0; i < len(s) && digits; i++ {
			digits = s[i] >= '0' && s[i] <= '9'
		}
		if ok != digits {
			t.Fatalf("Valid(%q) = %v, want %v", s, ok, digits)
		}
		if !ok {
			return
		}
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("Valid(%q) but it is not a number: %v", s, err)
		}
		if back := fmt.Sprintf("%0*d", Length, n); back != s {
			t.Fatalf("Valid(%q) but it formats back as %s", s, back)
		}
	})
}

package country

import (
	"slices"
	"strings"
	"testing"
)

// Fuzz target: go test -run='^$' -fuzz='^FuzzKnown$' ./internal/domain/country (or
// make fuzz). Plain go test runs the seeds.

// FuzzKnown checks that Known accepts only codes of two ASCII capital
// letters that are in the assigned list, never their lower-case, padded or
// look-alike forms.
func FuzzKnown(f *testing.F) {
	for _, s := range []string{"US", "BR", "GB", "us", "Us", "UK", "EU", "XK", "AN", "ZZ", "", "U", "USA", " US", "US\x00",
		"\xffS", "ＵＳ", "ÜS", "U\u0301S", "ΑΒ", "KZ", "ZW", "AA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		ok := Known(code)
		if !ok {
			return
		}
		if len(code) != 2 || code[0] < 'A' || code[0] > 'Z' || code[1] < 'A' || code[1] > 'Z' {
			t.Fatalf("Known(%q) = true for a code that is not two ASCII capitals", code)
		}
		if !slices.Contains(strings.Fields(codes), code) {
			t.Fatalf("Known(%q) = true for a code not in the list", code)
		}
		for _, other := range []string{strings.ToLower(code), code[:1] + strings.ToLower(code[1:]), " " + code, code + " ", code + "\x00"} {
			if Known(other) {
				t.Fatalf("Known(%q) = true, as for %q", other, code)
			}
		}
	})
}

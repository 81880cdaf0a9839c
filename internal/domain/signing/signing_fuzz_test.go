package signing

import (
	"strings"
	"testing"
)

// Fuzz targets: go test -run='^$' -fuzz='^FuzzSignVerify$' ./internal/domain/signing
// (or make fuzz). Plain go test runs the seeds.

// flipHex returns sig with the hex digit at i replaced by another one.
func flipHex(sig string, i int) string {
	c := sig[i]
	r := byte('0')
	if c == '0' {
		r = '1'
	}
	return sig[:i] + string(r) + sig[i+1:]
}

// FuzzSignVerify checks the round trip: Sign gives 64 lower-case hex digits
// that Verify accepts, in either case and with the values or key padded by
// white space; changing any one hex digit, the key or a value, or cutting or
// growing the signature makes Verify refuse.
func FuzzSignVerify(f *testing.F) {
	f.Add("sign-key", "10086", "1008601", "1234567890123456789", uint8(0))
	f.Add("", "", "", "", uint8(63))
	f.Add(" key\t", " 12.34 ", "Ada", "\x00", uint8(17))
	f.Add("k\xff", "12.3", "4Ada", "\u00a0", uint8(200))
	f.Add("ключ", "１２.３４", "٤", strings.Repeat("x", 300), uint8(64))
	f.Fuzz(func(t *testing.T, key, a, b, c string, at uint8) {
		sig := Sign(key, a, b, c)
		if len(sig) != 64 || strings.Trim(sig, "0123456789abcdef") != "" {
			t.Fatalf("Sign = %q, want 64 lower-case hex digits", sig)
		}
		if up := SignUpper(key, a, b, c); up != strings.ToUpper(sig) {
			t.Fatalf("SignUpper = %q, want %q", up, strings.ToUpper(sig))
		}
		for _, s := range []string{sig, strings.ToUpper(sig), strings.ToUpper(sig[:32]) + sig[32:]} {
			if !Verify(key, s, a, b, c) {
				t.Fatalf("Verify(%q, %q) refuses its own signature", key, s)
			}
		}
		if !Verify(" "+key+"\n", sig, "\t"+a, b+" ", c) {
			t.Fatal("Verify refuses values padded by white space")
		}
		i := int(at) % 64
		if flipped := flipHex(sig, i); Verify(key, flipped, a, b, c) {
			t.Fatalf("Verify accepts %q, hex digit %d of %q changed", flipped, i, sig)
		}
		for _, bad := range []string{"", sig[:63], sig + "0", " " + sig, sig[:62] + "zz", sig[:63] + "\x00"} {
			if Verify(key, bad, a, b, c) {
				t.Fatalf("Verify accepts the malformed signature %q", bad)
			}
		}
		if Verify(key+"x", sig, a, b, c) {
			t.Fatalf("Verify accepts %q under another key", sig)
		}
		if Verify(key, sig, a, b, c+"x") || Verify(key, sig, a, b, c, "x") {
			t.Fatalf("Verify accepts %q over other values", sig)
		}
	})
}

// FuzzVerify checks Verify on any signature: it never panics and accepts
// exactly the 64 hex digits that equal Sign's, whatever their case.
func FuzzVerify(f *testing.F) {
	f.Add("sign-key", Sign("sign-key", "10086", "1008601"), "10086", "1008601")
	f.Add("sign-key", strings.ToUpper(Sign("sign-key", "10086", "1008601")), "10086", "1008601")
	f.Add("k", "00", "a", "b")
	f.Add("k", "", "", "")
	f.Add("k", strings.Repeat("g", 64), "", "")
	f.Add("k", strings.Repeat("\xff", 64), "", "")
	f.Add("k", strings.Repeat("0", 63)+"\u212a", "", "")
	f.Add("k", " "+Sign("k", "a", "b")[1:], "a", "b")
	f.Fuzz(func(t *testing.T, key, sig, a, b string) {
		got := Verify(key, sig, a, b)
		want := len(sig) == 64 && strings.Trim(sig, "0123456789abcdefABCDEF") == "" &&
			strings.ToLower(sig) == Sign(key, a, b)
		if got != want {
			t.Fatalf("Verify(%q, %q, %q, %q) = %v, want %v", key, sig, a, b, got, want)
		}
	})
}

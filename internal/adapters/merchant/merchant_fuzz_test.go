package merchant

import (
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
)

// Fuzz target: go test -run='^$' -fuzz='^FuzzProvenKey$' ./internal/adapters/merchant
// (or make fuzz). Plain go test runs the seeds.

// FuzzProvenKey checks signature checks during a key rotation: a signature
// made with the current key proves the current key; one made with the
// previous key proves the previous key until the grace period ends and
// nothing after; any other signature proves nothing; and a proven key always
// verifies the signature it was proven by.
func FuzzProvenKey(f *testing.F) {
	f.Add("new-key", "old-key", "10086", "1008601", "", int64(60), int64(0))
	f.Add("new-key", "old-key", "10086", "1008601", "00", int64(60), int64(60))
	f.Add("k", "", "", "", "", int64(-1), int64(0))
	f.Add("k", "k", "a", "b", "", int64(0), int64(1))
	f.Add(" k", "k ", "a", "b", "", int64(10), int64(5))
	f.Fuzz(func(t *testing.T, current, previous, a, b, sig string, grace, elapsed int64) {
		if current == "" {
			return
		}
		start := time.Unix(1767225600, 0)
		until := start.Add(time.Duration(grace%1e6) * time.Second)
		now := start.Add(time.Duration(elapsed%1e6) * time.Second)
		acc := NewTestAccountRotating(models.Account{}, current, previous, until)
		inGrace := previous != "" && now.Before(until)

		if key, ok := acc.ProvenKey(now, signing.Sign(current, a, b), a, b); !ok || !signing.Verify(key, signing.Sign(current, a, b), a, b) {
			t.Fatalf("a signature with the current key proves %q, %v", key, ok)
		}
		if previous != "" {
			oldSig := signing.Sign(previous, a, b)
			key, ok := acc.ProvenKey(now, oldSig, a, b)
			if current == previous || signing.Verify(current, oldSig, a, b) {
				if !ok || key != current {
					t.Fatalf("a signature that the current key also makes proves %q, %v", key, ok)
				}
			} else if ok != inGrace || (ok && key != previous) {
				t.Fatalf("a signature with the previous key at %s (grace until %s) proves %q, %v", now, until, key, ok)
			}
		}
		key, ok := acc.ProvenKey(now, sig, a, b)
		want := signing.Verify(current, sig, a, b) || (inGrace && signing.Verify(previous, sig, a, b))
		if ok != want || (ok && !signing.Verify(key, sig, a, b)) {
			t.Fatalf("ProvenKey(%q) = %q, %v; want proven %v", sig, key, ok, want)
		}
		if acc.VerifySignature(now, sig, a, b) != ok {
			t.Fatal("VerifySignature and ProvenKey disagree")
		}
	})
}

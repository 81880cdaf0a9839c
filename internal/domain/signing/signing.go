// Package signing computes and verifies the encryption_data signature of
// requests and responses.
//
// The signature is hex(sha256(v1 + v2 + ... + vn + key)): the values, each
// with its surrounding whitespace removed, concatenated in order without
// separators, followed by the trimmed signing key.
package signing

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
)

// digest returns the SHA-256 of the trimmed values followed by the trimmed key.
func digest(key string, values []string) [sha256.Size]byte {
	h := sha256.New()
	for _, v := range values {
		h.Write([]byte(strings.TrimSpace(v)))
	}
	h.Write([]byte(strings.TrimSpace(key)))
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// Sign returns the lower-case hex signature of values under key, as sent in
// requests.
func Sign(key string, values ...string) string {
	sum := digest(key, values)
	return hex.EncodeToString(sum[:])
}

// SignUpper returns the upper-case hex signature of values under key, as used
// for the results we sign.
func SignUpper(key string, values ...string) string {
	return strings.ToUpper(Sign(key, values...))
}

// Verify reports whether signature is the signature of values under key.
// Hex digits are compared case-insensitively and in constant time. An empty,
// malformed or wrong-length signature is never valid.
func Verify(key, signature string, values ...string) bool {
	if len(signature) != hex.EncodedLen(sha256.Size) {
		return false
	}
	got, err := hex.DecodeString(signature)
	if err != nil {
		return false
	}
	want := digest(key, values)
	return subtle.ConstantTimeCompare(got, want[:]) == 1
}

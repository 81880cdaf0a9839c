// Package password hashes console users' passwords with argon2id and checks
// them, in the PHC string format, so the parameters travel with each hash
// and can be raised later without breaking old ones.
package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Parameters of new hashes: OWASP's argon2id minimum (19 MiB, two passes,
// one lane), about 30 ms here.
const (
	memoryKiB = 19 * 1024
	passes    = 2
	lanes     = 1
	saltLen   = 16
	keyLen    = 32
)

// MinLength is the shortest password accepted; MaxLength bounds the work a
// sign-in can ask for.
const (
	MinLength = 12
	MaxLength = 256
)

// ErrWeak is a password too short or too long to accept.
var ErrWeak = fmt.Errorf("a password must be %d to %d characters", MinLength, MaxLength)

// Hash returns the argon2id hash of pw in PHC format.
func Hash(pw string) (string, error) {
	if n := utf8.RuneCountInString(pw); n < MinLength || len(pw) > MaxLength {
		return "", ErrWeak
	}
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(pw), salt, passes, memoryKiB, lanes, keyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, memoryKiB, passes, lanes,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// ErrMalformed is a stored hash this package cannot read.
var ErrMalformed = errors.New("malformed password hash")

// Check reports whether pw matches hash, in time that does not depend on
// where they differ.
func Check(hash, pw string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || len(pw) > MaxLength {
		return false, ErrMalformed
	}
	var version int
	var m uint32
	var t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, ErrMalformed
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || m > 1<<20 || t == 0 || t > 10 || p == 0 {
		return false, ErrMalformed
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, ErrMalformed
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, ErrMalformed
	}
	got := argon2.IDKey([]byte(pw), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// Dummy is a valid hash of no one's password: a sign-in for an unknown
// email checks against it, so it takes as long as one for a known email.
var Dummy = func() string {
	h, err := Hash("no-user-has-this-password")
	if err != nil {
		panic(err)
	}
	return h
}()

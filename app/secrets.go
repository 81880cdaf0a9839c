package app

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/paygate/paygate/internal/domain/keyring"
)

// DefaultProviderSecret is the simulators' shared secret in `paygate dev`
// and the tests. Every other process refuses it (CheckSecrets).
const DefaultProviderSecret = "sim-secret"

// Process is what a gateway process runs; it decides which secrets the
// process needs.
type Process int

// The gateway's processes.
const (
	// Serve is the merchant API: it seals cards (keyring, fingerprint
	// key), checks provider callbacks (provider secret) and, when
	// PAYGATE_ADMIN_TOKEN is set, serves the admin API.
	Serve Process = iota + 1
	// Worker runs the workflows and activities: it opens cards and sign
	// keys (keyring, fingerprint key).
	Worker
)

// Minimum lengths of the secrets that are passwords rather than keys.
const (
	minProviderSecret = 16
	minAdminToken     = 32
)

// placeholders are values that are someone's example, never a secret.
var placeholders = []string{
	DefaultProviderSecret, "changeme", "change-me", "secret", "password", "admin", "token", "test",
}

// CheckSecrets refuses a configuration in which a secret that process p
// needs is unset, a default or placeholder, or too weak: the keyring and
// fingerprint key always; for Serve the provider secret (the simulated and
// real 3-D Secure and APM connectors sign their callbacks with it, and
// they are always configured), and the admin token when it is set (unset,
// the admin API is off). Every problem is reported, each an *EnvError.
// `paygate dev` does not call it: it keeps local defaults.
func (c Config) CheckSecrets(p Process) error {
	var errs []error
	fail := func(name string, err error) { errs = append(errs, &EnvError{Var: name, Err: err}) }
	if err := c.checkKeyring(); err != nil {
		fail("PAYGATE_KEYRING", err)
	}
	if err := checkKey(c.FingerprintKey, 32); err != nil {
		fail("PAYGATE_FINGERPRINT_KEY", err)
	}
	if p == Serve {
		if err := checkPassword(c.Connectors.ProviderSecret, minProviderSecret); err != nil {
			fail("PAYGATE_PROVIDER_SECRET", err)
		}
		if c.Edge.AdminToken != "" {
			if err := checkPassword(c.Edge.AdminToken, minAdminToken); err != nil {
				fail("PAYGATE_ADMIN_TOKEN", err)
			}
		}
		if err := checkCodecToken(c.Edge.Codec.Token); err != nil {
			fail("PAYGATE_CODEC_TOKEN", err)
		}
	}
	return errors.Join(errs...)
}

func checkPassword(v string, minLen int) error {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return ErrUnset
	case slices.ContainsFunc(placeholders, func(p string) bool { return strings.EqualFold(v, p) }) || sameByte([]byte(v)):
		return ErrDefaultSecret
	case len(v) < minLen:
		return fmt.Errorf("%w: at least %d characters", ErrWeakSecret, minLen)
	}
	return nil
}

// checkKey checks a standard base64 key of at least minLen bytes.
func checkKey(v string, minLen int) error {
	if strings.TrimSpace(v) == "" {
		return ErrUnset
	}
	b, err := base64.StdEncoding.DecodeString(v)
	switch {
	case err != nil:
		// The decoding error could echo key material; do not include it.
		return fmt.Errorf("%w: not standard base64", ErrMalformed)
	case len(b) < minLen:
		return fmt.Errorf("%w: at least %d bytes", ErrWeakSecret, minLen)
	case sameByte(b):
		return ErrDefaultSecret
	}
	return nil
}

// parsedKeyring is the keyring FromEnv parsed, with the spec it came from.
type parsedKeyring struct {
	spec string
	ring *keyring.Keyring
}

// keyring is the configuration's keyring: the one FromEnv parsed while the
// spec is still the one it parsed (CheckSecrets and Open then parse
// nothing), else the spec parsed now (a Config made by hand, or one whose
// Keyring was set after FromEnv, as paygate dev sets its own).
func (c Config) keyring() (*keyring.Keyring, error) {
	if c.parsedKeys.ring != nil && c.parsedKeys.spec == c.Keyring {
		return c.parsedKeys.ring, nil
	}
	return keyring.Parse(c.Keyring)
}

// checkKeyring checks every key of the keyring: it can be read, and no key
// is a placeholder.
func (c Config) checkKeyring() error {
	spec := c.Keyring
	if strings.TrimSpace(spec) == "" {
		return ErrUnset
	}
	if _, err := c.keyring(); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	for _, entry := range strings.Split(spec, ",") {
		id, b64, _ := strings.Cut(strings.TrimSpace(entry), ":")
		if b, _ := base64.StdEncoding.DecodeString(b64); sameByte(b) {
			return fmt.Errorf("key %q %w", id, ErrDefaultSecret)
		}
	}
	return nil
}

// sameByte reports whether b is one byte repeated (all zeros, "aaaa..."):
// a placeholder, not a secret.
func sameByte(b []byte) bool {
	for _, x := range b {
		if x != b[0] {
			return false
		}
	}
	return true
}

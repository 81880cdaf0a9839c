package app

import (
	"testing"

	"github.com/paygate/paygate/internal/domain/keyring"
)

// TestKeyringParsedOnce: FromEnv parses PAYGATE_KEYRING once, and
// CheckSecrets and Open use that parse while the spec is unchanged; a spec
// set after FromEnv (as paygate dev sets its own) is parsed for itself.
func TestKeyringParsedOnce(t *testing.T) {
	envSpec, err := keyring.GenerateSpec("env1")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PAYGATE_KEYRING", envSpec)
	c, _ := FromEnv() // other variables may be missing here; the keyring is what is checked.
	first, err := c.keyring()
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.keyring()
	if err != nil || again != first || c.parsedKeys.ring != first {
		t.Errorf("the keyring was parsed again: %p, %p, FromEnv's %p (%v)", first, again, c.parsedKeys.ring, err)
	}
	if first.ActiveID() != "env1" {
		t.Errorf("active key %q, want env1", first.ActiveID())
	}

	devSpec, err := keyring.GenerateSpec("dev1")
	if err != nil {
		t.Fatal(err)
	}
	c.Keyring = devSpec
	other, err := c.keyring()
	if err != nil || other == first || other.ActiveID() != "dev1" {
		t.Errorf("a spec set after FromEnv gave %v (%v), want its own keyring with dev1 active", other, err)
	}
	if err := (Config{Keyring: "not a keyring"}).checkKeyring(); err == nil {
		t.Error("a malformed keyring passed the secret check")
	}
}

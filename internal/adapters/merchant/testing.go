package merchant

import (
	"time"

	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

// NewTestAccount returns a loaded account with a known signing key, for tests
// of packages that take a *Account without a database or keyring.
// Without a mode it is a test account, as the simulators' test cards are
// what tests pay with.
func NewTestAccount(a models.Account, signKey string) *Account {
	if a.Mode == "" {
		a.Mode = testmode.Test
	}
	return &Account{Account: a, signKey: signKey}
}

// NewTestAccountRotating returns a loaded account whose previous key stays
// valid until until, as during a key rotation's grace period.
func NewTestAccountRotating(a models.Account, signKey, prevKey string, until time.Time) *Account {
	if a.Mode == "" {
		a.Mode = testmode.Test
	}
	return &Account{Account: a, signKey: signKey, prevKey: prevKey, prevTill: until}
}

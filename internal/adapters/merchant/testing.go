package merchant

import (
	"time"

	"github.com/paygate/paygate/models"
)

// NewTestAccount returns a loaded account with a known signing key, for tests
// of packages that take a *Account without a database or keyring.
func NewTestAccount(a models.Account, signKey string) *Account {
	return &Account{Account: a, signKey: signKey}
}

// NewTestAccountRotating returns a loaded account whose previous key stays
// valid until until, as during a key rotation's grace period.
func NewTestAccountRotating(a models.Account, signKey, prevKey string, until time.Time) *Account {
	return &Account{Account: a, signKey: signKey, prevKey: prevKey, prevTill: until}
}

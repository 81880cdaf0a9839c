package merchant

import "github.com/paygate/paygate/models"

// NewTestAccount returns a loaded account with a known signing key, for tests
// of packages that take a *Account without a database or keyring.
func NewTestAccount(a models.Account, signKey string) *Account {
	return &Account{Account: a, signKey: signKey}
}

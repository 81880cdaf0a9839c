package models

import (
	"crypto/rand"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/domain/keyring"
)

// ProtectForTest installs PersonalData with fresh random keys on db, for
// tests that write orders or payouts through a database of their own.
func ProtectForTest(db *gorm.DB) error {
	key, hashKey := make([]byte, keyring.KeySize), make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read never returns an error.
	_, _ = rand.Read(hashKey)
	keys, err := keyring.New("test", map[string][]byte{"test": key})
	if err != nil {
		return err
	}
	return ProtectPersonalData(db, NewPersonalData(keys, hashKey))
}

// Package vault keeps card data sealed in Postgres and hands out tokens, so
// that only a token ever enters Temporal. Only the connector activity opens it.
package vault

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/keyring"
	"github.com/paygate/paygate/models"
)

// ErrUnknownToken is returned for a token the vault does not hold.
var ErrUnknownToken = errors.New("unknown card token")

// Card is card data in the clear. Its formatting methods never print it.
type Card struct {
	Number      string
	ExpiryMonth string
	ExpiryYear  string
	CVV         string
}

// String hides the card so that a stray %v cannot leak it.
func (Card) String() string { return "card(redacted)" }

// GoString hides the card from %#v.
func (Card) GoString() string { return "card(redacted)" }

// LogValue hides the card from slog.
func (Card) LogValue() slog.Value { return slog.StringValue("card(redacted)") }

type sealedCard struct {
	Number      string `json:"n"`
	ExpiryMonth string `json:"m"`
	ExpiryYear  string `json:"y"`
}

// Vault seals cards with the keyring. The HMAC key gives card fingerprints
// and tokens that are stable across key rotations.
type Vault struct {
	db      *gorm.DB
	keys    *keyring.Keyring
	hmacKey []byte
}

// New returns a Vault.
func New(db *gorm.DB, keys *keyring.Keyring, hmacKey []byte) *Vault {
	return &Vault{db: db, keys: keys, hmacKey: hmacKey}
}

// Fingerprint identifies a card number without revealing it.
func (v *Vault) Fingerprint(number string) string { return card.Fingerprint(v.hmacKey, number) }

// TokenFor is the token Tokenize gives the card within scope. The same card
// data in the same scope (one order) always maps to the same token, so a
// repeated request reuses the first request's vault entry.
func (v *Vault) TokenFor(scope string, c Card) string {
	m := hmac.New(sha256.New, v.hmacKey)
	for _, part := range []string{"token", scope, c.Number, c.ExpiryMonth, c.ExpiryYear, c.CVV} {
		m.Write([]byte(part))
		m.Write([]byte{0})
	}
	return "tok_" + hex.EncodeToString(m.Sum(nil))[:40]
}

// Tokenize stores the card sealed and returns its token. It reports whether
// this call created the entry.
func (v *Vault) Tokenize(ctx context.Context, scope string, c Card) (token string, created bool, err error) {
	token = v.TokenFor(scope, c)
	payload, err := json.Marshal(sealedCard{Number: c.Number, ExpiryMonth: c.ExpiryMonth, ExpiryYear: c.ExpiryYear})
	if err != nil {
		return "", false, fmt.Errorf("tokenize: %w", err)
	}
	keyID, sealed, err := v.keys.Seal(payload, []byte(token))
	if err != nil {
		return "", false, fmt.Errorf("tokenize: %w", err)
	}
	row := models.VaultCard{Token: token, KeyID: keyID, CardSealed: sealed, Fingerprint: v.Fingerprint(c.Number)}
	if c.CVV != "" {
		_, row.CVVSealed, err = v.keys.Seal([]byte(c.CVV), []byte(token+"/cvv"))
		if err != nil {
			return "", false, fmt.Errorf("tokenize: %w", err)
		}
	}
	res := v.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
	if res.Error != nil {
		return "", false, fmt.Errorf("tokenize: %w", res.Error)
	}
	return token, res.RowsAffected == 1, nil
}

// Detokenize opens a card. The CVV is empty once it has been dropped.
func (v *Vault) Detokenize(ctx context.Context, token string) (Card, error) {
	var row models.VaultCard
	err := v.db.WithContext(ctx).Where("token = ?", token).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Card{}, ErrUnknownToken
	}
	if err != nil {
		return Card{}, fmt.Errorf("detokenize: %w", err)
	}
	plain, err := v.keys.Open(row.KeyID, row.CardSealed, []byte(token))
	if err != nil {
		return Card{}, fmt.Errorf("detokenize %s: %w", token, err)
	}
	var sc sealedCard
	if err := json.Unmarshal(plain, &sc); err != nil {
		return Card{}, fmt.Errorf("detokenize %s: %w", token, err)
	}
	c := Card{Number: sc.Number, ExpiryMonth: sc.ExpiryMonth, ExpiryYear: sc.ExpiryYear}
	if len(row.CVVSealed) > 0 {
		cvv, err := v.keys.Open(row.KeyID, row.CVVSealed, []byte(token+"/cvv"))
		if err != nil {
			return Card{}, fmt.Errorf("detokenize %s: %w", token, err)
		}
		c.CVV = string(cvv)
	}
	return c, nil
}

// DropCVV forgets the security code once an authorisation is over.
func (v *Vault) DropCVV(ctx context.Context, token string) error {
	now := time.Now()
	err := v.db.WithContext(ctx).Model(&models.VaultCard{}).Where("token = ?", token).
		Updates(map[string]any{"cvv_sealed": nil, "cvv_dropped_at": now}).Error
	if err != nil {
		return fmt.Errorf("drop cvv %s: %w", token, err)
	}
	return nil
}

// Delete removes an entry that no order uses, such as the card of a refused
// duplicate request.
func (v *Vault) Delete(ctx context.Context, token string) error {
	if err := v.db.WithContext(ctx).Where("token = ?", token).Delete(&models.VaultCard{}).Error; err != nil {
		return fmt.Errorf("delete token %s: %w", token, err)
	}
	return nil
}

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

	"github.com/paygate/paygate/internal/domain/card"
	"github.com/paygate/paygate/internal/domain/keyring"
	"github.com/paygate/paygate/internal/domain/status"
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
// in the same scope (one order) always maps to the same token, so a
// repeated request reuses the first request's vault entry.
//
// The security code is not part of it. The token outlives the CVV in clear
// columns and histories, and with the HMAC key, the scope, the PAN and the
// expiry a hash over the code would give it back in a thousand tries.
func (v *Vault) TokenFor(scope string, c Card) string {
	m := hmac.New(sha256.New, v.hmacKey)
	for _, part := range []string{"token", scope, c.Number, c.ExpiryMonth, c.ExpiryYear} {
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
	return v.open(token, row)
}

// QueueDetokenize queues Detokenize's read on p and returns what opens the
// card once p is sent. ok is false, and nothing queued, when p is not over
// the vault's database.
func (v *Vault) QueueDetokenize(ctx context.Context, p *models.Pipeline, token string) (open func() (Card, error), ok bool) {
	if !p.Over(v.db) {
		return nil, false
	}
	var (
		row   models.VaultCard
		found bool
	)
	step := p.Add(ctx, func(tx *gorm.DB) *gorm.DB {
		return tx.Exec("SELECT key_id, card_sealed, cvv_sealed FROM vault_cards WHERE token = ?", token)
	}, func(r *models.PipelineResult) error {
		if r.Rows() == 0 {
			return nil
		}
		found = true
		return r.Scan(0, &row.KeyID, &row.CardSealed, &row.CVVSealed)
	})
	return func() (Card, error) {
		switch {
		case step.Err != nil:
			return Card{}, fmt.Errorf("detokenize: %w", step.Err)
		case !found:
			return Card{}, ErrUnknownToken
		}
		return v.open(token, row)
	}, true
}

// open opens the vault's row of token.
func (v *Vault) open(token string, row models.VaultCard) (Card, error) {
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
	if err := dropCVV(v.db.WithContext(ctx), token).Error; err != nil {
		return fmt.Errorf("drop cvv %s: %w", token, err)
	}
	return nil
}

// QueueDropCVV queues DropCVV's statement on p and returns its end once p
// is sent. ok is false, and nothing queued, when p is not over the vault's
// database.
func (v *Vault) QueueDropCVV(ctx context.Context, p *models.Pipeline, token string) (done func() error, ok bool) {
	if !p.Over(v.db) {
		return nil, false
	}
	step := p.Add(ctx, func(tx *gorm.DB) *gorm.DB { return dropCVV(tx, token) }, nil)
	return func() error {
		if step.Err != nil {
			return fmt.Errorf("drop cvv %s: %w", token, step.Err)
		}
		return nil
	}, true
}

// dropCVV is DropCVV's statement on tx.
func dropCVV(tx *gorm.DB, token string) *gorm.DB {
	return tx.Model(&models.VaultCard{}).Where("token = ?", token).
		Updates(map[string]any{"cvv_sealed": nil, "cvv_dropped_at": time.Now()})
}

// Delete removes an entry that no order uses, such as the card of a refused
// duplicate request.
func (v *Vault) Delete(ctx context.Context, token string) error {
	if err := v.db.WithContext(ctx).Where("token = ?", token).Delete(&models.VaultCard{}).Error; err != nil {
		return fmt.Errorf("delete token %s: %w", token, err)
	}
	return nil
}

// DefaultSweepGrace is how old a sealed CVV must be before the sweep may
// drop it when no order holds its token: the API seals the card a moment
// before the order's workflow records the order (or, on the hosted page,
// attaches the card), and an order the gateway still works on must keep it.
const DefaultSweepGrace = time.Hour

// sweepBatch bounds the rows one sweep statement changes.
const sweepBatch = 500

// strayCVVs selects the tokens whose sealed CVV no order may still need.
// Only an order waiting for its shopper (1000: 3-D Secure challenge, hosted
// page) or held for review (2100) may still authorise the card; every other
// status is past its authorisation. A token no order uses belongs to a
// request that never became an order, once it is older than the cutoff.
func (v *Vault) strayCVVs(ctx context.Context, cutoff time.Time) *gorm.DB {
	waiting := v.db.Model(&models.Order{}).Select("1").
		Where("orders.card_token = vault_cards.token AND orders.payment_status IN ?",
			[]int{int(status.Pending), int(status.HeldForReview)})
	used := v.db.Model(&models.Order{}).Select("1").Where("orders.card_token = vault_cards.token")
	return v.db.WithContext(ctx).Model(&models.VaultCard{}).Select("vault_cards.token").
		Where("vault_cards.cvv_sealed IS NOT NULL").
		Where("NOT EXISTS (?)", waiting).
		Where("vault_cards.created_at < ? OR EXISTS (?)", cutoff, used)
}

// StrayCVVs lists the tokens SweepCVV would drop the CVV of now: sealed CVVs
// of orders past their authorisation, and of tokens older than grace that
// no order uses.
func (v *Vault) StrayCVVs(ctx context.Context, grace time.Duration) ([]string, error) {
	var tokens []string
	if err := v.strayCVVs(ctx, time.Now().Add(-grace)).Order("vault_cards.token").Pluck("vault_cards.token", &tokens).Error; err != nil {
		return nil, fmt.Errorf("find stray cvvs: %w", err)
	}
	return tokens, nil
}

// SweepCVV drops the sealed CVVs that no order may still need: those of
// orders that are final (or past their authorisation), and those of tokens
// no order uses once they are older than grace. The order workflows drop the
// CVV themselves; the sweep is the net under them (a worker that died for
// good, a request refused after its card was sealed). It returns how many
// CVVs it dropped; the card numbers stay, sealed, for the orders' records.
func (v *Vault) SweepCVV(ctx context.Context, grace time.Duration) (int64, error) {
	cutoff := time.Now().Add(-grace)
	var total int64
	for {
		res := v.db.WithContext(ctx).Model(&models.VaultCard{}).
			Where("token IN (?)", v.strayCVVs(ctx, cutoff).Limit(sweepBatch)).
			Updates(map[string]any{"cvv_sealed": nil, "cvv_dropped_at": time.Now()})
		if res.Error != nil {
			return total, fmt.Errorf("sweep cvvs: %w", res.Error)
		}
		total += res.RowsAffected
		if res.RowsAffected < sweepBatch {
			return total, nil
		}
	}
}

// SweepEvery runs SweepCVV at once and then every interval until ctx ends,
// logging what each run dropped. A failed run is logged and tried again at
// the next interval.
func (v *Vault) SweepEvery(ctx context.Context, every, grace time.Duration, logger *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := v.SweepCVV(ctx, grace)
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Error("vault sweep", "error", err)
		case n > 0:
			logger.Info("vault sweep dropped security codes", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

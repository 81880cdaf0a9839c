// Package merchant creates merchant accounts and resolves an account with its
// signing keys for the API. Signing keys are sealed at rest with the keyring.
package merchant

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"sync"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/paygate/paygate/internal/adapters/connectors"
	"github.com/paygate/paygate/internal/domain/capture"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/keyring"
	"github.com/paygate/paygate/internal/domain/payout"
	"github.com/paygate/paygate/internal/domain/recon"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/routing"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

// ErrUnknownAccount is returned for an unknown or inactive merchant account.
var ErrUnknownAccount = errors.New("unknown merchant account")

// ErrInvalidSettings is returned when a new account's settings are not usable.
var ErrInvalidSettings = errors.New("invalid account settings")

// Signing schemes of an account (models.Account.SigningScheme).
const (
	// SigningCompatible accepts encryption_data (docs/design.md §3) and strong
	// signatures for every operation; the default of test accounts. It is
	// the weaker choice: a batch's encryption_data covers only the ids, so
	// one seen capture signature also signs a refund of any amount.
	SigningCompatible = "compatible"
	// SigningStrongForMoney takes only strong signatures for the
	// operations that move money (capture, review, cancel, refund, payout,
	// a charge of a stored card) and either scheme for the rest; the
	// default of live accounts.
	SigningStrongForMoney = "strong-for-money"
	// SigningStrong accepts only strong signatures (the Paygate-Signature
	// header, internal/domain/signing/strong.go).
	SigningStrong = "strong"
)

// DefaultCompatibleRefundDailyLimit bounds, per currency and UTC day, the
// refunds a live account that chose the compatible scheme may request
// with encryption_data, when it names no limit of its own: 1,000.00 in a
// two-decimal currency.
const DefaultCompatibleRefundDailyLimit = 100_000

// compatibleRefundLimit is the daily limit an account of mode and scheme
// keeps: asked for, or the default on a compatible live account.
func compatibleRefundLimit(mode, scheme string, asked int64) int64 {
	if asked == 0 && scheme == SigningCompatible && mode != testmode.Test {
		return DefaultCompatibleRefundDailyLimit
	}
	return asked
}

// DefaultSigningScheme is a new account's scheme when none is asked for.
func DefaultSigningScheme(mode string) string {
	if mode == testmode.Test {
		return SigningCompatible
	}
	return SigningStrongForMoney
}

// validSigningScheme reports whether s names a signing scheme; empty
// means the default.
func validSigningScheme(s string) bool {
	return s == "" || s == SigningCompatible || s == SigningStrongForMoney || s == SigningStrong
}

// Service creates and loads merchant accounts.
type Service struct {
	// TestConnector says which connectors a test account may reach; nil
	// is testmode.Simulated (the simulators).
	TestConnector func(name string) bool
	db            *gorm.DB
	keys          *keyring.Keyring
	ttl           time.Duration
	now           func() time.Time
	mu            sync.Mutex
	cache         map[string]cached
}

type cached struct {
	account *Account
	until   time.Time
}

// NewService returns a Service. Loaded accounts are cached for ttl (0 turns
// the cache off), which bounds how long a settings change takes to apply.
func NewService(db *gorm.DB, keys *keyring.Keyring, ttl time.Duration) *Service {
	return &Service{db: db, keys: keys, ttl: ttl, now: time.Now, cache: map[string]cached{}}
}

// Account is a loaded account with its signing keys opened.
type Account struct {
	models.Account
	signKey  string
	prevKey  string
	prevTill time.Time
}

// SignKey is the account's current signing key, used to sign our answers.
func (a *Account) SignKey() string { return a.signKey }

// VerifySignature reports whether sig signs values with the current key or,
// during a rotation's grace period, with the previous one.
func (a *Account) VerifySignature(now time.Time, sig string, values ...string) bool {
	_, ok := a.ProvenKey(now, sig, values...)
	return ok
}

// ProvenKey returns the key that sig proves: the current key or, during a
// rotation's grace period, the previous one. Answers are signed with that
// key, so a caller holding only the old key never obtains a signature made
// with the new one.
func (a *Account) ProvenKey(now time.Time, sig string, values ...string) (string, bool) {
	if signing.Verify(a.signKey, sig, values...) {
		return a.signKey, true
	}
	if a.prevKey != "" && now.Before(a.prevTill) && signing.Verify(a.prevKey, sig, values...) {
		return a.prevKey, true
	}
	return "", false
}

// StrongOnly reports whether the account accepts only strong signatures.
func (a *Account) StrongOnly() bool { return a.SigningScheme == SigningStrong }

// RequiresStrong reports whether an operation must carry a strong
// signature: every one on a strong account, those that move money on a
// strong-for-money account.
func (a *Account) RequiresStrong(movesMoney bool) bool {
	return a.SigningScheme == SigningStrong || movesMoney && a.SigningScheme == SigningStrongForMoney
}

// ProveWith returns the key for which check holds: the current key or,
// during a rotation's grace period, the previous one (as ProvenKey does
// for encryption_data).
func (a *Account) ProveWith(now time.Time, check func(key string) bool) (string, bool) {
	if check(a.signKey) {
		return a.signKey, true
	}
	if a.prevKey != "" && now.Before(a.prevTill) && check(a.prevKey) {
		return a.prevKey, true
	}
	return "", false
}

// NewAccount holds the settings of an account to create. Empty ids are generated.
type NewAccount struct {
	MerchantID      string
	MerchantName    string
	AccountID       string
	AccountName     string
	CaptureMode     string
	AllowedQueryIPs []string
	Currencies      []string
	AmountLimits    map[string]int64
	SignKey         string
	// SigningScheme is one of the Signing constants; empty means
	// DefaultSigningScheme of the account's mode.
	SigningScheme string
	// CompatibleRefundDailyLimit bounds the refunds signed with
	// encryption_data, per currency and UTC day, in minor units; 0 is the
	// default: DefaultCompatibleRefundDailyLimit on a compatible live
	// account, no limit otherwise.
	CompatibleRefundDailyLimit int64
	// Connector names the acquirer connector of the account's orders;
	// empty means connector.DefaultName. Whether the deployment runs it is
	// for the caller to check (app.Config.CheckConnector): this store only
	// refuses a name that cannot be one.
	Connector string
	// Risk is the account's risk rule settings; zero values mean the
	// defaults (risk.DefaultConfig).
	Risk risk.Config
	// Mode is testmode.Test or testmode.Live; empty means live.
	Mode string
	// Windows are the order deadlines; zero values mean the defaults.
	ReviewWindow        time.Duration
	AuthorisationWindow time.Duration
	RefundWindow        time.Duration
}

// Credentials are what a merchant needs to call the API.
type Credentials struct {
	MerchantID string `json:"merchant_id"`
	AccountID  string `json:"account_id"`
	SignKey    string `json:"sign_key"`
}

// Create stores a new account, and its merchant if that does not exist yet.
func (s *Service) Create(ctx context.Context, in NewAccount) (Credentials, error) {
	if in.CaptureMode == "" {
		in.CaptureMode = models.CaptureAuto
	}
	if in.CaptureMode != models.CaptureAuto && in.CaptureMode != models.CaptureManual {
		return Credentials{}, fmt.Errorf("%w: capture mode %q", ErrInvalidSettings, in.CaptureMode)
	}
	if in.Mode == "" {
		in.Mode = testmode.Live
	}
	if !testmode.Valid(in.Mode) {
		return Credentials{}, fmt.Errorf("%w: mode %q (test or live)", ErrInvalidSettings, in.Mode)
	}
	if in.Mode == testmode.Test && !s.testConnector(cmp.Or(in.Connector, connector.DefaultName)) {
		return Credentials{}, fmt.Errorf("%w: a test account reaches simulated connectors only, not %q", ErrInvalidSettings, in.Connector)
	}
	if len(in.Currencies) == 0 {
		return Credentials{}, fmt.Errorf("%w: no currencies", ErrInvalidSettings)
	}
	if !validSigningScheme(in.SigningScheme) {
		return Credentials{}, fmt.Errorf("%w: signing scheme %q", ErrInvalidSettings, in.SigningScheme)
	}
	if in.SigningScheme == "" {
		in.SigningScheme = DefaultSigningScheme(in.Mode)
	}
	if in.CompatibleRefundDailyLimit < 0 {
		return Credentials{}, fmt.Errorf("%w: a negative refund limit", ErrInvalidSettings)
	}
	in.CompatibleRefundDailyLimit = compatibleRefundLimit(in.Mode, in.SigningScheme, in.CompatibleRefundDailyLimit)
	if in.Connector == "" {
		in.Connector = connector.DefaultName
	}
	if err := connectors.CheckName(in.Connector); err != nil {
		return Credentials{}, fmt.Errorf("%w: %w", ErrInvalidSettings, err)
	}
	if err := in.Risk.Validate(); err != nil {
		return Credentials{}, fmt.Errorf("%w: %w", ErrInvalidSettings, err)
	}
	var err error
	if in.MerchantID == "" {
		if in.MerchantID, err = randomDigits(5); err != nil {
			return Credentials{}, err
		}
	}
	if in.AccountID == "" {
		suffix, err := randomDigits(3)
		if err != nil {
			return Credentials{}, err
		}
		in.AccountID = in.MerchantID + suffix
	}
	if in.SignKey == "" {
		if in.SignKey, err = NewSignKey(); err != nil {
			return Credentials{}, err
		}
	}
	keyID, sealed, err := s.keys.Seal([]byte(in.SignKey), []byte(in.AccountID))
	if err != nil {
		return Credentials{}, fmt.Errorf("seal sign key: %w", err)
	}
	if in.AllowedQueryIPs == nil {
		in.AllowedQueryIPs = []string{}
	}
	if in.AmountLimits == nil {
		in.AmountLimits = map[string]int64{}
	}
	name := in.MerchantName
	if name == "" {
		name = "Merchant " + in.MerchantID
	}
	accountName := in.AccountName
	if accountName == "" {
		accountName = "Account " + in.AccountID
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// Two accounts of a new merchant may be created at once: the second
		// insert of the merchant row does nothing instead of failing.
		m := models.Merchant{ID: in.MerchantID, Name: name}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&m).Error; err != nil {
			return err
		}
		return tx.Create(&models.Account{
			ID:                         in.AccountID,
			MerchantID:                 in.MerchantID,
			Name:                       accountName,
			Active:                     true,
			SignKeyID:                  keyID,
			SignKeySealed:              sealed,
			SigningScheme:              in.SigningScheme,
			CompatibleRefundDailyLimit: in.CompatibleRefundDailyLimit,
			Connector:                  in.Connector,
			Mode:                       in.Mode,
			CaptureMode:                capture.Mode(in.CaptureMode),
			AllowedQueryIPs:            in.AllowedQueryIPs,
			Currencies:                 in.Currencies,
			AmountLimits:               in.AmountLimits,
			Risk:                       in.Risk,

			ReviewWindowSeconds:        int64(in.ReviewWindow / time.Second),
			AuthorisationWindowSeconds: int64(in.AuthorisationWindow / time.Second),
			RefundWindowSeconds:        int64(in.RefundWindow / time.Second),
		}).Error
	})
	if err != nil {
		return Credentials{}, fmt.Errorf("create account %s: %w", in.AccountID, err)
	}
	return Credentials{MerchantID: in.MerchantID, AccountID: in.AccountID, SignKey: in.SignKey}, nil
}

// Load returns an active account of the merchant with its keys opened.
func (s *Service) Load(ctx context.Context, merchantID, accountID string) (*Account, error) {
	cacheKey := merchantID + "/" + accountID
	now := s.now()
	if s.ttl > 0 {
		s.mu.Lock()
		c, ok := s.cache[cacheKey]
		s.mu.Unlock()
		if ok && now.Before(c.until) {
			return c.account, nil
		}
	}
	m, err := models.FindAccount(ctx, s.db, merchantID, accountID)
	if errors.Is(err, models.ErrNotFound) {
		return nil, ErrUnknownAccount
	}
	if err != nil {
		return nil, err
	}
	a := &Account{Account: *m}
	key, err := s.keys.Open(m.SignKeyID, m.SignKeySealed, []byte(m.ID))
	if err != nil {
		return nil, fmt.Errorf("open sign key of %s: %w", m.ID, err)
	}
	a.signKey = string(key)
	if m.PrevSignKeyUntil != nil && len(m.PrevSignKeySealed) > 0 {
		prev, err := s.keys.Open(m.PrevSignKeyID, m.PrevSignKeySealed, []byte(m.ID))
		if err != nil {
			return nil, fmt.Errorf("open previous sign key of %s: %w", m.ID, err)
		}
		a.prevKey, a.prevTill = string(prev), *m.PrevSignKeyUntil
	}
	if s.ttl > 0 {
		s.mu.Lock()
		s.cache[cacheKey] = cached{account: a, until: now.Add(s.ttl)}
		s.mu.Unlock()
	}
	return a, nil
}

// RotateKey gives the account a new signing key; the old one stays valid for grace.
func (s *Service) RotateKey(ctx context.Context, merchantID, accountID string, grace time.Duration) (string, error) {
	m, err := models.FindAccount(ctx, s.db, merchantID, accountID)
	if errors.Is(err, models.ErrNotFound) {
		return "", ErrUnknownAccount
	}
	if err != nil {
		return "", err
	}
	newKey, err := NewSignKey()
	if err != nil {
		return "", err
	}
	keyID, sealed, err := s.keys.Seal([]byte(newKey), []byte(m.ID))
	if err != nil {
		return "", fmt.Errorf("seal sign key: %w", err)
	}
	until := s.now().Add(grace)
	err = s.db.WithContext(ctx).Model(&models.Account{}).Where("id = ?", m.ID).Updates(map[string]any{
		"prev_sign_key_id":     m.SignKeyID,
		"prev_sign_key_sealed": m.SignKeySealed,
		"prev_sign_key_until":  until,
		"sign_key_id":          keyID,
		"sign_key_sealed":      sealed,
	}).Error
	if err != nil {
		return "", fmt.Errorf("rotate key of %s: %w", m.ID, err)
	}
	s.mu.Lock()
	delete(s.cache, merchantID+"/"+accountID)
	s.mu.Unlock()
	return newKey, nil
}

// SetSigningScheme sets how the account's requests prove its key:
// SigningCompatible, SigningStrongForMoney or SigningStrong.
func (s *Service) SetSigningScheme(ctx context.Context, merchantID, accountID, scheme string) error {
	if scheme == "" || !validSigningScheme(scheme) {
		return fmt.Errorf("%w: signing scheme %q", ErrInvalidSettings, scheme)
	}
	m, err := models.FindAccount(ctx, s.db, merchantID, accountID)
	if errors.Is(err, models.ErrNotFound) {
		return ErrUnknownAccount
	}
	if err != nil {
		return err
	}
	// A live account that turns to the compatible scheme gets the default
	// limit on what a seen signature can refund, unless it has one.
	err = s.db.WithContext(ctx).Model(&models.Account{}).Where("id = ?", m.ID).Updates(map[string]any{
		"signing_scheme":                scheme,
		"compatible_refund_daily_limit": compatibleRefundLimit(m.Mode, scheme, m.CompatibleRefundDailyLimit),
	}).Error
	if err != nil {
		return fmt.Errorf("set signing scheme of %s: %w", m.ID, err)
	}
	s.mu.Lock()
	delete(s.cache, merchantID+"/"+accountID)
	s.mu.Unlock()
	return nil
}

// SetRouting sets the account's routing rules, once they route over the
// connectors the deployment runs (known) only; empty rules send every order
// to the account's connector alone.
func (s *Service) SetRouting(ctx context.Context, merchantID, accountID string, rules routing.Rules, known []string) error {
	if err := rules.Validate(known); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidSettings, err)
	}
	m, err := models.FindAccount(ctx, s.db, merchantID, accountID)
	if errors.Is(err, models.ErrNotFound) {
		return ErrUnknownAccount
	}
	if err != nil {
		return err
	}
	if m.Mode == testmode.Test {
		for _, name := range rules.Connectors() {
			if !s.testConnector(name) {
				return fmt.Errorf("%w: a test account reaches simulated connectors only, not %q", ErrInvalidSettings, name)
			}
		}
	}
	m.Routing = rules
	if err := s.db.WithContext(ctx).Model(&models.Account{}).Where("id = ?", m.ID).Select("routing").Updates(m).Error; err != nil {
		return fmt.Errorf("set routing of %s: %w", m.ID, err)
	}
	s.mu.Lock()
	delete(s.cache, merchantID+"/"+accountID)
	s.mu.Unlock()
	return nil
}

// testConnector reports whether a test account may reach the connector.
func (s *Service) testConnector(name string) bool {
	if s.TestConnector != nil {
		return s.TestConnector(name)
	}
	return testmode.Simulated(name)
}

// NewSignKey returns a fresh random signing key: 32 bytes as hex.
func NewSignKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("new sign key: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func randomDigits(n int) (string, error) {
	out := make([]byte, n)
	for i := range out {
		d, err := rand.Int(rand.Reader, big.NewInt(10))
		if err != nil {
			return "", fmt.Errorf("random id: %w", err)
		}
		out[i] = byte('0' + d.Int64())
		if i == 0 && out[i] == '0' {
			out[i] = '1'
		}
	}
	return string(out), nil
}

// SetMode makes an account a test or a live account.
//
// Test money stays test: a test account that has orders, payouts or a
// ledger account cannot become live (its balance would be paid out to a
// real rail), and an account becomes a test account only on a simulated
// connector, as Create requires.
func (s *Service) SetMode(ctx context.Context, merchantID, accountID, mode string) error {
	if !testmode.Valid(mode) {
		return fmt.Errorf("%w: mode %q (test or live)", ErrInvalidSettings, mode)
	}
	// One transaction holding the account's row: no order can be taken
	// between the look at its history and the change.
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var m models.Account
		err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("merchant_id = ? AND id = ?", merchantID, accountID).Take(&m).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return ErrUnknownAccount
		}
		if err != nil {
			return err
		}
		if mode == testmode.Test && !s.testConnector(cmp.Or(m.Connector, connector.DefaultName)) {
			return fmt.Errorf("%w: a test account reaches simulated connectors only, not %q", ErrInvalidSettings, m.Connector)
		}
		if mode != testmode.Test && m.Mode == testmode.Test {
			var history int64
			err := tx.Raw(`SELECT (SELECT count(*) FROM (SELECT 1 FROM orders WHERE merchant_id = ? AND account_id = ? LIMIT 1) o)
				+ (SELECT count(*) FROM (SELECT 1 FROM payouts WHERE merchant_id = ? AND account_id = ? LIMIT 1) p)
				+ (SELECT count(*) FROM (SELECT 1 FROM ledger_accounts WHERE merchant_id = ? AND account_id = ? LIMIT 1) l)`,
				merchantID, accountID, merchantID, accountID, merchantID, accountID).Scan(&history).Error
			if err != nil {
				return err
			}
			if history > 0 {
				return fmt.Errorf("%w: a test account with orders, payouts or a balance stays a test account; make a live account", ErrInvalidSettings)
			}
		}
		// A live account that signs compatibly gets the limit of one.
		return tx.Model(&models.Account{}).Where("id = ?", m.ID).Updates(map[string]any{
			"mode":                          mode,
			"compatible_refund_daily_limit": compatibleRefundLimit(mode, m.SigningScheme, m.CompatibleRefundDailyLimit),
		}).Error
	})
	if err != nil {
		if errors.Is(err, ErrUnknownAccount) || errors.Is(err, ErrInvalidSettings) {
			return err
		}
		return fmt.Errorf("set mode of %s: %w", accountID, err)
	}
	s.mu.Lock()
	delete(s.cache, merchantID+"/"+accountID)
	s.mu.Unlock()
	return nil
}

// SettlementSettings are what an account does with its settled money: what
// it pays for its captures, where it hears of each settlement, and its
// payout schedule (nil: payouts on request only).
type SettlementSettings struct {
	Pricing        recon.Pricing    `json:"pricing"`
	NotifyURL      string           `json:"notify_url,omitempty"`
	PayoutSchedule *payout.Schedule `json:"payout_schedule,omitempty"`
}

// SetSettlement stores an account's settlement settings after checking
// them: a blended fee within range, an absolute http(s) notify URL, and a
// payout schedule whose payout request the API would take.
func (s *Service) SetSettlement(ctx context.Context, merchantID, accountID string, set SettlementSettings) error {
	if b := set.Pricing.Blended; b != nil && (b.Fixed < 0 || b.BasisPoints < 0 || b.BasisPoints > 10000 || b.Fixed > 1_000_000) {
		return fmt.Errorf("%w: a blended fee is 0 to 1,000,000 minor units plus 0 to 10,000 basis points", ErrInvalidSettings)
	}
	if u := set.NotifyURL; u != "" {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.User != nil || len(u) > 1024 {
			return fmt.Errorf("%w: notify_url must be an absolute http or https URL without user info, of 1,024 characters at most", ErrInvalidSettings)
		}
	}
	if set.PayoutSchedule != nil {
		if err := set.PayoutSchedule.Validate(merchantID, accountID, s.now()); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidSettings, err)
		}
	}
	m, err := models.FindAccount(ctx, s.db, merchantID, accountID)
	if errors.Is(err, models.ErrNotFound) {
		return ErrUnknownAccount
	}
	if err != nil {
		return err
	}
	m.Pricing, m.SettlementNotifyURL, m.PayoutSchedule = set.Pricing, set.NotifyURL, set.PayoutSchedule
	if err := s.db.WithContext(ctx).Model(&models.Account{}).Where("id = ?", m.ID).
		Select("pricing", "settlement_notify_url", "payout_schedule").Updates(m).Error; err != nil {
		return fmt.Errorf("set settlement settings of %s: %w", m.ID, err)
	}
	s.mu.Lock()
	delete(s.cache, merchantID+"/"+accountID)
	s.mu.Unlock()
	return nil
}

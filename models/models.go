// Package models holds the Postgres record of merchants, orders and the card
// vault, and the queries on it. Models are never workflow payloads.
package models

import (
	"time"

	"github.com/paygate/paygate/internal/domain/capture"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/payout"
	"github.com/paygate/paygate/internal/domain/recon"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/routing"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/internal/domain/testmode"
)

// Capture modes of an account, as untyped text: merchant.NewAccount and the
// command line take the mode as a string, and the fields take it as a
// capture.Mode. They are capture.Auto and capture.Manual
// (TestVocabularyIsTheDomains).
const (
	CaptureAuto   = "auto"
	CaptureManual = "manual"
)

// Merchant is a company that holds one or more accounts.
type Merchant struct {
	ID        string `gorm:"primaryKey;size:32"`
	Name      string `gorm:"size:200;not null"`
	CreatedAt time.Time
}

// Account is a merchant account: the signing key and the settings that orders
// of that account follow. The signing key is sealed with the keyring.
type Account struct {
	ID         string `gorm:"primaryKey;size:32"`
	MerchantID string `gorm:"size:32;not null;index"`
	Name       string `gorm:"size:200;not null"`
	Active     bool   `gorm:"not null;default:true"`

	SignKeyID     string `gorm:"size:64;not null"`
	SignKeySealed []byte `gorm:"not null"`
	// The previous key stays valid until PrevSignKeyUntil so merchants can
	// rotate without downtime.
	PrevSignKeyID     string `gorm:"size:64"`
	PrevSignKeySealed []byte
	PrevSignKeyUntil  *time.Time
	// SigningScheme is how requests prove the key: "compatible"
	// (encryption_data, or a strong signature), "strong-for-money" (only
	// the Paygate-Signature header where money moves) or "strong" (only
	// the header; internal/domain/signing/strong.go).
	SigningScheme string `gorm:"size:16;not null;default:compatible"`
	// CompatibleRefundDailyLimit bounds, per currency and day (UTC), the
	// refunds requested with encryption_data, in minor units; 0 is no limit.
	CompatibleRefundDailyLimit int64 `gorm:"not null;default:0"`

	// Connector names the acquirer connector the account's new orders go
	// to (internal/adapters/connectors); each order keeps the one it was
	// made with. Accounts made before accounts chose get the simulated
	// acquirer, the only connector then.
	Connector string `gorm:"size:32;not null;default:sim-acquirer"`
	// Mode is "test" or "live" (internal/domain/testmode): a test account's
	// payments with test data never trip velocity, it reaches simulators
	// only, and a live account refuses the simulators' test cards.
	Mode string `gorm:"size:8;not null;default:live"`

	CaptureMode     capture.Mode     `gorm:"size:16;not null;default:auto"`
	AllowedQueryIPs []string         `gorm:"serializer:json;type:jsonb;not null"`
	Currencies      []string         `gorm:"serializer:json;type:jsonb;not null"`
	AmountLimits    map[string]int64 `gorm:"serializer:json;type:jsonb;not null"`
	// Risk holds the account's risk rule settings; zero values (and a NULL
	// column) mean the defaults.
	Risk risk.Config `gorm:"serializer:json;type:jsonb"`
	// Routing holds the account's routing rules over several connectors
	// (internal/domain/routing); empty rules (and a NULL column) send every
	// order to Connector alone.
	Routing routing.Rules `gorm:"serializer:json;type:jsonb"`
	// Pricing is what the account pays for its captures when they settle
	// (internal/domain/recon): NULL passes the acquirer's fee through.
	Pricing recon.Pricing `gorm:"serializer:json;type:jsonb"`
	// SettlementNotifyURL receives a notification (notify_type settlement)
	// each time an acquirer's settlement of the account's captures is
	// posted; empty sends none.
	SettlementNotifyURL string `gorm:"size:1024;not null;default:''"`
	// PayoutSchedule pays the account's available balance out on its own
	// (internal/domain/payout.Schedule); NULL pays out only on request.
	PayoutSchedule *payout.Schedule `gorm:"serializer:json;type:jsonb"`

	// Order deadlines in seconds; 0 means the gateway's default (review 3
	// days, authorisation 7 days, refunds 180 days).
	ReviewWindowSeconds        int64 `gorm:"not null;default:0"`
	AuthorisationWindowSeconds int64 `gorm:"not null;default:0"`
	RefundWindowSeconds        int64 `gorm:"not null;default:0"`

	CreatedAt time.Time
	UpdatedAt time.Time
}

// RiskSettings are the account's risk settings for an order in currency.
func (a *Account) RiskSettings(currency string) risk.Settings {
	return risk.Settings{Config: a.Risk, AmountLimit: a.AmountLimits[currency], Test: a.Mode == testmode.Test}
}

// AllowsCurrency reports whether the account takes payments in the currency.
func (a *Account) AllowsCurrency(code string) bool {
	for _, c := range a.Currencies {
		if c == code {
			return true
		}
	}
	return false
}

// AllowsQueryFrom reports whether ip is registered for queries.
func (a *Account) AllowsQueryFrom(ip string) bool {
	for _, allowed := range a.AllowedQueryIPs {
		if allowed == ip {
			return true
		}
	}
	return false
}

// RiskReason is one rule's verdict, as the XML risk_reasons carries it.
type RiskReason struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// Order is the record of one payment order. The workflow writes it; the API
// only reads it.
type Order struct {
	TransactionID string `gorm:"primaryKey;size:19;index:idx_orders_merchant_created,priority:3,sort:desc;index:idx_orders_account_updated,priority:3"`
	WorkflowID    string `gorm:"size:300;not null;uniqueIndex"`
	// The console lists a merchant's orders newest first
	// (idx_orders_merchant_created).
	MerchantID string `gorm:"size:32;not null;index;index:idx_orders_merchant_created,priority:1"`
	// A query without a selection reads the account's orders in the order
	// they changed (idx_orders_account_updated).
	AccountID string `gorm:"size:32;not null;uniqueIndex:idx_orders_account_order_no,priority:1;index:idx_orders_account_updated,priority:1;index:idx_orders_card_fingerprint,priority:2;index:idx_orders_shopper_email_hash,priority:2;index:idx_orders_shopper_ip_hash,priority:2;index:idx_orders_device_fingerprint_hash,priority:2"`
	OrderNo   string `gorm:"size:64;not null;uniqueIndex:idx_orders_account_order_no,priority:2"`

	Currency string `gorm:"size:3;not null"`
	Amount   int64  `gorm:"not null"`

	PaymentStatus status.Payment `gorm:"not null;index"`
	OrderStatus   status.Order   `gorm:"not null"`
	ResultCode    string         `gorm:"size:8;not null"`
	ResultMessage string         `gorm:"size:300;not null"`

	CaptureMode    capture.Mode `gorm:"size:16;not null"`
	CapturedAmount int64        `gorm:"not null;default:0"`
	RefundedAmount int64        `gorm:"not null;default:0"`

	CardMasked      string `gorm:"size:19"`
	CardBrand       string `gorm:"size:16"`
	CardToken       string `gorm:"size:64"`
	CardFingerprint string `gorm:"size:64;index:idx_orders_card_fingerprint,priority:1"`
	// TokenID is the stored card (StoredCard) the order made or charged.
	TokenID string `gorm:"size:64;not null;default:''"`
	// RecurringID names the subscription the order belongs to: its first
	// payment (cycle 1) or one of its charges.
	RecurringID    string `gorm:"size:32;not null;default:''"`
	RecurringCycle int    `gorm:"not null;default:0"`

	// ShopperEmailHash and ShopperIPHash are keyed hashes
	// (PersonalData.Hash) of the shopper's email and address, what velocity
	// checks count and the console searches by.
	ShopperEmailHash string `gorm:"size:64;not null;default:'';index:idx_orders_shopper_email_hash,priority:1"`
	ShopperIPHash    string `gorm:"size:64;not null;default:'';index:idx_orders_shopper_ip_hash,priority:1"`
	// DeviceFingerprintHash is the keyed hash of the order's
	// device_fingerprint, for the device velocity rule.
	DeviceFingerprintHash string `gorm:"size:64;not null;default:'';index:idx_orders_device_fingerprint_hash,priority:1"`
	// LegacyShopperEmail and LegacyShopperIP held the email and address in
	// clear before they were sealed; new rows leave them empty, and
	// SealLegacyOrders empties the old ones.
	LegacyShopperEmail string `gorm:"column:shopper_email;size:200"`
	LegacyShopperIP    string `gorm:"column:shopper_ip;size:64"`

	// RequestFingerprint identifies the request's content so a repeated
	// order_no can be told apart from a changed one.
	RequestFingerprint string `gorm:"size:64;not null"`

	RiskAction  string       `gorm:"size:16"`
	RiskScore   int          `gorm:"not null;default:0"`
	RiskReasons []RiskReason `gorm:"serializer:json;type:jsonb"`
	// RiskRule is the rule that decided the risk check's verdict ("" when
	// none did), nil until the check wrote its verdict (KeepRiskVerdict).
	RiskRule *string `gorm:"size:64"`

	Connector     string `gorm:"size:32"`
	ConnectorRef  string `gorm:"size:64"`
	AuthCode      string `gorm:"size:16"`
	Is3DS         bool   `gorm:"column:is3ds;not null;default:false"`
	ThreeDSResult string `gorm:"column:threeds_result;size:64"`

	// Details is the whole order as the merchant sent it. Only its part
	// that is not personal is stored in clear (StoredDetails); the personal
	// part (order.Personal) is sealed with the keyring in PersonalSealed
	// under PersonalKeyID. PersonalData does both on every write and read.
	Details        order.Details `gorm:"-"`
	StoredDetails  order.Details `gorm:"column:details;serializer:json;type:jsonb;not null"`
	PersonalKeyID  string        `gorm:"size:64;not null;default:''"`
	PersonalSealed []byte
	// PersonalErasedAt is when the shopper's personal data was erased, on
	// request or at the end of the retention period.
	PersonalErasedAt *time.Time

	// StateVersion orders the workflow's writes: a write carrying an older
	// version (from a retried workflow task) never overwrites a newer one.
	StateVersion int64 `gorm:"not null;default:0"`
	// WrittenTask is the workflow task that made the last write (its start,
	// Unix nanoseconds), compared before StateVersion: a task run again
	// after a worker died writes anew, and its writes stand whatever the
	// first run's versions (migration 0030).
	WrittenTask int64 `gorm:"not null;default:0"`

	// ReopenInput is what the order's next run starts from once its
	// workflow closed when idle, ReopenRun the run that took it, and
	// ReopenSavedAt when it was saved (models/reopen.go reads and writes
	// them). gorm neither reads nor writes them: an order's row is read
	// often, and its next run's input only by that run.
	ReopenInput   []byte     `gorm:"type:jsonb;->:false;<-:false"`
	ReopenRun     *string    `gorm:"size:64;->:false;<-:false"`
	ReopenSavedAt *time.Time `gorm:"->:false;<-:false"`

	// The velocity check's indexes are the value, the account and
	// created_at, the window (migration 0027).
	CreatedAt time.Time `gorm:"index;index:idx_orders_merchant_created,priority:2,sort:desc;index:idx_orders_card_fingerprint,priority:3;index:idx_orders_shopper_email_hash,priority:3;index:idx_orders_shopper_ip_hash,priority:3;index:idx_orders_device_fingerprint_hash,priority:3"`
	UpdatedAt time.Time `gorm:"index:idx_orders_account_updated,priority:2"`
}

// VaultCard is one tokenised card. Everything that is card data is sealed with
// the keyring; the CVV is dropped once the authorisation is over.
type VaultCard struct {
	Token        string `gorm:"primaryKey;size:64"`
	KeyID        string `gorm:"size:64;not null"`
	CardSealed   []byte `gorm:"not null"`
	CVVSealed    []byte
	Fingerprint  string `gorm:"size:64;not null;index"`
	CreatedAt    time.Time
	CVVDroppedAt *time.Time
}

// BlockedCard is an entry of the blocked-card list, by card fingerprint.
type BlockedCard struct {
	Fingerprint string `gorm:"primaryKey;size:64"`
	Reason      string `gorm:"size:200;not null"`
	CreatedAt   time.Time
}

// All lists the gorm models. Their tables come from the versioned
// migrations (models/migrations), whose test checks that gorm finds every
// column and index of these models there and nothing to change.
func All() []any {
	return []any{&Merchant{}, &Account{}, &Order{}, &Refund{}, &Notification{}, &NotificationAttempt{}, &VaultCard{}, &BlockedCard{},
		&LedgerAccount{}, &JournalEntry{}, &JournalLine{}, &LedgerReservation{},
		&Payout{}, &PayoutRerun{}, &PayoutRerunItem{}, &StoredCard{}, &Subscription{},
		&ConsoleUser{}, &ConsoleSession{}, &ConsoleLoginFailure{}, &ConsoleAction{}, &OrderStatusChange{},
		&CompatibleRefundUsage{}, &SignatureUse{}, &ConsoleLoginLimit{}, &PersonalDataErasure{}, &PaymentAttempt{}, &ConnectorHealth{},
		&ReconRun{}, &ReconItem{}, &ReconAction{}, &SubscriptionChange{}, &Dispute{}, &DisputeEvidence{}, &ChargeSend{}}
}

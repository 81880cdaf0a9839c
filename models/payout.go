package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Payout is one payout (POST /v1/payout), keyed by its workflow id
// payout/{merchant_id}/{request_id}: a repeated request_id finds this row,
// and a finance re-run is a new run of the same workflow over the same row.
// The payout workflow writes it (activities); the API only reads it.
//
// Amounts are minor units: payment and beneficiary-receives in the payment
// currency, source, fee and payer-pays in the source currency (the deposit
// account's).
type Payout struct {
	ID               string `gorm:"primaryKey;size:200"`
	MerchantID       string `gorm:"size:32;not null;index:idx_payouts_merchant_updated,priority:1"`
	AccountID        string `gorm:"size:32;not null"`
	RequestID        string `gorm:"size:36;not null"`
	TransactionID    string `gorm:"size:19;not null;uniqueIndex"`
	ShortReferenceID string `gorm:"size:15;not null;uniqueIndex"`

	Status        string `gorm:"size:16;not null;index"`
	FailureType   string `gorm:"size:32;not null;default:'';index"`
	FailureReason string `gorm:"size:500;not null;default:''"`

	PaymentCurrency           string `gorm:"size:3;not null"`
	PaymentAmount             int64  `gorm:"not null"`
	SourceCurrency            string `gorm:"size:3;not null"`
	SourceAmount              int64  `gorm:"not null;default:0"`
	FeeAmount                 int64  `gorm:"not null;default:0"`
	PayerPaysAmount           int64  `gorm:"not null;default:0"`
	BeneficiaryReceivesAmount int64  `gorm:"not null;default:0"`
	TransferAmount            int64  `gorm:"not null;default:0"`

	// Quote is the recorded payout.Quote (JSON); empty until priced.
	Quote []byte `gorm:"type:jsonb"`
	// Request is the validated, canonical payout.Instruction (JSON): what a
	// repeated request_id is compared by and what a re-run starts from. It
	// names the beneficiary, so it is sealed at rest (RequestSealed under
	// RequestKeyID) by PersonalData; LegacyRequest is where rows written
	// before that held it in clear, until SealLegacyPayouts seals them.
	Request              []byte `gorm:"-"`
	RequestKeyID         string `gorm:"size:64;not null;default:''"`
	RequestSealed        []byte
	LegacyRequest        []byte `gorm:"column:request;type:jsonb"`
	BeneficiaryEmailHash string `gorm:"size:64;not null;default:'';index"`
	PersonalErasedAt     *time.Time

	NotifyURL      string `gorm:"size:1024;not null;default:''"`
	Run            int    `gorm:"not null;default:1"`
	RailTransferID string `gorm:"size:64;not null;default:''"`
	// Mode is the account's mode when the payout was asked for ("test" or
	// "live"): a test payout, re-runs included, goes to the simulated rail.
	Mode string `gorm:"size:8;not null;default:live"`

	CreatedAt time.Time `gorm:"not null"`
	UpdatedAt time.Time `gorm:"not null;index;index:idx_payouts_merchant_updated,priority:2"`
}

// ErrPayoutNotFound: no payout has this id.
var ErrPayoutNotFound = errors.New("payout not found")

// shortReferenceDraws bounds how often InsertPayout draws a payout's short
// reference again when the one drawn is another payout's.
const shortReferenceDraws = 5

// InsertPayout records a new payout; a row already under its id (a retry, a
// re-run) is left as it is, and p.ShortReferenceID becomes that row's. A
// short reference another payout holds (two payouts of one day draw the
// same six characters with a chance of about n²/4.4e9 for n payouts: one
// day in fifty at 10,000 a day) is drawn again with redraw, nil for none,
// up to shortReferenceDraws times; p then carries the reference recorded.
func InsertPayout(ctx context.Context, db *gorm.DB, p *Payout, redraw func() (string, error)) error {
	for draws := 1; ; draws++ {
		res := db.WithContext(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "id"}}, DoNothing: true}).Create(p)
		err := res.Error
		switch {
		case err == nil && res.RowsAffected == 0:
			var ref string
			if err := db.WithContext(ctx).Model(&Payout{}).Where("id = ?", p.ID).Select("short_reference_id").Take(&ref).Error; err != nil {
				return fmt.Errorf("read payout %s: %w", p.ID, err)
			}
			p.ShortReferenceID = ref
			return nil
		case err == nil:
			return nil
		case !shortReferenceTaken(err) || redraw == nil || draws == shortReferenceDraws:
			return fmt.Errorf("insert payout %s: %w", p.ID, err)
		}
		if p.ShortReferenceID, err = redraw(); err != nil {
			return fmt.Errorf("insert payout %s: %w", p.ID, err)
		}
	}
}

// shortReferenceTaken reports whether err is Postgres refusing a payout for
// a short reference another payout holds.
func shortReferenceTaken(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "idx_payouts_short_reference_id"
}

// FindPayout loads a payout by its workflow id.
func FindPayout(ctx context.Context, db *gorm.DB, id string) (*Payout, error) {
	var p Payout
	err := db.WithContext(ctx).Where("id = ?", id).Take(&p).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrPayoutNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("find payout %s: %w", id, err)
	}
	return &p, nil
}

// PayoutUpdate is a change the payout workflow records. Zero fields other
// than Status, FailureType and FailureReason are left as they are.
type PayoutUpdate struct {
	Status        string
	FailureType   string
	FailureReason string
	Run           int

	SourceAmount              int64
	FeeAmount                 int64
	PayerPaysAmount           int64
	BeneficiaryReceivesAmount int64
	TransferAmount            int64
	Quote                     []byte
	RailTransferID            string
}

// UpdatePayout records a status change (and whatever the step learnt) of
// payout id.
func UpdatePayout(ctx context.Context, db *gorm.DB, id string, u PayoutUpdate, at time.Time) error {
	cols := map[string]any{
		"status": u.Status, "failure_type": u.FailureType, "failure_reason": u.FailureReason, "updated_at": at,
	}
	if u.Run > 0 {
		cols["run"] = u.Run
	}
	if u.Quote != nil {
		cols["quote"] = u.Quote
		cols["source_amount"] = u.SourceAmount
		cols["fee_amount"] = u.FeeAmount
		cols["payer_pays_amount"] = u.PayerPaysAmount
		cols["beneficiary_receives_amount"] = u.BeneficiaryReceivesAmount
		cols["transfer_amount"] = u.TransferAmount
	}
	if u.RailTransferID != "" {
		cols["rail_transfer_id"] = u.RailTransferID
	}
	res := db.WithContext(ctx).Model(&Payout{}).Where("id = ?", id).Updates(cols)
	if res.Error != nil {
		return fmt.Errorf("update payout %s: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("%w: %s", ErrPayoutNotFound, id)
	}
	return nil
}

// PayoutMode is the mode recorded on a payout ("test" or "live"), or "" when
// there is no such payout.
func PayoutMode(ctx context.Context, db *gorm.DB, id string) (string, error) {
	var recorded []string
	if err := db.WithContext(ctx).Model(&Payout{}).Where("id = ?", id).Pluck("mode", &recorded).Error; err != nil {
		return "", fmt.Errorf("payout %s: read its mode: %w", id, err)
	}
	if len(recorded) != 1 {
		return "", nil
	}
	return recorded[0], nil
}

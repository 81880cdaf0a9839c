package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/paygate/paygate/internal/domain/dispute"
)

// DisputeReasonSize is the characters a dispute's reason keeps.
const DisputeReasonSize = 64

// Dispute is a cardholder's dispute of a payment as the gateway records it
// (internal/domain/dispute), one per connector and the connector's dispute
// id. Its workflow writes it; the merchant API and the console read it.
type Dispute struct {
	// ID is the connector and its dispute id: "<connector>:<dispute id>".
	ID            string `gorm:"primaryKey;size:120"`
	Connector     string `gorm:"size:32;not null"`
	ConnectorRef  string `gorm:"size:80;not null"`
	WorkflowID    string `gorm:"size:200;not null"`
	TransactionID string `gorm:"size:19;not null;index"`
	MerchantID    string `gorm:"size:32;not null"`
	AccountID     string `gorm:"size:32;not null;index:idx_disputes_account_created,priority:1"`
	OrderNo       string `gorm:"size:64;not null"`
	Currency      string `gorm:"size:3;not null"`
	Amount        int64  `gorm:"not null"`
	Fee           int64  `gorm:"not null;default:0"`
	Reason        string `gorm:"size:64;not null;default:''"` // DisputeReasonSize characters
	Stage         string `gorm:"size:20;not null"`
	Status        string `gorm:"size:20;not null;index"`
	// EvidenceDue is the deadline of the merchant's answer, while one is
	// due.
	EvidenceDue *time.Time
	// Held is set once the ledger holds the dispute's money.
	Held        bool `gorm:"not null;default:false"`
	SubmittedAt *time.Time
	CreatedAt   time.Time `gorm:"not null;index:idx_disputes_account_created,priority:2"`
	UpdatedAt   time.Time `gorm:"not null"`
}

// DisputeEvidence is one piece of a merchant's evidence for a dispute: a
// text or a file, sealed at rest with the personal-data keys (its content
// is never stored in clear, nor sent through a workflow's history).
type DisputeEvidence struct {
	ID          string `gorm:"primaryKey;size:40"`
	DisputeID   string `gorm:"size:120;not null;index"`
	Kind        string `gorm:"size:8;not null"` // "text" or "file"
	Name        string `gorm:"size:64;not null"`
	ContentType string `gorm:"size:64;not null"`
	Size        int    `gorm:"not null"`
	// Content is the evidence in clear, in memory only.
	Content   []byte `gorm:"-"`
	KeyID     string `gorm:"size:64;not null"`
	Sealed    []byte `gorm:"not null"`
	CreatedAt time.Time
}

// disputeEvidenceAAD binds sealed evidence to its row.
func disputeEvidenceAAD(id string) string { return "dispute-evidence/" + id }

func (e *DisputeEvidence) sealPersonal(p *PersonalData) error {
	id, sealed, err := p.seal(e.Content, disputeEvidenceAAD(e.ID))
	if err != nil {
		return err
	}
	e.KeyID, e.Sealed = id, sealed
	return nil
}

func (e *DisputeEvidence) openPersonal(p *PersonalData) error {
	if e.KeyID == "" || len(e.Sealed) == 0 {
		return nil
	}
	return p.open(e.KeyID, e.Sealed, disputeEvidenceAAD(e.ID), &e.Content)
}

// BeforeCreate refuses evidence that was not sealed.
func (e *DisputeEvidence) BeforeCreate(*gorm.DB) error {
	if e.KeyID == "" {
		return fmt.Errorf("dispute evidence %s: %w", e.ID, ErrNotProtected)
	}
	return nil
}

// ErrDisputeNotFound: no dispute of the account has that id.
var ErrDisputeNotFound = errors.New("dispute not found")

// SaveDispute writes a dispute as its workflow knows it: the first write
// creates it, later ones change what moves.
func SaveDispute(ctx context.Context, db *gorm.DB, d *Dispute) error {
	err := db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "id"}},
		DoUpdates: clause.AssignmentColumns([]string{"stage", "status", "evidence_due", "held", "submitted_at", "fee",
			"reason", "updated_at"}),
	}).Create(d).Error
	if err != nil {
		return fmt.Errorf("save dispute %s: %w", d.ID, err)
	}
	return nil
}

// FindDispute returns the account's dispute id.
func FindDispute(ctx context.Context, db *gorm.DB, merchantID, accountID, id string) (*Dispute, error) {
	var d Dispute
	err := db.WithContext(ctx).Where("id = ? AND merchant_id = ? AND account_id = ?", id, merchantID, accountID).Take(&d).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrDisputeNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find dispute %s: %w", id, err)
	}
	return &d, nil
}

// RefundBlockingDispute returns a dispute of the payment transactionID that
// refuses its refunds (dispute.BlocksRefund), or nil when none does.
func RefundBlockingDispute(ctx context.Context, db *gorm.DB, transactionID string) (*Dispute, error) {
	var open []Dispute
	err := db.WithContext(ctx).Where("transaction_id = ? AND status NOT IN ?", transactionID,
		[]string{string(dispute.Won), string(dispute.Closed)}).Order("created_at, id").Find(&open).Error
	if err != nil {
		return nil, fmt.Errorf("disputes of %s: %w", transactionID, err)
	}
	for i := range open {
		if dispute.BlocksRefund(dispute.Stage(open[i].Stage), dispute.Status(open[i].Status)) {
			return &open[i], nil
		}
	}
	return nil, nil
}

// ListDisputes returns the account's disputes, newest first, at most limit.
func ListDisputes(ctx context.Context, db *gorm.DB, merchantID, accountID string, limit int) ([]Dispute, error) {
	var out []Dispute
	err := db.WithContext(ctx).Where("merchant_id = ? AND account_id = ?", merchantID, accountID).
		Order("created_at DESC, id").Limit(limit).Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("list disputes of %s: %w", accountID, err)
	}
	return out, nil
}

// AddDisputeEvidence stores a piece of evidence, sealed, and reports
// whether it is new; the same piece again (its id is made of its content)
// is stored once, dated anew, so that a file sent again is again its
// kind's newest.
func AddDisputeEvidence(ctx context.Context, db *gorm.DB, e *DisputeEvidence) (bool, error) {
	again := db.WithContext(ctx).Model(&DisputeEvidence{}).Where("id = ? AND dispute_id = ?", e.ID, e.DisputeID).
		Update("created_at", e.CreatedAt)
	if again.Error != nil {
		return false, fmt.Errorf("add evidence to %s: %w", e.DisputeID, again.Error)
	}
	if again.RowsAffected == 1 {
		return false, nil
	}
	res := db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(e)
	if res.Error != nil {
		return false, fmt.Errorf("add evidence to %s: %w", e.DisputeID, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// RemoveDisputeEvidence drops pieces of a dispute's evidence by id: those
// an answer the acquirer refused brought, which no later answer may send.
func RemoveDisputeEvidence(ctx context.Context, db *gorm.DB, disputeID string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := db.WithContext(ctx).Where("dispute_id = ? AND id IN ?", disputeID, ids).Delete(&DisputeEvidence{}).Error; err != nil {
		return fmt.Errorf("remove evidence of %s: %w", disputeID, err)
	}
	return nil
}

// DisputeEvidenceOf returns a dispute's evidence, opened, oldest first.
func DisputeEvidenceOf(ctx context.Context, db *gorm.DB, disputeID string) ([]DisputeEvidence, error) {
	var out []DisputeEvidence
	if err := db.WithContext(ctx).Where("dispute_id = ?", disputeID).Order("created_at, id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("evidence of %s: %w", disputeID, err)
	}
	return out, nil
}

// ConsoleDisputes lists disputes for the console: those waiting for the
// merchant's evidence first, nearest deadline first, then the others
// newest first; merchantID "" lists every merchant's, mode "" the
// disputes of accounts of either mode.
func ConsoleDisputes(ctx context.Context, db *gorm.DB, merchantID, mode string, limit int) ([]Dispute, error) {
	q := db.WithContext(ctx).Model(&Dispute{})
	if merchantID != "" {
		q = q.Where("merchant_id = ?", merchantID)
	}
	if mode != "" {
		q = q.Where(ofMode, map[string]any{"test": isTest(mode)})
	}
	var out []Dispute
	err := q.Order("CASE WHEN status = 'needs_response' THEN 0 ELSE 1 END, evidence_due, created_at DESC, id").
		Limit(limit).Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("console disputes: %w", err)
	}
	return out, nil
}

// DisputeRate is how many of a merchant's payments since a time were
// disputed.
type DisputeRate struct {
	MerchantID string
	Payments   int64
	Disputes   int64
}

// DisputeRates counts, per merchant, the paid orders of its accounts of
// one mode made since since and their disputes raised since then.
func DisputeRates(ctx context.Context, db *gorm.DB, since time.Time, mode string) ([]DisputeRate, error) {
	var out []DisputeRate
	err := db.WithContext(ctx).Raw(`
SELECT m.merchant_id,
       coalesce(p.payments, 0) AS payments,
       coalesce(d.disputes, 0) AS disputes
FROM (SELECT merchant_id FROM orders WHERE created_at >= @since AND `+ofMode+`
      UNION SELECT merchant_id FROM disputes WHERE created_at >= @since AND `+ofMode+`) m
LEFT JOIN (SELECT merchant_id, count(*) AS payments FROM orders
           WHERE created_at >= @since AND payment_status IN (3000, 4000, 4100) AND `+ofMode+`
           GROUP BY merchant_id) p USING (merchant_id)
LEFT JOIN (SELECT merchant_id, count(*) AS disputes FROM disputes
           WHERE created_at >= @since AND `+ofMode+` GROUP BY merchant_id) d USING (merchant_id)
ORDER BY 1`, map[string]any{"since": since, "test": isTest(mode)}).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("dispute rates: %w", err)
	}
	return out, nil
}

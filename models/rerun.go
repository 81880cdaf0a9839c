package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// PayoutSelection picks payouts for a finance re-run: by ids (workflow ids
// payout/{merchant_id}/{request_id}, or bare request ids) or by a filter on
// failed payouts (updated_at in [From, To), failure type, merchant).
type PayoutSelection struct {
	IDs         []string  `json:"ids,omitempty"`
	From        time.Time `json:"from,omitzero"`
	To          time.Time `json:"to,omitzero"`
	FailureType string    `json:"failure_type,omitempty"`
	MerchantID  string    `json:"merchant_id,omitempty"`
}

// PayoutRerun is one re-run batch as finance asked it: who, when, which
// payouts, dry-run or not, and the totals of what happened. A batch killed
// half-way stays "running" with the items it reached.
type PayoutRerun struct {
	ID          int64           `gorm:"primaryKey" json:"id"`
	RequestedBy string          `gorm:"size:100;not null" json:"requested_by"`
	Source      string          `gorm:"size:8;not null" json:"source"`
	Selection   PayoutSelection `gorm:"serializer:json;type:jsonb;not null" json:"selection"`
	DryRun      bool            `gorm:"not null" json:"dry_run"`
	Status      string          `gorm:"size:16;not null" json:"status"`
	Total       int             `gorm:"not null;default:0" json:"total"`
	Planned     int             `gorm:"not null;default:0" json:"planned"`
	Started     int             `gorm:"not null;default:0" json:"started"`
	Skipped     int             `gorm:"not null;default:0" json:"skipped"`
	Errors      int             `gorm:"not null;default:0" json:"errors"`
	CreatedAt   time.Time       `gorm:"not null;index" json:"created_at"`
	FinishedAt  *time.Time      `json:"finished_at,omitempty"`
}

// Re-run batch statuses.
const (
	RerunRunning  = "running"
	RerunFinished = "finished"
)

// PayoutRerunItem is one payout of a re-run batch and what happened to it.
// A re-run writes the row "starting" before it asks Temporal and "started"
// after, so a resumed batch knows which starts may have happened.
type PayoutRerunItem struct {
	RerunID         int64     `gorm:"primaryKey;autoIncrement:false" json:"-"`
	PayoutID        string    `gorm:"primaryKey;size:200" json:"payout_id"`
	MerchantID      string    `gorm:"size:32;not null;default:''" json:"merchant_id"`
	PaymentCurrency string    `gorm:"size:3;not null;default:''" json:"payment_currency"`
	PaymentAmount   int64     `gorm:"not null;default:0" json:"payment_amount"`
	FailureType     string    `gorm:"size:32;not null;default:''" json:"failure_type"`
	Outcome         string    `gorm:"size:16;not null" json:"outcome"`
	Reason          string    `gorm:"size:500;not null;default:''" json:"reason,omitempty"`
	Run             int       `gorm:"not null;default:0" json:"run,omitempty"`
	RunID           string    `gorm:"size:64;not null;default:''" json:"run_id,omitempty"`
	UpdatedAt       time.Time `gorm:"not null" json:"updated_at"`
}

// Re-run item outcomes.
const (
	ItemPlanned  = "planned"  // dry-run: would be re-run
	ItemSkipped  = "skipped"  // not re-run; Reason says why
	ItemStarting = "starting" // start asked, answer not yet recorded
	ItemStarted  = "started"  // the new run is started
	ItemError    = "error"    // the start failed; Reason says why
)

// failedStatus is payout.StatusFailed; models does not import the payout
// domain package for one constant.
const failedStatus = "FAILED"

// FindPayoutsByIDs loads the payouts named by workflow id or by request id.
func FindPayoutsByIDs(ctx context.Context, db *gorm.DB, ids []string) ([]Payout, error) {
	var ps []Payout
	if len(ids) == 0 {
		return ps, nil
	}
	err := db.WithContext(ctx).Where("id IN ? OR request_id IN ?", ids, ids).Order("id").Find(&ps).Error
	if err != nil {
		return nil, fmt.Errorf("find payouts by id: %w", err)
	}
	return ps, nil
}

// FindFailedPayouts loads at most limit failed payouts the filter of sel
// picks (sel.IDs is ignored), oldest update first.
func FindFailedPayouts(ctx context.Context, db *gorm.DB, sel PayoutSelection, limit int) ([]Payout, error) {
	q := db.WithContext(ctx).Where("status = ?", failedStatus)
	if !sel.From.IsZero() {
		q = q.Where("updated_at >= ?", sel.From)
	}
	if !sel.To.IsZero() {
		q = q.Where("updated_at < ?", sel.To)
	}
	if sel.FailureType != "" {
		q = q.Where("failure_type = ?", sel.FailureType)
	}
	if sel.MerchantID != "" {
		q = q.Where("merchant_id = ?", sel.MerchantID)
	}
	var ps []Payout
	if err := q.Order("updated_at, id").Limit(limit).Find(&ps).Error; err != nil {
		return nil, fmt.Errorf("find failed payouts: %w", err)
	}
	return ps, nil
}

// CreatePayoutRerun records a new batch and sets r.ID.
func CreatePayoutRerun(ctx context.Context, db *gorm.DB, r *PayoutRerun) error {
	if err := db.WithContext(ctx).Create(r).Error; err != nil {
		return fmt.Errorf("record payout re-run: %w", err)
	}
	return nil
}

// ErrRerunNotFound: no re-run batch has this id.
var ErrRerunNotFound = errors.New("payout re-run not found")

// FindPayoutRerun loads a batch and its items.
func FindPayoutRerun(ctx context.Context, db *gorm.DB, id int64) (*PayoutRerun, []PayoutRerunItem, error) {
	var r PayoutRerun
	err := db.WithContext(ctx).Where("id = ?", id).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil, fmt.Errorf("%w: %d", ErrRerunNotFound, id)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("find payout re-run %d: %w", id, err)
	}
	var items []PayoutRerunItem
	if err := db.WithContext(ctx).Where("rerun_id = ?", id).Order("payout_id").Find(&items).Error; err != nil {
		return nil, nil, fmt.Errorf("find payout re-run %d items: %w", id, err)
	}
	return &r, items, nil
}

// SavePayoutRerunItems writes items (insert or replace by batch and payout).
func SavePayoutRerunItems(ctx context.Context, db *gorm.DB, items []PayoutRerunItem) error {
	if len(items) == 0 {
		return nil
	}
	err := db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "rerun_id"}, {Name: "payout_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"outcome", "reason", "run", "run_id", "updated_at"}),
	}).CreateInBatches(items, 500).Error
	if err != nil {
		return fmt.Errorf("record payout re-run items: %w", err)
	}
	return nil
}

// FinishPayoutRerun records a batch's totals, and its end when finished.
func FinishPayoutRerun(ctx context.Context, db *gorm.DB, r *PayoutRerun) error {
	err := db.WithContext(ctx).Model(&PayoutRerun{}).Where("id = ?", r.ID).Updates(map[string]any{
		"status": r.Status, "total": r.Total, "planned": r.Planned, "started": r.Started,
		"skipped": r.Skipped, "errors": r.Errors, "finished_at": r.FinishedAt,
	}).Error
	if err != nil {
		return fmt.Errorf("record payout re-run %d: %w", r.ID, err)
	}
	return nil
}

// ListPayoutReruns returns the newest limit batches.
func ListPayoutReruns(ctx context.Context, db *gorm.DB, limit int) ([]PayoutRerun, error) {
	var rs []PayoutRerun
	if err := db.WithContext(ctx).Order("id DESC").Limit(limit).Find(&rs).Error; err != nil {
		return nil, fmt.Errorf("list payout re-runs: %w", err)
	}
	return rs, nil
}

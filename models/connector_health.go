package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm/clause"

	"github.com/paygate/paygate/internal/domain/routing"
)

// ConnectorHealth is one worker's circuit breaker for one connector
// (migration 0018): written by the worker when the breaker changes state,
// read by the console's ops view.
type ConnectorHealth struct {
	Connector string    `gorm:"primaryKey;size:32"`
	Worker    string    `gorm:"primaryKey;size:200"`
	State     string    `gorm:"size:16;not null"`
	ChangedAt time.Time `gorm:"not null"`
	// SeenAt is when the worker last said the state still holds: at each
	// change, and every ConnectorHealthSeenEvery while it is not closed
	// (migration 0032).
	SeenAt time.Time `gorm:"not null"`
}

// ConnectorHealthSeenEvery is how often a running process says that its
// breakers that are not closed still are.
const ConnectorHealthSeenEvery = 10 * time.Minute

// TableName keeps the table's name singular, as the thing it holds.
func (ConnectorHealth) TableName() string { return "connector_health" }

// SetConnectorHealth writes a breaker's state; a write older than the one
// the row holds (two changes racing) changes nothing.
func (r Records) SetConnectorHealth(ctx context.Context, h *ConnectorHealth) error {
	if h.SeenAt.Before(h.ChangedAt) {
		h.SeenAt = h.ChangedAt
	}
	err := r.DB.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "connector"}, {Name: "worker"}},
		DoUpdates: clause.AssignmentColumns([]string{"state", "changed_at", "seen_at"}),
		Where:     clause.Where{Exprs: []clause.Expression{clause.Expr{SQL: "connector_health.changed_at <= excluded.changed_at"}}},
	}).Create(h).Error
	if err != nil {
		return fmt.Errorf("set health of %s at %s: %w", h.Connector, h.Worker, err)
	}
	return nil
}

// MarkConnectorHealthSeen says, at at, that worker's breakers that are not
// closed still hold their state.
func (r Records) MarkConnectorHealthSeen(ctx context.Context, worker string, at time.Time) error {
	err := r.DB.WithContext(ctx).Model(&ConnectorHealth{}).Where("worker = ? AND state <> ? AND seen_at < ?", worker, string(routing.Closed), at).
		Update("seen_at", at).Error
	if err != nil {
		return fmt.Errorf("mark breakers of %s seen: %w", worker, err)
	}
	return nil
}

// ConnectorHealthSince lists, by connector and worker, the breakers that
// changed since changedSince, and those not closed that their worker said
// still hold since seenSince, however long ago they changed: a connector
// down for days is still news, a worker that stopped is not.
func (r ConsoleRecords) ConnectorHealthSince(ctx context.Context, changedSince, seenSince time.Time) ([]ConnectorHealth, error) {
	var out []ConnectorHealth
	err := r.DB.WithContext(ctx).Where("changed_at >= ? OR (state <> ? AND seen_at >= ?)", changedSince, string(routing.Closed), seenSince).
		Order("connector, worker").Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("connector health: %w", err)
	}
	return out, nil
}

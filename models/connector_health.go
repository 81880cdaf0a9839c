package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm/clause"
)

// ConnectorHealth is one worker's circuit breaker for one connector
// (migration 0018): written by the worker when the breaker changes state,
// read by the console's ops view.
type ConnectorHealth struct {
	Connector string    `gorm:"primaryKey;size:32"`
	Worker    string    `gorm:"primaryKey;size:200"`
	State     string    `gorm:"size:16;not null"`
	ChangedAt time.Time `gorm:"not null"`
}

// TableName keeps the table's name singular, as the thing it holds.
func (ConnectorHealth) TableName() string { return "connector_health" }

// SetConnectorHealth writes a breaker's state; a write older than the one
// the row holds (two changes racing) changes nothing.
func (r Records) SetConnectorHealth(ctx context.Context, h *ConnectorHealth) error {
	err := r.DB.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "connector"}, {Name: "worker"}},
		DoUpdates: clause.AssignmentColumns([]string{"state", "changed_at"}),
		Where:     clause.Where{Exprs: []clause.Expression{clause.Expr{SQL: "connector_health.changed_at <= excluded.changed_at"}}},
	}).Create(h).Error
	if err != nil {
		return fmt.Errorf("set health of %s at %s: %w", h.Connector, h.Worker, err)
	}
	return nil
}

// ConnectorHealthSince lists the breakers that changed since a time, by
// connector and worker.
func (r ConsoleRecords) ConnectorHealthSince(ctx context.Context, since time.Time) ([]ConnectorHealth, error) {
	var out []ConnectorHealth
	err := r.DB.WithContext(ctx).Where("changed_at >= ?", since).Order("connector, worker").Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("connector health: %w", err)
	}
	return out, nil
}

// Package redeliver starts the delivery again of notifications a merchant
// or an operator picks: the CLI (paygate notify resend) and the admin API
// share it, so both resend with the original notify_id and body.
package redeliver

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"go.temporal.io/sdk/client"
	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// MaxNotifications is the most notifications one redelivery takes.
const MaxNotifications = 1000

// WorkflowIDPrefix starts the id of every redelivery workflow.
const WorkflowIDPrefix = "redeliver/"

var (
	// ErrNothingToResend is returned when the selection matches nothing.
	ErrNothingToResend = errors.New("nothing to resend")
	// ErrEmptySelection is returned for a selection that names no orders,
	// no notifications and no time range: it would resend everything.
	ErrEmptySelection = errors.New("selection needs order numbers, notify ids or a time range")
)

// WorkflowStarter is the one Temporal call redelivery makes; a
// client.Client is one.
type WorkflowStarter interface {
	ExecuteWorkflow(ctx context.Context, options client.StartWorkflowOptions, workflow any, args ...any) (client.WorkflowRun, error)
}

// Finder loads the selected notifications in delivery order, at most limit.
type Finder func(ctx context.Context, sel models.NotificationSelection, limit int) ([]models.Notification, error)

// Result names the started workflow and the notifications it delivers.
type Result struct {
	WorkflowID string   `json:"workflow_id"`
	NotifyIDs  []string `json:"notify_ids"`
}

// Service starts redeliveries.
type Service struct {
	Temporal WorkflowStarter
	Find     Finder
	// NewID returns the random part of a workflow id; nil uses crypto/rand.
	NewID func() string
}

// New returns a Service over Temporal and the database.
func New(c WorkflowStarter, db *gorm.DB) *Service {
	return &Service{
		Temporal: c,
		Find: func(ctx context.Context, sel models.NotificationSelection, limit int) ([]models.Notification, error) {
			return models.FindNotifications(ctx, db, sel, limit)
		},
	}
}

// Start finds the selected notifications and starts one Redeliver workflow
// for them.
func Start(ctx context.Context, c WorkflowStarter, db *gorm.DB, sel models.NotificationSelection, schedule notify.Schedule) (Result, error) {
	return New(c, db).Start(ctx, sel, schedule)
}

// Empty reports whether a selection names no orders, notifications or time.
func Empty(sel models.NotificationSelection) bool {
	return len(sel.OrderNos) == 0 && len(sel.NotifyIDs) == 0 && sel.From.IsZero() && sel.To.IsZero()
}

// Start finds the selected notifications (at most MaxNotifications) and
// starts a Redeliver workflow for them, in the order found.
func (s *Service) Start(ctx context.Context, sel models.NotificationSelection, schedule notify.Schedule) (Result, error) {
	if Empty(sel) {
		return Result{}, ErrEmptySelection
	}
	found, err := s.Find(ctx, sel, MaxNotifications)
	if err != nil {
		return Result{}, err
	}
	if len(found) == 0 {
		return Result{}, ErrNothingToResend
	}
	ids := make([]string, len(found))
	for i := range found {
		ids[i] = found[i].NotifyID
	}
	// One order's notifications go out in order, each order on its own:
	// found is in delivery order, by transaction.
	var groups [][]string
	for i, n := range found {
		if i == 0 || n.TransactionID != found[i-1].TransactionID {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], n.NotifyID)
	}
	if len(groups) == 1 {
		groups = nil
	}
	newID := s.NewID
	if newID == nil {
		newID = rand.Text
	}
	id := WorkflowIDPrefix + newID()
	_, err = s.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        id,
		TaskQueue: workflows.TaskQueue,
	}, workflows.RedeliverWorkflowType, workflows.RedeliverInput{NotifyIDs: ids, Schedule: schedule, Groups: groups})
	if err != nil {
		return Result{}, fmt.Errorf("start redelivery: %w", err)
	}
	return Result{WorkflowID: id, NotifyIDs: ids}, nil
}

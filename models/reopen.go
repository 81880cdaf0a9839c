package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// An order's workflow closes once nothing is pending and nothing is due
// (workflows: the order closes when idle); its next run, started when an
// operation arrives, carries on from what the closing run saved here.
// reopen_run names the run that carries on from the saved state: a run
// takes the row once, and only that run (or the one that saved the state)
// may save it again, so two runs can never both start from one state.

// ReopenTake is what TakeOrderReopen found.
type ReopenTake struct {
	// Input is the saved start of the order's next run (JSON); empty when
	// nothing could be taken.
	Input []byte
	// HeldBy is the run that took the saved state before, when another run
	// holds it (a run that ended without saving it again).
	HeldBy string
}

// SaveOrderReopen saves input as what the order's next run starts from,
// for the run run (its first run id), and frees the row for the next
// taker. It reports false when another run holds the row or the order is
// not recorded: the caller then keeps its workflow open.
func SaveOrderReopen(ctx context.Context, db *gorm.DB, transactionID, run string, input []byte, at time.Time) (bool, error) {
	res := db.WithContext(ctx).Exec(`UPDATE orders SET reopen_input = CAST(? AS jsonb), reopen_run = NULL, reopen_saved_at = ?
		WHERE transaction_id = ? AND (reopen_run IS NULL OR reopen_run = ?)`, string(input), at, transactionID, run)
	if res.Error != nil {
		return false, fmt.Errorf("save reopen of order %s: %w", transactionID, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// TakeOrderReopen takes the order's saved state for the run run: it is
// that run's from now on. Taking again for the same run (a retried
// activity) returns the same state.
func TakeOrderReopen(ctx context.Context, db *gorm.DB, transactionID, run string) (ReopenTake, error) {
	var rows []struct{ Input string }
	err := db.WithContext(ctx).Raw(`UPDATE orders SET reopen_run = ?
		WHERE transaction_id = ? AND reopen_input IS NOT NULL AND (reopen_run IS NULL OR reopen_run = ?)
		RETURNING reopen_input::text AS input`, run, transactionID, run).Scan(&rows).Error
	if err != nil {
		return ReopenTake{}, fmt.Errorf("take reopen of order %s: %w", transactionID, err)
	}
	if len(rows) == 1 {
		return ReopenTake{Input: []byte(rows[0].Input)}, nil
	}
	var holder []struct{ Run *string }
	err = db.WithContext(ctx).Raw(`SELECT reopen_run AS run FROM orders WHERE transaction_id = ?`, transactionID).Scan(&holder).Error
	if err != nil {
		return ReopenTake{}, fmt.Errorf("take reopen of order %s: %w", transactionID, err)
	}
	if len(holder) == 1 && holder[0].Run != nil {
		return ReopenTake{HeldBy: *holder[0].Run}, nil
	}
	return ReopenTake{}, nil
}

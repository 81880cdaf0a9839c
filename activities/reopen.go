package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// SaveReopenInput is what a closing order saves for its next run: the
// input that run starts from, as JSON (workflows.OrderInput, without the
// shopper's personal data), saved for the run Run (the closing run's first
// run id).
type SaveReopenInput struct {
	TransactionID string
	Run           string
	Input         json.RawMessage
}

// SaveReopenResult tells whether the state was saved; when not, another
// run holds the order's row and the closing run must stay open.
type SaveReopenResult struct {
	Saved bool
}

// SaveOrderReopen keeps what the order's next run starts from, just before
// its workflow closes for being idle.
func (a *Activities) SaveOrderReopen(ctx context.Context, in SaveReopenInput) (SaveReopenResult, error) {
	saved, err := a.Records.SaveOrderReopen(ctx, in.TransactionID, in.Run, in.Input, time.Now())
	if err != nil {
		return SaveReopenResult{}, storeError(fmt.Errorf("save order reopen: %w", err))
	}
	return SaveReopenResult{Saved: saved}, nil
}

// TakeReopenInput asks for an order's saved state for the reopened run Run.
type TakeReopenInput struct {
	TransactionID string
	Run           string
}

// TakeReopenResult is the saved input of the order's next run, or nothing:
// the order never closed idle (it ended final, or before orders closed
// idle), or HeldBy, another run, took it and never saved it again.
type TakeReopenResult struct {
	Input  json.RawMessage `json:",omitempty"`
	HeldBy string          `json:",omitempty"`
}

// TakeOrderReopen takes the order's saved state for a reopened run.
func (a *Activities) TakeOrderReopen(ctx context.Context, in TakeReopenInput) (TakeReopenResult, error) {
	got, err := a.Records.TakeOrderReopen(ctx, in.TransactionID, in.Run)
	if err != nil {
		return TakeReopenResult{}, storeError(fmt.Errorf("take order reopen: %w", err))
	}
	return TakeReopenResult{Input: got.Input, HeldBy: got.HeldBy}, nil
}

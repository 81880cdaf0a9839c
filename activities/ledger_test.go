package activities

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/adapters/ledger"
)

// fakeLedger answers every posting with err, recording what it was given.
type fakeLedger struct {
	err  error
	seen []ledger.OrderPosting
}

func (f *fakeLedger) CreditOrder(_ context.Context, p ledger.OrderPosting) (ledger.Entry, error) {
	f.seen = append(f.seen, p)
	return ledger.Entry{ID: 7}, f.err
}

func (f *fakeLedger) DebitRefund(_ context.Context, p ledger.OrderPosting) (ledger.Entry, error) {
	f.seen = append(f.seen, p)
	return ledger.Entry{ID: 8}, f.err
}

// TestLedgerActivitiesRetryDecisions: a posting refused for its values is
// non-retryable; a short deposit and a database fault are retried.
func TestLedgerActivitiesRetryDecisions(t *testing.T) {
	in := LedgerOrderInput{Reference: "refund/1-01", MerchantID: "M", AccountID: "A", Currency: "USD", Amount: 2340}
	tests := []struct {
		name         string
		err          error
		nonRetryable bool
	}{
		{name: "posted"},
		{name: "invalid", err: fmt.Errorf("debit refund: %w", ledger.ErrInvalid), nonRetryable: true},
		{name: "reference conflict", err: fmt.Errorf("debit refund: %w", ledger.ErrReferenceConflict), nonRetryable: true},
		{name: "insufficient funds", err: fmt.Errorf("debit refund: %w", ledger.ErrInsufficientFunds)},
		{name: "database down", err: errors.New("connection refused")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeLedger{err: tc.err}
			acts := &LedgerActivities{Ledger: f}
			for _, call := range []func(context.Context, LedgerOrderInput) (LedgerPostingResult, error){
				acts.LedgerCreditOrder, acts.LedgerDebitRefund,
			} {
				res, err := call(t.Context(), in)
				if tc.err == nil {
					if err != nil || res.EntryID == 0 {
						t.Errorf("= %+v, %v; want an entry", res, err)
					}
					continue
				}
				var appErr *temporal.ApplicationError
				nonRetryable := errors.As(err, &appErr) && appErr.NonRetryable()
				if err == nil || nonRetryable != tc.nonRetryable || !errors.Is(err, tc.err) && !nonRetryable {
					t.Errorf("error = %v (non-retryable %v), want non-retryable %v", err, nonRetryable, tc.nonRetryable)
				}
			}
			want := ledger.OrderPosting{Reference: in.Reference, MerchantID: "M", AccountID: "A", Currency: "USD", Amount: 2340}
			if len(f.seen) != 2 || f.seen[0] != want || f.seen[1] != want {
				t.Errorf("postings = %+v, want %+v twice", f.seen, want)
			}
		})
	}
}

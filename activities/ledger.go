package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/adapters/ledger"
)

// OrderLedger is the ledger as orders use it: a paid order credits the
// merchant's deposit and a refund debits it (internal/adapters/ledger.Ledger).
// Both are idempotent by the posting's reference.
type OrderLedger interface {
	CreditOrder(ctx context.Context, p ledger.OrderPosting) (ledger.Entry, error)
	DebitRefund(ctx context.Context, p ledger.OrderPosting) (ledger.Entry, error)
}

// LedgerActivities post the orders' money to the ledger. They are a struct
// of their own so the order activities need no ledger to run.
type LedgerActivities struct {
	Ledger OrderLedger
	Logger *slog.Logger
}

// ErrTypeLedgerRefused: the ledger refused an order posting for its values
// (a malformed posting, or a reference that already posted something
// else); the same posting can never succeed.
const ErrTypeLedgerRefused = "LedgerRefused"

// LedgerOrderInput is one order posting: Amount in minor units of Currency,
// under the idempotency key Reference ("order/<transaction_id>/paid",
// "refund/<refund_reference_id>").
type LedgerOrderInput struct {
	Reference string
	// OrderKey is the order's transaction id: a refund draws on the
	// merchant's pending money until the acquirer settles the capture.
	OrderKey   string
	MerchantID string
	AccountID  string
	Currency   string
	Amount     int64
}

// LedgerPostingResult names the journal entry that holds the posting.
type LedgerPostingResult struct {
	EntryID int64
}

// LedgerCreditOrder credits a paid order's captured amount to the merchant's
// pending money, owed by the acquirer until it settles.
func (a *LedgerActivities) LedgerCreditOrder(ctx context.Context, in LedgerOrderInput) (LedgerPostingResult, error) {
	e, err := a.Ledger.CreditOrder(ctx, posting(in))
	if err != nil {
		return LedgerPostingResult{}, a.ledgerError(ctx, "credit order", in, err)
	}
	return LedgerPostingResult{EntryID: e.ID}, nil
}

// LedgerDebitRefund debits a settled refund from the merchant's pending money
// (the capture not settled yet) or deposit. What a deposit lacks (the
// merchant has paid it out since) is posted as the merchant's debt, which
// money coming to the deposit repays first (ledger.DebitRefund): the
// refund has left the acquirer, so it is on the ledger at once.
func (a *LedgerActivities) LedgerDebitRefund(ctx context.Context, in LedgerOrderInput) (LedgerPostingResult, error) {
	e, err := a.Ledger.DebitRefund(ctx, posting(in))
	if err != nil {
		return LedgerPostingResult{}, a.ledgerError(ctx, "debit refund", in, err)
	}
	return LedgerPostingResult{EntryID: e.ID}, nil
}

func posting(in LedgerOrderInput) ledger.OrderPosting {
	return ledger.OrderPosting{Reference: in.Reference, OrderKey: in.OrderKey, MerchantID: in.MerchantID, AccountID: in.AccountID,
		Currency: in.Currency, Amount: in.Amount}
}

// ledgerError maps a ledger error to the retry decision: a posting refused
// for its values is non-retryable, anything else (the database, a short
// deposit) is retried.
func (a *LedgerActivities) ledgerError(ctx context.Context, op string, in LedgerOrderInput, err error) error {
	if errors.Is(err, ledger.ErrInvalid) || errors.Is(err, ledger.ErrReferenceConflict) {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("ledger refused to %s", op), ErrTypeLedgerRefused, err)
	}
	if errors.Is(err, ledger.ErrInsufficientFunds) && a.Logger != nil {
		a.Logger.WarnContext(ctx, "ledger posting waits for funds", "op", op, "reference", in.Reference,
			"merchant_id", in.MerchantID, "account_id", in.AccountID, "error", err)
	}
	return err
}

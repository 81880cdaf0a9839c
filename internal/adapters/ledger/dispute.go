package ledger

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/paygate/paygate/models"
)

// ErrDisputeClosed: a dispute's hold was released and cannot be taken, or
// taken and cannot be released.
var ErrDisputeClosed = errors.New("ledger: dispute hold already closed the other way")

// ErrDisputeNotHeld: no hold was posted under the dispute's reference.
var ErrDisputeNotHeld = errors.New("ledger: no hold for this dispute")

// DisputeHold is what a dispute holds of a merchant account's money: the
// disputed Amount and the dispute Fee, in minor units of Currency.
// Reference names the dispute; OrderKey the disputed order.
type DisputeHold struct {
	Reference  string
	OrderKey   string
	MerchantID string
	AccountID  string
	Currency   string
	Amount     int64
	Fee        int64
}

// The references of a dispute's entries.
func disputeRef(reference, step string) string { return "dispute/" + reference + "/" + step }

// HoldDispute moves the dispute's amount and fee from the merchant's
// deposit to the dispute's hold. What the deposit lacks is taken as the
// merchant's dispute debt (a negative balance the rules allow), so a
// dispute is always held in full. A repeat posts nothing more.
func (l *Ledger) HoldDispute(ctx context.Context, h DisputeHold) (Entry, error) {
	if err := check(h.Reference, h.MerchantID, h.AccountID, h.Currency, h.Amount, h.Fee); err != nil {
		return Entry{}, err
	}
	total := h.Amount + h.Fee
	var out Entry
	err := l.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		ref := disputeRef(h.Reference, "held")
		if prior, err := l.entryByReference(ctx, tx, ref); err == nil {
			out = prior
			return nil
		} else if !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		accounts, err := l.lockAccounts(tx, h.MerchantID, h.AccountID, h.Currency,
			[]string{models.LedgerDeposit, models.LedgerDisputeDebt, models.LedgerDisputeHold})
		if err != nil {
			return err
		}
		fromDeposit := min(max(accounts[models.LedgerDeposit].Balance, 0), total)
		lines := []line{{models.LedgerDisputeHold, total}}
		if fromDeposit > 0 {
			lines = append(lines, line{models.LedgerDeposit, -fromDeposit})
		}
		if debt := total - fromDeposit; debt > 0 {
			lines = append(lines, line{models.LedgerDisputeDebt, -debt})
		}
		e, _, err := l.post(ctx, tx, posting{
			kind: models.EntryDisputeHold, reference: ref, merchantID: h.MerchantID, accountID: h.AccountID,
			orderKey: h.OrderKey, currency: h.Currency,
			description: fmt.Sprintf("dispute %s held: amount %d, fee %d", h.Reference, h.Amount, h.Fee), lines: lines,
		})
		out = e
		return err
	})
	if err != nil {
		return Entry{}, fmt.Errorf("hold dispute %s: %w", h.Reference, err)
	}
	return out, nil
}

// ReleaseDispute gives a won dispute's hold back: first what it took as
// debt, then the rest to the deposit. A repeat posts nothing more; a
// dispute taken already is refused with ErrDisputeClosed.
func (l *Ledger) ReleaseDispute(ctx context.Context, reference string) (Entry, error) {
	return l.closeDispute(ctx, reference, "released", models.EntryDisputeRelease, func(held Entry, total int64) []line {
		lines := []line{{models.LedgerDisputeHold, -total}}
		for _, ln := range held.Lines {
			if ln.AccountKind == models.LedgerDeposit || ln.AccountKind == models.LedgerDisputeDebt {
				lines = append(lines, line{ln.AccountKind, -ln.Amount})
			}
		}
		return lines
	})
}

// TakeDispute closes a lost (or accepted) dispute's hold: the amount stays
// with the acquirer, which took it back (settlement cash), and the fee is
// the gateway's (fee income). A repeat posts nothing more; a dispute
// released already is refused with ErrDisputeClosed.
func (l *Ledger) TakeDispute(ctx context.Context, reference string, fee int64) (Entry, error) {
	return l.closeDispute(ctx, reference, "taken", models.EntryDisputeLost, func(held Entry, total int64) []line {
		lines := []line{{models.LedgerDisputeHold, -total}, {models.LedgerSettlementCash, total - fee}}
		if fee > 0 {
			lines = append(lines, line{models.LedgerFeeIncome, fee})
		}
		return lines
	})
}

// closeDispute posts a dispute's outcome under the lock of its hold
// account, so that a release and a take racing cannot both go through.
func (l *Ledger) closeDispute(ctx context.Context, reference, step, kind string, lines func(held Entry, total int64) []line) (Entry, error) {
	other := map[string]string{"released": "taken", "taken": "released"}[step]
	var out Entry
	err := l.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		held, err := l.entryByReference(ctx, tx, disputeRef(reference, "held"))
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return ErrDisputeNotHeld
		}
		if err != nil {
			return err
		}
		var total int64
		var currency string
		for _, ln := range held.Lines {
			if ln.AccountKind == models.LedgerDisputeHold {
				total, currency = ln.Amount, ln.Currency
			}
		}
		if _, err := l.lockAccounts(tx, held.MerchantID, held.AccountID, currency, []string{models.LedgerDisputeHold}); err != nil {
			return err
		}
		if _, err := l.entryByReference(ctx, tx, disputeRef(reference, other)); err == nil {
			return fmt.Errorf("%w: it was %s", ErrDisputeClosed, other)
		} else if !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		e, _, err := l.post(ctx, tx, posting{
			kind: kind, reference: disputeRef(reference, step), merchantID: held.MerchantID, accountID: held.AccountID,
			currency: currency, description: "dispute " + reference + " " + step, lines: lines(held, total),
		})
		out = e
		return err
	})
	if err != nil {
		return Entry{}, fmt.Errorf("dispute %s %s: %w", reference, step, err)
	}
	return out, nil
}

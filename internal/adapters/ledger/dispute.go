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
		accounts, err := l.lockAccounts(tx, h.MerchantID, h.AccountID, h.Currency,
			[]string{models.LedgerDeposit, models.LedgerDebt, models.LedgerDisputeHold})
		if err != nil {
			return err
		}
		// A repeat is looked for under the lock: one that committed while
		// this waited for it has lines read from a deposit since emptied.
		if prior, err := l.entryByReference(ctx, tx, ref); err == nil {
			out = prior
			return nil
		} else if !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		fromDeposit := min(max(accounts[models.LedgerDeposit].Balance, 0), total)
		lines := []line{{models.LedgerDisputeHold, total}}
		if fromDeposit > 0 {
			lines = append(lines, line{models.LedgerDeposit, -fromDeposit})
		}
		if debt := total - fromDeposit; debt > 0 {
			lines = append(lines, line{models.LedgerDebt, -debt})
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

// ReleaseDispute gives a won dispute's hold back: first to the merchant's
// dispute debt, as far as there is any (what the hold took as debt, unless
// settlements repaid it since), then the rest to the deposit. A repeat
// posts nothing more; a dispute taken already is refused with
// ErrDisputeClosed.
func (l *Ledger) ReleaseDispute(ctx context.Context, reference string) (Entry, error) {
	return l.closeDispute(ctx, reference, "released", models.EntryDisputeRelease, func(accounts map[string]*models.LedgerAccount, total int64) []line {
		toDebt := min(max(-accounts[models.LedgerDebt].Balance, 0), total)
		m := lineSet{}
		m.add(models.LedgerDisputeHold, -total)
		m.add(models.LedgerDebt, toDebt)
		m.add(models.LedgerDeposit, total-toDebt)
		return m.lines()
	})
}

// TakeDispute closes a lost (or accepted) dispute's hold: the amount pays
// what the acquirer took back on the chargeback (dispute clearing, which
// its settlement report's chargeback line balances), and the fee is the
// gateway's (fee income). A repeat posts nothing more; a dispute released
// already is refused with ErrDisputeClosed.
func (l *Ledger) TakeDispute(ctx context.Context, reference string, fee int64) (Entry, error) {
	return l.closeDispute(ctx, reference, "taken", models.EntryDisputeLost, func(_ map[string]*models.LedgerAccount, total int64) []line {
		m := lineSet{}
		m.add(models.LedgerDisputeHold, -total)
		m.add(models.LedgerDisputeClearing, total-fee)
		m.add(models.LedgerFeeIncome, fee)
		return m.lines()
	})
}

// disputeCloseKinds are the accounts a dispute's outcome may move.
var disputeCloseKinds = []string{models.LedgerDeposit, models.LedgerDebt, models.LedgerDisputeHold,
	models.LedgerDisputeClearing, models.LedgerFeeIncome}

// closeDispute posts a dispute's outcome under the lock of its hold
// account, so that a release and a take racing cannot both go through.
func (l *Ledger) closeDispute(ctx context.Context, reference, step, kind string, lines func(accounts map[string]*models.LedgerAccount, total int64) []line) (Entry, error) {
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
		accounts, err := l.lockAccounts(tx, held.MerchantID, held.AccountID, currency, disputeCloseKinds)
		if err != nil {
			return err
		}
		// A repeat is the entry posted first: a release's lines were read
		// from the debt, which may have moved since.
		if prior, err := l.entryByReference(ctx, tx, disputeRef(reference, step)); err == nil {
			out = prior
			return nil
		} else if !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		if _, err := l.entryByReference(ctx, tx, disputeRef(reference, other)); err == nil {
			return fmt.Errorf("%w: it was %s", ErrDisputeClosed, other)
		} else if !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		e, _, err := l.post(ctx, tx, posting{
			kind: kind, reference: disputeRef(reference, step), merchantID: held.MerchantID, accountID: held.AccountID,
			currency: currency, description: "dispute " + reference + " " + step, lines: lines(accounts, total),
		})
		out = e
		return err
	})
	if err != nil {
		return Entry{}, fmt.Errorf("dispute %s %s: %w", reference, step, err)
	}
	return out, nil
}

package ledger

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/paygate/paygate/models"
)

// errBatchShort: a batch would take an account below zero as a whole; the
// caller posts its settlements one by one to find which.
var errBatchShort = errors.New("ledger: the batch would take an account below zero")

// SettlementResult is what became of one settlement of a batch: Reference
// is its entry's, Err why it was not posted (ErrNotCredited,
// ErrInsufficientFunds, ErrInvalid).
type SettlementResult struct {
	Reference string
	Err       error
}

// PostSettlements posts a batch of captures' and refunds' settlements (a
// page of a settlement day) in one transaction: the same entries
// PostSettlement would post one by one, idempotent by the same references,
// at a fraction of the statements. A settlement the ledger cannot take
// (its capture not credited yet, its values malformed) gets its error in
// its result and the rest are posted; a batch that would take an account
// below zero is posted one by one instead, so that only the settlement
// that cannot be posted fails.
func (l *Ledger) PostSettlements(ctx context.Context, batch []Settlement) ([]SettlementResult, error) {
	out := make([]SettlementResult, len(batch))
	err := l.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return l.postBatch(ctx, tx, batch, out)
	})
	if errors.Is(err, errBatchShort) {
		for i, s := range batch {
			e, err := l.PostSettlement(ctx, s)
			out[i] = SettlementResult{Reference: e.Reference, Err: err}
			if err != nil && !errors.Is(err, ErrInsufficientFunds) && !errors.Is(err, ErrNotCredited) && !errors.Is(err, ErrInvalid) &&
				!errors.Is(err, ErrNotDisputed) {
				return nil, err
			}
		}
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("post %d settlements: %w", len(batch), err)
	}
	return out, nil
}

// owner is one merchant account's money in one currency.
type owner struct{ merchantID, accountID, currency string }

func (l *Ledger) postBatch(ctx context.Context, tx *gorm.DB, batch []Settlement, out []SettlementResult) error {
	var owners []owner
	refs := make([]string, 0, len(batch))
	var orderKeys, refundRefs []string
	for i, s := range batch {
		if s.Kind != SettleCapture && s.Kind != SettleRefund {
			return fmt.Errorf("%w: only captures and refunds settle in a batch", ErrInvalid)
		}
		out[i].Reference = SettlementReference(s)
		if err := checkSettlement(s); err != nil {
			out[i].Err = err
			continue
		}
		refs = append(refs, out[i].Reference)
		if o := (owner{s.MerchantID, s.AccountID, s.Currency}); !slices.Contains(owners, o) {
			owners = append(owners, o)
		}
		if s.Kind == SettleCapture {
			orderKeys = append(orderKeys, s.OrderKey)
		} else {
			refundRefs = append(refundRefs, "refund/"+s.RefundKey)
		}
	}
	// Every account the batch may touch is locked first, owner by owner in
	// a fixed order, as PostSettlement does for one.
	slices.SortFunc(owners, func(a, b owner) int {
		return strings.Compare(a.merchantID+"\x00"+a.accountID+"\x00"+a.currency, b.merchantID+"\x00"+b.accountID+"\x00"+b.currency)
	})
	accounts := map[owner]map[string]*models.LedgerAccount{}
	for _, o := range owners {
		byKind, err := l.lockAccounts(tx, o.merchantID, o.accountID, o.currency, settlementKinds)
		if err != nil {
			return err
		}
		accounts[o] = byKind
	}
	var posted []string
	if err := tx.WithContext(ctx).Model(&models.JournalEntry{}).Where("reference IN ?", nonEmpty(refs)).
		Pluck("reference", &posted).Error; err != nil {
		return fmt.Errorf("find posted settlements: %w", err)
	}
	credited, err := l.pendingOfAll(ctx, tx, orderKeys)
	if err != nil {
		return err
	}
	var refunds []string
	if err := tx.WithContext(ctx).Model(&models.JournalEntry{}).Where("reference IN ?", nonEmpty(refundRefs)).
		Pluck("reference", &refunds).Error; err != nil {
		return fmt.Errorf("find posted refunds: %w", err)
	}

	now := l.now().UTC()
	var entries []models.JournalEntry
	var entryLines [][]line
	var entryOwners []owner
	delta := map[int64]int64{}
	seen := map[string]bool{}
	for _, r := range posted {
		seen[r] = true
	}
	for i, s := range batch {
		if out[i].Err != nil || seen[out[i].Reference] {
			continue
		}
		seen[out[i].Reference] = true
		var lines []line
		var err error
		o := owner{s.MerchantID, s.AccountID, s.Currency}
		if s.Kind == SettleCapture {
			c, ok := credited[s.OrderKey]
			debt := accounts[o][models.LedgerDebt]
			lines, err = linesOf(s, c, ok, debt.Balance+delta[debt.ID])
		} else {
			lines, err = linesOf(s, 0, slices.Contains(refunds, "refund/"+s.RefundKey), 0)
		}
		if err != nil {
			out[i].Err = err
			continue
		}
		for _, ln := range lines {
			delta[accounts[o][ln.kind].ID] += ln.amount
		}
		entries = append(entries, models.JournalEntry{Kind: models.EntrySettlement, Reference: out[i].Reference,
			MerchantID: s.MerchantID, AccountID: s.AccountID, OrderKey: s.OrderKey, Description: string(s.Kind) + " settled", CreatedAt: now})
		entryLines = append(entryLines, lines)
		entryOwners = append(entryOwners, o)
	}
	if len(entries) == 0 {
		return nil
	}
	for _, byKind := range accounts {
		for _, acc := range byKind {
			if slices.Contains(nonNegative, acc.Kind) && acc.Balance+delta[acc.ID] < 0 {
				return errBatchShort
			}
		}
	}
	if err := tx.Omit(clause.Associations).CreateInBatches(&entries, 1000).Error; err != nil {
		return fmt.Errorf("write settlement entries: %w", err)
	}
	var rows []models.JournalLine
	for i, e := range entries {
		for _, ln := range entryLines[i] {
			rows = append(rows, models.JournalLine{EntryID: e.ID, LedgerAccountID: accounts[entryOwners[i]][ln.kind].ID,
				Currency: entryOwners[i].currency, Amount: ln.amount})
		}
	}
	if err := tx.Omit(clause.Associations).CreateInBatches(&rows, 1000).Error; err != nil {
		return fmt.Errorf("write settlement lines: %w", err)
	}
	if err := addToBalances(tx, delta, now); err != nil {
		return fmt.Errorf("update balances: %w", err)
	}
	return nil
}

// nonEmpty keeps an IN list from being empty, which SQL refuses.
func nonEmpty(s []string) []string {
	if len(s) == 0 {
		return []string{""}
	}
	return s
}

// pendingOfAll is pendingOf for many orders at once: what each order's
// capture left in pending, for the orders whose capture is posted.
func (l *Ledger) pendingOfAll(ctx context.Context, tx *gorm.DB, orderKeys []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(orderKeys) == 0 {
		return out, nil
	}
	paid := make([]string, len(orderKeys))
	for i, k := range orderKeys {
		paid[i] = "order/" + k + "/paid"
	}
	var rows []struct {
		OrderKey string
		Paid     int64
		Pending  int64
	}
	err := tx.WithContext(ctx).Raw(`
SELECT coalesce(nullif(e.order_key, ''), substring(e.reference from '^order/(.*)/paid$')) AS order_key,
       count(*) FILTER (WHERE e.kind = 'order_paid') AS paid,
       coalesce(sum(l.amount) FILTER (WHERE a.kind = 'pending'), 0) AS pending
FROM journal_entries e
JOIN journal_lines l ON l.entry_id = e.id
JOIN ledger_accounts a ON a.id = l.ledger_account_id
WHERE e.reference IN ? OR (e.order_key IN ? AND e.kind = 'refund')
GROUP BY 1`, paid, orderKeys).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("pending money of %d orders: %w", len(orderKeys), err)
	}
	for _, r := range rows {
		if r.Paid > 0 {
			out[r.OrderKey] = r.Pending
		}
	}
	return out, nil
}

package ledger

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/models"
)

// HouseMerchant is the merchant id under which the gateway keeps its own
// money: a settlement line nothing here owed that finance writes off lands
// on the house account named after the connector.
const HouseMerchant = "paygate"

// ErrNotCredited: the order's capture or the refund is not in the ledger
// yet (its posting is still under way), so its settlement cannot be
// posted; try again later.
var ErrNotCredited = errors.New("ledger: the order's capture is not posted yet")

// ErrNotDisputed: a chargeback line names an order no dispute of which is
// held here yet (its callback may still be on its way); try again later.
var ErrNotDisputed = errors.New("ledger: no dispute of the order is held yet")

// SettlementKind is what an acquirer's settlement line settles.
type SettlementKind string

// Settlement kinds, as the matching engine names the lines' types.
const (
	SettleCapture       SettlementKind = "capture"
	SettleRefund        SettlementKind = "refund"
	SettleChargeback    SettlementKind = "chargeback"
	SettleFeeAdjustment SettlementKind = "fee_adjustment"
)

// Settlement is one acquirer's settlement of one thing owed, posted to the
// merchant account that owns it, in minor units of Currency.
//
// Owed is what the record says was owed (a capture's or a refund's
// amount); Net is what the acquirer paid (negative: took) and Fee what it
// charged. When the line matched, Owed less Fee is Net for a capture and
// Net is -Owed for a refund; when finance wrote a difference off (a
// capture never settled has Net and Fee zero), the difference goes to
// write-off. MerchantFee is what the merchant pays for a capture by its
// pricing: the acquirer's fee passed through, or the gateway's own.
type Settlement struct {
	Kind        SettlementKind
	OrderKey    string // the order's transaction id
	RefundKey   string // a refund's reference id (refunds only)
	MerchantID  string
	AccountID   string
	Currency    string
	Owed        int64
	Net         int64
	Fee         int64
	MerchantFee int64
	// Line names the report line, for a chargeback's or a fee
	// adjustment's reference (they settle nothing of ours by name).
	Line string
}

// SettlementReference is the reference of the entry that settles s: one per
// capture and per refund, so that nothing is settled twice whichever report
// line or write-off tries.
func SettlementReference(s Settlement) string {
	switch s.Kind {
	case SettleCapture:
		return "order/" + s.OrderKey + "/settled"
	case SettleRefund:
		return "refund/" + s.RefundKey + "/settled"
	default:
		return string(s.Kind) + "/" + s.Line
	}
}

// PostSettlement posts an acquirer's settlement. A capture moves the order's pending
// money (what is left of it after refunds that drew on it) to the deposit
// less the merchant's fee, clears the acquirer's receivable and books the
// cash, the acquirer's fee and any difference written off. A refund's
// settlement books the cash the acquirer took back against acquirer
// clearing. A capture's settlement repays the merchant's dispute debt
// first. A chargeback (the acquirer took a dispute's money back, or gave it
// back when the dispute was won) posts against dispute clearing: the
// merchant's money moves only with the dispute's hold, release or take. A
// fee adjustment is the gateway's cost. The same settlement twice posts
// once.
func (l *Ledger) PostSettlement(ctx context.Context, s Settlement) (Entry, error) {
	ref := SettlementReference(s)
	if err := checkSettlement(s); err != nil {
		return Entry{}, err
	}
	var out Entry
	err := l.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// Every account a settlement may touch is locked first, so that a
		// refund drawing on pending and this settlement of its capture
		// cannot both read the order's pending money as it was.
		accounts, err := l.lockAccounts(tx, s.MerchantID, s.AccountID, s.Currency, settlementKinds)
		if err != nil {
			return err
		}
		// A repeat is the entry posted first: its lines were read from
		// balances (the dispute debt) that have moved since.
		if prior, err := l.entryByReference(ctx, tx, ref); err == nil {
			out = prior
			return nil
		} else if !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		lines, err := l.settlementLines(ctx, tx, s, accounts[models.LedgerDebt].Balance)
		if err != nil {
			return err
		}
		e, _, err := l.post(ctx, tx, posting{
			kind: models.EntrySettlement, reference: ref, merchantID: s.MerchantID, accountID: s.AccountID,
			orderKey: s.OrderKey, currency: s.Currency, description: string(s.Kind) + " settled", lines: lines,
		})
		out = e
		return err
	})
	if err != nil {
		return Entry{}, fmt.Errorf("settle %s: %w", ref, err)
	}
	return out, nil
}

// checkSettlement validates a settlement's request.
func checkSettlement(s Settlement) error {
	if err := check(SettlementReference(s), s.MerchantID, s.AccountID, s.Currency, 1, 0); err != nil {
		return err
	}
	if s.Owed < 0 || s.Owed > money.MaxMinor || s.Fee < -money.MaxMinor || s.Fee > money.MaxMinor ||
		s.Net < -money.MaxMinor || s.Net > money.MaxMinor || s.MerchantFee < 0 || s.MerchantFee > money.MaxMinor {
		return fmt.Errorf("%w: settlement amounts out of range", ErrInvalid)
	}
	return nil
}

// settlementKinds are the accounts a settlement may move.
var settlementKinds = []string{models.LedgerPending, models.LedgerDeposit, models.LedgerAcquirerClearing,
	models.LedgerSettlementCash, models.LedgerFeeExpense, models.LedgerFeeIncome, models.LedgerWriteOff,
	models.LedgerDebt, models.LedgerDisputeClearing}

// settlementLines are the lines of s, read under the accounts' locks; debt
// is the owner's dispute debt balance.
func (l *Ledger) settlementLines(ctx context.Context, tx *gorm.DB, s Settlement, debt int64) ([]line, error) {
	var credited int64
	var posted bool
	switch s.Kind {
	case SettleCapture:
		var err error
		if credited, posted, err = l.pendingOf(ctx, tx, s.OrderKey); err != nil {
			return nil, err
		}
	case SettleRefund:
		var n int64
		if err := tx.WithContext(ctx).Model(&models.JournalEntry{}).Where("reference = ?", "refund/"+s.RefundKey).
			Count(&n).Error; err != nil {
			return nil, fmt.Errorf("find refund %s: %w", s.RefundKey, err)
		}
		posted = n > 0
	case SettleChargeback:
		var n int64
		if err := tx.WithContext(ctx).Model(&models.JournalEntry{}).Where("kind = ? AND order_key = ?", models.EntryDisputeHold, s.OrderKey).
			Count(&n).Error; err != nil {
			return nil, fmt.Errorf("find disputes of %s: %w", s.OrderKey, err)
		}
		posted = n > 0
	}
	return linesOf(s, credited, posted, debt)
}

// linesOf are the lines of s. For a capture, credited is what its order
// left in pending and posted whether its credit is in the ledger; for a
// refund, posted is whether the refund's debit is; for a chargeback,
// whether a dispute of its order is held. debt is the owner's dispute debt
// (zero or below), which a capture's settlement repays first.
func linesOf(s Settlement, credited int64, posted bool, debt int64) ([]line, error) {
	m := lineSet{}
	m.add(models.LedgerSettlementCash, -s.Net)
	if s.Kind != SettleFeeAdjustment {
		m.add(models.LedgerFeeExpense, -s.Fee)
	}
	switch s.Kind {
	case SettleCapture:
		if !posted {
			return nil, ErrNotCredited
		}
		m.add(models.LedgerAcquirerClearing, s.Owed)
		m.add(models.LedgerPending, -credited)
		repay := min(max(-debt, 0), max(credited-s.MerchantFee, 0))
		m.add(models.LedgerDeposit, credited-s.MerchantFee-repay)
		m.add(models.LedgerDebt, repay)
		m.add(models.LedgerFeeIncome, s.MerchantFee)
	case SettleRefund:
		if !posted {
			return nil, ErrNotCredited
		}
		m.add(models.LedgerAcquirerClearing, -s.Owed)
	case SettleChargeback:
		if !posted {
			return nil, ErrNotDisputed
		}
		m.add(models.LedgerDisputeClearing, s.Net+s.Fee)
	case SettleFeeAdjustment:
		// The acquirer's correction of its fees is the gateway's cost (or
		// gain), whatever the merchant's pricing.
		m.add(models.LedgerFeeExpense, s.Net)
	default:
		return nil, fmt.Errorf("%w: settlement kind %q", ErrInvalid, s.Kind)
	}
	// What the acquirer paid differs from what was owed only where finance
	// wrote the difference off.
	m.add(models.LedgerWriteOff, -m.sum())
	return m.lines(), nil
}

// pendingOf is what the order's capture left in the merchant's pending
// money: its credit less the refunds that drew on it. ok is false when the
// order's capture is not posted.
func (l *Ledger) pendingOf(ctx context.Context, tx *gorm.DB, orderKey string) (int64, bool, error) {
	var row struct {
		Paid    int64
		Pending int64
	}
	err := tx.WithContext(ctx).Raw(`
SELECT count(*) FILTER (WHERE e.kind = 'order_paid') AS paid,
       coalesce(sum(l.amount) FILTER (WHERE a.kind = 'pending'), 0) AS pending
FROM journal_entries e
JOIN journal_lines l ON l.entry_id = e.id
JOIN ledger_accounts a ON a.id = l.ledger_account_id
WHERE (e.reference = ? OR (e.order_key = ? AND e.kind = 'refund'))`, "order/"+orderKey+"/paid", orderKey).Scan(&row).Error
	if err != nil {
		return 0, false, fmt.Errorf("pending money of order %s: %w", orderKey, err)
	}
	return row.Pending, row.Paid > 0, nil
}

// refundSource is the account a refund draws on: the order's pending money
// while its capture is not settled, the deposit once it is (or when the
// posting names no order, as before settlement came). The caller holds the
// accounts' locks, so the order's settlement cannot come between.
func (l *Ledger) refundSource(ctx context.Context, tx *gorm.DB, p OrderPosting) (string, error) {
	if p.OrderKey == "" {
		return models.LedgerDeposit, nil
	}
	var n int64
	if err := tx.WithContext(ctx).Model(&models.JournalEntry{}).
		Where("reference = ?", "order/"+p.OrderKey+"/settled").Count(&n).Error; err != nil {
		return "", fmt.Errorf("find settlement of order %s: %w", p.OrderKey, err)
	}
	if n > 0 {
		return models.LedgerDeposit, nil
	}
	return models.LedgerPending, nil
}

// WriteOffLine books a settlement line nothing here owed (a duplicate, a
// transaction nobody made here) on the connector's house account: the cash
// the acquirer paid (or took) against write-off. Reference names the line;
// the same line twice posts once.
func (l *Ledger) WriteOffLine(ctx context.Context, connector, reference, currency string, net int64) (Entry, error) {
	ref := "writeoff/" + reference
	if err := check(ref, HouseMerchant, connector, currency, max(net, -net), 0); err != nil {
		return Entry{}, err
	}
	var out Entry
	err := l.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		e, _, err := l.post(ctx, tx, posting{
			kind: models.EntryWriteOff, reference: ref, merchantID: HouseMerchant, accountID: connector,
			currency: currency, description: "settlement line written off",
			lines: []line{{models.LedgerSettlementCash, -net}, {models.LedgerWriteOff, net}},
		})
		out = e
		return err
	})
	if err != nil {
		return Entry{}, fmt.Errorf("write off %s: %w", ref, err)
	}
	return out, nil
}

// lineSet sums a posting's lines by account kind and drops the zeros.
type lineSet map[string]int64

func (m lineSet) add(kind string, amount int64) { m[kind] += amount }

func (m lineSet) sum() int64 {
	var s int64
	for _, v := range m {
		s += v
	}
	return s
}

// lineOrder is the order of a set's lines: the settlement's accounts, then
// the dispute hold a dispute's outcome closes and the operator's funding of
// a top-up.
var lineOrder = append(slices.Clone(settlementKinds), models.LedgerDisputeHold, models.LedgerOperatorFunding)

// lines are the set's non-zero lines in lineOrder.
func (m lineSet) lines() []line {
	var out []line
	for _, k := range lineOrder {
		if v := m[k]; v != 0 {
			out = append(out, line{k, v})
		}
	}
	return out
}

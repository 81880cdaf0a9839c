package ledger

import (
	"context"
	"fmt"
)

// Rules the ledger's invariants check (Check).
const (
	// RuleUnbalanced: an entry's lines do not sum to zero in a currency.
	RuleUnbalanced = "unbalanced_entry"
	// RuleBalanceNotLines: an account's balance is not the sum of its lines.
	RuleBalanceNotLines = "balance_not_lines"
	// RuleNegative: a merchant's pending, deposit or reserved money is
	// below zero.
	RuleNegative = "negative_balance"
	// RuleReceivable: what the acquirer owes (acquirer clearing) is not
	// the captures it has not settled less the refunds it has not settled.
	RuleReceivable = "receivable_not_open_captures"
	// RulePending: the merchant's pending money is not what the captures
	// the acquirer has not settled left after their refunds.
	RulePending = "pending_not_open_captures"
	// RuleDisputeHold: the money disputes hold is not what the disputes
	// neither released nor taken hold.
	RuleDisputeHold = "dispute_hold_not_open_disputes"
)

// Violation is one invariant the ledger breaks.
type Violation struct {
	Rule       string `json:"rule"`
	MerchantID string `json:"merchant_id"`
	AccountID  string `json:"account_id"`
	Currency   string `json:"currency"`
	Detail     string `json:"detail"`
}

// invariantSQL finds the violations, each row a rule, an owner and a
// detail. A capture is open until the entry that settles it
// (order/<tx>/settled) is posted, a refund until refund/<id>/settled is.
const invariantSQL = `
WITH lines AS (
  SELECT e.id AS entry_id, e.kind AS entry_kind, e.reference, e.order_key, a.merchant_id, a.account_id,
         a.currency, a.kind, l.amount,
         CASE e.kind
           WHEN 'order_paid' THEN 'order/' || substring(e.reference from '^order/(.*)/paid$') || '/settled'
           WHEN 'refund' THEN CASE WHEN e.order_key = '' THEN e.reference || '/settled'
                                   ELSE 'order/' || e.order_key || '/settled' END
         END AS capture_settled,
         CASE e.kind WHEN 'refund' THEN e.reference || '/settled' END AS refund_settled
  FROM journal_lines l
  JOIN journal_entries e ON e.id = l.entry_id
  JOIN ledger_accounts a ON a.id = l.ledger_account_id
),
settled AS (SELECT reference FROM journal_entries WHERE kind IN ('settlement','write_off')),
balances AS (
  SELECT merchant_id, account_id, currency,
         sum(balance) FILTER (WHERE kind = 'acquirer_clearing') AS clearing,
         sum(balance) FILTER (WHERE kind = 'pending') AS pending
  FROM ledger_accounts GROUP BY merchant_id, account_id, currency
),
open_clearing AS (
  SELECT merchant_id, account_id, currency, sum(amount) AS amount FROM lines
  WHERE kind = 'acquirer_clearing' AND (
    (entry_kind = 'order_paid' AND capture_settled NOT IN (SELECT reference FROM settled)) OR
    (entry_kind = 'refund' AND refund_settled NOT IN (SELECT reference FROM settled)))
  GROUP BY merchant_id, account_id, currency
),
open_holds AS (
  SELECT merchant_id, account_id, currency, sum(amount) AS amount FROM lines
  WHERE kind = 'dispute_hold' AND entry_kind = 'dispute_hold'
    AND regexp_replace(reference, '/held$', '/released') NOT IN (SELECT reference FROM journal_entries)
    AND regexp_replace(reference, '/held$', '/taken') NOT IN (SELECT reference FROM journal_entries)
  GROUP BY merchant_id, account_id, currency
),
open_pending AS (
  SELECT merchant_id, account_id, currency, sum(amount) AS amount FROM lines
  WHERE kind = 'pending' AND entry_kind IN ('order_paid','refund') AND capture_settled NOT IN (SELECT reference FROM settled)
  GROUP BY merchant_id, account_id, currency
)
SELECT 'unbalanced_entry' AS rule, min(merchant_id) AS merchant_id, min(account_id) AS account_id, currency,
       'entry ' || reference || ' sums to ' || sum(amount) AS detail
FROM lines GROUP BY entry_id, reference, currency HAVING sum(amount) <> 0
UNION ALL
SELECT 'balance_not_lines', a.merchant_id, a.account_id, a.currency,
       a.kind || ' balance ' || a.balance || ', lines ' || coalesce(sum(l.amount), 0)
FROM ledger_accounts a LEFT JOIN journal_lines l ON l.ledger_account_id = a.id
GROUP BY a.id HAVING a.balance <> coalesce(sum(l.amount), 0)
UNION ALL
SELECT 'negative_balance', merchant_id, account_id, currency, kind || ' balance ' || balance
FROM ledger_accounts WHERE kind IN ('pending','deposit','reserved','dispute_hold') AND balance < 0
UNION ALL
SELECT 'receivable_not_open_captures', b.merchant_id, b.account_id, b.currency,
       'acquirer clearing ' || coalesce(b.clearing, 0) || ', open captures and refunds ' || coalesce(o.amount, 0)
FROM balances b LEFT JOIN open_clearing o USING (merchant_id, account_id, currency)
WHERE coalesce(b.clearing, 0) <> coalesce(o.amount, 0)
UNION ALL
SELECT 'pending_not_open_captures', b.merchant_id, b.account_id, b.currency,
       'pending ' || coalesce(b.pending, 0) || ', open captures less their refunds ' || coalesce(o.amount, 0)
FROM balances b LEFT JOIN open_pending o USING (merchant_id, account_id, currency)
WHERE coalesce(b.pending, 0) <> coalesce(o.amount, 0)
UNION ALL
SELECT 'dispute_hold_not_open_disputes', a.merchant_id, a.account_id, a.currency,
       'dispute hold ' || a.balance || ', open disputes ' || coalesce(o.amount, 0)
FROM ledger_accounts a LEFT JOIN open_holds o USING (merchant_id, account_id, currency)
WHERE a.kind = 'dispute_hold' AND a.balance <> coalesce(o.amount, 0)
ORDER BY 1, 2, 3, 4, 5`

// Check reads the whole ledger and returns every invariant it breaks:
// entries that do not balance, balances that are not the sum of their
// lines, merchant money below zero, and a receivable or pending money that
// is not what the unsettled captures and refunds say. An empty answer is a
// ledger that tells the truth.
func (l *Ledger) Check(ctx context.Context) ([]Violation, error) {
	var out []Violation
	if err := l.db.WithContext(ctx).Raw(invariantSQL).Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("check ledger: %w", err)
	}
	return out, nil
}

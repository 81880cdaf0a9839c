package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/domain/recon"
	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/internal/domain/status"
)

// settlementsOwedSQL lists what a connector owes us and we owe it, by the
// record, for a window: the captures of its orders (an order's move to
// paid, order_status_changes, is when its money was captured, whether a
// sale or a later capture), and the refunds of its orders that it settled.
const settlementsOwedSQL = `
SELECT o.transaction_id, coalesce(o.connector_ref, ''), 'capture', o.captured_amount, o.currency, c.at,
       o.transaction_id, o.merchant_id, o.account_id
FROM orders o
JOIN order_status_changes c ON c.transaction_id = o.transaction_id AND c.to_status = @paid
WHERE coalesce(o.connector, '') = @connector AND c.at >= @from AND c.at < @to AND o.captured_amount > 0
UNION ALL
SELECT r.transaction_id, coalesce(r.acquirer_ref, ''), 'refund', r.amount, r.currency, r.settled_at,
       r.refund_reference_id, o.merchant_id, o.account_id
FROM refunds r
JOIN orders o ON o.transaction_id = r.transaction_id
WHERE coalesce(o.connector, '') = @connector AND r.status = @succeeded AND r.settled_at >= @from AND r.settled_at < @to
ORDER BY 6, 1`

// SettlementsOwed lists the settlements the record says connector owes for
// captures and refunds made from from (inclusive) to to, as the matching
// engine's expectations.
func SettlementsOwed(ctx context.Context, db *gorm.DB, connector string, from, to time.Time) ([]recon.Expected, error) {
	rows, err := db.WithContext(ctx).Raw(settlementsOwedSQL, map[string]any{
		"paid": int(status.Paid), "connector": connector, "from": from, "to": to, "succeeded": string(refund.Succeeded),
	}).Rows()
	if err != nil {
		return nil, fmt.Errorf("settlements owed by %s: %w", connector, err)
	}
	defer rows.Close()
	var out []recon.Expected
	for rows.Next() {
		var e recon.Expected
		var typ string
		if err := rows.Scan(&e.OrderKey, &e.Reference, &typ, &e.Amount, &e.Currency, &e.At,
			&e.Key, &e.MerchantID, &e.AccountID); err != nil {
			return nil, fmt.Errorf("settlements owed by %s: %w", connector, err)
		}
		e.Type = recon.LineType(typ)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("settlements owed by %s: %w", connector, err)
	}
	return out, nil
}

// SettlementsOwed is models.SettlementsOwed over the records' database.
func (r Records) SettlementsOwed(ctx context.Context, connector string, from, to time.Time) ([]recon.Expected, error) {
	return SettlementsOwed(ctx, r.DB, connector, from, to)
}

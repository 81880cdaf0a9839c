package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/domain/optimise"
	"github.com/paygate/paygate/internal/domain/status"
)

// MethodTallyQuery asks how an account's orders in one currency fared by
// payment method since a time (POST /v1/optimise).
type MethodTallyQuery struct {
	AccountID string
	Currency  string
	Since     time.Time
}

// methodTallySQL counts, in one pass over the account's orders of the
// window, the orders of each method that succeeded and that failed, by
// optimise.Classify's rule:
//
//   - each method is counted per connector, the one the order's record
//     names (the one that answered a routed order's charge);
//   - the method of a card order (direct, hosted once the shopper gave the
//     card, stored card, subscription charge) is CARD and its brand; of an
//     APM order the payment_method it was made with, in upper case as the
//     apm table names it. A hosted order that never got a card has neither
//     and is left out;
//   - orders still open (1000 pending, 2100 held for review) are left out:
//     they have no outcome yet;
//   - a success is a result code of optimise.SuccessCodes, a failure one of
//     the families optimise.FailureFamilies; anything else (risk, system)
//     is left out.
//
// The filter is the account, the currency and created_at: the unique index
// on (account_id, order_no) finds the account's orders, so no index of its
// own is needed (docs/decisions.md, "Payment method optimisation").
const methodTallySQL = `
SELECT method, brand, connector,
       count(*) FILTER (WHERE result_code IN @success) AS succeeded,
       count(*) FILTER (WHERE result_code NOT IN @success) AS failed
FROM (
    SELECT CASE WHEN card_brand <> '' THEN @card ELSE upper(details->>'payment_method') END AS method,
           card_brand AS brand,
           coalesce(connector, '') AS connector,
           result_code
    FROM orders
    WHERE account_id = @account AND currency = @currency AND created_at >= @since
      AND payment_status NOT IN @open
      AND (card_brand <> '' OR coalesce(details->>'payment_method', '') <> '')
      AND (result_code IN @success OR left(result_code, 1) IN @failures)
) counted
GROUP BY method, brand, connector`

// MethodTallies counts how the account's orders in the currency since
// q.Since fared, per payment method, card brand and the connector the
// order's record names. Methods without an order that counts are absent.
func MethodTallies(ctx context.Context, db *gorm.DB, q MethodTallyQuery) ([]optimise.Tally, error) {
	rows, err := db.WithContext(ctx).Raw(methodTallySQL, map[string]any{
		"card":     optimise.CardMethod,
		"success":  optimise.SuccessCodes(),
		"failures": optimise.FailureFamilies(),
		"open":     []int{int(status.Pending), int(status.HeldForReview)},
		"account":  q.AccountID,
		"currency": q.Currency,
		"since":    q.Since,
	}).Rows()
	if err != nil {
		return nil, fmt.Errorf("tally methods of account %s: %w", q.AccountID, err)
	}
	defer rows.Close()
	var out []optimise.Tally
	for rows.Next() {
		var t optimise.Tally
		if err := rows.Scan(&t.Method, &t.Brand, &t.Connector, &t.Succeeded, &t.Failed); err != nil {
			return nil, fmt.Errorf("tally methods of account %s: %w", q.AccountID, err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("tally methods of account %s: %w", q.AccountID, err)
	}
	return out, nil
}

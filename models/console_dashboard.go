package models

import (
	"context"
	"fmt"
	"time"

	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/internal/domain/testmode"
)

// The console's home pages draw what these queries sum up: one statement
// each, grouped in Postgres, over a window the caller gives (days in UTC).
// The merchant's and finance's figures are of one mode's accounts, live or
// test (testmode): a test account's payments and balances are play money
// and never swell a live figure.

// ofMode is the condition that keeps a row whose account_id names an
// account of the mode the named parameter @test says (true: test). A row
// whose account is not on record counts as live, as an account is unless
// it says otherwise.
const ofMode = `(account_id IN (SELECT id FROM accounts WHERE mode = 'test')) = @test`

// isTest says whether mode asks for the test accounts' figures.
func isTest(mode string) bool { return mode == testmode.Test }

// AccountModes says which modes the accounts of a merchant have (every
// merchant's when merchantID is empty).
func (r ConsoleRecords) AccountModes(ctx context.Context, merchantID string) (live, test bool, err error) {
	var row struct{ Live, Test bool }
	q := r.DB.WithContext(ctx).Model(&Account{}).Select("coalesce(bool_or(mode <> ?), false) AS live, coalesce(bool_or(mode = ?), false) AS test",
		testmode.Test, testmode.Test)
	if merchantID != "" {
		q = q.Where("merchant_id = ?", merchantID)
	}
	if err := q.Scan(&row).Error; err != nil {
		return false, false, fmt.Errorf("account modes: %w", err)
	}
	return row.Live, row.Test, nil
}

// approvedStatuses are the payment statuses of an order the acquirer
// approved; declinedStatuses of one that failed. Orders still waiting,
// held, cancelled or expired count in neither, so the approval rate is
// the acquirer's and the risk rules' answer, not the shoppers'.
var (
	approvedStatuses = []status.Payment{status.Authorised, status.Paid, status.PartiallyRefunded, status.Refunded}
	declinedStatuses = []status.Payment{status.Failed}
)

// DayTotal is one day's figures in one currency: how many, how many of
// them approved (payments) and the amount in minor units.
type DayTotal struct {
	Day      time.Time
	Currency string
	Count    int64
	Approved int64
	Declined int64
	Amount   int64
}

// PaymentDays sums a merchant's payments per day and currency: all of
// them, the approved and the declined, and the approved amount.
func (r ConsoleRecords) PaymentDays(ctx context.Context, merchantID, mode string, from, to time.Time) ([]DayTotal, error) {
	var out []DayTotal
	err := r.DB.WithContext(ctx).Raw(`
SELECT date_trunc('day', created_at AT TIME ZONE 'UTC') AS day, currency, count(*) AS count,
  count(*) FILTER (WHERE payment_status IN @approved) AS approved,
  count(*) FILTER (WHERE payment_status IN @declined) AS declined,
  coalesce(sum(amount) FILTER (WHERE payment_status IN @approved), 0) AS amount
FROM orders WHERE merchant_id = @merchant AND created_at >= @from AND created_at < @to AND `+ofMode+`
GROUP BY 1, 2 ORDER BY 1, 2`, map[string]any{"approved": approvedStatuses, "declined": declinedStatuses,
		"merchant": merchantID, "from": from, "to": to, "test": isTest(mode)}).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("payments per day: %w", err)
	}
	return out, nil
}

// RefundDays sums a merchant's refunds per day and currency, those that
// did not fail.
func (r ConsoleRecords) RefundDays(ctx context.Context, merchantID, mode string, from, to time.Time) ([]DayTotal, error) {
	var out []DayTotal
	err := r.DB.WithContext(ctx).Raw(`
SELECT date_trunc('day', created_at AT TIME ZONE 'UTC') AS day, currency, count(*) AS count, sum(amount) AS amount
FROM refunds WHERE merchant_id = @merchant AND created_at >= @from AND created_at < @to AND status <> @failed AND `+ofMode+`
GROUP BY 1, 2 ORDER BY 1, 2`, map[string]any{"merchant": merchantID, "from": from, "to": to, "failed": refund.Failed,
		"test": isTest(mode)}).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("refunds per day: %w", err)
	}
	return out, nil
}

// Tally is a count of something by name, with an amount where one makes
// sense (Currency then names its currency).
type Tally struct {
	Name     string
	Detail   string
	Currency string
	Count    int64
	Amount   int64
}

// DeclineReasons counts a merchant's declined payments by result code,
// the most frequent first, at most limit codes.
func (r ConsoleRecords) DeclineReasons(ctx context.Context, merchantID, mode string, from, to time.Time, limit int) ([]Tally, error) {
	var out []Tally
	err := r.DB.WithContext(ctx).Raw(`
SELECT result_code AS name, min(result_message) AS detail, count(*) AS count
FROM orders WHERE merchant_id = @merchant AND created_at >= @from AND created_at < @to AND payment_status IN @declined AND `+ofMode+`
GROUP BY result_code ORDER BY count(*) DESC, result_code LIMIT @limit`, map[string]any{"merchant": merchantID, "from": from, "to": to,
		"declined": declinedStatuses, "limit": limit, "test": isTest(mode)}).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("decline reasons: %w", err)
	}
	return out, nil
}

// PaymentMethods counts a merchant's payments by method: the APM's name,
// or the card's brand.
func (r ConsoleRecords) PaymentMethods(ctx context.Context, merchantID, mode string, from, to time.Time) ([]Tally, error) {
	var out []Tally
	err := r.DB.WithContext(ctx).Raw(`
SELECT CASE WHEN coalesce(details->>'payment_method', '') <> '' THEN upper(details->>'payment_method')
            WHEN card_brand <> '' THEN 'card ' || card_brand ELSE 'card' END AS name, count(*) AS count
FROM orders WHERE merchant_id = @merchant AND created_at >= @from AND created_at < @to AND `+ofMode+`
GROUP BY 1 ORDER BY count(*) DESC, 1`, map[string]any{"merchant": merchantID, "from": from, "to": to, "test": isTest(mode)}).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("payment methods: %w", err)
	}
	return out, nil
}

// PayoutStatuses counts the payouts created in the window by status and
// currency, with their amounts.
func (r ConsoleRecords) PayoutStatuses(ctx context.Context, mode string, from, to time.Time) ([]Tally, error) {
	var out []Tally
	err := r.DB.WithContext(ctx).Raw(`
SELECT status AS name, payment_currency AS currency, count(*) AS count, sum(payment_amount) AS amount
FROM payouts WHERE created_at >= @from AND created_at < @to AND `+ofMode+`
GROUP BY 1, 2 ORDER BY 1, 2`, map[string]any{"from": from, "to": to, "test": isTest(mode)}).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("payouts by status: %w", err)
	}
	return out, nil
}

// SettlementDays sums the acquirers' settlement lines per day and
// currency: how many, and the net settled. A line no order of ours
// explains (no account) is live money.
func (r ConsoleRecords) SettlementDays(ctx context.Context, mode string, from, to time.Time) ([]DayTotal, error) {
	var out []DayTotal
	err := r.DB.WithContext(ctx).Raw(`
SELECT day, currency, count(*) AS count, sum(net) AS amount
FROM recon_items WHERE source = 'line' AND day >= @from AND day < @to AND currency <> '' AND `+ofMode+`
GROUP BY 1, 2 ORDER BY 1, 2`, map[string]any{"from": from, "to": to, "test": isTest(mode)}).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("settlements per day: %w", err)
	}
	return out, nil
}

// BacklogAges counts the notifications waiting for delivery by how long
// they have waited: under an hour, under six, under a day, longer.
func (r ConsoleRecords) BacklogAges(ctx context.Context, now time.Time) ([]Tally, error) {
	var out []Tally
	err := r.DB.WithContext(ctx).Raw(`
SELECT CASE WHEN created_at > CAST(@now AS timestamptz) - interval '1 hour' THEN '1h'
            WHEN created_at > CAST(@now AS timestamptz) - interval '6 hours' THEN '6h'
            WHEN created_at > CAST(@now AS timestamptz) - interval '1 day' THEN '24h' ELSE 'older' END AS name, count(*) AS count
FROM notifications WHERE status = @pending GROUP BY 1`, map[string]any{"now": now, "pending": NotifyPending}).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("notification backlog: %w", err)
	}
	return out, nil
}

// StuckCounts counts the orders pending since before ordersBefore and the
// payouts not final since before payoutsBefore.
func (r ConsoleRecords) StuckCounts(ctx context.Context, ordersBefore, payoutsBefore time.Time) (orders, payouts int64, err error) {
	db := r.DB.WithContext(ctx)
	if err := db.Model(&Order{}).Where("payment_status = ? AND created_at < ?", status.Pending, ordersBefore).Count(&orders).Error; err != nil {
		return 0, 0, fmt.Errorf("count stuck orders: %w", err)
	}
	if err := db.Model(&Payout{}).Where("status IN ? AND updated_at < ?", []string{"NEW", "SUBMITTED"}, payoutsBefore).Count(&payouts).Error; err != nil {
		return 0, 0, fmt.Errorf("count stuck payouts: %w", err)
	}
	return orders, payouts, nil
}

// ConnectorOutcomes counts each connector's payments of the window by
// outcome: approved, declined by the issuer (failed with an A code, not
// expired or cancelled ones), and failed at the connector (C and E codes:
// errors and timeouts).
func (r ConsoleRecords) ConnectorOutcomes(ctx context.Context, from, to time.Time) ([]ConnectorOutcome, error) {
	var out []ConnectorOutcome
	err := r.DB.WithContext(ctx).Raw(`
SELECT connector,
  count(*) FILTER (WHERE payment_status IN @approved) AS approved,
  count(*) FILTER (WHERE payment_status IN @declined AND result_code LIKE 'A%') AS declined,
  count(*) FILTER (WHERE result_code LIKE 'C%' OR result_code LIKE 'E%') AS errors
FROM orders WHERE created_at >= @from AND created_at < @to AND connector <> ''
GROUP BY connector ORDER BY connector`, map[string]any{"approved": approvedStatuses, "declined": declinedStatuses, "from": from, "to": to}).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("connector outcomes: %w", err)
	}
	return out, nil
}

// ConnectorOutcome is a connector's payments of a window by outcome.
type ConnectorOutcome struct {
	Connector                  string
	Approved, Declined, Errors int64
}

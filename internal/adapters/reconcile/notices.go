package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/models"
)

// settlementTotal is what one day's settlement of one connector came to for
// one merchant account in one currency, and where the account hears of it.
type settlementTotal struct {
	MerchantID, AccountID, Currency, URL string
	Captures, Refunds, Chargebacks       int64
	Captured, Refunded, Fees, Net        int64
}

// SettlementNotices records, for every merchant account with a settlement
// notify URL that the day's settlement posted money to, a notification of
// what settled (per currency), and returns their notify ids for delivery.
// Its amounts are the merchant's (models.MerchantAmount, MerchantFee,
// MerchantNet): captures and refunds as the ledger settled them, the fees
// the account was charged (its captures' merchant fee, the acquirer's
// passed through or its blended fee, and its chargebacks' fees), and its
// net the captures less the refunds, the chargebacks and those fees.
// The id is made of what the notification says, so a re-run of the day
// that posted nothing more records nothing new, and one that posted more
// (a capture the ledger took late) tells the merchant the day's new
// totals under a new id.
func (s *Service) SettlementNotices(ctx context.Context, connector string, day time.Time) ([]string, error) {
	day = Day(day)
	var rows []settlementTotal
	err := s.DB.WithContext(ctx).Raw(`
SELECT i.merchant_id, i.account_id, i.currency, a.settlement_notify_url AS url,
       count(*) FILTER (WHERE i.type = 'capture') AS captures,
       count(*) FILTER (WHERE i.type = 'refund') AS refunds,
       count(*) FILTER (WHERE i.type = 'chargeback') AS chargebacks,
       coalesce(sum(`+models.MerchantAmount+`) FILTER (WHERE i.type = 'capture'), 0) AS captured,
       coalesce(sum(`+models.MerchantAmount+`) FILTER (WHERE i.type = 'refund'), 0) AS refunded,
       coalesce(sum(`+models.MerchantFee+`), 0) AS fees,
       coalesce(sum(`+models.MerchantNet+`), 0) AS net
FROM recon_items i
JOIN accounts a ON a.merchant_id = i.merchant_id AND a.id = i.account_id
`+models.MerchantLedgerJoin+`
WHERE i.connector = ? AND i.day = ? AND i.source = 'line' AND i.posted <> '' AND a.settlement_notify_url <> ''
  AND `+models.MerchantsOwn+`
GROUP BY i.merchant_id, i.account_id, i.currency, a.settlement_notify_url
ORDER BY 1, 2, 3`, connector, day).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("settlement notices of %s %s: %w", connector, day.Format(time.DateOnly), err)
	}
	ids := make([]string, 0, len(rows))
	for _, r := range rows {
		dec := func(minor int64) string { return money.FromMinor(minor, r.Currency).ExtendedString() }
		fields := map[string]string{
			notify.NotifyTypeField: notify.TypeSettlement, "merchant_id": r.MerchantID, "account_id": r.AccountID,
			"connector": connector, "settlement_date": day.Format(time.DateOnly), "currency": r.Currency,
			"captures": strconv.FormatInt(r.Captures, 10), "captured_amount": dec(r.Captured),
			"refunds": strconv.FormatInt(r.Refunds, 10), "refunded_amount": dec(r.Refunded),
			"chargebacks": strconv.FormatInt(r.Chargebacks, 10),
			"fees":        dec(r.Fees), "net_amount": dec(r.Net),
		}
		sum := sha256.Sum256([]byte(fmt.Sprint(connector, "|", day.Format(time.DateOnly), "|", r.MerchantID, "|", r.AccountID, "|",
			r.Currency, "|", r.Captures, "|", r.Refunds, "|", r.Chargebacks, "|", r.Net)))
		id := "stl-" + hex.EncodeToString(sum[:16])
		fields["notify_id"] = id
		err := models.InsertNotification(ctx, s.DB, &models.Notification{NotifyID: id, MerchantID: r.MerchantID,
			AccountID: r.AccountID, Seq: 1, NotifyType: notify.TypeSettlement, URL: r.URL, Fields: fields, Status: notify.Pending})
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

package stripe

import (
	"context"
	"strings"
	"time"

	stripego "github.com/stripe/stripe-go/v82"

	"github.com/paygate/paygate/internal/domain/recon"
)

// Settlement reads Stripe's balance transactions as the settlement report
// of day: Stripe books a charge's or a refund's balance transaction when it
// happens, with its fee and net, and pays it out SettlementDays later, so
// the report of day is the balance transactions created on the day
// SettlementDays before (UTC), in the matching engine's terms. A capture is
// named by its PaymentIntent (what our orders keep), a refund by its id;
// disputes' adjustments are chargebacks, a refund given back a refund
// failure, Stripe's own fees fee adjustments; payouts and transfers are not settlements of payments and
// are left out. Stripe's currencies are lower case; ours are upper.
func (c *Client) Settlement(ctx context.Context, day time.Time) ([]recon.Line, error) {
	of := day.UTC().Truncate(24*time.Hour).AddDate(0, 0, -c.settlementDays)
	what := "settlement " + day.UTC().Format(time.DateOnly)
	params := &stripego.BalanceTransactionListParams{
		CreatedRange: &stripego.RangeQueryParams{GreaterThanOrEqual: of.Unix(), LesserThan: of.AddDate(0, 0, 1).Unix()},
	}
	params.Limit = stripego.Int64(100)
	params.AddExpand("data.source")
	var out []recon.Line
	for bt, err := range c.api.V1BalanceTransactions.List(ctx, params) {
		if err != nil {
			return nil, errorOf(ctx, what, err)
		}
		l, ok := lineOf(bt)
		if !ok {
			continue
		}
		l.No = len(out) + 1
		out = append(out, l)
	}
	return out, nil
}

// lineOf maps one balance transaction to a settlement line; ok is false for
// what settles no payment.
func lineOf(bt *stripego.BalanceTransaction) (recon.Line, bool) {
	l := recon.Line{Reference: bt.ID, Fee: bt.Fee, Net: bt.Net, Currency: strings.ToUpper(string(bt.Currency)), Batch: bt.ID}
	if bt.Source != nil {
		l.Reference = bt.Source.ID
	}
	switch bt.Type {
	case stripego.BalanceTransactionTypeCharge, stripego.BalanceTransactionTypePayment:
		l.Type, l.Gross = recon.Capture, bt.Amount
		if ch := chargeSource(bt); ch != nil {
			l.OrderKey = ch.Metadata[metaReference]
			if ch.PaymentIntent != nil && ch.PaymentIntent.ID != "" {
				l.Reference = ch.PaymentIntent.ID
			}
		}
	case stripego.BalanceTransactionTypeRefund, stripego.BalanceTransactionTypePaymentRefund:
		l.Type, l.Gross = recon.Refund, -bt.Amount
	case stripego.BalanceTransactionTypeRefundFailure:
		// The refund's money back on the balance: the refund (the source)
		// did not reach the card after all.
		l.Type, l.Gross = recon.RefundFailure, -bt.Amount
	case stripego.BalanceTransactionTypeAdjustment:
		if bt.Source == nil || bt.Source.Type != stripego.BalanceTransactionSourceTypeDispute {
			l.Type, l.Gross = recon.FeeAdjustment, 0
			break
		}
		l.Type, l.Gross = recon.Chargeback, -bt.Amount
		if d := bt.Source.Dispute; d != nil && d.Charge != nil {
			l.OrderKey = d.Charge.Metadata[metaReference]
		}
	case stripego.BalanceTransactionTypeStripeFee, stripego.BalanceTransactionTypeStripeFxFee, stripego.BalanceTransactionTypeTaxFee:
		l.Type, l.Gross = recon.FeeAdjustment, 0
	default:
		return recon.Line{}, false
	}
	if amount, currency, ok := presented(bt); ok && l.Type != recon.FeeAdjustment && !strings.EqualFold(currency, string(bt.Currency)) && bt.Amount != 0 {
		// Settled in the balance's currency, owed here in the payment's:
		// the line is the payment's amount, its fee at the rate Stripe
		// converted at (the payment's amount over the balance's, half up).
		// In the balance's currency it matched nothing, and the money owed
		// stayed pending for good.
		scale := scaleOf(currency)
		gross := roundDiv(amount, scale)
		settled := bt.Amount
		if settled < 0 {
			settled = -settled
		}
		// One rounding, half away from zero, whatever the fee's sign.
		fee := roundDiv(bt.Fee*amount, settled*scale)
		if l.Gross < 0 {
			gross = -gross
		}
		l.Currency, l.Gross, l.Fee = strings.ToUpper(currency), gross, fee
		l.Net = -l.Gross - l.Fee
		if l.Type == recon.Capture {
			l.Net = l.Gross - l.Fee
		}
		return l, true
	}
	if _, scaled := stripeScale[l.Currency]; scaled {
		// In whole units the fee is what the gross and the net leave, so
		// that gross less fee is net as in Stripe's figures.
		amount, net := fromStripe(bt.Amount, l.Currency), fromStripe(bt.Net, l.Currency)
		l.Gross, l.Fee, l.Net = fromStripe(l.Gross, l.Currency), amount-net, net
	}
	return l, true
}

// presented is the amount and currency of the payment, refund or dispute a
// balance transaction is of, in Stripe's units, when Stripe expanded it.
func presented(bt *stripego.BalanceTransaction) (int64, string, bool) {
	src := bt.Source
	switch {
	case src == nil:
		return 0, "", false
	case src.Charge != nil && src.Charge.Currency != "":
		// What was captured, which a partial capture's transaction is of.
		if src.Charge.AmountCaptured > 0 {
			return src.Charge.AmountCaptured, string(src.Charge.Currency), true
		}
		return src.Charge.Amount, string(src.Charge.Currency), true
	case src.Refund != nil && src.Refund.Currency != "":
		return src.Refund.Amount, string(src.Refund.Currency), true
	case src.Dispute != nil && src.Dispute.Currency != "":
		return src.Dispute.Amount, string(src.Dispute.Currency), true
	}
	return 0, "", false
}

// chargeSource is the charge a balance transaction is of, when Stripe
// expanded it.
func chargeSource(bt *stripego.BalanceTransaction) *stripego.Charge {
	if bt.Source == nil {
		return nil
	}
	return bt.Source.Charge
}

package payout

import (
	"errors"
	"fmt"
	"time"

	"github.com/paygate/paygate/internal/domain/money"
)

// Pricing errors.
var (
	// ErrFeeExceedsAmount: the beneficiary bears the fee and it leaves
	// nothing to send.
	ErrFeeExceedsAmount = errors.New("price: the fee is not less than the transfer")
	// ErrSourceLimitExceeded: the payer would pay more than source_amount.
	ErrSourceLimitExceeded = errors.New("price: amount_payer_pays is above source_amount")
)

// Charges are a priced payout: the quote it rests on and the amounts of the
// answer. Fee, PayerPays and Transfer are in the source currency (the
// deposit account's); BeneficiaryReceives is in the payment currency.
type Charges struct {
	Quote     Quote     `json:"quote"`
	FeePaidBy FeePaidBy `json:"fee_paid_by"`
	// Fee is fee_amount and fee_currency.
	Fee money.Amount `json:"fee"`
	// PayerPays is amount_payer_pays: what leaves the deposit account.
	PayerPays money.Amount `json:"payer_pays"`
	// Transfer is the part of PayerPays that is converted and sent, so that
	// PayerPays = Transfer + Fee exactly: the ledger's two legs.
	Transfer money.Amount `json:"transfer"`
	// BeneficiaryReceives is amount_beneficiary_receives: what the rail is
	// told to credit. Under swift_charge_option SHARED, intermediary banks
	// may still take their charges from it on the way.
	BeneficiaryReceives money.Amount `json:"beneficiary_receives"`
}

// Price quotes and prices a validated payout at the time given (workflow.Now
// in a workflow):
//
//   - The quote (Rates.Quote) gives S, the source amount that buys the
//     payment amount P, rounded up.
//   - The fee F is the fee rule's for the payment method and source currency
//     on S (FeeRule.Fee: half up on the percentage).
//   - fee_paid_by PAYER: the payer pays S + F, S is sent and the beneficiary
//     receives P.
//   - fee_paid_by BENEFICIARY: the payer pays S and S − F is sent; the
//     beneficiary receives P less the fee converted at the quote's rate,
//     rounded up (P − F when no exchange is involved). What S − F buys is
//     never less than that, and the beneficiary never receives more than P.
//     Both S − F and what the beneficiary receives must be more than zero.
//   - With source_amount given, the payer may not pay more than it.
//
// Errors: ErrNoRate, ErrNoFeeRule (FailureQuoteUnavailable);
// ErrFeeExceedsAmount, ErrSourceLimitExceeded, money.ErrAmountTooLarge
// (FailureAmountNotPayable). FailureTypeOf maps them.
func Price(in Instruction, rates Rates, fees FeeSchedule, at time.Time) (Charges, error) {
	q, err := rates.Quote(in.PaymentAmount, in.SourceCurrency, at)
	if err != nil {
		return Charges{}, err
	}
	rule, ok := fees.Rule(in.PaymentMethod, in.SourceCurrency)
	if !ok {
		return Charges{}, fmt.Errorf("%w: %s %s", ErrNoFeeRule, in.PaymentMethod, in.SourceCurrency)
	}
	feeMinor, err := rule.Fee(q.SourceAmount.Minor, in.SwiftChargeOption)
	if err != nil {
		return Charges{}, err
	}
	source := in.SourceCurrency
	ch := Charges{Quote: q, FeePaidBy: in.FeePaidBy, Fee: money.FromMinor(feeMinor, source)}

	switch in.FeePaidBy {
	case FeePayer:
		total := q.SourceAmount.Minor + feeMinor // Both ≤ 2·10^13: no overflow.
		if total > money.MaxMinor {
			return Charges{}, fmt.Errorf("%w: amount_payer_pays %s %s", money.ErrAmountTooLarge,
				money.FromMinor(total, source).ExtendedString(), source)
		}
		ch.PayerPays = money.FromMinor(total, source)
		ch.Transfer = q.SourceAmount
		ch.BeneficiaryReceives = q.PaymentAmount
	case FeeBeneficiary:
		sent := q.SourceAmount.Minor - feeMinor
		if sent <= 0 {
			return Charges{}, fmt.Errorf("%w: fee %s, transfer %s %s", ErrFeeExceedsAmount,
				ch.Fee.ExtendedString(), q.SourceAmount.ExtendedString(), source)
		}
		ch.PayerPays = q.SourceAmount
		ch.Transfer = money.FromMinor(sent, source)
		// The fee in the payment currency is rounded up, so the beneficiary
		// bears at least the fee and never receives more than payment_amount
		// (converting S − F instead could, since S was rounded up).
		feeInPayment, err := Convert(ch.Fee, q.PaymentCurrency, q.Rate, RoundUp)
		if err != nil {
			return Charges{}, err
		}
		received := q.PaymentAmount.Minor - feeInPayment.Minor
		if received <= 0 {
			return Charges{}, fmt.Errorf("%w: fee %s %s is %s %s of %s", ErrFeeExceedsAmount, ch.Fee.ExtendedString(), source,
				feeInPayment.ExtendedString(), q.PaymentCurrency, q.PaymentAmount.ExtendedString())
		}
		ch.BeneficiaryReceives = money.FromMinor(received, q.PaymentCurrency)
	default:
		return Charges{}, fmt.Errorf("price: fee_paid_by %q", in.FeePaidBy)
	}

	if limit := in.SourceAmountLimit; limit.Minor > 0 && ch.PayerPays.Minor > limit.Minor {
		return Charges{}, fmt.Errorf("%w: %s > %s %s", ErrSourceLimitExceeded,
			ch.PayerPays.ExtendedString(), limit.ExtendedString(), source)
	}
	return ch, nil
}

// FailureTypeOf maps a pricing error to the failure type a payout that
// could not be priced ends with.
func FailureTypeOf(err error) FailureType {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrNoRate), errors.Is(err, ErrNoFeeRule):
		return FailureQuoteUnavailable
	case errors.Is(err, ErrFeeExceedsAmount), errors.Is(err, ErrSourceLimitExceeded),
		errors.Is(err, money.ErrAmountTooLarge):
		return FailureAmountNotPayable
	}
	return FailureUnknown
}

package payout

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/notify"
)

// State is a payout as its workflow knows it: the payout-state query and
// the workflow's result.
type State struct {
	Status         Status
	FailureType    FailureType
	FailureReason  string
	Charges        *Charges
	RailTransferID string
	NotifyID       string
}

// maxFailureReason bounds failure_reason, which the record and the
// notification carry; a rail's message can be long.
const maxFailureReason = 500

// Failed is the payout ended FAILED with failure type ft and reason: an
// unknown type when none is given, the type's own reason when the reason is
// empty, and a reason as the record keeps it: text (a rail's message may
// hold bytes that are not, which Postgres refuses, leaving the payout in
// flight with its money released), at most maxFailureReason bytes, cut at
// a character's boundary.
func (s State) Failed(ft FailureType, reason string) State {
	if ft == "" {
		ft = FailureUnknown
	}
	if reason == "" {
		reason = ft.Reason()
	}
	reason = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(reason, "\uFFFD"))
	if len(reason) > maxFailureReason {
		cut := maxFailureReason
		for cut > 0 && !utf8.RuneStart(reason[cut]) {
			cut--
		}
		reason = reason[:cut]
	}
	s.Status, s.FailureType, s.FailureReason = StatusFailed, ft, reason
	return s
}

// ReservationReference is the ledger reservation of a payout's run. Each
// run reserves anew, so it carries the run number: a re-run after a
// released reservation is a new reservation, not a repeat of the closed one.
func ReservationReference(payoutID string, run int) string {
	return fmt.Sprintf("%s/run/%d", payoutID, run)
}

// NotifyID is the notify_id of the notification of a payout's run.
func NotifyID(transactionID string, run int) string {
	return fmt.Sprintf("%s-r%02d", transactionID, run)
}

// Notice is who a payout's notification is about.
type Notice struct {
	NotifyID         string
	MerchantID       string
	AccountID        string
	TransactionID    string
	ShortReferenceID string
}

// NotificationFields are the fields of the notification of a payout's
// outcome, as the payout stands in s. A payout that was never priced
// shows no amounts paid, in the payment currency, and its fee currency is
// the source currency.
func (s State) NotificationFields(in Instruction, n Notice) notify.Fields {
	fields := notify.Fields{
		notify.NotifyTypeField: notify.TypePayout,
		"notify_id":            n.NotifyID,
		"merchant_id":          n.MerchantID,
		"account_id":           n.AccountID,
		"request_id":           in.Request.RequestID,
		"payment_currency":     in.Request.PaymentCurrency,
		"payment_amount":       in.Request.PaymentAmount.String(),
		"transaction_id":       n.TransactionID,
		"short_reference_id":   n.ShortReferenceID,
		"status":               string(s.Status),
		"failure_type":         s.FailureType.Shown(),
		"failure_reason":       s.FailureReason,
	}
	if ch := s.Charges; ch != nil {
		fields["amount_beneficiary_receives"] = ch.BeneficiaryReceives.ExtendedString()
		fields["amount_payer_pays"] = ch.PayerPays.ExtendedString()
		fields["fee_amount"] = ch.Fee.ExtendedString()
		fields["fee_currency"] = ch.Fee.Currency
	} else {
		fields["fee_currency"] = in.SourceCurrency
		fields["amount_beneficiary_receives"] = money.FromMinor(0, in.PaymentAmount.Currency).ExtendedString()
	}
	return fields
}

package payout

import (
	"reflect"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/notify"
)

// TestFailed: a failure always has a type and a reason, and the reason is
// cut to what the record keeps.
func TestFailed(t *testing.T) {
	long := strings.Repeat("x", 700)
	tests := []struct {
		name       string
		ft         FailureType
		reason     string
		wantType   FailureType
		wantReason string
	}{
		{"type and reason given", FailureRailRejected, "account closed", FailureRailRejected, "account closed"},
		{"no reason: the type's own", FailureInsufficientFunds, "", FailureInsufficientFunds,
			"The deposit account's available balance is below the amount to pay"},
		{"no type: unknown", "", "boom", FailureUnknown, "boom"},
		{"neither", "", "", FailureUnknown, "The payout failed for an unknown reason"},
		{"a long reason is cut to 500 bytes", FailureRailRejected, long, FailureRailRejected, long[:500]},
		{"cut at a character's boundary", FailureRailRejected, strings.Repeat("a", 499) + "é" + long, FailureRailRejected,
			strings.Repeat("a", 499)},
		{"a euro sign across the cut", FailureRailRejected, strings.Repeat("a", 498) + "€" + long, FailureRailRejected,
			strings.Repeat("a", 498)},
		{"bytes that are not text replaced", FailureRailRejected, "refus\xe9 par la banque", FailureRailRejected,
			"refus\uFFFD par la banque"},
		{"a NUL and a line break are spaces", FailureRailRejected, "rail: bad\x00 iban\nline 2", FailureRailRejected,
			"rail: bad  iban line 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := State{Status: StatusSubmitted, RailTransferID: "tr_1"}.Failed(tc.ft, tc.reason)
			want := State{Status: StatusFailed, FailureType: tc.wantType, FailureReason: tc.wantReason, RailTransferID: "tr_1"}
			if got != want {
				t.Errorf("Failed = %+v, want %+v", got, want)
			}
		})
	}
}

// TestReferences: each run reserves under its own reference, and its
// notification has its own notify_id.
func TestReferences(t *testing.T) {
	if got := ReservationReference("po_1", 2); got != "po_1/run/2" {
		t.Errorf("ReservationReference = %q", got)
	}
	if got := NotifyID("1000000000000000001", 3); got != "1000000000000000001-r03" {
		t.Errorf("NotifyID = %q", got)
	}
}

// TestNotificationFields: a priced payout tells its amounts and fee; one
// that failed before it was priced tells nothing paid, in the payment
// currency, and the source currency for the fee.
func TestNotificationFields(t *testing.T) {
	in := Instruction{
		Request:        Request{RequestID: "req-1", PaymentCurrency: "EUR", PaymentAmount: "100.00"},
		PaymentAmount:  money.FromMinor(10000, "EUR"),
		SourceCurrency: "USD",
	}
	n := Notice{NotifyID: "T1-r01", MerchantID: "M1", AccountID: "A1", TransactionID: "T1", ShortReferenceID: "SR1"}
	common := func(extra map[string]string) notify.Fields {
		f := notify.Fields{"notify_type": "payout", "notify_id": "T1-r01", "merchant_id": "M1", "account_id": "A1",
			"request_id": "req-1", "payment_currency": "EUR", "payment_amount": "100.00", "transaction_id": "T1",
			"short_reference_id": "SR1"}
		for k, v := range extra {
			f[k] = v
		}
		return f
	}
	charges := &Charges{Fee: money.FromMinor(250, "USD"), PayerPays: money.FromMinor(11250, "USD"),
		BeneficiaryReceives: money.FromMinor(10000, "EUR")}
	tests := []struct {
		name  string
		state State
		want  notify.Fields
	}{
		// Interface, Payout response fields: failure_type, "UNKNOWN
		// occurs", in the sample of a COMPLETED payout.
		{"completed", State{Status: StatusCompleted, Charges: charges}, common(map[string]string{
			"status": "COMPLETED", "failure_type": "UNKNOWN", "failure_reason": "",
			"amount_beneficiary_receives": "100.00", "amount_payer_pays": "112.50", "fee_amount": "2.50", "fee_currency": "USD"})},
		{"failed before pricing", State{}.Failed(FailureQuoteUnavailable, ""), common(map[string]string{
			"status": "FAILED", "failure_type": "QUOTE_UNAVAILABLE", "failure_reason": "No exchange rate or fee is configured for this payout",
			"amount_beneficiary_receives": "0.00", "fee_currency": "USD"})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.state.NotificationFields(in, n); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("fields = %v\nwant     %v", got, tc.want)
			}
		})
	}
}

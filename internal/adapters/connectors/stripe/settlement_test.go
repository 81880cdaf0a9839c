package stripe

import (
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/recon"
)

// TestSettlementFromBalanceTransactions: the balance transactions of the
// day two days before are the report: a charge is a capture of its
// PaymentIntent with our reference, a refund a refund, a dispute's
// adjustment a chargeback of the disputed order, Stripe's own fee a fee
// adjustment, a refund given back a refund failure; a payout is no
// settlement line. Currencies come back upper
// case.
func TestSettlementFromBalanceTransactions(t *testing.T) {
	f, c := newFakeStripe(t)
	charge := map[string]any{"id": "ch_1", "object": "charge", "payment_intent": "pi_1",
		"metadata": map[string]string{"paygate_reference": "1379868670095785984"}}
	f.balance = []map[string]any{
		{"id": "txn_1", "object": "balance_transaction", "type": "charge", "amount": 10000, "fee": 320, "net": 9680, "currency": "eur", "source": charge},
		{"id": "txn_2", "object": "balance_transaction", "type": "refund", "amount": -2500, "fee": 0, "net": -2500, "currency": "eur",
			"source": map[string]any{"id": "re_1", "object": "refund"}},
		{"id": "txn_3", "object": "balance_transaction", "type": "adjustment", "amount": -5000, "fee": 1500, "net": -6500, "currency": "eur",
			"source": map[string]any{"id": "dp_1", "object": "dispute", "charge": charge}},
		{"id": "txn_4", "object": "balance_transaction", "type": "stripe_fee", "amount": -200, "fee": 0, "net": -200, "currency": "eur"},
		{"id": "txn_5", "object": "balance_transaction", "type": "payout", "amount": -9000, "fee": 0, "net": -9000, "currency": "eur",
			"source": map[string]any{"id": "po_1", "object": "payout"}},
		{"id": "txn_6", "object": "balance_transaction", "type": "refund_failure", "amount": 2500, "fee": 0, "net": 2500, "currency": "eur",
			"source": map[string]any{"id": "re_1", "object": "refund"}},
	}
	lines, err := c.Settlement(t.Context(), time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	want := []recon.Line{
		{No: 1, Reference: "pi_1", OrderKey: "1379868670095785984", Type: recon.Capture, Gross: 10000, Fee: 320, Net: 9680, Currency: "EUR", Batch: "txn_1"},
		{No: 2, Reference: "re_1", Type: recon.Refund, Gross: 2500, Net: -2500, Currency: "EUR", Batch: "txn_2"},
		{No: 3, Reference: "dp_1", OrderKey: "1379868670095785984", Type: recon.Chargeback, Gross: 5000, Fee: 1500, Net: -6500, Currency: "EUR", Batch: "txn_3"},
		{No: 4, Reference: "txn_4", Type: recon.FeeAdjustment, Net: -200, Currency: "EUR", Batch: "txn_4"},
		{No: 5, Reference: "re_1", Type: recon.RefundFailure, Gross: -2500, Net: 2500, Currency: "EUR", Batch: "txn_6"},
	}
	sameLines(t, lines, want)
	if f.listed.Get("created[gte]") != "1795392000" || f.listed.Get("created[lt]") != "1795478400" {
		t.Errorf("listed %v, want the transactions created on 2026-11-23", f.listed)
	}
}

// sameLines fails t unless the settlement report's lines are want, in order.
func sameLines(t *testing.T, lines, want []recon.Line) {
	t.Helper()
	if len(lines) != len(want) {
		t.Fatalf("lines %+v, want %d", lines, len(want))
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d = %+v, want %+v", i+1, lines[i], want[i])
		}
	}
}

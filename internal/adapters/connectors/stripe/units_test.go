package stripe

import (
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/recon"
	"github.com/paygate/paygate/internal/domain/refund"
)

// TestKronurInStripesUnits: Stripe counts ISK in hundredths, where our
// minor unit (ISO 4217's) is the króna: a charge, its capture and its
// refund go out in Stripe's units and come back in ours, and a settlement
// line of ISK is read in ours. Sent as they were, 5,000 ISK charged the
// shopper 50 while the record said 5,000. Other currencies are sent as
// they are.
func TestKronurInStripesUnits(t *testing.T) {
	f, c := newFakeStripe(t)
	ctx := t.Context()
	card := connector.Card{Number: cardApproved, ExpiryMonth: "12", ExpiryYear: "2035", CVV: "123"}
	tests := []struct {
		name      string
		currency  string
		amount    int64
		wantSent  int64
		captured  int64
		wantCapt  int64
		refunded  int64
		wantRefnd int64
	}{
		{"krónur", "ISK", 5000, 500000, 3000, 300000, 1000, 100000},
		{"yen, zero-decimal at both", "JPY", 5000, 5000, 3000, 3000, 1000, 1000},
		{"euros", "EUR", 5000, 5000, 3000, 3000, 1000, 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key := "order/isk/" + tc.currency
			auth, err := c.Charge(ctx, connector.ChargeRequest{IdempotencyKey: key, Reference: tc.currency, Card: card,
				Amount: tc.amount, Currency: tc.currency})
			if err != nil || auth.Amount != tc.amount || !auth.Approved() {
				t.Fatalf("charge = %+v, %v; want %d %s approved", auth, err, tc.amount, tc.currency)
			}
			if sent := f.intentField(auth.ID, "amount"); sent != tc.wantSent {
				t.Errorf("Stripe was asked for %v, want %d", sent, tc.wantSent)
			}
			capt, err := c.Capture(ctx, connector.CaptureRequest{ChargeID: auth.ID, IdempotencyKey: key + "/cap", Amount: tc.captured, Currency: tc.currency})
			if err != nil || capt.CapturedAmount != tc.captured || capt.Amount != tc.amount {
				t.Fatalf("capture = %+v, %v; want %d captured of %d", capt, err, tc.captured, tc.amount)
			}
			if got := f.intentField(auth.ID, "amount_received"); got != tc.wantCapt {
				t.Errorf("Stripe captured %v, want %d", got, tc.wantCapt)
			}
			r, err := c.Refund(ctx, connector.RefundRequest{ChargeID: auth.ID, IdempotencyKey: key + "/ref", Amount: tc.refunded, Currency: tc.currency})
			if err != nil || r.Amount != tc.refunded || r.Status != refund.Pending {
				t.Fatalf("refund = %+v, %v; want %d pending", r, err, tc.refunded)
			}
		})
	}

	f.balance = []map[string]any{
		{"id": "txn_1", "object": "balance_transaction", "type": "charge", "amount": 500000, "fee": 14550, "net": 485450, "currency": "isk",
			"source": map[string]any{"id": "ch_1", "object": "charge", "payment_intent": "pi_1",
				"metadata": map[string]string{"paygate_reference": "1379868670095785984"}}},
		{"id": "txn_2", "object": "balance_transaction", "type": "refund", "amount": -100000, "fee": 0, "net": -100000, "currency": "isk",
			"source": map[string]any{"id": "re_1", "object": "refund"}},
	}
	lines, err := c.Settlement(ctx, time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	want := []recon.Line{
		// The net, 4,854.50, rounds half up; the fee is what the gross
		// leaves, so that gross less fee is net.
		{No: 1, Reference: "pi_1", OrderKey: "1379868670095785984", Type: recon.Capture, Gross: 5000, Fee: 145, Net: 4855, Currency: "ISK", Batch: "txn_1"},
		{No: 2, Reference: "re_1", Type: recon.Refund, Gross: 1000, Net: -1000, Currency: "ISK", Batch: "txn_2"},
	}
	sameLines(t, lines, want)
}

// intentField is a field of the fake's PaymentIntent id, as Stripe holds it.
func (f *fakeStripe) intentField(id, name string) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.intents[id][name]
}

// TestFromStripeRounds: Stripe's hundredths of a króna come back to whole
// krónur half away from zero, either sign; other currencies as they are.
func TestFromStripeRounds(t *testing.T) {
	tests := []struct {
		name     string
		amount   int64
		currency string
		want     int64
	}{
		{"whole", 500000, "isk", 5000},
		{"half up", 14550, "ISK", 146},
		{"under half", 14549, "ISK", 145},
		{"negative half", -14550, "ISK", -146},
		{"euros untouched", 14550, "eur", 14550},
		{"negative, under half", -14549, "ISK", -145},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := fromStripe(tc.amount, tc.currency); got != tc.want {
				t.Errorf("fromStripe(%d, %s) = %d, want %d", tc.amount, tc.currency, got, tc.want)
			}
		})
	}
}

// TestSettledInAnotherCurrency: Stripe books a payment made in euros on a
// dollar balance in dollars; the line is the payment's in euros, its fee
// at the rate Stripe converted at, so that it matches what the record owes
// (in dollars it matched nothing, and the money owed stayed pending for
// good). A line already in the payment's currency is as Stripe gave it.
func TestSettledInAnotherCurrency(t *testing.T) {
	f, c := newFakeStripe(t)
	charge := func(amount, captured int64, currency string) map[string]any {
		return map[string]any{"id": "ch_1", "object": "charge", "payment_intent": "pi_1", "amount": amount, "amount_captured": captured,
			"currency": currency, "metadata": map[string]string{"paygate_reference": "1379868670095785984"}}
	}
	f.balance = []map[string]any{
		// 10.00 EUR at 1.08: 10.80 USD, a fee of 0.61 USD is 0.56 EUR.
		{"id": "txn_1", "object": "balance_transaction", "type": "charge", "amount": 1080, "fee": 61, "net": 1019, "currency": "usd",
			"source": charge(1000, 1000, "eur")},
		// A partial capture of 6.00 EUR of 10.00.
		{"id": "txn_2", "object": "balance_transaction", "type": "charge", "amount": 648, "fee": 49, "net": 599, "currency": "usd",
			"source": charge(1000, 600, "eur")},
		{"id": "txn_3", "object": "balance_transaction", "type": "refund", "amount": -270, "fee": 0, "net": -270, "currency": "usd",
			"source": map[string]any{"id": "re_1", "object": "refund", "amount": 250, "currency": "eur"}},
		{"id": "txn_4", "object": "balance_transaction", "type": "adjustment", "amount": -1080, "fee": 1500, "net": -2580, "currency": "usd",
			"source": map[string]any{"id": "dp_1", "object": "dispute", "amount": 1000, "currency": "eur",
				"charge": map[string]any{"id": "ch_1", "object": "charge", "metadata": map[string]string{"paygate_reference": "1379868670095785984"}}}},
		// 5,000 ISK on a dollar balance: the króna's hundredths too.
		{"id": "txn_5", "object": "balance_transaction", "type": "charge", "amount": 3600, "fee": 134, "net": 3466, "currency": "usd",
			"source": charge(500000, 500000, "isk")},
		{"id": "txn_6", "object": "balance_transaction", "type": "charge", "amount": 1000, "fee": 59, "net": 941, "currency": "usd",
			"source": charge(1000, 1000, "usd")},
		// A refund whose fee came back: -0.61 USD is -0.5648 EUR, -0.56.
		{"id": "txn_7", "object": "balance_transaction", "type": "refund", "amount": -1080, "fee": -61, "net": -1019, "currency": "usd",
			"source": map[string]any{"id": "re_2", "object": "refund", "amount": 1000, "currency": "eur"}},
	}
	lines, err := c.Settlement(t.Context(), time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	const tx = "1379868670095785984"
	want := []recon.Line{
		{No: 1, Reference: "pi_1", OrderKey: tx, Type: recon.Capture, Gross: 1000, Fee: 56, Net: 944, Currency: "EUR", Batch: "txn_1"},
		{No: 2, Reference: "pi_1", OrderKey: tx, Type: recon.Capture, Gross: 600, Fee: 45, Net: 555, Currency: "EUR", Batch: "txn_2"},
		{No: 3, Reference: "re_1", Type: recon.Refund, Gross: 250, Net: -250, Currency: "EUR", Batch: "txn_3"},
		{No: 4, Reference: "dp_1", OrderKey: tx, Type: recon.Chargeback, Gross: 1000, Fee: 1389, Net: -2389, Currency: "EUR", Batch: "txn_4"},
		{No: 5, Reference: "pi_1", OrderKey: tx, Type: recon.Capture, Gross: 5000, Fee: 186, Net: 4814, Currency: "ISK", Batch: "txn_5"},
		{No: 6, Reference: "pi_1", OrderKey: tx, Type: recon.Capture, Gross: 1000, Fee: 59, Net: 941, Currency: "USD", Batch: "txn_6"},
		{No: 7, Reference: "re_2", Type: recon.Refund, Gross: 1000, Fee: -56, Net: -944, Currency: "EUR", Batch: "txn_7"},
	}
	sameLines(t, lines, want)
}

// TestRoundDiv: half away from zero whatever the sign; Go's own division
// truncated -55.98 to -55.
func TestRoundDiv(t *testing.T) {
	tests := []struct{ n, d, want int64 }{
		{-120920, 2160, -56}, {120920, 2160, 56}, {5, 10, 1}, {-5, 10, -1}, {4, 10, 0}, {-4, 10, 0}, {0, 7, 0},
	}
	for _, tc := range tests {
		if got := roundDiv(tc.n, tc.d); got != tc.want {
			t.Errorf("roundDiv(%d, %d) = %d, want %d", tc.n, tc.d, got, tc.want)
		}
	}
}

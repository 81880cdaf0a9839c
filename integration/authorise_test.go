package integration

import (
	"context"
	"net/http"
	"testing"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/models"
)

// chargesFor returns the simulator's charges for one of our transactions.
func chargesFor(transactionID string) int {
	n := 0
	for _, c := range env.sim.Charges() {
		if c.Reference == transactionID {
			n++
		}
	}
	return n
}

func findOrder(t *testing.T, accountID, orderNo string) *models.Order {
	t.Helper()
	o, err := models.FindOrderByNo(context.Background(), env.gw.DB, accountID, orderNo)
	if err != nil {
		t.Fatalf("order %s not recorded: %v", orderNo, err)
	}
	return o
}

func TestAuthoriseCardOutcomes(t *testing.T) {
	tests := []struct {
		name          string
		creds         *merchant.Credentials
		pan           string
		orderStatus   string
		resultInfo    string
		paymentStatus int
		captured      int64
		charges       int
	}{
		{"approved visa, auto capture", &env.auto, "4242424242424242", "1", "0000:Success", 3000, 1234, 1},
		{"approved mastercard, auto capture", &env.auto, "5555555555554444", "1", "0000:Success", 3000, 1234, 1},
		{"approved, manual capture", &env.manual, "4242424242424242", "1", "0000:Success", 2000, 0, 1},
		{"generic decline", &env.auto, "4000000000000002", "0", "A0001:Declined", 6000, 0, 1},
		{"insufficient funds", &env.auto, "4000000000009995", "0", "A0002:Insufficient funds", 6000, 0, 1},
		{"expired at the issuer", &env.auto, "4000000000000069", "0", "A0003:Expired card", 6000, 0, 1},
		{"wrong cvv", &env.auto, "4000000000000127", "0", "A0004:Incorrect security code", 6000, 0, 1},
		{"3-D Secure required", &env.auto, "4000000000003220", "0", "C0002:Card requires 3-D Secure, which is not available for this payment", 6000, 0, 1},
		{"acquirer error then approved on retry", &env.auto, "4000000000000119", "1", "0000:Success", 3000, 1234, 1},
		{"acquirer timeout, outcome found by inquiry", &env.auto, "4000000000000341", "1", "0000:Success", 3000, 1234, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			orderNo := newOrderNo(t)
			status, r := authorise(t, signCard(cardOrder(*tc.creds, orderNo, tc.pan), tc.creds.SignKey))
			if status != http.StatusOK {
				t.Fatalf("HTTP status = %d", status)
			}
			if r.OrderStatus != tc.orderStatus || r.ResultInfo != tc.resultInfo {
				t.Fatalf("order_status, result_info = %q, %q; want %q, %q", r.OrderStatus, r.ResultInfo, tc.orderStatus, tc.resultInfo)
			}
			if len(r.TransactionID) != 19 {
				t.Errorf("transaction_id = %q, want 19 digits", r.TransactionID)
			}
			if r.Card != tc.pan[:6]+"******"+tc.pan[12:] {
				t.Errorf("card = %q, want masked", r.Card)
			}
			if r.Amount != "12.34" || r.Currency != "USD" || r.OrderNo != orderNo {
				t.Errorf("amount, currency, order_no = %q %q %q", r.Amount, r.Currency, r.OrderNo)
			}
			if r.Connector != "sim-acquirer" || r.RiskAction != "ACCEPT" || r.RiskScore != "0" || len(r.RiskReasons.Reasons) != len(risk.Rules()) {
				t.Errorf("connector, risk = %q %q %q %v", r.Connector, r.RiskAction, r.RiskScore, r.RiskReasons.Reasons)
			}
			checkResultSignature(t, r, tc.creds.SignKey)

			o := findOrder(t, tc.creds.AccountID, orderNo)
			if int(o.PaymentStatus) != tc.paymentStatus || o.CapturedAmount != tc.captured || o.Amount != 1234 {
				t.Errorf("record: payment_status %d captured %d amount %d; want %d %d 1234", o.PaymentStatus, o.CapturedAmount, o.Amount, tc.paymentStatus, tc.captured)
			}
			if o.TransactionID != r.TransactionID {
				t.Errorf("record transaction_id = %s, want %s", o.TransactionID, r.TransactionID)
			}
			if n := chargesFor(r.TransactionID); n != tc.charges {
				t.Errorf("simulator charges = %d, want %d", n, tc.charges)
			}
		})
	}
}

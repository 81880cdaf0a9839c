package queries

import (
	"context"
	"testing"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/apitest"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

const (
	merchantID = apitest.MerchantID
	accountID  = apitest.AccountID
	queryIP    = apitest.QueryIP
	txID       = "1379868670095785984"
)

// records holds one paid order and one refund of it; the rest of the
// record is not this capability's, and a call to it panics.
type records struct{ api.Records }

func (records) FindOrders(_ context.Context, m, a string, orderNos, txIDs []string) ([]models.Order, error) {
	if m != merchantID || a != accountID || len(txIDs) != 1 || txIDs[0] != txID {
		return nil, nil
	}
	return []models.Order{{TransactionID: txID, MerchantID: merchantID, AccountID: accountID, OrderNo: "ORD-1",
		Currency: "USD", Amount: 1234, PaymentStatus: status.Paid, OrderStatus: status.OrderSuccess,
		ResultCode: "0000", ResultMessage: "Success", CardMasked: "424242******4242"}}, nil
}

func (records) LatestNotifications(context.Context, []string) (map[string]models.Notification, error) {
	return nil, nil
}

func (records) FindSubscriptionsByID(context.Context, []string) (map[string]models.Subscription, error) {
	return nil, nil
}

func (records) FindRefunds(_ context.Context, m, a string, txIDs, refundIDs []string) ([]models.Refund, error) {
	return []models.Refund{{RefundReferenceID: txID + "-01", TransactionID: txID, MerchantID: m, AccountID: a,
		OrderNo: "ORD-1", Currency: "USD", Amount: 500, Status: "succeeded", ResultCode: "0000", ResultMessage: "Success"}}, nil
}

func query(t *testing.T, path, from string) map[string]any {
	t.Helper()
	gate := apitest.Gate(apitest.Accounts{}, records{})
	gate.Capabilities = []api.Capability{New(gate)}
	var out map[string]any
	apitest.PostJSON(t, gate.Handler(), path, map[string]string{"merchant_id": merchantID, "account_id": accountID,
		"trades": txID, "encryption_data": signing.Sign(apitest.SignKey, merchantID, accountID)}, from+":4000", &out)
	return out
}

// TestQueries: each query answers from the registered address only, with
// what the record holds.
func TestQueries(t *testing.T) {
	tests := []struct {
		name, path, from, message, list string
		n                               int
	}{
		{"orders from the registered address", "/v1/retrievalTrans", queryIP, "OK", "orders_list", 1},
		{"orders from elsewhere", "/v1/retrievalTrans", "203.0.113.9", "I0014:Caller IP address not registered for queries: 203.0.113.9", "orders_list", 0},
		{"refunds from the registered address", "/v1/retrievalRefund", queryIP, "OK", "refund_list", 1},
		{"refunds from elsewhere", "/v1/retrievalRefund", "203.0.113.9", "I0014:Caller IP address not registered for queries: 203.0.113.9", "refund_list", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := query(t, tc.path, tc.from)
			list, _ := out[tc.list].([]any)
			if out["return_message"] != tc.message || len(list) != tc.n {
				t.Errorf("answer = %v, want %q with %d in %s", out, tc.message, tc.n, tc.list)
			}
		})
	}
	order := query(t, "/v1/retrievalTrans", queryIP)["orders_list"].([]any)[0].(map[string]any)
	if order["transaction_id"] != txID || order["amount"] != "12.34" || order["payment_status"] != "3000" {
		t.Errorf("order = %v", order)
	}
}

package queries

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

const (
	merchantID = "10086"
	accountID  = "10086001"
	signKey    = "k3y-for-tests-0123456789abcdef"
	queryIP    = "198.51.100.7"
	txID       = "1379868670095785984"
)

type accounts struct{}

func (accounts) Load(_ context.Context, m, a string) (*merchant.Account, error) {
	if m != merchantID || a != accountID {
		return nil, merchant.ErrUnknownAccount
	}
	return merchant.NewTestAccount(models.Account{ID: accountID, MerchantID: merchantID, Active: true,
		AllowedQueryIPs: []string{queryIP}}, signKey), nil
}

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
	gate := &api.Server{Accounts: accounts{}, Records: records{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	gate.Capabilities = []api.Capability{New(gate)}
	b, _ := json.Marshal(map[string]string{"merchant_id": merchantID, "account_id": accountID, "trades": txID,
		"encryption_data": signing.Sign(signKey, merchantID, accountID)})
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.RemoteAddr = from + ":4000"
	rec := httptest.NewRecorder()
	gate.Handler().ServeHTTP(rec, req)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("answer %d is not JSON: %s", rec.Code, rec.Body.String())
	}
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

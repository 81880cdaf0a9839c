package payouts

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
	"github.com/paygate/paygate/models"
)

const (
	merchantID = "10086"
	accountID  = "10086001"
	signKey    = "k3y-for-tests-0123456789abcdef"
	requestID  = "0b5f6e0c-3c1a-4f7e-9a51-8d2b1c7e4a10"
)

type accounts struct{}

func (accounts) Load(_ context.Context, m, a string) (*merchant.Account, error) {
	if m != merchantID || a != accountID {
		return nil, merchant.ErrUnknownAccount
	}
	return merchant.NewTestAccount(models.Account{ID: accountID, MerchantID: merchantID, Active: true, Currencies: []string{"USD"}}, signKey), nil
}

// records knows no payout; the rest of the record is not this
// capability's, and a call to it panics.
type records struct{ api.Records }

func (records) FindPayout(context.Context, string) (*models.Payout, error) {
	return nil, models.ErrPayoutNotFound
}

func query(t *testing.T, withRecords bool, id string) string {
	t.Helper()
	gate := &api.Server{Accounts: accounts{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if withRecords {
		gate.Records = records{}
	}
	gate.Capabilities = []api.Capability{New(gate, nil)}
	b, _ := json.Marshal(map[string]string{"merchant_id": merchantID, "account_id": accountID, "request_id": id,
		"encryption_data": signing.Sign(signKey, merchantID, accountID, id)})
	req := httptest.NewRequest(http.MethodPost, "/v1/payout/query", strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	gate.Handler().ServeHTTP(rec, req)
	var out struct {
		ResultInfo string `json:"result_info"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("answer %d is not JSON: %s", rec.Code, rec.Body.String())
	}
	return out.ResultInfo
}

// TestPayoutQueryRefusals: each refusal of the payout query with its exact
// code.
func TestPayoutQueryRefusals(t *testing.T) {
	tests := []struct {
		name    string
		records bool
		id      string
		want    string
	}{
		{"not a UUID", true, "12345", "I0008:Invalid field value: request_id is not a UUID"},
		{"no record", false, requestID, "S0001:Temporary system error, try again"},
		{"unknown payout", true, requestID, "I0023:Payout not found: " + requestID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := query(t, tc.records, tc.id); got != tc.want {
				t.Errorf("result_info = %q, want %q", got, tc.want)
			}
		})
	}
}

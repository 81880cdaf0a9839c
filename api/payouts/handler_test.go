package payouts

import (
	"context"
	"testing"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/apitest"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
)

const requestID = "0b5f6e0c-3c1a-4f7e-9a51-8d2b1c7e4a10"

// records knows no payout; the rest of the record is not this
// capability's, and a call to it panics.
type records struct{ api.Records }

func (records) FindPayout(context.Context, string) (*models.Payout, error) {
	return nil, models.ErrPayoutNotFound
}

func query(t *testing.T, withRecords bool, id string) string {
	t.Helper()
	var r api.Records
	if withRecords {
		r = records{}
	}
	gate := apitest.Gate(apitest.Accounts{}, r)
	gate.Capabilities = []api.Capability{New(gate, nil)}
	var out struct {
		ResultInfo string `json:"result_info"`
	}
	apitest.PostJSON(t, gate.Handler(), "/v1/payout/query", map[string]string{
		"merchant_id": apitest.MerchantID, "account_id": apitest.AccountID, "request_id": id,
		"encryption_data": signing.Sign(apitest.SignKey, apitest.MerchantID, apitest.AccountID, id),
	}, "", &out)
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

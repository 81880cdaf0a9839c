package payouts

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/apitest"
	"github.com/paygate/paygate/internal/domain/payout"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
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

// SignatureSeen finds every signature new.
func (records) SignatureSeen(context.Context, string, string, string, string, time.Time) (models.SignatureUse, error) {
	return models.SignatureUse{}, nil
}

// starter starts nothing: the payout's workflow never records it.
type starter struct{ started int }

func (s *starter) Start(context.Context, workflows.PayoutInput) error {
	s.started++
	return nil
}

type ids struct{}

func (ids) Next() string { return "T0000000000000001" }

// TestPayoutNotRecordedInTime: a payout whose workflow was started but has
// not recorded it within the wait is answered as in progress, never as a
// system error that could make the merchant pay again under a new
// request_id.
func TestPayoutNotRecordedInTime(t *testing.T) {
	var example map[string]any
	for _, op := range (&Handler{}).Operations() {
		if op.Method == http.MethodPost && op.Path == "/v1/payout" {
			raw, err := json.Marshal(op.Example)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &example); err != nil {
				t.Fatal(err)
			}
		}
	}
	if example == nil {
		t.Fatal("no POST /v1/payout example")
	}
	example["merchant_id"], example["account_id"], example["request_id"] = apitest.MerchantID, apitest.AccountID, requestID
	raw, err := json.Marshal(example)
	if err != nil {
		t.Fatal(err)
	}
	var req payout.Request
	if err := json.Unmarshal(raw, &req); err != nil {
		t.Fatal(err)
	}
	example["encryption_data"] = signing.Sign(apitest.SignKey, req.SignedValues()...)

	gate := apitest.Gate(apitest.Accounts{Edit: func(a *models.Account) { a.Currencies = []string{req.SourceCurrency, req.PaymentCurrency} }}, records{})
	gate.IDs, gate.Now = ids{}, time.Now
	st := &starter{}
	h := New(gate, st)
	h.RecordWait = 50 * time.Millisecond
	gate.Capabilities = []api.Capability{h}
	var out struct {
		ResultInfo     string `json:"result_info"`
		EncryptionData string `json:"encryption_data"`
	}
	apitest.PostJSON(t, gate.Handler(), "/v1/payout", example, "", &out)
	const want = "I0021:The same request is still in progress: the payout is not recorded yet: query it or send the same request_id again"
	if out.ResultInfo != want {
		t.Errorf("result_info = %q, want %q", out.ResultInfo, want)
	}
	if out.EncryptionData != "" {
		t.Errorf("the refusal is signed: %q", out.EncryptionData)
	}
	if st.started != 1 {
		t.Errorf("payout workflow started %d times, want 1", st.started)
	}
}

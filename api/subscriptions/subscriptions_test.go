package subscriptions

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/apitest"
	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

const (
	merchantID = apitest.MerchantID
	accountID  = apitest.AccountID
	signKey    = apitest.SignKey
	cardToken  = "tk_0123456789abcdef0123456789abcdef01234567"
	recurring  = "R1379868670095785984"
)

// records holds one stored card and one active subscription; the rest of
// the record is no business of this capability, and a call to it panics.
type records struct {
	api.Records
	deleted bool
	sub     models.Subscription
}

func (r *records) DeleteStoredCard(_ context.Context, m, a, token string, _ time.Time) error {
	if m != merchantID || a != accountID || token != cardToken {
		return models.ErrStoredCardNotFound
	}
	r.deleted = true
	return nil
}

func (r *records) FindSubscription(_ context.Context, m, a, id string) (*models.Subscription, error) {
	if m != merchantID || a != accountID || id != recurring {
		return nil, models.ErrSubscriptionNotFound
	}
	s := r.sub
	return &s, nil
}

func (r *records) FindOrders(context.Context, string, string, []string, []string) ([]models.Order, error) {
	return nil, nil
}

type canceller struct {
	r     *records
	calls int
	err   error
}

func (c *canceller) Cancel(context.Context, string, string) (workflows.SubscriptionState, error) {
	c.calls++
	c.r.sub.Status = 3 // cancelled
	return workflows.SubscriptionState{}, c.err
}

// post sends a body signed over values (or not at all) to path.
func post(t *testing.T, h http.Handler, path string, body map[string]string, values ...string) map[string]any {
	t.Helper()
	if values != nil {
		body["encryption_data"] = signing.Sign(signKey, values...)
	}
	var out map[string]any
	apitest.PostJSON(t, h, path, body, "", &out)
	return out
}

func served(r *records, c Canceller) http.Handler {
	var rec api.Records
	if r != nil {
		rec = r
	}
	gate := apitest.Gate(apitest.Accounts{}, rec)
	gate.Capabilities = []api.Capability{New(gate, c)}
	return gate.Handler()
}

// TestCancelSubscription: each refusal with its exact code, and a cancel
// that ends the subscription, signed for the caller who proved the key.
func TestCancelSubscription(t *testing.T) {
	tests := []struct {
		name     string
		id       string
		noRecord bool
		noCancel bool
		err      error
		want     string
		calls    int
	}{
		{"missing recurring_id", "", false, false, nil, "I0001:Missing required field: recurring_id", 0},
		{"not a recurring id", "R12", false, false, nil, "I0026:Subscription not found", 0},
		{"another subscription", "R1379868670095785985", false, false, nil, "I0026:Subscription not found", 0},
		{"no record", recurring, true, false, nil, "S0001:Temporary system error, try again", 0},
		{"no canceller", recurring, false, true, nil, "S0001:Temporary system error, try again", 0},
		{"cancelled", recurring, false, false, nil, "0000:Success", 1},
		{"workflow already ended", recurring, false, false, flows.ErrSubscriptionClosed, "0000:Success", 1},
		{"cancel fails", recurring, false, false, errors.New("temporal down"), "S0001:Temporary system error, try again", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &records{sub: models.Subscription{MerchantID: merchantID, AccountID: accountID, RecurringID: recurring, Status: 1}}
			c := &canceller{r: r, err: tc.err}
			var cc Canceller = c
			if tc.noCancel {
				cc = nil
			}
			rr := r
			if tc.noRecord {
				rr = nil
			}
			out := post(t, served(rr, cc), "/v1/cancelsubscription",
				map[string]string{"merchant_id": merchantID, "account_id": accountID, "recurring_id": tc.id},
				merchantID, accountID, tc.id)
			if out["result_info"] != tc.want || c.calls != tc.calls {
				t.Errorf("result_info = %v after %d cancels, want %s after %d", out["result_info"], c.calls, tc.want, tc.calls)
			}
			if tc.want == "0000:Success" {
				want := signing.SignUpper(signKey, merchantID, accountID, recurring, "3", "0000:Success")
				if out["recurring_status"] != "3" || out["encryption_data"] != want {
					t.Errorf("answer = %v, want status 3 signed %s", out, want)
				}
			}
		})
	}
	t.Run("unsigned", func(t *testing.T) {
		out := post(t, served(&records{}, &canceller{}), "/v1/cancelsubscription",
			map[string]string{"merchant_id": merchantID, "account_id": accountID, "recurring_id": recurring})
		if out["result_info"] != "I0001:Missing required field: encryption_data" || out["encryption_data"] != "" {
			t.Errorf("unsigned cancel = %v", out)
		}
	})
}

// TestDeleteToken: a known token is deleted, anything else refused.
func TestDeleteToken(t *testing.T) {
	tests := []struct {
		name, token, want string
		deleted           bool
	}{
		{"deleted", cardToken, "0000:Success", true},
		{"missing", "", "I0001:Missing required field: token_id", false},
		{"not a token", "tk_1", "I0024:Unknown card token", false},
		{"another account's", "tk_" + strings.Repeat("a", 40), "I0024:Unknown card token", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &records{}
			out := post(t, served(r, nil), "/v1/token/delete",
				map[string]string{"merchant_id": merchantID, "account_id": accountID, "token_id": tc.token},
				merchantID, accountID, tc.token)
			if out["result_info"] != tc.want || r.deleted != tc.deleted {
				t.Errorf("result_info = %v (deleted %v), want %s (%v)", out["result_info"], r.deleted, tc.want, tc.deleted)
			}
		})
	}
}

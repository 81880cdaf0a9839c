package subscriptions

import (
	"context"
	"errors"
	"fmt"
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

// canceller is the subscription workflows under test: each change writes
// the record as the workflow would.
type canceller struct {
	r       *records
	calls   int
	err     error
	amended workflows.SubscriptionAmendment
}

func (c *canceller) Cancel(context.Context, string, string) (workflows.SubscriptionState, error) {
	c.calls++
	c.r.sub.Status = 3 // cancelled
	return workflows.SubscriptionState{}, c.err
}

func (c *canceller) Pause(context.Context, string, string) (workflows.SubscriptionState, error) {
	c.calls++
	c.r.sub.Status, c.r.sub.NextChargeAt = 4, nil
	return workflows.SubscriptionState{}, c.err
}

func (c *canceller) Resume(context.Context, string, string) (workflows.SubscriptionState, error) {
	c.calls++
	next := time.Date(2027, 3, 31, 10, 0, 0, 0, time.UTC)
	c.r.sub.Status, c.r.sub.NextChargeAt = 1, &next
	return workflows.SubscriptionState{}, c.err
}

func (c *canceller) Amend(_ context.Context, _, _ string, a workflows.SubscriptionAmendment) (workflows.SubscriptionState, error) {
	c.calls++
	c.amended = a
	if a.Amount.Minor > 0 {
		c.r.sub.Plan = []byte(fmt.Sprintf(`{"Amount":{"Minor":%d,"Currency":"EUR"},"AmountFrom":2,"Changes":1}`, a.Amount.Minor))
	}
	if !a.Next.IsZero() {
		c.r.sub.NextChargeAt = &a.Next
	}
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

func served(r *records, c Workflows) http.Handler {
	var rec api.Records
	if r != nil {
		rec = r
	}
	gate := apitest.Gate(apitest.Accounts{}, rec)
	// The dates of the changes under test are judged on 1 February 2027.
	gate.Now = func() time.Time { return time.Date(2027, 2, 1, 9, 0, 0, 0, time.UTC) }
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
			var cc Workflows = c
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

// TestSubscriptionEndpoint follows the interface's subscription lines as
// docs/decisions.md reads them: "signed endpoints to fetch a subscription
// and to pause, resume and change its amount or next date". Each refusal
// has its exact code; each change answers the record it left, signed.
func TestSubscriptionEndpoint(t *testing.T) {
	next := time.Date(2027, 2, 28, 10, 0, 0, 0, time.UTC)
	terms := []byte(`{"ContractName":"Gold","Amount":{"Minor":1000,"Currency":"EUR"},"PromoAmount":{"Minor":100,` +
		`"Currency":"EUR"},"Interval":"month","IntervalCount":1}`)
	active := models.Subscription{MerchantID: merchantID, AccountID: accountID, RecurringID: recurring, ContractName: "Gold",
		Status: 1, Charges: 1, Period: "1 month", Terms: terms, NextChargeAt: &next}
	cancelled := active
	cancelled.Status = 0
	type want struct {
		result, status, amount, next string
		calls                        int
	}
	tests := []struct {
		name              string
		sub               models.Subscription
		id, action        string
		amount, deduction string
		err               error
		want              want
	}{
		{"query", active, recurring, "query", "", "", nil, want{"0000:Success", "1", "10.00", "2027-02-28 10:00:00", 0}},
		{"query a cancelled one", cancelled, recurring, "query", "", "", nil, want{"0000:Success", "0", "10.00", "", 0}},
		{"pause", active, recurring, "pause", "", "", nil, want{"0000:Success", "4", "10.00", "", 1}},
		{"resume", active, recurring, "resume", "", "", nil, want{"0000:Success", "1", "10.00", "2027-03-31 10:00:00", 1}},
		{"update the amount", active, recurring, "update", "25.50", "", nil, want{"0000:Success", "1", "25.50", "2027-02-28 10:00:00", 1}},
		{"update the date", active, recurring, "update", "", "2027-02-15 08:00:00", nil, want{"0000:Success", "1", "10.00", "2027-02-15 08:00:00", 1}},
		{"missing recurring_id", active, "", "query", "", "", nil, want{result: "I0001:Missing required field: recurring_id"}},
		{"missing action", active, recurring, "", "", "", nil, want{result: "I0001:Missing required field: action"}},
		{"unknown action", active, recurring, "stop", "", "", nil, want{result: "I0008:Invalid field value: action must be query, pause, resume or update"}},
		{"amount on a pause", active, recurring, "pause", "5", "", nil, want{result: "I0008:Invalid field value: contract_amount and recurring_deduction_time are taken by update only"}},
		{"another subscription", active, "R1379868670095785985", "query", "", "", nil, want{result: "I0026:Subscription not found"}},
		{"pause a cancelled one", cancelled, recurring, "pause", "", "", nil, want{result: "I0034:Subscription has ended"}},
		{"update with nothing", active, recurring, "update", "", "", nil, want{result: "I0008:Invalid field value: contract_amount or recurring_deduction_time is required"}},
		{"update to a negative amount", active, recurring, "update", "-1", "", nil, want{result: "I0008:Invalid field value: contract_amount must be a positive amount in EUR"}},
		{"update to a past date", active, recurring, "update", "", "2026-01-01", nil, want{result: "I0008:Invalid field value: recurring_deduction_time must be after now"}},
		{"workflow fails", active, recurring, "pause", "", "", errors.New("temporal down"), want{result: "S0001:Temporary system error, try again", calls: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &records{sub: tc.sub}
			c := &canceller{r: r, err: tc.err}
			out := post(t, served(r, c), "/v1/subscription",
				map[string]string{"merchant_id": merchantID, "account_id": accountID, "recurring_id": tc.id, "action": tc.action,
					"contract_amount": tc.amount, "recurring_deduction_time": tc.deduction},
				merchantID, accountID, tc.id, tc.action, tc.amount, tc.deduction)
			if out["result_info"] != tc.want.result || c.calls != tc.want.calls {
				t.Fatalf("result_info = %v after %d changes, want %s after %d", out["result_info"], c.calls, tc.want.result, tc.want.calls)
			}
			if tc.want.result != "0000:Success" {
				return
			}
			sig := signing.SignUpper(signKey, merchantID, accountID, recurring, tc.want.status, "0000:Success")
			if out["recurring_status"] != tc.want.status || out["contract_amount"] != tc.want.amount || out["currency"] != "EUR" ||
				out["recurring_deduction_time"] != tc.want.next || out["recurring_deduction_period"] != "1 month" ||
				out["encryption_data"] != sig {
				t.Errorf("answer = %v, want status %s amount %s next %q signed %s", out, tc.want.status, tc.want.amount, tc.want.next, sig)
			}
		})
	}
	t.Run("a cancel's signature is not a pause's", func(t *testing.T) {
		r := &records{sub: active}
		c := &canceller{r: r}
		out := post(t, served(r, c), "/v1/subscription",
			map[string]string{"merchant_id": merchantID, "account_id": accountID, "recurring_id": recurring, "action": "pause"},
			merchantID, accountID, recurring)
		if out["result_info"] == "0000:Success" || c.calls != 0 {
			t.Errorf("a pause signed as a cancel = %v after %d changes, want refused", out["result_info"], c.calls)
		}
	})
}

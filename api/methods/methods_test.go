package methods

import (
	"context"
	"reflect"
	"strconv"
	"testing"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/apitest"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/optimise"
	"github.com/paygate/paygate/internal/domain/routing"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
)

const (
	merchantID = apitest.MerchantID
	accountID  = apitest.AccountID
	signKey    = apitest.SignKey
)

// accounts: the test account takes EUR, up to 1,000.00.
var accounts = apitest.Accounts{Edit: func(a *models.Account) {
	a.Currencies, a.AmountLimits = []string{"EUR"}, map[string]int64{"EUR": 100000}
}}

type offer connector.Offer

func (o offer) Offer() connector.Offer { return connector.Offer(o) }

type offers struct{}

func (offers) Get(string) (api.ConnectorOffer, error) {
	return offer{CardBrands: []string{"visa", "mastercard"}, APMs: []string{"IDEAL"}}, nil
}

// tallies: visa did well, mastercard badly.
type tallies struct{}

func (tallies) MethodTallies(context.Context, models.MethodTallyQuery) ([]optimise.Tally, error) {
	return []optimise.Tally{
		{Option: optimise.Option{Method: "CARD", Brand: "visa"}, Succeeded: 9, Failed: 1},
		{Option: optimise.Option{Method: "CARD", Brand: "mastercard"}, Succeeded: 1, Failed: 9},
	}, nil
}

func ask(t *testing.T, withOffers bool, body map[string]string, signed bool) api.OptimiseAnswer {
	t.Helper()
	gate := apitest.Gate(accounts, nil)
	gate.Tallies = tallies{}
	if withOffers {
		gate.Offers = offers{}
	}
	gate.Capabilities = []api.Capability{New(gate)}
	if signed {
		body["encryption_data"] = signing.Sign(signKey, signing.OptimiseRequest{MerchantID: body["merchant_id"],
			AccountID: body["account_id"], RequestID: body["request_id"], Currency: body["currency"],
			Amount: body["amount"], ShopperEmail: body["shopper_email"]}.Values()...)
	}
	var a api.OptimiseAnswer
	apitest.PostJSON(t, gate.Handler(), "/v1/optimise", body, "", &a)
	return a
}

func request(edit func(map[string]string)) map[string]string {
	b := map[string]string{"merchant_id": merchantID, "account_id": accountID, "request_id": "OPT-1",
		"currency": "EUR", "amount": "25.00", "country": "NL", "shopper_email": "ada@example.com"}
	if edit != nil {
		edit(b)
	}
	return b
}

// TestOptimise: the refusals with their exact codes, and a ranking that
// puts what did well first, signed for the caller who proved the key.
func TestOptimise(t *testing.T) {
	tests := []struct {
		name   string
		offers bool
		body   map[string]string
		signed bool
		want   string
	}{
		{"unsigned", true, request(nil), false, "I0001:Missing required field: encryption_data"},
		{"unknown currency for the account", true, request(func(b map[string]string) { b["currency"] = "USD" }), true,
			"I0004:Currency not supported for this account: USD"},
		{"over the account's limit", true, request(func(b map[string]string) { b["amount"] = "2000.00" }), true,
			"R0001:Amount exceeds the account limit"},
		{"no connector offers", false, request(nil), true, "S0001:Temporary system error, try again"},
		{"ranked", true, request(nil), true, "0000:Success"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := ask(t, tc.offers, tc.body, tc.signed)
			if a.ResultInfo != tc.want {
				t.Fatalf("result_info = %q, want %q", a.ResultInfo, tc.want)
			}
			if tc.want != "0000:Success" {
				if a.EncryptionData != "" || len(a.PaymentMethods) != 0 {
					t.Errorf("a refusal carries %d methods, signature %q", len(a.PaymentMethods), a.EncryptionData)
				}
				return
			}
			want := []api.OptimisedMethod{
				{Rank: 1, PaymentMethod: "CARD", Brand: "visa", SuccessRate: "0.9000", Succeeded: 9, SampleSize: 10},
				{Rank: 2, PaymentMethod: "CARD", Brand: "mastercard", SuccessRate: "0.1000", Succeeded: 1, SampleSize: 10},
				{Rank: 3, PaymentMethod: "IDEAL"},
			}
			if !reflect.DeepEqual(a.PaymentMethods, want) || a.EncryptionData == "" {
				t.Errorf("ranking = %+v, signature %q; want %+v, signed", a.PaymentMethods, a.EncryptionData, want)
			}
		})
	}
}

// byConnector: a routed account's orders, by connector: sim-bank did well
// with visa, sim-acquirer badly with mastercard, stripe has none.
type byConnector struct{}

func (byConnector) MethodTallies(context.Context, models.MethodTallyQuery) ([]optimise.Tally, error) {
	return []optimise.Tally{
		{Option: optimise.Option{Method: "CARD", Brand: "visa"}, Connector: "sim-bank", Succeeded: 8, Failed: 2},
		{Option: optimise.Option{Method: "CARD", Brand: "visa"}, Connector: "sim-acquirer", Succeeded: 1, Failed: 0},
		{Option: optimise.Option{Method: "CARD", Brand: "mastercard"}, Connector: "sim-acquirer", Succeeded: 1, Failed: 3},
	}, nil
}

// TestOptimiseRanksConnectors: a routed account's answer ranks its
// connectors too, over every method, and the signature covers that
// ranking; the methods are ranked over every connector.
func TestOptimiseRanksConnectors(t *testing.T) {
	routed := apitest.Accounts{Edit: func(a *models.Account) {
		a.Currencies, a.AmountLimits = []string{"EUR"}, map[string]int64{"EUR": 100000}
		a.Connector = "sim-acquirer"
		a.Routing = routing.Rules{Routes: []routing.Route{{Name: "cards", Targets: []routing.Target{{Connector: "sim-bank"}}}},
			Fallback: []string{"stripe"}}
	}}
	gate := apitest.Gate(routed, nil)
	gate.Tallies, gate.Offers = byConnector{}, offers{}
	gate.Capabilities = []api.Capability{New(gate)}
	body := request(nil)
	body["encryption_data"] = signing.Sign(signKey, signing.OptimiseRequest{MerchantID: body["merchant_id"],
		AccountID: body["account_id"], RequestID: body["request_id"], Currency: body["currency"],
		Amount: body["amount"], ShopperEmail: body["shopper_email"]}.Values()...)
	var a api.OptimiseAnswer
	apitest.PostJSON(t, gate.Handler(), "/v1/optimise", body, "", &a)
	want := []api.OptimisedConnector{
		{Rank: 1, Connector: "sim-bank", SuccessRate: "0.8000", Succeeded: 8, SampleSize: 10},
		{Rank: 2, Connector: "sim-acquirer", SuccessRate: "0.4000", Succeeded: 2, SampleSize: 5},
		{Rank: 3, Connector: "stripe", SuccessRate: "", Succeeded: 0, SampleSize: 0},
	}
	if !reflect.DeepEqual(a.Connectors, want) {
		t.Fatalf("connectors %+v, want %+v", a.Connectors, want)
	}
	if len(a.PaymentMethods) == 0 || a.PaymentMethods[0].Brand != "visa" || a.PaymentMethods[0].SampleSize != 11 {
		t.Errorf("methods %+v, want visa first over 11 orders", a.PaymentMethods)
	}
	signed := signing.OptimiseResult{MerchantID: a.MerchantID, AccountID: a.AccountID, RequestID: a.RequestID,
		Currency: a.Currency, Amount: a.Amount, ResultInfo: a.ResultInfo}
	for _, m := range a.PaymentMethods {
		signed.Methods = append(signed.Methods, signing.OptimiseMethod{PaymentMethod: m.PaymentMethod, Brand: m.Brand,
			SuccessRate: m.SuccessRate, SampleSize: strconv.FormatInt(m.SampleSize, 10)})
	}
	for _, c := range a.Connectors {
		signed.Connectors = append(signed.Connectors, signing.OptimiseConnector{Connector: c.Connector,
			SuccessRate: c.SuccessRate, SampleSize: strconv.FormatInt(c.SampleSize, 10)})
	}
	if a.EncryptionData != signing.SignOptimiseResult(signKey, signed) {
		t.Error("the signature does not cover the connectors' ranking")
	}
}

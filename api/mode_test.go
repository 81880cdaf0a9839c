package api

import (
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

func TestModeRefusal(t *testing.T) {
	tests := []struct {
		name, mode, connector string
		forbid                bool
		want                  *codes.Code
	}{
		{"a test account on a simulator", testmode.Test, "sim-acquirer", false, nil},
		{"a test account on the default connector", testmode.Test, "", true, nil},
		{"a test account on a live connector", testmode.Test, "acme-bank", false, &codes.TestAccountConnector},
		{"a live account on a simulator, allowed", testmode.Live, "sim-bank", false, nil},
		{"a live account on a simulator, forbidden", testmode.Live, "sim-bank", true, &codes.LiveAccountSimulator},
		{"a live account on the default simulator, forbidden", testmode.Live, "", true, &codes.LiveAccountSimulator},
		{"an account from before modes, forbidden", "", "sim-acquirer", true, &codes.LiveAccountSimulator},
		{"a live account on a live connector, forbidden", testmode.Live, "acme-bank", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Server{ForbidLiveSimulators: tt.forbid}
			a := merchant.NewTestAccount(models.Account{Mode: tt.mode, Connector: tt.connector}, "k")
			a.Mode, a.Connector = tt.mode, tt.connector
			got := s.modeRefusal(a)
			if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
				t.Errorf("modeRefusal = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestLiveSimulatorsForbiddenAtEveryDoor: with simulators forbidden to live
// accounts, a live account's card payment and hosted payment are refused
// with I0030 before any order is started.
func TestLiveSimulatorsForbiddenAtEveryDoor(t *testing.T) {
	env := newTestEnv(t)
	env.srv.ForbidLiveSimulators = true
	env.accounts.accounts[testMerchantID+"/"+testAccountID].Mode = testmode.Live
	checkout := fields{"merchant_id": testMerchantID, "account_id": testAccountID, "order_no": "ORD-H-1",
		"currency": "USD", "amount": "5.00", "return_url": "https://shop.example/return"}.
		signWith(testSignKey, []string{"merchant_id", "account_id", "order_no", "currency", "amount", "return_url"})
	card := validCard()
	card["card"] = "4242424242424267"
	card.signWith(testSignKey, cardRecipe)
	want := codes.LiveAccountSimulator.String()
	if r := parseRespon(t, env.do(t, "/v1/authorise", ctJSON, card.json(t), testQueryIP+":1")); r.ResultInfo != want {
		t.Errorf("card payment: %s, want %s", r.ResultInfo, want)
	}
	if rec := env.do(t, "/v1/checkout", ctJSON, checkout.json(t), testQueryIP+":1"); !strings.Contains(rec.Body.String(), want) {
		t.Errorf("hosted payment: %s", rec.Body.String())
	}
	if n := len(env.orders.inputs()); n != 0 {
		t.Errorf("%d orders started, want none", n)
	}
}

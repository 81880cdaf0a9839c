package payments

import (
	"testing"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/routing"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

// TestModeRefusal: which account may pay on which connector, with the
// exact code of each refusal.
func TestModeRefusal(t *testing.T) {
	tests := []struct {
		name, mode, connector string
		forbid                bool
		want                  *codes.Code
		rules                 routing.Rules
	}{
		{"a test account on a simulator", testmode.Test, "sim-acquirer", false, nil, routing.Rules{}},
		{"a test account on the default connector", testmode.Test, "", true, nil, routing.Rules{}},
		{"a test account on a live connector", testmode.Test, "acme-bank", false, &codes.TestAccountConnector, routing.Rules{}},
		{"a live account on a simulator, allowed", testmode.Live, "sim-bank", false, nil, routing.Rules{}},
		{"a live account on a simulator, forbidden", testmode.Live, "sim-bank", true, &codes.LiveAccountSimulator, routing.Rules{}},
		{"a live account on the default simulator, forbidden", testmode.Live, "", true, &codes.LiveAccountSimulator, routing.Rules{}},
		{"an account from before modes, forbidden", "", "sim-acquirer", true, &codes.LiveAccountSimulator, routing.Rules{}},
		{"a live account on a live connector, forbidden", testmode.Live, "acme-bank", true, nil, routing.Rules{}},
		{"a test account routed to a live connector too", testmode.Test, "sim-acquirer", false, &codes.TestAccountConnector,
			routing.Rules{Fallback: []string{"sim-bank", "stripe"}}},
		{"a live account routed to a simulator too, forbidden", testmode.Live, "stripe", true, &codes.LiveAccountSimulator,
			routing.Rules{Routes: []routing.Route{{Name: "r", Targets: []routing.Target{{Connector: "sim-bank"}}}}}},
		{"a test account routed over simulators", testmode.Test, "sim-acquirer", true, nil, routing.Rules{Fallback: []string{"sim-bank"}}},
		{"a test account on stripe's test key", testmode.Test, "stripe-test", false, nil, routing.Rules{}},
		{"a live account on stripe's test key, forbidden", testmode.Live, "stripe-test", true, &codes.LiveAccountSimulator, routing.Rules{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// stripe-test stands for Stripe on a test-mode key.
			h := &Handler{ForbidLiveSimulators: tt.forbid, TestConnector: func(name string) bool {
				return testmode.Simulated(name) || name == "stripe-test"
			}}
			a := merchant.NewTestAccount(models.Account{Mode: tt.mode, Connector: tt.connector, Routing: tt.rules}, "k")
			a.Mode, a.Connector = tt.mode, tt.connector
			got := h.modeRefusal(a)
			if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
				t.Errorf("modeRefusal = %v, want %v", got, tt.want)
			}
		})
	}
}

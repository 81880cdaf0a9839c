package app

import (
	"errors"
	"testing"

	"github.com/paygate/paygate/internal/adapters/connectors"
)

// TestConnectorOffers: the API's registry of what each connector takes
// answers by the names accounts give: APMs on the simulated acquirer (also
// as the default), cards only on sim-bank, nothing for an unknown name.
func TestConnectorOffers(t *testing.T) {
	cfg := Config{Connectors: ConnectorsConfig{Names: []string{"sim-acquirer", "sim-bank"}, AcquirerURL: "http://127.0.0.1:8090",
		SimBankURL: "http://127.0.0.1:8091", ProviderSecret: "a-provider-secret-for-tests"}}
	set, err := cfg.BuildConnectors()
	if err != nil {
		t.Fatal(err)
	}
	offers := set.Offers
	for _, tc := range []struct {
		name string
		apms int
	}{{"", 3}, {"sim-acquirer", 3}, {"sim-bank", 0}} {
		c, err := offers.Get(tc.name)
		if err != nil {
			t.Fatalf("Get(%q): %v", tc.name, err)
		}
		if o := c.Offer(); len(o.APMs) != tc.apms || len(o.CardBrands) == 0 {
			t.Errorf("Get(%q).Offer() = %+v, want cards and %d APMs", tc.name, o, tc.apms)
		}
	}
	if _, err := offers.Get("acme-bank"); !errors.Is(err, connectors.ErrUnknown) {
		t.Errorf("Get of an unknown connector: %v", err)
	}
}

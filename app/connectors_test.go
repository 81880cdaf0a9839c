package app

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/paygate/paygate/internal/adapters/connectors"
	"github.com/paygate/paygate/internal/adapters/connectors/simacquirer"
	"github.com/paygate/paygate/internal/domain/connector"
)

func TestConnectorsFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    []string
		wantURL string
		bad     []string // variables refused as malformed
		unset   []string // variables refused as missing
	}{
		{"defaults", nil, []string{"sim-acquirer", "sim-bank"}, DefaultSimBankURL, nil, nil},
		{"the simulator only", map[string]string{"PAYGATE_CONNECTORS": "sim-acquirer"}, []string{"sim-acquirer"}, DefaultSimBankURL, nil, nil},
		{"sim-bank only, elsewhere", map[string]string{"PAYGATE_CONNECTORS": " sim-bank ", "SIMBANK_URL": "https://bank.example/acq"},
			[]string{"sim-bank"}, "https://bank.example/acq", nil, nil},
		{"an unknown connector", map[string]string{"PAYGATE_CONNECTORS": "sim-acquirer,acme"}, nil, DefaultSimBankURL, []string{"PAYGATE_CONNECTORS"}, nil},
		{"a connector twice", map[string]string{"PAYGATE_CONNECTORS": "sim-bank,sim-bank"}, nil, DefaultSimBankURL, []string{"PAYGATE_CONNECTORS"}, nil},
		{"none", map[string]string{"PAYGATE_CONNECTORS": " , "}, nil, DefaultSimBankURL, []string{"PAYGATE_CONNECTORS"}, nil},
		{"sim-bank at no URL", map[string]string{"SIMBANK_URL": "bank.example:8091"}, []string{"sim-acquirer", "sim-bank"}, "bank.example:8091", []string{"SIMBANK_URL"}, nil},
		{"a bad URL of a connector not run", map[string]string{"PAYGATE_CONNECTORS": "sim-acquirer", "SIMBANK_URL": "nowhere"},
			[]string{"sim-acquirer"}, "nowhere", nil, nil},
		{"stripe with its key", map[string]string{"PAYGATE_CONNECTORS": "stripe,sim-bank", "STRIPE_SECRET_KEY": "sk_test_1"},
			[]string{"stripe", "sim-bank"}, DefaultSimBankURL, nil, nil},
		{"stripe without a key", map[string]string{"PAYGATE_CONNECTORS": "stripe"}, []string{"stripe"}, DefaultSimBankURL, nil, []string{"STRIPE_SECRET_KEY"}},
		{"stripe at no URL", map[string]string{"PAYGATE_CONNECTORS": "stripe", "STRIPE_SECRET_KEY": "sk_test_1", "STRIPE_API_URL": "api.stripe.com"},
			[]string{"stripe"}, DefaultSimBankURL, []string{"STRIPE_API_URL"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c Config
			got := map[string]error{}
			connectorsFromEnv(&c, func(name string) string { return tc.env[name] }, func(name string, err error) { got[name] = err })
			for _, name := range tc.bad {
				if !errors.Is(got[name], ErrMalformed) {
					t.Errorf("%s: %v, want ErrMalformed", name, got[name])
				}
			}
			for _, name := range tc.unset {
				if !errors.Is(got[name], ErrUnset) {
					t.Errorf("%s: %v, want ErrUnset", name, got[name])
				}
			}
			if len(got) != len(tc.bad)+len(tc.unset) {
				t.Errorf("refused %v, want %v", got, tc.bad)
			}
			if !slices.Equal(c.Connectors.Names, tc.want) || c.Connectors.SimBankURL != tc.wantURL {
				t.Errorf("Connectors %v at %q, want %v at %q", c.Connectors.Names, c.Connectors.SimBankURL, tc.want, tc.wantURL)
			}
		})
	}
}

func TestCheckConnector(t *testing.T) {
	both := Config{Connectors: ConnectorsConfig{Names: []string{"sim-acquirer", "sim-bank"}}}
	simOnly := Config{Connectors: ConnectorsConfig{Names: []string{"sim-acquirer"}}}
	tests := []struct {
		name      string
		cfg       Config
		connector string
		ok        bool
	}{
		{"the simulator", both, "sim-acquirer", true},
		{"sim-bank", both, "sim-bank", true},
		{"empty is the default", simOnly, "", true},
		{"not run here", simOnly, "sim-bank", false},
		{"unknown", both, "acme-bank", false},
		{"case matters", both, "Sim-Bank", false},
		{"hand-made config without sim-bank's URL", Config{}, "sim-bank", false},
		{"hand-made config with sim-bank's URL", Config{Connectors: ConnectorsConfig{SimBankURL: "http://127.0.0.1:8091"}}, "sim-bank", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.CheckConnector(tc.connector)
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrUnknownConnector)) {
				t.Errorf("CheckConnector(%q) = %v, want ok %t", tc.connector, err, tc.ok)
			}
		})
	}
}

// TestConnectorRegistries builds the registries the activities and the API
// use from a configuration, and checks each connector answers to its name.
func TestConnectorRegistries(t *testing.T) {
	cfg := Config{Connectors: ConnectorsConfig{Names: []string{"sim-acquirer", "sim-bank", "stripe"}, AcquirerURL: "http://127.0.0.1:8090",
		SimBankURL: "http://127.0.0.1:8091", ProviderSecret: "a-provider-secret-for-tests", StripeSecretKey: "sk_test_1"}}
	set, err := cfg.BuildConnectors()
	if err != nil {
		t.Fatal(err)
	}
	acts := set.Activities
	if !slices.Equal(acts.Names(), []string{"sim-acquirer", "sim-bank", "stripe"}) || acts.Default() != connector.DefaultName {
		t.Errorf("names %v, default %q", acts.Names(), acts.Default())
	}
	for _, tc := range []struct{ ask, want string }{{"", "sim-acquirer"}, {"sim-acquirer", "sim-acquirer"}, {"sim-bank", "sim-bank"}, {"stripe", "stripe"}} {
		c, err := acts.Get(tc.ask)
		if err != nil || c.Name() != tc.want {
			t.Errorf("Get(%q) = %v, %v, want %s", tc.ask, c, err, tc.want)
		}
	}
	if _, err := acts.Get("acme-bank"); !errors.Is(err, connectors.ErrUnknown) {
		t.Errorf("Get of an unknown connector: %v", err)
	}

	cbs := set.Callbacks
	// The three registries hold the same connector, built once.
	a, _ := acts.Get("sim-acquirer")
	cb, _ := cbs.Get("sim-acquirer")
	of, _ := set.Offers.Get("sim-acquirer")
	if any(a) != any(cb) || any(a) != any(of) {
		t.Error("the activities, callbacks and offers hold different sim-acquirer connectors")
	}
	form := url.Values{"authentication_id": {"au_1"}, "status": {"authenticated"}, "cavv": {"c"}, "reference": {"1"}}
	form.Set("signature", simacquirer.SignThreeDSResult(cfg.Connectors.ProviderSecret, "au_1", "authenticated", "c", "1"))
	body := []byte(`{"payment_id":"ap_1","reference":"1"}`)
	header := http.Header{"X-Provider-Signature": {simacquirer.SignProviderCallback(cfg.Connectors.ProviderSecret, body)}}
	for _, tc := range []struct {
		name string
		want bool
	}{{"sim-acquirer", true}, {"sim-bank", false}, {"stripe", false}} {
		v, err := cbs.Get(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		_, err3 := v.ReadThreeDSResult(form)
		_, errAPM := v.ReadAPMCallback(body, header)
		if (err3 == nil) != tc.want || (errAPM == nil) != tc.want {
			t.Errorf("%s verifies the simulator's callbacks: want %t", tc.name, tc.want)
		}
	}

	if _, err := (Config{Connectors: ConnectorsConfig{Names: []string{"sim-bank"}, SimBankURL: "not a url"}}).BuildConnectors(); err == nil {
		t.Error("a connector at a bad URL was built")
	}
	if _, err := (Config{Connectors: ConnectorsConfig{Names: []string{"stripe"}}}).BuildConnectors(); err == nil {
		t.Error("a stripe connector without a secret key was built")
	}
}

// TestTestConnector: the connectors that move no real money, which a test
// account may reach: the simulators, and Stripe on a test-mode key.
func TestTestConnector(t *testing.T) {
	tests := []struct {
		name, key, connector string
		want                 bool
	}{
		{"the first simulator", "", "sim-acquirer", true},
		{"the second simulator", "", "sim-bank", true},
		{"stripe on a test key", "sk_test_1", "stripe", true},
		{"stripe on a restricted test key", "rk_test_1", "stripe", true},
		{"stripe on a live key", "sk_live_1", "stripe", false},
		{"a connector no build knows", "sk_test_1", "acme", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Config{Connectors: ConnectorsConfig{StripeSecretKey: tc.key}}
			if got := c.TestConnector(tc.connector); got != tc.want {
				t.Errorf("TestConnector(%s) = %v, want %v", tc.connector, got, tc.want)
			}
		})
	}
}

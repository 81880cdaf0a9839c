package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/payments"
	"github.com/paygate/paygate/internal/adapters/connectors"
	"github.com/paygate/paygate/internal/adapters/connectors/simacquirer"
	"github.com/paygate/paygate/internal/adapters/connectors/simbank"
	"github.com/paygate/paygate/internal/adapters/connectors/stripe"
	"github.com/paygate/paygate/internal/adapters/reconcile"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/recon"
	"github.com/paygate/paygate/internal/domain/testmode"
)

// KnownConnectors are the connectors this build can run, by the name
// accounts give them.
var KnownConnectors = []string{simacquirer.Name, simbank.Name, stripe.Name}

// DefaultConnectors is PAYGATE_CONNECTORS when it is not set: both
// simulated acquirers.
const DefaultConnectors = simacquirer.Name + "," + simbank.Name

// DefaultSimBankURL is SIMBANK_URL when it is not set.
const DefaultSimBankURL = "http://127.0.0.1:8091"

// ErrUnknownConnector refuses a connector name the deployment does not run.
var ErrUnknownConnector = errors.New("unknown connector")

// connectorsFromEnv reads which connectors run (PAYGATE_CONNECTORS) and
// their settings beyond the first simulator's (SIMBANK_URL, STRIPE_SECRET_KEY,
// STRIPE_API_URL); FromEnv calls
// it and reports what fail is given with the rest.
func connectorsFromEnv(c *Config, getenv func(string) string, fail func(name string, err error)) {
	c.Connectors.SimBankURL = getenv("SIMBANK_URL")
	if c.Connectors.SimBankURL == "" {
		c.Connectors.SimBankURL = DefaultSimBankURL
	}
	spec := getenv("PAYGATE_CONNECTORS")
	if spec == "" {
		spec = DefaultConnectors
	}
	names, err := parseConnectors(spec)
	if err != nil {
		fail("PAYGATE_CONNECTORS", err)
	}
	c.Connectors.Names = names
	if slices.Contains(names, simbank.Name) && !httpURL(c.Connectors.SimBankURL) {
		fail("SIMBANK_URL", fmt.Errorf("%w: want an absolute http or https URL", ErrMalformed))
	}
	c.Connectors.StripeSecretKey, c.Connectors.StripeURL = getenv("STRIPE_SECRET_KEY"), getenv("STRIPE_API_URL")
	c.Connectors.StripeWebhookSecret = getenv("STRIPE_WEBHOOK_SECRET")
	if slices.Contains(names, stripe.Name) {
		if c.Connectors.StripeSecretKey == "" {
			fail("STRIPE_SECRET_KEY", fmt.Errorf("%w: the stripe connector needs the account's secret key", ErrUnset))
		}
		if c.Connectors.StripeURL != "" && !httpURL(c.Connectors.StripeURL) {
			fail("STRIPE_API_URL", fmt.Errorf("%w: want an absolute http or https URL", ErrMalformed))
		}
	}
}

// parseConnectors reads a comma-separated list of known connector names,
// each at most once.
func parseConnectors(spec string) ([]string, error) {
	var names []string
	for _, n := range strings.Split(spec, ",") {
		n = strings.TrimSpace(n)
		switch {
		case n == "":
			continue
		case !slices.Contains(KnownConnectors, n):
			return nil, fmt.Errorf("%w: unknown connector %q (known: %s)", ErrMalformed, n, strings.Join(KnownConnectors, ", "))
		case slices.Contains(names, n):
			return nil, fmt.Errorf("%w: connector %q named twice", ErrMalformed, n)
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: name at least one connector", ErrMalformed)
	}
	return names, nil
}

// RunsConnectors lists the connectors the configuration runs. A
// Config made without FromEnv (nil Connectors) runs the simulated acquirer,
// and sim-bank when SimBankURL is set.
func (c Config) RunsConnectors() []string {
	if c.Connectors.Names != nil {
		return c.Connectors.Names
	}
	names := []string{simacquirer.Name}
	if c.Connectors.SimBankURL != "" {
		names = append(names, simbank.Name)
	}
	return names
}

// TestConnector reports whether a connector moves no real money, so that
// a test account may reach it: a simulator, or Stripe on a test-mode key.
func (c Config) TestConnector(name string) bool {
	return testmode.Simulated(name) || name == stripe.Name && stripe.IsTestKey(c.Connectors.StripeSecretKey)
}

// CheckConnector refuses, with ErrUnknownConnector, a connector name the
// configuration does not run; an empty name is the default connector.
func (c Config) CheckConnector(name string) error {
	if name == "" {
		name = connector.DefaultName
	}
	if !slices.Contains(c.RunsConnectors(), name) {
		return fmt.Errorf("%w %q: this deployment runs %s (PAYGATE_CONNECTORS)", ErrUnknownConnector, name,
			strings.Join(c.RunsConnectors(), ", "))
	}
	return nil
}

// gatewayConnector is what a connector is to the gateway: the activities'
// acquirer, the API's check of the callbacks it sends and its word on what
// it takes (POST /v1/optimise).
type gatewayConnector interface {
	activities.Connector
	payments.CallbackReader
	api.ConnectorOffer
}

// Stripe's search by key may lag its record, so the activities read a
// charge they know by its id.
var _ activities.ChargeReader = (*stripe.Client)(nil)

// buildConnectors makes every connector the configuration runs.
func (c Config) buildConnectors() ([]gatewayConnector, error) {
	var out []gatewayConnector
	for _, name := range c.RunsConnectors() {
		var conn gatewayConnector
		var err error
		switch name {
		case simacquirer.Name:
			conn, err = simacquirer.New(simacquirer.Config{BaseURL: c.Connectors.AcquirerURL, Timeout: c.Connectors.AcquirerTimeout,
				CallbackSecret: c.Connectors.ProviderSecret})
		case simbank.Name:
			conn, err = simbank.New(simbank.Config{BaseURL: c.Connectors.SimBankURL, Timeout: c.Connectors.AcquirerTimeout})
		case stripe.Name:
			conn, err = stripe.New(stripe.Config{SecretKey: c.Connectors.StripeSecretKey, BaseURL: c.Connectors.StripeURL,
				Timeout: c.Connectors.AcquirerTimeout, CallbackSecret: c.Connectors.ProviderSecret, WebhookSecret: c.Connectors.StripeWebhookSecret,
				SettlementDays: SettlementTerms[stripe.Name].Days})
		default:
			err = fmt.Errorf("%w %q", ErrUnknownConnector, name)
		}
		if err != nil {
			return nil, fmt.Errorf("connector %s: %w", name, err)
		}
		out = append(out, conn)
	}
	return out, nil
}

// registry puts the connectors, each under its own name, in a registry
// whose entries are seen as C.
func registry[C any](conns []gatewayConnector, as func(gatewayConnector) C) (*connectors.Registry[C], error) {
	r := connectors.New[C](connector.DefaultName)
	for _, c := range conns {
		if err := r.Register(c.Name(), as(c)); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// ConnectorSet is every connector the configuration runs, built once and
// seen three ways: by the activities (their acquirer), by the API's
// callback checks and by POST /v1/optimise (what each takes). The three
// registries hold the same instances.
type ConnectorSet struct {
	Activities *connectors.Registry[activities.Connector]
	Callbacks  *connectors.Registry[payments.CallbackReader]
	Offers     *connectors.Registry[api.ConnectorOffer]
	// Settlements are the connectors that give settlement reports, by
	// name, with their contract.
	Settlements map[string]reconcile.Connector
}

// BuildConnectors builds every connector the configuration runs, once.
func (c Config) BuildConnectors() (*ConnectorSet, error) {
	conns, err := c.buildConnectors()
	if err != nil {
		return nil, err
	}
	acts, err := registry(conns, func(g gatewayConnector) activities.Connector { return g })
	if err != nil {
		return nil, err
	}
	cbs, err := registry(conns, func(g gatewayConnector) payments.CallbackReader { return g })
	if err != nil {
		return nil, err
	}
	offers, err := registry(conns, func(g gatewayConnector) api.ConnectorOffer { return g })
	if err != nil {
		return nil, err
	}
	settlements := map[string]reconcile.Connector{}
	for _, conn := range conns {
		if src, ok := conn.(reconcile.Source); ok {
			settlements[conn.Name()] = reconcile.Connector{Source: src, Terms: SettlementTerms[conn.Name()]}
		}
	}
	return &ConnectorSet{Activities: acts, Callbacks: cbs, Offers: offers, Settlements: settlements}, nil
}

// SettlementTerms are each connector's settlement contract: how many days
// after a capture it settles, and its fee (fixed minor units plus basis
// points of the gross), against which reconciliation checks what it took.
// The simulators' are what they charge by default.
var SettlementTerms = map[string]reconcile.Terms{
	simacquirer.Name: {Days: 1, Fees: recon.FeeSchedule{Fixed: 30, BasisPoints: 290}},
	simbank.Name:     {Days: 1, Fees: recon.FeeSchedule{Fixed: 25, BasisPoints: 150}},
	stripe.Name:      {Days: 2, Fees: recon.FeeSchedule{Fixed: 30, BasisPoints: 290}},
}

package app

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/adapters/payoutschedule"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/rail"
	"github.com/paygate/paygate/internal/domain/payout"
	"github.com/paygate/paygate/models"
)

// PayoutPricingFile is the JSON file the operator keeps the payout exchange
// rates and fee schedule in (PAYGATE_PAYOUT_RATES); without it the built-in
// DefaultPayoutPricing applies, which suits development only.
type PayoutPricingFile struct {
	Rates []payout.RateEntry `json:"rates"`
	Fees  []payout.FeeRule   `json:"fees"`
}

// DefaultPayoutPricing is the development rate table and fee schedule.
// SWIFT costs 2.00 + 0.25% (at least 5.00, at most 50.00; 15.00 more when
// the payer takes over the intermediaries' charges); LOCAL costs 0.50. JPY
// has no minor unit, so its amounts are in yen.
func DefaultPayoutPricing() PayoutPricingFile {
	swift := func(cur string, unit int64) payout.FeeRule {
		return payout.FeeRule{PaymentMethod: payout.MethodSwift, Currency: cur, FixedMinor: 2 * unit, BasisPoints: 25,
			MinimumMinor: 5 * unit, MaximumMinor: 50 * unit, SwiftPayerSurchargeMinor: 15 * unit}
	}
	local := func(cur string, fixed int64) payout.FeeRule {
		return payout.FeeRule{PaymentMethod: payout.MethodLocal, Currency: cur, FixedMinor: fixed}
	}
	return PayoutPricingFile{
		Rates: []payout.RateEntry{
			{Source: "USD", Target: "EUR", Rate: "0.92"}, {Source: "EUR", Target: "USD", Rate: "1.08"},
			{Source: "USD", Target: "GBP", Rate: "0.79"}, {Source: "GBP", Target: "USD", Rate: "1.26"},
			{Source: "EUR", Target: "GBP", Rate: "0.85"}, {Source: "GBP", Target: "EUR", Rate: "1.17"},
			{Source: "USD", Target: "JPY", Rate: "151.23456789"}, {Source: "EUR", Target: "JPY", Rate: "163.5"},
		},
		Fees: []payout.FeeRule{
			swift("USD", 100), swift("EUR", 100), swift("GBP", 100), swift("JPY", 150),
			local("USD", 50), local("EUR", 50), local("GBP", 50),
		},
	}
}

// LoadPayoutPricing reads the pricing file at path, or returns the default
// when path is empty, and checks it.
func LoadPayoutPricing(path string) (activities.PayoutPricing, error) {
	f := DefaultPayoutPricing()
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return activities.PayoutPricing{}, fmt.Errorf("payout pricing: %w", err)
		}
		f = PayoutPricingFile{}
		if err := json.Unmarshal(b, &f); err != nil {
			return activities.PayoutPricing{}, fmt.Errorf("payout pricing %s: %w", path, err)
		}
	}
	rates, err := payout.NewRates(f.Rates)
	if err != nil {
		return activities.PayoutPricing{}, fmt.Errorf("payout pricing: %w", err)
	}
	fees, err := payout.NewFeeSchedule(f.Fees)
	if err != nil {
		return activities.PayoutPricing{}, fmt.Errorf("payout pricing: %w", err)
	}
	return activities.PayoutPricing{Rates: rates, Fees: fees}, nil
}

// PayoutActivities returns the payout activities: the payouts table, the
// ledger, the rail clients at Config.Payouts.RailURL (live accounts) and
// Config.Payouts.TestRailURL (test accounts), and the pricing of
// PAYGATE_PAYOUT_RATES.
func (g *Gateway) PayoutActivities() (*activities.PayoutActivities, error) {
	pricing, err := LoadPayoutPricing(os.Getenv("PAYGATE_PAYOUT_RATES"))
	if err != nil {
		return nil, err
	}
	railURL := cmp.Or(g.Config.Payouts.RailURL, "http://127.0.0.1:8092")
	rc, err := rail.NewClient(railURL, 10*time.Second)
	if err != nil {
		return nil, err
	}
	// Test accounts' payouts go to the simulated rail, and to nothing else:
	// without one they are refused. A configuration made by hand with no
	// rail at all (tests) has the local simulator for both, as FromEnv's
	// defaults do.
	var testRail activities.PayoutRail
	switch u := g.Config.Payouts.TestRailURL; {
	case u == "" && g.Config.Payouts.RailURL == "":
		testRail = rc
	case u == "":
		g.Logger.Warn("no simulated payout rail (TEST_RAIL_URL): test accounts' payouts will fail")
	case strings.TrimSuffix(u, "/") == strings.TrimSuffix(railURL, "/"):
		testRail = rc
	default:
		if testRail, err = rail.NewClient(u, 10*time.Second); err != nil {
			return nil, err
		}
	}
	return &activities.PayoutActivities{
		Records:   models.Records{DB: g.DB},
		Ledger:    ledger.New(g.DB),
		Rail:      rc,
		TestRail:  testRail,
		Pricing:   pricing,
		Schedules: &payoutschedule.Planner{DB: g.DB, Ledger: ledger.New(g.DB), IDs: g.transactionIDs()},
		Logger:    g.Logger.With("component", "payout-activities"),
	}, nil
}

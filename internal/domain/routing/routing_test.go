package routing

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/domain/connector"
)

// rules send EUR cards to
// sim-bank then stripe, big USD payments to stripe, PIX to sim-acquirer,
// with sim-acquirer as the fallback.
var rules = Rules{
	Routes: []Route{
		{Name: "euro cards", When: Condition{Currencies: []string{"EUR"}, Methods: []string{MethodCard}},
			Targets: []Target{{Connector: "sim-bank"}, {Connector: "stripe"}}},
		{Name: "big dollars", When: Condition{Currencies: []string{"USD"}, MinAmount: 100000},
			Targets: []Target{{Connector: "stripe"}}},
		{Name: "amex", When: Condition{CardBrands: []string{"amex"}}, Targets: []Target{{Connector: "stripe"}}},
		{Name: "bins 5100-5599", When: Condition{BINRanges: []BINRange{{From: "5100", To: "5599"}}},
			Targets: []Target{{Connector: "sim-bank"}}},
		{Name: "german billing", When: Condition{BillingCountries: []string{"DE"}, MaxAmount: 5000},
			Targets: []Target{{Connector: "stripe"}, {Connector: "sim-bank"}}},
		{Name: "pix", When: Condition{Methods: []string{"PIX"}}, Targets: []Target{{Connector: "sim-acquirer"}}},
	},
	Fallback: []string{"sim-acquirer"},
}

func card(currency string, amount int64, brand, bin string) Payment {
	return Payment{Key: "1379868670095785984", Amount: amount, Currency: currency, Method: MethodCard, Brand: brand, BIN: bin}
}

// TestPlan: which route takes each payment and the connectors it is tried
// on, in order, the fallback after the route's own.
func TestPlan(t *testing.T) {
	german := card("GBP", 4000, "visa", "424242")
	german.BillingCountry = "DE"
	germanBig := german
	germanBig.Amount = 5001
	tests := []struct {
		name      string
		rules     Rules
		payment   Payment
		wantRoute string
		want      []string
	}{
		{"no rules: the account's connector, as before", Rules{}, card("EUR", 100, "visa", "424242"), "account", []string{"sim-bank"}},
		{"euro card", rules, card("EUR", 100, "visa", "424242"), "euro cards", []string{"sim-bank", "stripe", "sim-acquirer"}},
		{"a euro APM is not a euro card", rules, Payment{Currency: "EUR", Method: "SEPA"}, "fallback", []string{"sim-acquirer"}},
		{"dollars at the bound", rules, card("USD", 100000, "visa", "424242"), "big dollars", []string{"stripe", "sim-acquirer"}},
		{"dollars under the bound", rules, card("USD", 99999, "visa", "424242"), "fallback", []string{"sim-acquirer"}},
		{"amex by brand", rules, card("GBP", 100, "amex", "371449"), "amex", []string{"stripe", "sim-acquirer"}},
		{"BIN at the range's low end", rules, card("GBP", 100, "mastercard", "510000"), "bins 5100-5599", []string{"sim-bank", "sim-acquirer"}},
		{"BIN at the range's high end", rules, card("GBP", 100, "mastercard", "559999"), "bins 5100-5599", []string{"sim-bank", "sim-acquirer"}},
		{"BIN past the range", rules, card("GBP", 100, "mastercard", "560000"), "fallback", []string{"sim-acquirer"}},
		{"billing country within the amount bound", rules, german, "german billing", []string{"stripe", "sim-bank", "sim-acquirer"}},
		{"billing country over the amount bound", rules, germanBig, "fallback", []string{"sim-acquirer"}},
		{"PIX", rules, Payment{Currency: "BRL", Amount: 100, Method: "PIX"}, "pix", []string{"sim-acquirer"}},
		{"a fallback that repeats a route's connector is tried once",
			Rules{Routes: []Route{{Name: "all", Targets: []Target{{Connector: "stripe"}, {Connector: "sim-bank"}}}}, Fallback: []string{"sim-bank", "sim-acquirer"}},
			card("USD", 1, "visa", "424242"), "all", []string{"stripe", "sim-bank", "sim-acquirer"}},
		{"no route and no fallback: nowhere", Rules{Routes: []Route{{Name: "pix", When: Condition{Methods: []string{"PIX"}}, Targets: []Target{{Connector: "sim-acquirer"}}}}},
			card("USD", 1, "visa", "424242"), "fallback", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.rules.Plan(tc.payment, "sim-bank")
			if got.Route != tc.wantRoute || !slices.Equal(got.Connectors, tc.want) {
				t.Errorf("Plan = %s %v, want %s %v", got.Route, got.Connectors, tc.wantRoute, tc.want)
			}
		})
	}
}

// TestPlanBudget: the rules' retry budget and soft-decline opt-in travel
// with the plan; an account without rules gets one attempt.
func TestPlanBudget(t *testing.T) {
	tests := []struct {
		name  string
		rules Rules
		want  int
		soft  bool
	}{
		{"no rules", Rules{}, 1, false},
		{"the default budget", Rules{Fallback: []string{"stripe"}}, DefaultMaxAttempts, false},
		{"a budget of its own, soft declines retried", Rules{Fallback: []string{"stripe"}, MaxAttempts: 5, RetrySoftDeclines: true}, 5, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.rules.Plan(card("USD", 1, "visa", "424242"), "sim-acquirer")
			if got.MaxAttempts != tc.want || got.RetrySoftDeclines != tc.soft {
				t.Errorf("budget %d, soft %v; want %d, %v", got.MaxAttempts, got.RetrySoftDeclines, tc.want, tc.soft)
			}
		})
	}
}

// TestVolumeSplit: a 70/30 split sends about 70% of payments to the first
// connector first, the other behind it, and a payment always to the same.
func TestVolumeSplit(t *testing.T) {
	split := Rules{Routes: []Route{{Name: "split", Targets: []Target{{Connector: "sim-bank", Weight: 70}, {Connector: "stripe", Weight: 30}}}}}
	first := map[string]int{}
	for i := range 10000 {
		p := card("USD", 100, "visa", "424242")
		p.Key = fmt.Sprintf("13798686700957%05d", i)
		plan := split.Plan(p, "sim-acquirer")
		if !plan.Split || len(plan.Connectors) != 2 || plan.Connectors[0] == plan.Connectors[1] {
			t.Fatalf("plan %+v", plan)
		}
		if again := split.Plan(p, "sim-acquirer"); !slices.Equal(again.Connectors, plan.Connectors) {
			t.Fatalf("key %s planned %v, then %v", p.Key, plan.Connectors, again.Connectors)
		}
		first[plan.Connectors[0]]++
	}
	if n := first["sim-bank"]; n < 6700 || n > 7300 {
		t.Errorf("sim-bank first for %d of 10000, want about 7000", n)
	}
}

// TestValidate: each refusal names its fault; good rules pass.
func TestValidate(t *testing.T) {
	known := []string{"sim-acquirer", "sim-bank", "stripe"}
	route := func(edit func(*Route)) Rules {
		r := Route{Name: "r", Targets: []Target{{Connector: "stripe"}}}
		edit(&r)
		return Rules{Routes: []Route{r}}
	}
	tests := []struct {
		name  string
		rules Rules
		want  string // a part of the refusal; "" passes
	}{
		{"the example rules", rules, ""},
		{"no rules", Rules{}, ""},
		{"an unknown connector", route(func(r *Route) { r.Targets[0].Connector = "acme" }), `connector "acme" is not run here`},
		{"an unknown fallback", Rules{Fallback: []string{"acme"}}, `fallback: connector "acme"`},
		{"no name", route(func(r *Route) { r.Name = "" }), "needs a name"},
		{"the name fallback", route(func(r *Route) { r.Name = "fallback" }), "needs a name"},
		{"no connectors", route(func(r *Route) { r.Targets = nil }), "no connectors"},
		{"a negative weight", route(func(r *Route) { r.Targets[0].Weight = -1 }), "negative weight"},
		{"an empty amount range", route(func(r *Route) { r.When.MinAmount, r.When.MaxAmount = 10, 5 }), "amount range"},
		{"a BIN range of two lengths", route(func(r *Route) { r.When.BINRanges = []BINRange{{From: "4", To: "4999"}} }), "BIN range 4-4999"},
		{"a BIN range upside down", route(func(r *Route) { r.When.BINRanges = []BINRange{{From: "5", To: "4"}} }), "BIN range 5-4"},
		{"a BIN range longer than a card's BIN", route(func(r *Route) { r.When.BINRanges = []BINRange{{From: "42424200", To: "42424299"}} }),
			"BIN range 42424200-42424299 is longer than the 6 digits a card's BIN has here"},
		{"a budget too big", Rules{Fallback: []string{"stripe"}, MaxAttempts: 11}, "max_attempts"},
		{"two routes of one name", Rules{Routes: []Route{{Name: "a", Targets: []Target{{Connector: "stripe"}}}, {Name: "a", Targets: []Target{{Connector: "stripe"}}}}}, `"a" is taken`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.rules.Validate(known)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate = %v, want a refusal with %q", err, tc.want)
			}
		})
	}
}

// TestDecide is the failover table: every outcome, with the budget and the
// plan's end.
func TestDecide(t *testing.T) {
	plan := Plan{Connectors: []string{"sim-bank", "stripe", "sim-acquirer"}, MaxAttempts: 3}
	soft := plan
	soft.RetrySoftDeclines = true
	big := plan
	big.MaxAttempts = 5
	tests := []struct {
		name     string
		outcome  Outcome
		plan     Plan
		attempts int
		want     Decision
	}{
		{"approved", Approved, plan, 1, Stop},
		{"hard decline", HardDecline, soft, 1, Stop},
		{"soft decline, not opted in", SoftDecline, plan, 1, Stop},
		{"soft decline, opted in", SoftDecline, soft, 1, TryNext},
		{"down", Down, plan, 1, TryNext},
		{"skipped by its breaker", Skipped, plan, 1, TryNext},
		{"skipped with the budget spent", Skipped, plan, 3, Stop},
		{"refused the request", Refused, plan, 2, TryNext},
		{"unknown: inquire, never move on", Unknown, plan, 1, InquireFirst},
		{"unknown with the budget spent: still inquire", Unknown, plan, 3, InquireFirst},
		{"down with the budget spent", Down, plan, 3, Stop},
		{"down at the last connector, budget left: from the first again", Down, big, 3, TryNext},
		{"down, the only connector, a budget of one", Down, Plan{Connectors: []string{"sim-bank"}, MaxAttempts: 1}, 1, Stop},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.outcome, tc.plan, tc.attempts); got != tc.want {
				t.Errorf("Decide = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestPlanNext: attempts go through the plan's connectors in order, then
// from the first again.
func TestPlanNext(t *testing.T) {
	p := Plan{Connectors: []string{"a", "b"}}
	var got []string
	for n := 1; n <= 5; n++ {
		got = append(got, p.Next(n))
	}
	if want := []string{"a", "b", "a", "b", "a"}; !slices.Equal(got, want) {
		t.Errorf("Next = %v, want %v", got, want)
	}
}

func TestDeclineOutcome(t *testing.T) {
	tests := []struct {
		reason connector.DeclineReason
		want   Outcome
	}{
		{connector.DeclineGeneric, SoftDecline},
		{"", SoftDecline},
		{connector.DeclineInsufficientFunds, HardDecline},
		{connector.DeclineExpiredCard, HardDecline},
		{connector.DeclineIncorrectCVC, HardDecline},
		{connector.DeclineAuthenticationRequired, HardDecline},
		{connector.DeclineAuthenticationFailed, HardDecline},
		// Lost, stolen, fraud: the issuer's "never again" is no card for
		// another acquirer.
		{connector.DeclineDoNotRetry, HardDecline},
	}
	for _, tc := range tests {
		t.Run(string(tc.reason), func(t *testing.T) {
			if got := DeclineOutcome(tc.reason); got != tc.want {
				t.Errorf("DeclineOutcome = %s, want %s", got, tc.want)
			}
		})
	}
}

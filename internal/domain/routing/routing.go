// Package routing chooses the connectors a payment is tried on, in order,
// from an account's routing rules, and decides after each connector's
// answer whether the payment may go on to the next one. Both are pure: the
// API plans a payment's route once, when the order is placed, and the order
// workflow carries the plan and asks Decide after each attempt.
package routing

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
)

// Payment is what the rules look at.
type Payment struct {
	// Key spreads payments over a volume split; the transaction id, so a
	// payment keeps its place in the split however often it is planned.
	Key      string
	Amount   int64 // minor units of Currency
	Currency string
	// Method is "card" or the APM's code (PIX, BOLETO, ...).
	Method string
	// Brand and BIN (the card number's first six digits or more) of a card
	// payment; empty otherwise.
	Brand string
	BIN   string
	// BillingCountry is the order's billing country (ISO 3166 alpha-2), or
	// empty when the merchant sent none.
	BillingCountry string
}

// MethodCard is the Method of a card payment.
const MethodCard = "card"

// BINDigits is how many of a card number's first digits a payment's BIN
// holds (the masked card keeps six).
const BINDigits = 6

// BINRange holds the BINs from From to To, compared on their common
// length: {"400000", "499999"} holds every card starting with 4.
type BINRange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// holds reports whether the card number prefix bin is in the range.
func (r BINRange) holds(bin string) bool {
	n := len(r.From)
	if len(bin) < n {
		return false
	}
	prefix := bin[:n]
	return r.From <= prefix && prefix <= r.To
}

// Condition is what a route asks of a payment; every part that is set must
// hold, and an empty condition holds for every payment.
type Condition struct {
	Currencies       []string   `json:"currencies,omitempty"`
	BillingCountries []string   `json:"billing_countries,omitempty"`
	CardBrands       []string   `json:"card_brands,omitempty"`
	BINRanges        []BINRange `json:"bin_ranges,omitempty"`
	// MinAmount and MaxAmount bound the amount, inclusive, in minor units
	// of the payment's currency; zero is no bound.
	MinAmount int64    `json:"min_amount,omitempty"`
	MaxAmount int64    `json:"max_amount,omitempty"`
	Methods   []string `json:"payment_methods,omitempty"`
}

// Holds reports whether the payment meets every part of c.
func (c Condition) Holds(p Payment) bool {
	switch {
	case len(c.Currencies) > 0 && !slices.Contains(c.Currencies, p.Currency):
		return false
	case len(c.BillingCountries) > 0 && !slices.Contains(c.BillingCountries, p.BillingCountry):
		return false
	case len(c.CardBrands) > 0 && !slices.Contains(c.CardBrands, p.Brand):
		return false
	case len(c.BINRanges) > 0 && !slices.ContainsFunc(c.BINRanges, func(r BINRange) bool { return r.holds(p.BIN) }):
		return false
	case c.MinAmount > 0 && p.Amount < c.MinAmount, c.MaxAmount > 0 && p.Amount > c.MaxAmount:
		return false
	case len(c.Methods) > 0 && !slices.Contains(c.Methods, p.Method):
		return false
	}
	return true
}

// Target is a connector of a route, with its share of the route's volume.
type Target struct {
	Connector string `json:"connector"`
	// Weight is the connector's share of the payments the route takes
	// first; zero on every target means no split (the listed order).
	Weight int `json:"weight,omitempty"`
}

// Route sends the payments its condition holds for to its connectors.
type Route struct {
	// Name says which route chose a payment's connectors in its timeline.
	Name    string    `json:"name"`
	When    Condition `json:"when"`
	Targets []Target  `json:"connectors"`
}

// Rules are an account's routing: the first route whose condition holds
// chooses the connectors, in order (a volume split chooses which goes
// first), and the fallback list follows them; a payment no route takes
// goes to the fallback list alone.
type Rules struct {
	Routes   []Route  `json:"routes,omitempty"`
	Fallback []string `json:"fallback,omitempty"`
	// RetrySoftDeclines lets a soft decline (the issuer's generic
	// refusal) go on to the next connector; hard declines never do.
	RetrySoftDeclines bool `json:"retry_soft_declines,omitempty"`
	// MaxAttempts bounds the charges one payment makes across its
	// connectors; zero is DefaultMaxAttempts.
	MaxAttempts int `json:"max_attempts,omitempty"`
}

// DefaultMaxAttempts is a payment's retry budget when the rules set none.
const DefaultMaxAttempts = 3

// MaxConnectors bounds a plan: no payment is tried on more connectors.
const MaxConnectors = 5

// Empty reports whether the rules route nothing: the account's one
// connector takes every payment, as before routing.
func (r Rules) Empty() bool { return len(r.Routes) == 0 && len(r.Fallback) == 0 }

// Connectors lists every connector the rules name, once each, in the order
// they first appear.
func (r Rules) Connectors() []string {
	var out []string
	add := func(name string) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, route := range r.Routes {
		for _, t := range route.Targets {
			add(t.Connector)
		}
	}
	for _, name := range r.Fallback {
		add(name)
	}
	return out
}

// Plan is the connectors a payment is tried on, in order, and why.
type Plan struct {
	Connectors []string `json:"connectors"`
	// Route names the route that chose them: a route's name, "fallback"
	// when none took the payment, or "account" for an account without
	// rules.
	Route string `json:"route"`
	// Split tells that a volume split chose the first connector.
	Split bool `json:"split,omitempty"`
	// RetrySoftDeclines and MaxAttempts are the rules' (see Rules).
	RetrySoftDeclines bool `json:"retry_soft_declines,omitempty"`
	MaxAttempts       int  `json:"max_attempts"`
}

// Plan routes p. An account without rules tries only its own connector,
// once, exactly as before routing.
func (r Rules) Plan(p Payment, accountConnector string) Plan {
	if r.Empty() {
		return Plan{Connectors: []string{accountConnector}, Route: "account", MaxAttempts: 1}
	}
	plan := Plan{Route: "fallback", RetrySoftDeclines: r.RetrySoftDeclines, MaxAttempts: r.MaxAttempts}
	if plan.MaxAttempts <= 0 {
		plan.MaxAttempts = DefaultMaxAttempts
	}
	var chosen []string
	for _, route := range r.Routes {
		if !route.When.Holds(p) {
			continue
		}
		plan.Route = route.Name
		chosen, plan.Split = ordered(route.Targets, p.Key)
		break
	}
	for _, name := range append(chosen, r.Fallback...) {
		if !slices.Contains(plan.Connectors, name) && len(plan.Connectors) < MaxConnectors {
			plan.Connectors = append(plan.Connectors, name)
		}
	}
	return plan
}

// ordered lists a route's connectors: the one the volume split gives key
// first, the rest in their order; without weights, all in their order.
func ordered(targets []Target, key string) ([]string, bool) {
	total := 0
	for _, t := range targets {
		total += t.Weight
	}
	names := make([]string, 0, len(targets))
	for _, t := range targets {
		names = append(names, t.Connector)
	}
	if total == 0 {
		return names, false
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	slot := int(h.Sum32() % uint32(total))
	for i, t := range targets {
		if slot < t.Weight {
			first := names[i]
			return append([]string{first}, slices.Delete(names, i, i+1)...), true
		}
		slot -= t.Weight
	}
	return names, true
}

// ErrInvalid is wrapped by every refusal of Validate.
var ErrInvalid = errors.New("invalid routing rules")

// Validate refuses rules that could not route: a connector the deployment
// does not run (known), a route without connectors or name, a bad BIN
// range, a negative weight, amount or budget, or more connectors than a
// plan takes.
func (r Rules) Validate(known []string) error {
	var problems []string
	check := func(where, name string) {
		if !slices.Contains(known, name) {
			problems = append(problems, fmt.Sprintf("%s: connector %q is not run here (known: %s)", where, name, strings.Join(known, ", ")))
		}
	}
	names := map[string]bool{}
	for i, route := range r.Routes {
		where := fmt.Sprintf("routes[%d]", i)
		switch {
		case route.Name == "" || route.Name == "fallback" || route.Name == "account":
			problems = append(problems, where+`: a route needs a name of its own (not "fallback" or "account")`)
		case names[route.Name]:
			problems = append(problems, fmt.Sprintf("%s: the name %q is taken", where, route.Name))
		}
		names[route.Name] = true
		if len(route.Targets) == 0 {
			problems = append(problems, where+": no connectors")
		}
		if len(route.Targets) > MaxConnectors {
			problems = append(problems, fmt.Sprintf("%s: more than %d connectors", where, MaxConnectors))
		}
		for _, t := range route.Targets {
			check(where, t.Connector)
			if t.Weight < 0 {
				problems = append(problems, where+": a negative weight")
			}
		}
		c := route.When
		if c.MinAmount < 0 || c.MaxAmount < 0 || c.MaxAmount > 0 && c.MinAmount > c.MaxAmount {
			problems = append(problems, where+": the amount range is empty or negative")
		}
		for _, b := range c.BINRanges {
			switch {
			case len(b.From) < 1 || len(b.From) != len(b.To) || !digits(b.From) || !digits(b.To) || b.From > b.To:
				problems = append(problems, fmt.Sprintf("%s: BIN range %s-%s must be two numbers of one length, the first not above the second", where, b.From, b.To))
			case len(b.From) > BINDigits:
				// A payment's BIN is its masked card's first six digits: a
				// longer range held no card, and the route never applied.
				problems = append(problems, fmt.Sprintf("%s: BIN range %s-%s is longer than the %d digits a card's BIN has here", where, b.From, b.To, BINDigits))
			}
		}
	}
	for _, name := range r.Fallback {
		check("fallback", name)
	}
	if len(r.Fallback) > MaxConnectors {
		problems = append(problems, fmt.Sprintf("fallback: more than %d connectors", MaxConnectors))
	}
	if r.MaxAttempts < 0 || r.MaxAttempts > 2*MaxConnectors {
		problems = append(problems, fmt.Sprintf("max_attempts must be 0 (the default, %d) to %d", DefaultMaxAttempts, 2*MaxConnectors))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(problems, "; "))
	}
	return nil
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

package risk

import (
	"reflect"
	"testing"
	"time"
)

// reasons is every rule's reason in Rules() order: ACCEPT, except for the
// hits given.
func reasons(hits ...Reason) []Reason {
	out := make([]Reason, 0, len(Rules()))
	for _, name := range Rules() {
		status := Accept
		for _, h := range hits {
			if h.Name == name {
				status = h.Status
			}
		}
		out = append(out, Reason{Name: name, Status: status})
	}
	return out
}

func TestEvaluate(t *testing.T) {
	// base is a clean payment: a US card with a US billing address, under
	// the limit, nothing blocked, no earlier orders.
	base := Facts{Amount: 1000, Currency: "USD", AmountLimit: 5000, CardBIN: "424242", CardCountry: "US", BillingCountry: "US"}
	with := func(change func(f *Facts)) Facts {
		f := base
		change(&f)
		return f
	}
	tests := []struct {
		name  string
		cfg   Config
		facts Facts
		want  Result
	}{
		{
			name:  "clean payment",
			facts: base,
			want:  Result{Action: Accept, Score: 0, Reasons: reasons()},
		},
		{
			name:  "exactly at the limit",
			facts: with(func(f *Facts) { f.Amount = 5000 }),
			want:  Result{Action: Accept, Score: 0, Reasons: reasons()},
		},
		{
			name:  "no limit set",
			facts: with(func(f *Facts) { f.Amount, f.AmountLimit = 1<<40, 0 }),
			want:  Result{Action: Accept, Score: 0, Reasons: reasons()},
		},
		{
			name:  "over the limit",
			facts: with(func(f *Facts) { f.Amount = 5001 }),
			want: Result{Action: Reject, Score: 100, Rule: RuleAmountLimit,
				Reasons: reasons(Reason{RuleAmountLimit, Reject})},
		},
		{
			name:  "blocked card",
			facts: with(func(f *Facts) { f.CardBlocked = true }),
			want: Result{Action: Reject, Score: 100, Rule: RuleBlockedCard,
				Reasons: reasons(Reason{RuleBlockedCard, Reject})},
		},
		{
			name:  "over the limit and blocked: the first of equal weights is named",
			facts: with(func(f *Facts) { f.Amount, f.CardBlocked = 9000, true }),
			want: Result{Action: Reject, Score: 200, Rule: RuleAmountLimit,
				Reasons: reasons(Reason{RuleAmountLimit, Reject}, Reason{RuleBlockedCard, Reject})},
		},
		{
			name:  "blocked BIN, all six digits",
			cfg:   Config{BlockedBINs: []string{"555555", "424242"}},
			facts: base,
			want: Result{Action: Reject, Score: 100, Rule: RuleBlockedBIN,
				Reasons: reasons(Reason{RuleBlockedBIN, Reject})},
		},
		{
			name:  "blocked BIN range by a shorter prefix",
			cfg:   Config{BlockedBINs: []string{"4000"}},
			facts: with(func(f *Facts) { f.CardBIN, f.CardCountry = "400076", "BR"; f.BillingCountry = "BR" }),
			want: Result{Action: Reject, Score: 100, Rule: RuleBlockedBIN,
				Reasons: reasons(Reason{RuleBlockedBIN, Reject})},
		},
		{
			name:  "blocked BIN list does not cover the card",
			cfg:   Config{BlockedBINs: []string{"4000", "555555"}},
			facts: base,
			want:  Result{Action: Accept, Score: 0, Reasons: reasons()},
		},
		{
			name:  "blocked BIN list and no BIN known",
			cfg:   Config{BlockedBINs: []string{"4"}},
			facts: with(func(f *Facts) { f.CardBIN, f.CardCountry = "", "" }),
			want:  Result{Action: Accept, Score: 0, Reasons: reasons()},
		},
		{
			name:  "blocked billing country",
			cfg:   Config{BlockedCountries: []string{"KP", "US"}},
			facts: with(func(f *Facts) { f.CardBIN, f.CardCountry = "", "" }),
			want: Result{Action: Reject, Score: 100, Rule: RuleBlockedCountry,
				Reasons: reasons(Reason{RuleBlockedCountry, Reject})},
		},
		{
			name:  "blocked card country without a billing country",
			cfg:   Config{BlockedCountries: []string{"GB"}},
			facts: with(func(f *Facts) { f.CardBIN, f.CardCountry, f.BillingCountry = "400826", "GB", "" }),
			want: Result{Action: Reject, Score: 100, Rule: RuleBlockedCountry,
				Reasons: reasons(Reason{RuleBlockedCountry, Reject})},
		},
		{
			name:  "blocked card country outweighs the mismatch it also causes",
			cfg:   Config{BlockedCountries: []string{"GB"}},
			facts: with(func(f *Facts) { f.CardBIN, f.CardCountry = "400826", "GB" }),
			want: Result{Action: Reject, Score: 130, Rule: RuleBlockedCountry,
				Reasons: reasons(Reason{RuleBlockedCountry, Reject}, Reason{RuleCountryMismatch, Review})},
		},
		{
			name:  "card velocity one under the limit",
			facts: with(func(f *Facts) { f.CardOrders = 4 }),
			want:  Result{Action: Accept, Score: 0, Reasons: reasons()},
		},
		{
			name:  "card velocity at the limit: the sixth order in ten minutes is reviewed",
			facts: with(func(f *Facts) { f.CardOrders = 5 }),
			want: Result{Action: Review, Score: 50, Rule: RuleCardVelocity,
				Reasons: reasons(Reason{RuleCardVelocity, Review})},
		},
		{
			name:  "email velocity alone scores but accepts",
			facts: with(func(f *Facts) { f.EmailOrders = 10 }),
			want: Result{Action: Accept, Score: 40, Rule: RuleEmailVelocity,
				Reasons: reasons(Reason{RuleEmailVelocity, Review})},
		},
		{
			name:  "IP velocity alone scores but accepts",
			facts: with(func(f *Facts) { f.IPOrders = 25 }),
			want: Result{Action: Accept, Score: 30, Rule: RuleIPVelocity,
				Reasons: reasons(Reason{RuleIPVelocity, Review})},
		},
		{
			name:  "IP velocity one under the limit",
			facts: with(func(f *Facts) { f.IPOrders = 19 }),
			want:  Result{Action: Accept, Score: 0, Reasons: reasons()},
		},
		{
			// Interface, Payment order: device_fingerprint feeds the risk
			// engine (issue 29).
			name:  "device velocity at its limit scores but accepts",
			facts: with(func(f *Facts) { f.DeviceOrders = 10 }),
			want: Result{Action: Accept, Score: 40, Rule: RuleDeviceVelocity,
				Reasons: reasons(Reason{RuleDeviceVelocity, Review})},
		},
		{
			name:  "device velocity one under the limit",
			facts: with(func(f *Facts) { f.DeviceOrders = 9 }),
			want:  Result{Action: Accept, Score: 0, Reasons: reasons()},
		},
		{
			name:  "device and IP velocity together are reviewed",
			facts: with(func(f *Facts) { f.DeviceOrders, f.IPOrders = 10, 20 }),
			want: Result{Action: Review, Score: 70, Rule: RuleDeviceVelocity,
				Reasons: reasons(Reason{RuleIPVelocity, Review}, Reason{RuleDeviceVelocity, Review})},
		},
		{
			name:  "email and IP velocity together are reviewed",
			facts: with(func(f *Facts) { f.EmailOrders, f.IPOrders = 10, 20 }),
			want: Result{Action: Review, Score: 70, Rule: RuleEmailVelocity,
				Reasons: reasons(Reason{RuleEmailVelocity, Review}, Reason{RuleIPVelocity, Review})},
		},
		{
			name:  "all three velocities together are rejected, named by the heaviest",
			facts: with(func(f *Facts) { f.CardOrders, f.EmailOrders, f.IPOrders = 5, 10, 20 }),
			want: Result{Action: Reject, Score: 120, Rule: RuleCardVelocity, Reasons: reasons(
				Reason{RuleCardVelocity, Review}, Reason{RuleEmailVelocity, Review}, Reason{RuleIPVelocity, Review})},
		},
		{
			name:  "country mismatch alone scores but accepts",
			facts: with(func(f *Facts) { f.BillingCountry = "GB" }),
			want: Result{Action: Accept, Score: 30, Rule: RuleCountryMismatch,
				Reasons: reasons(Reason{RuleCountryMismatch, Review})},
		},
		{
			name:  "no mismatch when the card's country is unknown",
			facts: with(func(f *Facts) { f.CardBIN, f.CardCountry, f.BillingCountry = "411111", "", "GB" }),
			want:  Result{Action: Accept, Score: 0, Reasons: reasons()},
		},
		{
			name:  "no mismatch without a billing country",
			facts: with(func(f *Facts) { f.BillingCountry = "" }),
			want:  Result{Action: Accept, Score: 0, Reasons: reasons()},
		},
		{
			name:  "mismatch and IP velocity weigh the same: the earlier rule is named",
			facts: with(func(f *Facts) { f.BillingCountry, f.IPOrders = "GB", 20 }),
			want: Result{Action: Review, Score: 60, Rule: RuleIPVelocity,
				Reasons: reasons(Reason{RuleIPVelocity, Review}, Reason{RuleCountryMismatch, Review})},
		},
		{
			name:  "a heavier later rule is named before a lighter earlier one",
			cfg:   Config{CountryMismatchScore: 80},
			facts: with(func(f *Facts) { f.BillingCountry, f.EmailOrders = "GB", 10 }),
			want: Result{Action: Reject, Score: 120, Rule: RuleCountryMismatch,
				Reasons: reasons(Reason{RuleEmailVelocity, Review}, Reason{RuleCountryMismatch, Review})},
		},
		{
			name:  "mismatch weighted to review on its own",
			cfg:   Config{CountryMismatchScore: 50},
			facts: with(func(f *Facts) { f.BillingCountry = "GB" }),
			want: Result{Action: Review, Score: 50, Rule: RuleCountryMismatch,
				Reasons: reasons(Reason{RuleCountryMismatch, Review})},
		},
		{
			name:  "tight card velocity that rejects: the third order with the card",
			cfg:   Config{CardVelocity: Velocity{Max: 2, Window: Duration(10 * time.Minute), Score: 100}},
			facts: with(func(f *Facts) { f.CardOrders = 2 }),
			want: Result{Action: Reject, Score: 100, Rule: RuleCardVelocity,
				Reasons: reasons(Reason{RuleCardVelocity, Reject})},
		},
		{
			name:  "tight card velocity: the second order with the card passes",
			cfg:   Config{CardVelocity: Velocity{Max: 2, Window: Duration(10 * time.Minute), Score: 100}},
			facts: with(func(f *Facts) { f.CardOrders = 1 }),
			want:  Result{Action: Accept, Score: 0, Reasons: reasons()},
		},
		{
			name: "own thresholds: review at 20, reject at 60",
			cfg:  Config{ReviewScore: 20, RejectScore: 60},
			facts: with(func(f *Facts) {
				f.BillingCountry = "GB"
			}),
			want: Result{Action: Review, Score: 30, Rule: RuleCountryMismatch,
				Reasons: reasons(Reason{RuleCountryMismatch, Review})},
		},
		{
			name:  "own thresholds: a blocking rule weighs the reject score",
			cfg:   Config{ReviewScore: 20, RejectScore: 60},
			facts: with(func(f *Facts) { f.CardBlocked = true }),
			want: Result{Action: Reject, Score: 60, Rule: RuleBlockedCard,
				Reasons: reasons(Reason{RuleBlockedCard, Reject})},
		},
		{
			name:  "own thresholds: a rule weighing the reject score reports REJECT",
			cfg:   Config{ReviewScore: 20, RejectScore: 60, IPVelocity: Velocity{Score: 60}},
			facts: with(func(f *Facts) { f.IPOrders = 20 }),
			want: Result{Action: Reject, Score: 60, Rule: RuleIPVelocity,
				Reasons: reasons(Reason{RuleIPVelocity, Reject})},
		},
		{
			name: "rules turned off never hit",
			cfg: Config{CardVelocity: Velocity{Score: Off}, EmailVelocity: Velocity{Score: Off},
				IPVelocity: Velocity{Score: Off}, CountryMismatchScore: Off},
			facts: with(func(f *Facts) { f.CardOrders, f.EmailOrders, f.IPOrders, f.BillingCountry = 99, 99, 99, "GB" }),
			want:  Result{Action: Accept, Score: 0, Reasons: reasons()},
		},
		{
			name:  "turning velocity off keeps the block lists",
			cfg:   Config{CardVelocity: Velocity{Score: Off}, BlockedBINs: []string{"424242"}},
			facts: with(func(f *Facts) { f.CardOrders = 99 }),
			want: Result{Action: Reject, Score: 100, Rule: RuleBlockedBIN,
				Reasons: reasons(Reason{RuleBlockedBIN, Reject})},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Evaluate(tc.cfg, tc.facts)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Evaluate(%+v, %+v)\n got %+v\nwant %+v", tc.cfg, tc.facts, got, tc.want)
			}
			if code := CodeFor(got.Rule); got.Action != Accept && code.ID[0] != 'R' {
				t.Errorf("CodeFor(%q) = %v, want a risk code", got.Rule, code)
			}
		})
	}
}

func TestRulesAreReportedInOrder(t *testing.T) {
	want := []string{"amount_limit", "blocked_card", "blocked_bin", "blocked_country",
		"card_velocity", "email_velocity", "ip_velocity", "device_velocity", "country_mismatch"}
	if got := Rules(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Rules() = %v, want %v", got, want)
	}
	var names []string
	for _, r := range Evaluate(Config{}, Facts{}).Reasons {
		names = append(names, r.Name)
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("reasons of an empty payment = %v, want %v", names, want)
	}
}

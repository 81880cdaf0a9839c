// Package risk scores a payment with a small set of rules. It is pure: the
// caller gathers the facts (the account's amount limit, the block list,
// counts of recent orders) and the rules only judge them, so workflows may
// call it and its tests need nothing running.
//
// Every rule that hits adds its score. The sum decides the action: REJECT at
// or above the account's RejectScore (default 100), REVIEW at or above its
// ReviewScore (default 50), ACCEPT below. Every rule reports a Reason, hit
// or not, in the fixed order of Rules(); Result.Rule names the rule that hit
// with the highest score (the first on ties) and CodeFor turns it into the
// R result code.
//
// The rules and their default weights:
//
//   - amount_limit: the amount is over the account's limit for the
//     currency; weighs RejectScore, so it rejects on its own.
//   - blocked_card: the card's fingerprint is on the block list; RejectScore.
//   - blocked_bin: the card's BIN starts with a blocked prefix; RejectScore.
//   - blocked_country: the billing country or the card's issuing country is
//     blocked; RejectScore.
//   - card_velocity, email_velocity, ip_velocity: at least Max other orders
//     of the account used the same card, shopper email or shopper IP within
//     the window (defaults 5 per 10 minutes scoring 50, 10 per hour scoring
//     40, 20 per hour scoring 30). Every other order in the window counts,
//     whatever its outcome; the email is compared exactly as sent.
//   - country_mismatch: the billing country and the card's issuing country
//     are both known and differ; 30.
//
// So a sixth order with one card in ten minutes is held for review, a
// mismatch alone only shows in the score, and the three velocities together
// reject. An account's Config changes any of this; a zero value means the
// default and the score Off turns a scored rule off.
package risk

import (
	"math"
	"slices"
)

// Actions a risk check can take.
const (
	Accept = "ACCEPT"
	Review = "REVIEW"
	Reject = "REJECT"
)

// Rule names, as they appear in risk_reasons and fraud_check_result.
const (
	RuleAmountLimit     = "amount_limit"
	RuleBlockedCard     = "blocked_card"
	RuleBlockedBIN      = "blocked_bin"
	RuleBlockedCountry  = "blocked_country"
	RuleCardVelocity    = "card_velocity"
	RuleEmailVelocity   = "email_velocity"
	RuleIPVelocity      = "ip_velocity"
	RuleDeviceVelocity  = "device_velocity"
	RuleCountryMismatch = "country_mismatch"
)

// Rules lists every rule in the order Evaluate runs them and reports them.
func Rules() []string {
	return []string{
		RuleAmountLimit, RuleBlockedCard, RuleBlockedBIN, RuleBlockedCountry,
		RuleCardVelocity, RuleEmailVelocity, RuleIPVelocity, RuleDeviceVelocity, RuleCountryMismatch,
	}
}

// Facts are what the rules look at.
type Facts struct {
	Amount      int64
	Currency    string
	AmountLimit int64 // 0 means no limit
	CardBlocked bool

	// CardBIN is the card's first six digits; CardCountry its issuing
	// country and BillingCountry the shopper's, "" when not known.
	CardBIN        string
	CardCountry    string
	BillingCountry string

	// CardOrders, EmailOrders and IPOrders count the account's other orders
	// with the same card, shopper email and shopper IP within the window of
	// the matching velocity rule; 0 when the payment has no such value.
	CardOrders  int
	EmailOrders int
	IPOrders    int
	// DeviceOrders counts the account's other orders from the same device
	// (device_fingerprint) within the device velocity rule's window.
	DeviceOrders int
}

// Reason is one rule's verdict: ACCEPT when it did not hit, REJECT when it
// hit with a score that rejects on its own, REVIEW when it hit with less.
type Reason struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// Result is the outcome of a risk check.
type Result struct {
	Action  string   `json:"action"`
	Score   int      `json:"score"`
	Reasons []Reason `json:"reasons"`
	// Rule names the rule that hit with the highest score, the first in
	// Rules() order on ties; "" when no rule hit.
	Rule string `json:"rule,omitempty"`
}

// RuleTestValue is the reason a test account's risk test email gives: it
// is not one of Rules(), and never hits for a live account.
const RuleTestValue = "test_value"

// Forced returns r decided as action by a test value: the test_value
// reason hits and the score reaches the action's threshold.
func (r Result) Forced(action string, cfg Config) Result {
	cfg = cfg.WithDefaults()
	score := cfg.ReviewScore
	if action == Reject {
		score = cfg.RejectScore
	}
	out := Result{Action: action, Score: max(r.Score, score), Rule: RuleTestValue}
	out.Reasons = append(append(out.Reasons, r.Reasons...), Reason{Name: RuleTestValue, Status: action})
	return out
}

// Evaluate runs every rule with the account's settings (zero values taking
// their defaults) and adds up the scores of the rules that hit.
func Evaluate(cfg Config, f Facts) Result {
	cfg = cfg.WithDefaults()
	r := Result{Action: Accept, Reasons: make([]Reason, 0, len(Rules()))}
	heaviest := 0
	check := func(name string, hit bool, score int) {
		status := Accept
		if hit && score > 0 {
			status = Review
			if score >= cfg.RejectScore {
				status = Reject
			}
			// Saturate: a score from settings that skipped Validate must
			// not wrap the sum round to an accept.
			if r.Score > math.MaxInt-score {
				r.Score = math.MaxInt
			} else {
				r.Score += score
			}
			if score > heaviest {
				heaviest, r.Rule = score, name
			}
		}
		r.Reasons = append(r.Reasons, Reason{Name: name, Status: status})
	}

	check(RuleAmountLimit, f.AmountLimit > 0 && f.Amount > f.AmountLimit, cfg.RejectScore)
	check(RuleBlockedCard, f.CardBlocked, cfg.RejectScore)
	check(RuleBlockedBIN, binBlocked(cfg.BlockedBINs, f.CardBIN), cfg.RejectScore)
	check(RuleBlockedCountry, countryBlocked(cfg.BlockedCountries, f.BillingCountry, f.CardCountry), cfg.RejectScore)
	check(RuleCardVelocity, tooFast(cfg.CardVelocity, f.CardOrders), cfg.CardVelocity.Score)
	check(RuleEmailVelocity, tooFast(cfg.EmailVelocity, f.EmailOrders), cfg.EmailVelocity.Score)
	check(RuleIPVelocity, tooFast(cfg.IPVelocity, f.IPOrders), cfg.IPVelocity.Score)
	check(RuleDeviceVelocity, tooFast(cfg.DeviceVelocity, f.DeviceOrders), cfg.DeviceVelocity.Score)
	check(RuleCountryMismatch, f.BillingCountry != "" && f.CardCountry != "" && f.BillingCountry != f.CardCountry,
		cfg.CountryMismatchScore)

	switch {
	case r.Score >= cfg.RejectScore:
		r.Action = Reject
	case r.Score >= cfg.ReviewScore:
		r.Action = Review
	}
	return r
}

// binBlocked reports whether the card's BIN starts with a blocked prefix.
func binBlocked(blocked []string, bin string) bool {
	if bin == "" {
		return false
	}
	return slices.ContainsFunc(blocked, func(prefix string) bool {
		return prefix != "" && len(prefix) <= len(bin) && bin[:len(prefix)] == prefix
	})
}

// countryBlocked reports whether the billing or the card country is blocked.
func countryBlocked(blocked []string, countries ...string) bool {
	for _, c := range countries {
		if c != "" && slices.Contains(blocked, c) {
			return true
		}
	}
	return false
}

// tooFast reports whether a velocity rule hits: it is on and at least Max
// other orders already used the value within its window.
func tooFast(v Velocity, others int) bool {
	return v.On() && v.Max > 0 && others >= v.Max
}

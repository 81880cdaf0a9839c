// Package risk scores a payment with a small set of rules. It is pure: the
// caller gathers the facts (limits, lists) and the rules only judge them.
package risk

// Actions a risk check can take.
const (
	Accept = "ACCEPT"
	Review = "REVIEW"
	Reject = "REJECT"
)

// Rule names, as they appear in risk_reasons and fraud_check_result.
const (
	RuleAmountLimit = "amount_limit"
	RuleBlockedCard = "blocked_card"
)

// Facts are what the rules look at.
type Facts struct {
	Amount      int64
	Currency    string
	AmountLimit int64 // 0 means no limit
	CardBlocked bool
}

// Reason is one rule's verdict.
type Reason struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// Result is the outcome of a risk check.
type Result struct {
	Action  string   `json:"action"`
	Score   int      `json:"score"`
	Reasons []Reason `json:"reasons"`
	// Rule names the first rule that rejected, if any.
	Rule string `json:"rule,omitempty"`
}

// RejectScore is the score at and above which a payment is rejected.
const RejectScore = 100

// Evaluate runs every rule and adds up their scores.
func Evaluate(f Facts) Result {
	r := Result{Action: Accept}
	check := func(name string, hit bool, score int) {
		status := Accept
		if hit {
			status = Reject
			r.Score += score
			if r.Rule == "" {
				r.Rule = name
			}
		}
		r.Reasons = append(r.Reasons, Reason{Name: name, Status: status})
	}
	check(RuleAmountLimit, f.AmountLimit > 0 && f.Amount > f.AmountLimit, RejectScore)
	check(RuleBlockedCard, f.CardBlocked, RejectScore)
	if r.Score >= RejectScore {
		r.Action = Reject
	}
	return r
}

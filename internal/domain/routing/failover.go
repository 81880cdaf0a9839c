package routing

import "github.com/paygate/paygate/internal/domain/connector"

// Outcome is what one connector's attempt at a charge came to, in the
// terms failover decides on.
type Outcome string

// Attempt outcomes.
const (
	// Approved: the connector charged (or authorised) the card.
	Approved Outcome = "approved"
	// HardDecline: the issuer refused for a reason another connector
	// would meet too (no funds, a stolen, expired or wrong card, risk).
	HardDecline Outcome = "hard_decline"
	// SoftDecline: the issuer's generic refusal, which another route to
	// the issuer may not meet.
	SoftDecline Outcome = "soft_decline"
	// Down: the connector could not be reached, refused the connection,
	// or answered before accepting the charge that it could not serve.
	// Nothing was charged.
	Down Outcome = "down"
	// Skipped: the connector's circuit breaker is open, so the payment was
	// not sent to it. Nothing was charged.
	Skipped Outcome = "skipped"
	// Refused: the connector refused the request itself (configuration,
	// a card it does not take). Nothing was charged.
	Refused Outcome = "refused"
	// Unknown: the request may have reached the connector (no answer in
	// time, a cut connection, a failure after it accepted).
	Unknown Outcome = "unknown"
)

// Decision is what happens after an attempt.
type Decision string

// Decisions.
const (
	// Stop: the payment ends with this attempt's outcome.
	Stop Decision = "stop"
	// TryNext: the payment goes to the next connector of its plan.
	TryNext Decision = "try_next"
	// InquireFirst: ask this connector what became of the attempt; the
	// inquiry's answer is then decided on in its place. The payment never
	// moves on while this connector may have charged.
	InquireFirst Decision = "inquire_first"
)

// Decide is the failover table (docs/connectors.md, "Failover"). A payment
// moves on only when the attempt surely charged nothing and another try
// may do better: the connector was down or refused the request, or, where
// the account opted in, a soft decline. An approval and a hard decline stop
// it; an unknown outcome is asked about first. A payment whose budget
// (attempts so far against plan.MaxAttempts) is spent stops; until then,
// past the plan's last connector it starts again from its first
// (Next says which).
func Decide(o Outcome, plan Plan, attempts int) Decision {
	switch o {
	case Unknown:
		return InquireFirst
	case Approved, HardDecline:
		return Stop
	case SoftDecline:
		if !plan.RetrySoftDeclines {
			return Stop
		}
	}
	if attempts >= plan.MaxAttempts || len(plan.Connectors) == 0 {
		return Stop
	}
	return TryNext
}

// Next is the connector of a payment's attempt number n (from 1): the
// plan's connectors in order, and again from the first once all were tried.
func (p Plan) Next(n int) string { return p.Connectors[(n-1)%len(p.Connectors)] }

// DeclineOutcome sorts a connector's decline reason: the generic refusal
// is soft, every reason that names the card or the shopper is hard.
func DeclineOutcome(r connector.DeclineReason) Outcome {
	if r == connector.DeclineGeneric || r == "" {
		return SoftDecline
	}
	return HardDecline
}

// Package refund holds the vocabulary of a refund: the statuses it goes
// through. Connectors have their own words for these; the activity that
// calls a connector maps its answer to a Status, so that nothing past the
// activity compares a connector's text.
package refund

// Status is where a refund stands. The values are the text the refunds
// table stores, so they must never change.
type Status string

// The statuses of a refund.
const (
	// Pending: the acquirer took the refund and has not settled it yet.
	Pending Status = "pending"
	// Succeeded: the acquirer settled the refund; the money goes back.
	Succeeded Status = "succeeded"
	// Failed: the acquirer refused the refund, or it failed on the way.
	Failed Status = "failed"
)

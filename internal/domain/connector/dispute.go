package connector

import "time"

// Dispute is a cardholder's dispute of a charge as the acquirer has it.
// Stage and Status are the acquirer's words, which internal/domain/dispute
// reads.
type Dispute struct {
	ID          string
	ChargeID    string
	Reference   string // our transaction id
	Amount      int64
	Currency    string
	Reason      string
	Stage       string
	Status      string
	EvidenceDue time.Time
}

// DisputeCallback is what an acquirer's dispute callback names once its
// signature checked: the dispute, and the order it says it is of. The
// gateway asks the acquirer for the rest.
type DisputeCallback struct {
	DisputeID string
	Reference string
}

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
	// Fee is the acquirer's fee for the dispute in minor units of
	// Currency, when it reports one (FeeKnown): what the merchant pays,
	// passed through.
	Fee      int64
	FeeKnown bool
}

// DisputeCallback is what an acquirer's dispute callback names once its
// signature checked: the dispute, and the order it says it is of. The
// gateway asks the acquirer for the rest.
type DisputeCallback struct {
	DisputeID string
	Reference string
}

// Evidence is a merchant's answer to a dispute as the acquirer gets it:
// the texts, one "name: text" a line, and the files with their bytes.
type Evidence struct {
	Text  string
	Files []EvidenceFile
}

// EvidenceFile is one file of a merchant's evidence. Kind is what it shows
// (dispute.FileKind of its name), at most one file of each kind.
type EvidenceFile struct {
	Kind        string
	Name        string
	ContentType string
	Content     []byte
}

package order

import (
	"time"

	"github.com/paygate/paygate/internal/domain/status"
)

// Windows are an order's deadlines, from the account's settings.
type Windows struct {
	// Review: a held order not reviewed in time is rejected.
	Review time.Duration
	// Authorisation: an authorised order not captured in time is voided and expires.
	Authorisation time.Duration
	// Refund: how long after payment refunds are taken; then the workflow ends.
	Refund time.Duration
	// Session: the hosted page and a 3-D Secure challenge wait this long for the shopper.
	Session time.Duration
	// APM: an alternative payment waits this long for the provider.
	APM time.Duration
}

// Default windows (docs/design.md §1).
const (
	DefaultReviewWindow        = 3 * 24 * time.Hour
	DefaultAuthorisationWindow = 7 * 24 * time.Hour
	DefaultRefundWindow        = 180 * 24 * time.Hour
	DefaultSessionWindow       = 15 * time.Minute
	DefaultAPMWindow           = 24 * time.Hour
)

// WithDefaults fills the windows left at zero.
func (w Windows) WithDefaults() Windows {
	if w.Review <= 0 {
		w.Review = DefaultReviewWindow
	}
	if w.Authorisation <= 0 {
		w.Authorisation = DefaultAuthorisationWindow
	}
	if w.Refund <= 0 {
		w.Refund = DefaultRefundWindow
	}
	if w.Session <= 0 {
		w.Session = DefaultSessionWindow
	}
	if w.APM <= 0 {
		w.APM = DefaultAPMWindow
	}
	return w
}

// Lapse is what happens to an order whose deadline passes.
type Lapse int

const (
	// LapseEnd: the refund window is over; the order takes no more
	// operations and its workflow ends.
	LapseEnd Lapse = iota
	// LapseShopper: the shopper (or the APM's provider) never finished.
	LapseShopper
	// LapseReview: nobody reviewed the held order; it is rejected.
	LapseReview
	// LapseAuthorisation: nobody captured the authorisation; it is
	// voided and the order expires.
	LapseAuthorisation
)

// Deadline is the deadline an order's status runs.
type Deadline struct {
	// Final is set for a status that runs none: the order ends once its
	// refunds and notifications are done.
	Final bool
	// Window is how long the status lasts, from when the order reached it.
	Window time.Duration
	Lapse  Lapse
	// Refundable is set while the order takes refunds, the only operations
	// that can come often enough to fill a run (continue-as-new).
	Refundable bool
}

// Deadline is the deadline of the order's status, for an order of kind.
func (s State) Deadline(kind Kind, w Windows) Deadline {
	w = w.WithDefaults()
	switch s.Status {
	case status.Pending:
		if kind == KindAPM {
			return Deadline{Window: w.APM, Lapse: LapseShopper}
		}
		return Deadline{Window: w.Session, Lapse: LapseShopper}
	case status.HeldForReview:
		return Deadline{Window: w.Review, Lapse: LapseReview}
	case status.Authorised:
		return Deadline{Window: w.Authorisation, Lapse: LapseAuthorisation}
	case status.Paid, status.PartiallyRefunded:
		return Deadline{Window: w.Refund, Lapse: LapseEnd, Refundable: true}
	}
	return Deadline{Final: true}
}

// Remaining is how much of the deadline is left at now for an order that
// reached its status at since; zero or less once it has passed.
func (d Deadline) Remaining(since, now time.Time) time.Duration {
	return d.Window - now.Sub(since)
}

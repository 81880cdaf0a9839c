package subscription

// Status is a subscription's recurring_status (docs/design.md §4).
type Status int

// The recurring_status values.
const (
	Cancelled Status = 0
	Active    Status = 1
	Finished  Status = 2
	// Suspended: the charges of a cycle failed through the whole dunning
	// schedule.
	Suspended Status = 3
	// Paused: the merchant paused it; it charges nothing until resumed.
	Paused Status = 4
)

// Final reports whether the subscription charges no more.
func (s Status) Final() bool { return s != Active && s != Paused }

// Open reports whether the subscription may still change: active or
// paused.
func (s Status) Open() bool { return !s.Final() }

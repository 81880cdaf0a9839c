package routing

import "time"

// BreakerState is where a connector's circuit breaker stands.
type BreakerState string

// Breaker states.
const (
	// Closed: the connector takes payments.
	Closed BreakerState = "closed"
	// Open: the connector failed too often of late; routed payments skip
	// it until the breaker's pause ends.
	Open BreakerState = "open"
	// HalfOpen: the pause ended; one payment at a time probes the
	// connector, and its outcome closes or opens the breaker again.
	HalfOpen BreakerState = "half_open"
)

// BreakerConfig says when a breaker opens and for how long.
type BreakerConfig struct {
	// Window is how far back outcomes count; Size how many at the most.
	Window time.Duration
	Size   int
	// MinFailures and FailureRatio: the breaker opens when the window holds
	// at least MinFailures failures and they are at least FailureRatio of
	// its outcomes.
	MinFailures  int
	FailureRatio float64
	// Pause is how long an open breaker keeps payments away before it lets
	// a probe through.
	Pause time.Duration
}

// DefaultBreakerConfig opens a breaker on 5 failures that are half of the
// last minute's outcomes (at most 20), for 30 seconds.
var DefaultBreakerConfig = BreakerConfig{Window: time.Minute, Size: 20, MinFailures: 5, FailureRatio: 0.5, Pause: 30 * time.Second}

// Breaker is one connector's circuit breaker. It is a value with no clock
// or lock of its own: its keeper (the worker's, one per connector) gives it
// the time and serialises calls.
type Breaker struct {
	Config   BreakerConfig
	state    BreakerState
	outcomes []outcomeAt
	openedAt time.Time
	probing  bool
	probeAt  time.Time
}

type outcomeAt struct {
	at     time.Time
	failed bool
}

// State is where the breaker stands at now: an open breaker whose pause
// has ended is half-open.
func (b *Breaker) State(now time.Time) BreakerState {
	switch {
	case b.state == "":
		return Closed
	case b.state == Open && now.Sub(b.openedAt) >= b.Config.Pause:
		return HalfOpen
	}
	return b.state
}

// Allow reports whether a routed payment may try the connector at now. A
// half-open breaker lets one probe through at a time; a probe that never
// reported (its worker died) is given up after a pause.
func (b *Breaker) Allow(now time.Time) bool {
	switch b.State(now) {
	case Open:
		return false
	case HalfOpen:
		if b.probing && now.Sub(b.probeAt) < b.Config.Pause {
			return false
		}
		b.state, b.probing, b.probeAt = HalfOpen, true, now
	}
	return true
}

// Record counts an attempt's outcome at now: failed is a connector that was
// down or never answered, not a decline (a decline is an answer). It
// reports the state the breaker is in after it.
func (b *Breaker) Record(now time.Time, failed bool) BreakerState {
	if st := b.State(now); st == HalfOpen {
		b.probing = false
		if failed {
			b.open(now)
		} else {
			b.state, b.outcomes = Closed, nil
		}
		return b.state
	} else if st == Open {
		// An attempt already under way when the breaker opened.
		return Open
	}
	b.outcomes = append(b.outcomes, outcomeAt{now, failed})
	cut := 0
	for cut < len(b.outcomes) && (now.Sub(b.outcomes[cut].at) > b.Config.Window || len(b.outcomes)-cut > b.Config.Size) {
		cut++
	}
	b.outcomes = b.outcomes[cut:]
	failures := 0
	for _, o := range b.outcomes {
		if o.failed {
			failures++
		}
	}
	if failures >= b.Config.MinFailures && float64(failures) >= b.Config.FailureRatio*float64(len(b.outcomes)) {
		b.open(now)
	}
	return b.State(now)
}

func (b *Breaker) open(now time.Time) {
	b.state, b.openedAt, b.outcomes, b.probing = Open, now, nil, false
}

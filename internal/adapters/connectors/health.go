package connectors

import (
	"slices"
	"sync"
	"time"

	"github.com/paygate/paygate/internal/domain/routing"
)

// BreakerObserver is told each connector's breaker state when it changes
// (telemetry.Metrics).
type BreakerObserver interface {
	BreakerState(connector string, state routing.BreakerState)
}

// Health keeps a circuit breaker per connector (routing.Breaker) for the
// worker: the charges of every order tell it how each connector fares, and
// a routed order's charge skips a connector whose breaker is open. It is
// safe for concurrent use.
type Health struct {
	config   routing.BreakerConfig
	now      func() time.Time
	observer BreakerObserver
	mu       sync.Mutex
	breakers map[string]*routing.Breaker
	last     map[string]routing.BreakerState
}

// NewHealth returns breakers of config, told the time by now (time.Now
// when nil) and reporting to observer (nothing when nil).
func NewHealth(config routing.BreakerConfig, now func() time.Time, observer BreakerObserver) *Health {
	if now == nil {
		now = time.Now
	}
	return &Health{config: config, now: now, observer: observer, breakers: map[string]*routing.Breaker{}, last: map[string]routing.BreakerState{}}
}

// Allow reports whether a routed charge may try connector now.
func (h *Health) Allow(connector string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	b, now := h.breaker(connector), h.now()
	ok := b.Allow(now)
	h.report(connector, b.State(now))
	return ok
}

// Record counts a charge's outcome at connector: failed when the connector
// was down or never answered.
func (h *Health) Record(connector string, failed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.report(connector, h.breaker(connector).Record(h.now(), failed))
}

// States lists each connector's breaker state, by connector name.
func (h *Health) States() map[string]routing.BreakerState {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]routing.BreakerState, len(h.breakers))
	names := make([]string, 0, len(h.breakers))
	for name := range h.breakers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		out[name] = h.breakers[name].State(h.now())
	}
	return out
}

func (h *Health) breaker(connector string) *routing.Breaker {
	b, ok := h.breakers[connector]
	if !ok {
		b = &routing.Breaker{Config: h.config}
		h.breakers[connector] = b
	}
	return b
}

// report tells the observer a state that differs from the last told.
func (h *Health) report(connector string, st routing.BreakerState) {
	if h.last[connector] == st {
		return
	}
	h.last[connector] = st
	if h.observer != nil {
		h.observer.BreakerState(connector, st)
	}
}

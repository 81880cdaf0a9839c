package connectors

import (
	"slices"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/routing"
)

type seen []string

func (s *seen) BreakerState(connector string, st routing.BreakerState) {
	*s = append(*s, connector+" "+string(st))
}

// TestHealth: each connector has a breaker of its own, and the observer is
// told each change of state once.
func TestHealth(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var told seen
	h := NewHealth(routing.BreakerConfig{Window: time.Minute, Size: 10, MinFailures: 2, FailureRatio: 0.5, Pause: 10 * time.Second},
		func() time.Time { return now }, &told)
	h.Record("sim-bank", false)
	h.Record("sim-acquirer", true)
	h.Record("sim-acquirer", true)
	if h.Allow("sim-acquirer") || !h.Allow("sim-bank") {
		t.Error("sim-acquirer should be skipped and sim-bank tried")
	}
	now = now.Add(10 * time.Second)
	if !h.Allow("sim-acquirer") {
		t.Error("the probe after the pause was refused")
	}
	h.Record("sim-acquirer", false)
	want := []string{"sim-bank closed", "sim-acquirer closed", "sim-acquirer open", "sim-acquirer half_open", "sim-acquirer closed"}
	if !slices.Equal(told, want) {
		t.Errorf("told %v, want %v", told, want)
	}
	if st := h.States(); st["sim-acquirer"] != routing.Closed || st["sim-bank"] != routing.Closed || len(st) != 2 {
		t.Errorf("states %v", st)
	}
}

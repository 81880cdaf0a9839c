package routing

import (
	"testing"
	"time"
)

// TestBreaker runs one breaker through a script of attempts and checks its
// state after each step.
func TestBreaker(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	cfg := BreakerConfig{Window: time.Minute, Size: 10, MinFailures: 3, FailureRatio: 0.5, Pause: 30 * time.Second}
	type step struct {
		at     time.Duration // after t0
		do     string        // "ok", "fail" (Record), "allow", "deny" (Allow's answer wanted)
		wantSt BreakerState
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"answers keep it closed", []step{{0, "ok", Closed}, {time.Second, "ok", Closed}, {2 * time.Second, "allow", Closed}}},
		{"three failures of four open it", []step{
			{0, "ok", Closed}, {1 * time.Second, "fail", Closed}, {2 * time.Second, "fail", Closed}, {3 * time.Second, "fail", Open},
			{4 * time.Second, "deny", Open}}},
		{"failures under the ratio do not", []step{
			{0, "ok", Closed}, {time.Second, "ok", Closed}, {2 * time.Second, "ok", Closed}, {3 * time.Second, "ok", Closed},
			{4 * time.Second, "fail", Closed}, {5 * time.Second, "fail", Closed}, {6 * time.Second, "fail", Closed}, {7 * time.Second, "ok", Closed}}},
		{"failures out of the window are forgotten", []step{
			{0, "fail", Closed}, {time.Second, "fail", Closed}, {2 * time.Minute, "fail", Closed}, {2*time.Minute + time.Second, "allow", Closed}}},
		{"after the pause one probe goes, and its answer closes it", []step{
			{0, "fail", Closed}, {time.Second, "fail", Closed}, {2 * time.Second, "fail", Open},
			{31 * time.Second, "deny", Open}, {32 * time.Second, "allow", HalfOpen}, {33 * time.Second, "deny", HalfOpen},
			{34 * time.Second, "ok", Closed}, {35 * time.Second, "allow", Closed}}},
		{"a failed probe opens it again", []step{
			{0, "fail", Closed}, {time.Second, "fail", Closed}, {2 * time.Second, "fail", Open},
			{32 * time.Second, "allow", HalfOpen}, {33 * time.Second, "fail", Open}, {40 * time.Second, "deny", Open},
			{63 * time.Second, "allow", HalfOpen}}},
		{"a probe that never reports is given up after a pause", []step{
			{0, "fail", Closed}, {time.Second, "fail", Closed}, {2 * time.Second, "fail", Open},
			{32 * time.Second, "allow", HalfOpen}, {50 * time.Second, "deny", HalfOpen}, {62 * time.Second, "allow", HalfOpen}}},
		{"an attempt that began before it opened changes nothing", []step{
			{0, "fail", Closed}, {time.Second, "fail", Closed}, {2 * time.Second, "fail", Open}, {3 * time.Second, "ok", Open},
			{4 * time.Second, "deny", Open}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := Breaker{Config: cfg}
			for i, s := range tc.steps {
				now := t0.Add(s.at)
				switch s.do {
				case "ok", "fail":
					b.Record(now, s.do == "fail")
				case "allow", "deny":
					if got := b.Allow(now); got != (s.do == "allow") {
						t.Fatalf("step %d: Allow = %v, want %v", i, got, s.do == "allow")
					}
				}
				if got := b.State(now); got != s.wantSt {
					t.Fatalf("step %d (%s at %v): state %s, want %s", i, s.do, s.at, got, s.wantSt)
				}
			}
		})
	}
}

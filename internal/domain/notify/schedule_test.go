package notify

import (
	"math"
	"testing"
	"time"
)

func TestParseSchedule(t *testing.T) {
	def := DefaultSchedule()
	tests := []struct {
		name    string
		spec    string
		want    Schedule
		wantErr bool
	}{
		{"empty is default", "", def, false},
		{"all keys", "initial=30s,max=1h,horizon=72h", def, false},
		{"subset", "initial=1s", Schedule{Initial: time.Second, Max: time.Hour, Horizon: 72 * time.Hour}, false},
		{"spaces and order", " horizon = 96h , max=10m ", Schedule{Initial: 30 * time.Second, Max: 10 * time.Minute, Horizon: 96 * time.Hour}, false},
		{"trailing comma", "max=2h,", Schedule{Initial: 30 * time.Second, Max: 2 * time.Hour, Horizon: 72 * time.Hour}, false},
		{"unknown key", "initial=1s,retries=5", Schedule{}, true},
		{"bad duration", "max=forever", Schedule{}, true},
		{"duration without unit", "initial=30", Schedule{}, true},
		{"zero", "initial=0s", Schedule{}, true},
		{"negative", "horizon=-1h", Schedule{}, true},
		{"no equals", "initial", Schedule{}, true},
		{"repeated key", "max=1h,max=2h", Schedule{}, true},
		{"max below initial", "initial=2h", Schedule{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSchedule(tt.spec)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseSchedule(%q) error = %v, wantErr %v", tt.spec, err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("ParseSchedule(%q) = %+v, want %+v", tt.spec, got, tt.want)
			}
		})
	}
}

func TestWithDefaults(t *testing.T) {
	got := Schedule{Max: 5 * time.Minute}.WithDefaults()
	want := Schedule{Initial: 30 * time.Second, Max: 5 * time.Minute, Horizon: 72 * time.Hour}
	if got != want {
		t.Fatalf("WithDefaults = %+v, want %+v", got, want)
	}
	if DefaultSchedule().Horizon < 72*time.Hour {
		t.Fatalf("default horizon %s is under 3 days", DefaultSchedule().Horizon)
	}
}

func TestDelayExact(t *testing.T) {
	s := DefaultSchedule()
	tests := []struct {
		name    string
		seed    string
		attempt int
		base    time.Duration
		want    time.Duration
	}{
		// Values checked against an independent FNV-1a computation in Python.
		{"first retry", "notify-1", 1, 30 * time.Second, 15795 * time.Millisecond},
		{"fourth retry", "notify-1", 4, 4 * time.Minute, 3*time.Minute + 31426*time.Millisecond},
		{"capped", "notify-2", 10, time.Hour, 30*time.Minute + 24752*time.Millisecond},
		{"other seed first retry", "notify-2", 1, 30 * time.Second, 23925 * time.Millisecond},
		{"attempt 0 counts as 1", "notify-1", 0, 30 * time.Second, 15795 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.Delay(tt.seed, tt.attempt)
			if got != tt.want {
				t.Fatalf("Delay(%q, %d) = %s, want %s", tt.seed, tt.attempt, got, tt.want)
			}
			if got < tt.base/2 || got > tt.base {
				t.Fatalf("Delay(%q, %d) = %s outside [%s, %s]", tt.seed, tt.attempt, got, tt.base/2, tt.base)
			}
		})
	}
}

func TestDelayBoundsAndCap(t *testing.T) {
	s := Schedule{Initial: time.Second, Max: time.Minute}
	seeds := []string{"", "a", "order/1/2/3#notify-9", "N1379868670095785999"}
	for _, seed := range seeds {
		base := time.Second
		for attempt := 1; attempt <= 200; attempt++ {
			got := s.Delay(seed, attempt)
			if got < base/2 || got > base {
				t.Fatalf("Delay(%q, %d) = %s outside [%s, %s]", seed, attempt, got, base/2, base)
			}
			if got%time.Millisecond != 0 {
				t.Fatalf("Delay(%q, %d) = %s is not whole milliseconds", seed, attempt, got)
			}
			if again := s.Delay(seed, attempt); again != got {
				t.Fatalf("Delay(%q, %d) not deterministic: %s then %s", seed, attempt, got, again)
			}
			next := min(base*2, s.Max) // base delays grow monotonically to Max and stay there
			if next < base {
				t.Fatalf("base delay fell from %s to %s", base, next)
			}
			base = next
		}
	}
	// Huge attempts and maxima do not overflow.
	huge := Schedule{Initial: time.Hour, Max: math.MaxInt64}
	if got := huge.Delay("x", 100); got < huge.Max/2 || got > huge.Max {
		t.Fatalf("Delay with Max=MaxInt64 = %s, want within [Max/2, Max]", got)
	}
	if got := DefaultSchedule().Delay("x", 1<<30); got < 30*time.Minute || got > time.Hour {
		t.Fatalf("Delay at attempt 2^30 = %s, want within [30m, 1h]", got)
	}
}

func TestDelayCoversHorizon(t *testing.T) {
	// The default schedule keeps retrying for its whole horizon: the number of
	// attempts before giving up is a few dozen, not thousands, and not one.
	s := DefaultSchedule()
	var elapsed time.Duration
	attempts := 0
	for elapsed < s.Horizon {
		attempts++
		elapsed += s.Delay("notify-1", attempts)
	}
	if attempts < 72 || attempts > 160 {
		t.Fatalf("%d retries to cover %s", attempts, s.Horizon)
	}
}

package txid

import (
	"strconv"
	"sync"
	"testing"
	"time"
)

// fakeClock is a manually driven clock for tests.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// newFake returns a generator for node whose clock reads ms milliseconds
// after the epoch, and whose sleeps advance that clock.
func newFake(node uint16, ms int64) (*Generator, *fakeClock) {
	c := &fakeClock{t: epoch.Add(time.Duration(ms) * time.Millisecond)}
	g := NewGenerator(node)
	g.now = c.now
	g.sleep = c.advance
	return g, c
}

func TestNextLayout(t *testing.T) {
	tests := []struct {
		name string
		node uint16
		ms   int64
		want string
	}{
		{"node 5", 5, 400_000_000_000, "1677721600000020480"},
		{"node 0", 0, 400_000_000_000, "1677721600000000000"},
		{"node 1023", 1023, 400_000_000_000, "1677721600004190208"},
		{"node masked to 10 bits", 1024 + 5, 400_000_000_000, "1677721600000020480"},
		{"last 18-digit millisecond is zero padded", 0, 238_418_579_101, "0999999999997640704"},
		{"first 19-digit millisecond", 0, 238_418_579_102, "1000000000001835008"},
		{"epoch is zero padded", 7, 0, "0000000000000028672"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, _ := newFake(tt.node, tt.ms)
			if got := g.Next(); got != tt.want {
				t.Errorf("Next() = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestNextSequence(t *testing.T) {
	g, c := newFake(5, 400_000_000_000)
	tests := []struct {
		name    string
		advance time.Duration
		want    string
	}{
		{"first", 0, "1677721600000020480"},
		{"same millisecond", 0, "1677721600000020481"},
		{"same millisecond again", 999 * time.Microsecond, "1677721600000020482"},
		{"next millisecond resets sequence", time.Microsecond, "1677721600004214784"},
		{"clock goes back", -time.Second, "1677721600004214785"},
		{"clock still behind", 500 * time.Millisecond, "1677721600004214786"},
		{"clock catches up", time.Second, "1677721602101366784"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.advance(tt.advance)
			if got := g.Next(); got != tt.want {
				t.Errorf("Next() = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestNextSequenceOverflow(t *testing.T) {
	tests := []struct {
		name string
		// clockBack is how far the clock is behind the generator's last
		// millisecond when the sequence overflows.
		clockBack  time.Duration
		wantMS     int64
		wantClock  int64
		wantWaited bool
	}{
		{"waits for next millisecond", 0, 400_000_000_001, 400_000_000_001, true},
		{"clock behind moves on without waiting", time.Second, 400_000_000_001, 399_999_999_000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, c := newFake(5, 400_000_000_000)
			waited := false
			g.sleep = func(d time.Duration) { waited = true; c.advance(d) }
			for i := 0; i < 4096; i++ {
				id := mustParse(t, g.Next())
				if seq := id & sequenceMask; seq != int64(i) {
					t.Fatalf("call %d: sequence = %d, want %d", i, seq, i)
				}
			}
			c.advance(-tt.clockBack)
			id := mustParse(t, g.Next())
			if ms, seq := id>>timeShift, id&sequenceMask; ms != tt.wantMS || seq != 0 {
				t.Errorf("after overflow: ms = %d, sequence = %d, want %d, 0", ms, seq, tt.wantMS)
			}
			if got := g.millis(); got != tt.wantClock {
				t.Errorf("clock = %d ms, want %d", got, tt.wantClock)
			}
			if waited != tt.wantWaited {
				t.Errorf("waited = %t, want %t", waited, tt.wantWaited)
			}
		})
	}
}

func mustParse(t *testing.T, id string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNextRealClockIncreasing(t *testing.T) {
	g := NewGenerator(637)
	prev := ""
	for i := 0; i < 100_000; i++ {
		id := g.Next()
		if len(id) != 19 {
			t.Fatalf("call %d: Next() = %q has %d digits, want 19", i, id, len(id))
		}
		// Equal-length decimal strings order like their numbers.
		if id <= prev {
			t.Fatalf("call %d: Next() = %s, not greater than %s", i, id, prev)
		}
		prev = id
	}
}

func TestNextConcurrentUnique(t *testing.T) {
	const goroutines, perGoroutine = 8, 20_000
	g := NewGenerator(1)
	results := make([][]string, goroutines)
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Go(func() {
			ids := make([]string, perGoroutine)
			for j := range ids {
				ids[j] = g.Next()
			}
			results[i] = ids
		})
	}
	wg.Wait()
	seen := make(map[string]bool, goroutines*perGoroutine)
	for _, ids := range results {
		for _, id := range ids {
			if len(id) != 19 {
				t.Fatalf("Next() = %q, want 19 digits", id)
			}
			if seen[id] {
				t.Fatalf("duplicate id %s", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != goroutines*perGoroutine {
		t.Errorf("got %d unique ids, want %d", len(seen), goroutines*perGoroutine)
	}
}

func TestNextClockBeforeEpoch(t *testing.T) {
	g, _ := newFake(7, -1000)
	tests := []struct {
		name string
		want string
	}{
		{"first", "0000000000000028672"},
		{"second", "0000000000000028673"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := g.Next(); got != tt.want {
				t.Errorf("Next() = %s, want %s", got, tt.want)
			}
		})
	}
}

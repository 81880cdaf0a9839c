package loadgen

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      int
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one value", ms(7), 99, 7 * time.Millisecond},
		{"median of ten", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 50, 5 * time.Millisecond},
		{"p95 of ten", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 95, 10 * time.Millisecond},
		{"p99 of a hundred", ms(seq(100)...), 99, 99 * time.Millisecond},
		{"p50 of a hundred", ms(seq(100)...), 50, 50 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.sorted, tc.p); got != tc.want {
				t.Errorf("Percentile(p%d) = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func TestRunCountsEveryCallAndError(t *testing.T) {
	var calls, concurrent, peak atomic.Int64
	r := Run(context.Background(), "t", 100, 8, func(ctx context.Context, i int) error {
		calls.Add(1)
		c := concurrent.Add(1)
		for {
			p := peak.Load()
			if c <= p || peak.CompareAndSwap(p, c) {
				break
			}
		}
		time.Sleep(time.Millisecond)
		concurrent.Add(-1)
		if i%10 == 0 {
			return errors.New("boom")
		}
		return nil
	})
	if r.Requests != 100 || calls.Load() != 100 {
		t.Fatalf("requests = %d, calls = %d, want 100", r.Requests, calls.Load())
	}
	if r.Errors != 10 || r.FirstError != "boom" {
		t.Errorf("errors = %d (%q), want 10 boom", r.Errors, r.FirstError)
	}
	if peak.Load() > 8 {
		t.Errorf("peak concurrency = %d, want at most 8", peak.Load())
	}
	if r.P50 <= 0 || r.P99 < r.P50 || r.Max < r.P99 || r.Throughput <= 0 {
		t.Errorf("summary out of order: %+v", r)
	}
}

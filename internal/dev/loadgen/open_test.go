package loadgen

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunOpenOffersEveryRequestAndCapsInFlight(t *testing.T) {
	tests := []struct {
		name        string
		rate        float64
		d           time.Duration
		maxInFlight int
		wantN       int
	}{
		{"200 per second for a quarter second", 200, 250 * time.Millisecond, 4, 50},
		{"one in flight", 100, 100 * time.Millisecond, 1, 10},
		{"no rate", 0, time.Second, 4, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls, inFlight, peak atomic.Int64
			r := RunOpen(context.Background(), "t", tc.rate, tc.d, tc.maxInFlight, func(ctx context.Context, i int) error {
				calls.Add(1)
				c := inFlight.Add(1)
				for p := peak.Load(); c > p && !peak.CompareAndSwap(p, c); p = peak.Load() {
				}
				time.Sleep(2 * time.Millisecond)
				inFlight.Add(-1)
				if i == 3 {
					return errors.New("boom")
				}
				return nil
			})
			if r.Requests != tc.wantN || int(calls.Load()) != tc.wantN {
				t.Fatalf("requests = %d, calls = %d, want %d", r.Requests, calls.Load(), tc.wantN)
			}
			if peak.Load() > int64(tc.maxInFlight) {
				t.Errorf("peak in flight = %d, want at most %d", peak.Load(), tc.maxInFlight)
			}
			if tc.wantN > 3 && (r.Errors != 1 || r.FirstError != "boom") {
				t.Errorf("errors = %d (%q), want 1 boom", r.Errors, r.FirstError)
			}
		})
	}
}

// A server slower than the arrivals shows in the latency, counted from when
// each request was due, instead of slowing the arrivals down.
func TestRunOpenCountsQueueingInTheLatency(t *testing.T) {
	r := RunOpen(context.Background(), "t", 100, 200*time.Millisecond, 1, func(ctx context.Context, i int) error {
		time.Sleep(20 * time.Millisecond)
		return nil
	})
	// 20 requests, one at a time, 20 ms each, due every 10 ms: the last
	// waits about 190 ms for its turn.
	if r.Requests != 20 {
		t.Fatalf("requests = %d, want 20", r.Requests)
	}
	if r.Max < 150*time.Millisecond {
		t.Errorf("max latency = %v, want the queueing (>= 150 ms) counted", r.Max)
	}
}

func TestWriteLatencySVG(t *testing.T) {
	res := func(p50, p99 time.Duration) Result { return Result{P50: p50, P99: p99} }
	series := []Series{
		{Name: "gateway", Offers: []float64{10, 20, 40}, Runs: []Result{
			res(20*time.Millisecond, 80*time.Millisecond), res(25*time.Millisecond, 120*time.Millisecond), res(300*time.Millisecond, 2*time.Second)}},
		{Name: "floor <bare>", Offers: []float64{10, 20, 40}, Runs: []Result{
			res(10*time.Millisecond, 30*time.Millisecond), res(11*time.Millisecond, 40*time.Millisecond), res(15*time.Millisecond, 90*time.Millisecond)}},
	}
	var buf bytes.Buffer
	if err := WriteLatencySVG(&buf, "latency & load", series); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName   xml.Name `xml:"svg"`
		Polylines []struct {
			Points string `xml:"points,attr"`
			Title  string `xml:"title"`
		} `xml:"polyline"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not well-formed SVG: %v\n%s", err, buf.String())
	}
	var titles []string
	for _, p := range doc.Polylines {
		titles = append(titles, p.Title)
		if n := len(strings.Fields(p.Points)); n != 3 {
			t.Errorf("%s: %d points, want 3", p.Title, n)
		}
	}
	want := "gateway p50,gateway p99,floor <bare> p50,floor <bare> p99"
	if got := strings.Join(titles, ","); got != want {
		t.Errorf("lines = %s, want %s", got, want)
	}

	tests := []struct {
		name   string
		series []Series
	}{
		{"no series", nil},
		{"offers and runs differ", []Series{{Name: "x", Offers: []float64{1, 2}, Runs: []Result{{}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := WriteLatencySVG(&bytes.Buffer{}, "t", tc.series); err == nil {
				t.Error("want an error")
			}
		})
	}
}

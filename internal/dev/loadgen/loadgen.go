// Package loadgen runs a bounded number of requests at a fixed concurrency
// and summarises their latencies. It is the engine of `paygate bench`.
package loadgen

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Result summarises one run.
type Result struct {
	Name       string
	Requests   int
	Errors     int
	Elapsed    time.Duration
	Throughput float64 // requests per second
	P50        time.Duration
	P95        time.Duration
	P99        time.Duration
	Max        time.Duration
	FirstError string
}

// Run calls do n times from concurrency workers. do gets the call's index and
// returns an error for a failed request. The run stops early if ctx ends.
func Run(ctx context.Context, name string, n, concurrency int, do func(ctx context.Context, i int) error) Result {
	if concurrency < 1 {
		concurrency = 1
	}
	latencies := make([]time.Duration, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t0 := time.Now()
				errs[i] = do(ctx, i)
				latencies[i] = time.Since(t0)
			}
		}()
	}
	sent := 0
feed:
	for ; sent < n; sent++ {
		select {
		case next <- sent:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(start)
	return summarise(name, latencies[:sent], errs[:sent], elapsed)
}

func summarise(name string, latencies []time.Duration, errs []error, elapsed time.Duration) Result {
	r := Result{Name: name, Requests: len(latencies), Elapsed: elapsed}
	for _, err := range errs {
		if err != nil {
			r.Errors++
			if r.FirstError == "" {
				r.FirstError = err.Error()
			}
		}
	}
	if len(latencies) == 0 {
		return r
	}
	sorted := slices.Clone(latencies)
	slices.Sort(sorted)
	r.P50 = Percentile(sorted, 50)
	r.P95 = Percentile(sorted, 95)
	r.P99 = Percentile(sorted, 99)
	r.Max = sorted[len(sorted)-1]
	if elapsed > 0 {
		r.Throughput = float64(len(latencies)) / elapsed.Seconds()
	}
	return r
}

// Percentile returns the p-th percentile (nearest rank) of sorted latencies.
func Percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

// String renders the result as one table row.
func (r Result) String() string {
	return fmt.Sprintf("| %s | %d | %d | %.1f | %s | %s | %s | %s |", r.Name, r.Requests, r.Errors,
		r.Throughput, ms(r.P50), ms(r.P95), ms(r.P99), ms(r.Max))
}

// Header is the table header matching String.
const Header = "| run | requests | errors | req/s | p50 ms | p95 ms | p99 ms | max ms |\n|---|---|---|---|---|---|---|---|"

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

// RunOpen offers requests at a fixed rate per second for d, whatever the
// answers' latency (an open loop, as shoppers arrive). A request's latency
// counts from the moment it was due, so a stalled server shows in the
// figures instead of slowing the arrivals; at most maxInFlight run at once
// and a request that finds them all busy waits, its wait counted.
func RunOpen(ctx context.Context, name string, rate float64, d time.Duration, maxInFlight int, do func(ctx context.Context, i int) error) Result {
	if rate <= 0 || d <= 0 {
		return Result{Name: name}
	}
	if maxInFlight < 1 {
		maxInFlight = 1
	}
	n := int(rate * d.Seconds())
	latencies := make([]time.Duration, 0, n)
	errs := make([]error, 0, n)
	var mu sync.Mutex
	slots := make(chan struct{}, maxInFlight)
	var wg sync.WaitGroup
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	sent := 0
	for ; sent < n; sent++ {
		due := start.Add(time.Duration(sent) * interval)
		if wait := time.Until(due); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(i int, due time.Time) {
			defer wg.Done()
			err := do(ctx, i)
			lat := time.Since(due)
			<-slots
			mu.Lock()
			latencies = append(latencies, lat)
			errs = append(errs, err)
			mu.Unlock()
		}(sent, due)
	}
	wg.Wait()
	return summarise(name, latencies, errs, time.Since(start))
}

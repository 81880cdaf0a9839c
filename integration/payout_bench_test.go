package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/rail"
)

// BenchmarkPayouts measures completed payouts per second through the
// gateway (POST /v1/payout answered COMPLETED: validation, workflow, FX and
// fee, ledger reservation, rail submission and polling, settlement, records)
// beside the rail simulator called directly (submit, then read until
// completed), in the same process, with the same concurrency, and reports
// both and their ratio. Run it with
//
//	go test ./integration -run '^$' -bench BenchmarkPayouts -benchtime 400x
func BenchmarkPayouts(b *testing.B) {
	const workers = 16
	creds := payoutAccountB(b, 100_000_000_00)
	client := &http.Client{Timeout: 30 * time.Second}

	run := func(n int, one func(i int) error) time.Duration {
		var next atomic.Int64
		var wg sync.WaitGroup
		var failed atomic.Int64
		start := time.Now()
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1))
					if i > n {
						return
					}
					if err := one(i); err != nil {
						if failed.Add(1) == 1 {
							b.Error(err)
						}
					}
				}
			}()
		}
		wg.Wait()
		return time.Since(start)
	}

	gateway := func(int) error {
		rid := newRequestID()
		body, _ := json.Marshal(payoutBody(creds, rid, "10.00", ibanCompletes))
		resp, err := client.Post(env.api.URL+"/v1/payout", "application/json", strings.NewReader(string(body)))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			return err
		}
		if out["status"] != "COMPLETED" {
			return fmt.Errorf("payout %s: %v", rid, out["status"])
		}
		return nil
	}
	rc, err := rail.NewClient(env.railHTTP.URL, 10*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	direct := func(i int) error {
		ctx := context.Background()
		tr, err := rc.Submit(ctx, rail.SubmitRequest{IdempotencyKey: "bench/" + newRequestID(), Amount: 1000, Currency: "USD",
			Beneficiary: rail.Beneficiary{Name: "Muller GmbH", IBAN: ibanCompletes, BIC: "COBADEFFXXX", Country: "DE"},
			Reference:   fmt.Sprintf("bench %d", i)})
		if err != nil {
			return err
		}
		for tr.Status == rail.StatusSubmitted {
			time.Sleep(10 * time.Millisecond)
			if tr, err = rc.Get(ctx, tr.ID); err != nil {
				return err
			}
		}
		if tr.Status != rail.StatusCompleted {
			return fmt.Errorf("transfer %s: %s", tr.ID, tr.Status)
		}
		return nil
	}

	b.ResetTimer()
	g := run(b.N, gateway)
	r := run(b.N, direct)
	b.StopTimer()
	gps := float64(b.N) / g.Seconds()
	rps := float64(b.N) / r.Seconds()
	b.ReportMetric(gps, "gateway-payouts/s")
	b.ReportMetric(rps, "rail-direct/s")
	b.ReportMetric(gps/rps, "ratio")
}

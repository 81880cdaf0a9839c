package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/rail"
	"github.com/paygate/paygate/models"
)

// BenchmarkPayouts measures completed payouts per second through the
// gateway (POST /v1/payout answered COMPLETED: validation, workflow, FX and
// fee, ledger reservation, rail submission, the rail's word, settlement,
// records) beside approved authorisations per second through the same
// gateway and the rail simulator called directly (submit, then read until
// completed), in the same process, each with 64 in flight, and reports
// the three rates and the payouts' ratio to the other two. Run it with
//
//	go test ./integration -run '^$' -bench BenchmarkPayouts -benchtime 400x
//
// With PAYGATE_BENCH_EAGER=true the authorisations and the payouts go to an
// API that starts them eagerly on its own worker, as `paygate dev`'s does.
func BenchmarkPayouts(b *testing.B) {
	const workers = 64
	creds := payoutAccountB(b, 100_000_000_00)
	runID := randomHex(4)
	client := &http.Client{Timeout: 30 * time.Second}
	// Both go to an API that starts them eagerly when asked, as
	// `paygate dev` runs it.
	apiURL := env.api.URL
	if os.Getenv("PAYGATE_BENCH_EAGER") == "true" {
		apiURL = startEagerAPI(b).url
	}

	gateway := func(int) error {
		rid := newRequestID()
		body, _ := json.Marshal(payoutBody(creds, rid, "10.00", ibanCompletes))
		resp, err := client.Post(apiURL+"/v1/payout", "application/json", strings.NewReader(string(body)))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			return err
		}
		// Past the API's wait (payouts.Wait) the answer is the payout as it
		// stands; it is counted once the record says it completed.
		for st, deadline := out["status"], time.Now().Add(2*time.Minute); st != "COMPLETED"; {
			if st == "FAILED" || time.Now().After(deadline) {
				return fmt.Errorf("payout %s: %v", rid, st)
			}
			time.Sleep(50 * time.Millisecond)
			var p models.Payout
			if err := env.gw.DB.Where("merchant_id = ? AND request_id = ?", creds.MerchantID, rid).Take(&p).Error; err != nil {
				return err
			}
			st = p.Status
		}
		return nil
	}
	authorise := func(i int) error {
		return authoriseApprovedAt(client, apiURL, signCard(cardOrder(creds, fmt.Sprintf("BP-%s-%d", runID, i), "4242424242424242"), creds.SignKey))
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
	a := inFlight(b, workers, b.N, authorise)
	g := inFlight(b, workers, b.N, gateway)
	r := inFlight(b, workers, b.N, direct)
	b.StopTimer()
	aps := float64(b.N) / a.Seconds()
	gps := float64(b.N) / g.Seconds()
	rps := float64(b.N) / r.Seconds()
	b.ReportMetric(aps, "authorisations/s")
	b.ReportMetric(gps, "gateway-payouts/s")
	b.ReportMetric(rps, "rail-direct/s")
	b.ReportMetric(gps/aps, "payouts/authorisations")
	b.ReportMetric(gps/rps, "payouts/rail")
}

// inFlight calls one for i from 1 to n, workers at a time, and returns how
// long they took; the first error fails the benchmark.
func inFlight(b *testing.B, workers, n int, one func(i int) error) time.Duration {
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1))
				if i > n {
					return
				}
				if err := one(i); err != nil && failed.Add(1) == 1 {
					b.Error(err)
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

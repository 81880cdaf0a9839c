package integration

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/card"
)

// BenchmarkAuthorise drives approved card payments through the gateway
// (POST /v1/authorise, 32 in flight, no notify_url: the payment's one
// workflow task) and reports authorisations per second. The API and the
// worker run in the test process, Temporal and Postgres outside it, so
//
//	go test ./integration -run '^$' -bench BenchmarkAuthorise -benchtime 2000x -cpuprofile cpu.out
//
// profiles the gateway's own CPU under load (docs/benchmarks.md).
func BenchmarkAuthorise(b *testing.B) {
	const inFlight = 32
	creds := env.auto
	runID := randomHex(4)
	client := &http.Client{Timeout: 30 * time.Second}
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range inFlight {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				// A card per payment, so the velocity rules do not trip.
				pan := card.WithCheckDigit(fmt.Sprintf("41%013d", 900_000_000+i))
				f := cardOrder(creds, fmt.Sprintf("BA-%s-%d", runID, i), pan)
				delete(f, "notify_url")
				f = signCard(f, creds.SignKey)
				resp, err := client.Post(env.api.URL+"/v1/authorise", formType, strings.NewReader(form(f)))
				if err != nil {
					if failed.Add(1) == 1 {
						b.Error(err)
					}
					continue
				}
				var r respon
				err = xml.NewDecoder(resp.Body).Decode(&r)
				resp.Body.Close()
				if err == nil && r.OrderStatus != "1" {
					err = fmt.Errorf("authorise %s: %s %s", f["order_no"], r.OrderStatus, r.ResultInfo)
				}
				if err != nil && failed.Add(1) == 1 {
					b.Error(err)
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "authorisations/s")
}

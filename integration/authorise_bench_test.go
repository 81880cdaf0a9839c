package integration

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
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
	creds := env.auto
	runID := randomHex(4)
	client := &http.Client{Timeout: 30 * time.Second}
	b.ResetTimer()
	took := inFlight(b, 32, b.N, func(i int) error {
		// A card per payment, so the velocity rules do not trip.
		pan := card.WithCheckDigit(fmt.Sprintf("41%013d", 900_000_000+i))
		f := cardOrder(creds, fmt.Sprintf("BA-%s-%d", runID, i), pan)
		delete(f, "notify_url")
		return authoriseApproved(client, signCard(f, creds.SignKey))
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/took.Seconds(), "authorisations/s")
}

// authoriseApproved sends the signed card order f to POST /v1/authorise and
// fails unless the gateway answers it approved (order_status 1).
func authoriseApproved(client *http.Client, f map[string]string) error {
	return authoriseApprovedAt(client, env.api.URL, f)
}

// authoriseApprovedAt is authoriseApproved through the API at base.
func authoriseApprovedAt(client *http.Client, base string, f map[string]string) error {
	resp, err := client.Post(base+"/v1/authorise", formType, strings.NewReader(form(f)))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var r respon
	if err := xml.NewDecoder(resp.Body).Decode(&r); err != nil {
		return err
	}
	if r.OrderStatus != "1" {
		return fmt.Errorf("authorise %s: %s %s", f["order_no"], r.OrderStatus, r.ResultInfo)
	}
	return nil
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/loadgen"
	"github.com/paygate/paygate/internal/signing"
)

// runBench measures signed direct card payments through a running gateway
// against a baseline of the simulator's charge endpoint called directly with
// the same concurrency, in the same run.
func runBench(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	credsFile := fs.String("creds", ".data/demo-merchant.json", "merchant credentials file written by `paygate dev`")
	simURL := fs.String("simulator", "http://127.0.0.1:8090", "the acquirer simulator the gateway uses")
	n := fs.Int("n", 400, "requests per run")
	conc := fs.Int("c", 32, "concurrent requests")
	pan := fs.String("card", "", "card number for every payment (default: a different approvable card per payment, so velocity rules do not trip)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	b, err := os.ReadFile(*credsFile)
	if err != nil {
		return fmt.Errorf("read %s (is `make run` going?): %w", *credsFile, err)
	}
	var creds demoFile
	if err := json.Unmarshal(b, &creds); err != nil {
		return fmt.Errorf("%s: %w", *credsFile, err)
	}
	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: *conc * 2}}
	runID := strconv.FormatInt(time.Now().UnixNano(), 36)

	baseline := loadgen.Run(ctx, "baseline: simulator charge, direct", *n, *conc, func(ctx context.Context, i int) error {
		body, _ := json.Marshal(map[string]any{
			"idempotency_key": "bench-" + runID + "-" + strconv.Itoa(i), "reference": "bench",
			"card_number": benchCard(i), "expiry_month": "12", "expiry_year": "2031", "cvv": "739",
			"amount": 1234, "currency": "USD", "capture": true,
		})
		return postExpect(ctx, hc, *simURL+"/v1/charges", "application/json", body, func(b []byte) error {
			if !bytes.Contains(b, []byte(`"approved"`)) {
				return fmt.Errorf("not approved: %.120s", b)
			}
			return nil
		})
	})
	gateway := loadgen.Run(ctx, "gateway: POST /v1/authorise", *n, *conc, func(ctx context.Context, i int) error {
		orderNo := "BENCH-" + runID + "-" + strconv.Itoa(i)
		card := *pan
		if card == "" {
			card = benchCard(i)
		}
		f := url.Values{}
		vals := [][2]string{
			{"merchant_id", creds.MerchantID}, {"account_id", creds.AccountID}, {"order_no", orderNo},
			{"currency", "USD"}, {"amount", "12.34"}, {"first_name", "Ada"}, {"last_name", "Lovelace"},
			{"card", card}, {"expiration_year", "2031"}, {"expiration_month", "12"}, {"security_code", "739"},
			{"shopper_email", "bench" + strconv.Itoa(i) + "@example.com"},
		}
		signed := make([]string, len(vals))
		for j, kv := range vals {
			f.Set(kv[0], kv[1])
			signed[j] = kv[1]
		}
		f.Set("encryption_data", signing.Sign(creds.SignKey, signed...))
		return postExpect(ctx, hc, creds.APIURL+"/v1/authorise", "application/x-www-form-urlencoded", []byte(f.Encode()), func(b []byte) error {
			var r struct {
				OrderStatus string `xml:"order_status"`
				ResultInfo  string `xml:"result_info"`
			}
			if err := xml.Unmarshal(b, &r); err != nil {
				return err
			}
			if r.OrderStatus != "1" {
				return fmt.Errorf("order_status %s: %s", r.OrderStatus, r.ResultInfo)
			}
			return nil
		})
	})

	fmt.Fprintf(stdout, "machine: %d CPUs, %s/%s, %s; %d requests per run, %d concurrent\n\n",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), *n, *conc)
	fmt.Fprintln(stdout, loadgen.Header)
	fmt.Fprintln(stdout, baseline)
	fmt.Fprintln(stdout, gateway)
	if baseline.Throughput > 0 && baseline.P50 > 0 {
		fmt.Fprintf(stdout, "\ngateway/baseline: throughput %.3f, p50 latency %.1fx, p99 latency %.1fx\n",
			gateway.Throughput/baseline.Throughput,
			float64(gateway.P50)/float64(baseline.P50), float64(gateway.P99)/float64(baseline.P99))
	}
	for _, r := range []loadgen.Result{baseline, gateway} {
		if r.Errors > 0 {
			return fmt.Errorf("%s: %d errors, first: %s", r.Name, r.Errors, r.FirstError)
		}
	}
	return nil
}

// benchCard returns the i-th of a series of Luhn-valid Visa numbers that the
// simulator approves.
func benchCard(i int) string {
	body := fmt.Sprintf("41%013d", i)
	sum := 0
	for j := len(body) - 1; j >= 0; j-- {
		d := int(body[j] - '0')
		if (len(body)-j)%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return body + strconv.Itoa((10-sum%10)%10)
}

func postExpect(ctx context.Context, hc *http.Client, target, contentType string, body []byte, check func([]byte) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %.120s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return check(b)
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
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

	"github.com/paygate/paygate/internal/dev/loadgen"
	"github.com/paygate/paygate/internal/domain/card"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/worker"
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
	batches := fs.Int("batches", 4, "capture and refund batches of 50 to time after the authorisations (0: none)")
	temporalAddr := fs.String("temporal", "127.0.0.1:7233", "the Temporal frontend the gateway runs on, for the floor run (\"\": no floor)")
	namespace := fs.String("namespace", "default", "the gateway's Temporal namespace")
	floorPollers := fs.Int("floor-pollers", worker.WorkflowTaskPollers, "workflow-task pollers of the floor's worker, to match the gateway's worker (PAYGATE_WORKER_WORKFLOW_POLLERS)")
	floorEager := fs.Bool("floor-eager", false, "start the floor's workflows eagerly and take their answers in the bench's process, to match a gateway whose API starts payments so (PAYGATE_EAGER_START, paygate dev's default); the goals are set against the floor without")
	floorGzip := fs.Bool("floor-gzip", false, "compress the floor's requests to Temporal, to match a gateway run with TEMPORAL_GRPC_GZIP=true (paygate dev's gateway sends them uncompressed)")
	sweep := fs.String("sweep", "", "open-loop rates to offer after the closed-loop runs, e.g. 10,20,30,40 (requests/s; gateway and floor at each)")
	sweepTime := fs.Duration("sweep-time", 20*time.Second, "how long each open-loop rate runs")
	plotFile := fs.String("plot", "", "with -sweep: write an SVG of p50 and p99 latency against offered load to this file")
	envFile := fs.String("env", ".data/dev.env", "the env file `paygate dev` writes, for the gateway's DATABASE_URL (commits per payment)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rates, err := parseRates(*sweep)
	if err != nil {
		return fmt.Errorf("-sweep: %w", err)
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
	// Each run starts its cards at a fresh place in the series, so that a
	// run never reuses an earlier run's cards and trips the card velocity
	// rule of an account that has seen many runs.
	cardBase := int(time.Now().UnixNano()/1000) % 1_000_000_000_000

	// Each closed-loop run is bracketed by samples of what the stack's
	// processes spent, so each is reported per request beside the others.
	var metricsURLs []string
	for _, u := range []string{creds.APIMetricsURL, creds.MetricsURL} {
		if u != "" {
			metricsURLs = append(metricsURLs, u)
		}
	}
	probe := newCostProbe(metricsURLs, *envFile)
	var costs []runCost
	measured := func(name string, run func() loadgen.Result) loadgen.Result {
		before := probe.take(ctx, true)
		r := run()
		costs = append(costs, runCost{name: name, requests: r.Requests, before: before, after: probe.take(ctx, true)})
		return r
	}
	baseline := measured("baseline", func() loadgen.Result {
		return loadgen.Run(ctx, "baseline: simulator charge, direct", *n, *conc, baselineCharge(hc, *simURL, runID))
	})
	authorise := func(ctx context.Context, i int) error {
		orderNo := "BENCH-" + runID + "-" + strconv.Itoa(i)
		card := *pan
		if card == "" {
			card = benchCard(cardBase + i)
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
	}
	gateway := measured("gateway", func() loadgen.Result {
		return loadgen.Run(ctx, "gateway: POST /v1/authorise", *n, *conc, authorise)
	})

	// The floor runs beside the gateway, on the same server and machine in
	// the same minutes: the ratio to it is what the gateway's own work
	// costs over the engine's least.
	var floor loadgen.Result
	var floorDo func(context.Context, int) error
	if *temporalAddr != "" {
		f, err := startFloor(ctx, *temporalAddr, *namespace, runID, *floorGzip, *floorPollers, *floorEager)
		if err != nil {
			return err
		}
		defer f.Close()
		floorDo = f.Do
		name := "floor: bare workflow, one local activity"
		if *floorEager {
			name += ", started eagerly"
		}
		floor = measured("floor", func() loadgen.Result {
			return loadgen.Run(ctx, name, *n, *conc, floorDo)
		})
	}

	fmt.Fprintf(stdout, "machine: %d CPUs, %s/%s, %s; %d requests per run, %d concurrent\n\n",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), *n, *conc)
	fmt.Fprintln(stdout, loadgen.Header)
	fmt.Fprintln(stdout, baseline)
	if floor.Name != "" {
		fmt.Fprintln(stdout, floor)
	}
	fmt.Fprintln(stdout, gateway)
	if floor.Throughput > 0 && floor.P50 > 0 {
		fmt.Fprintf(stdout, "\ngateway/floor: throughput %.2f, p50 latency %.2fx, p99 latency %.2fx\n",
			gateway.Throughput/floor.Throughput,
			float64(gateway.P50)/float64(floor.P50), float64(gateway.P99)/float64(floor.P99))
	}
	if baseline.Throughput > 0 && baseline.P50 > 0 {
		fmt.Fprintf(stdout, "\ngateway/baseline: throughput %.3f, p50 latency %.1fx, p99 latency %.1fx\n",
			gateway.Throughput/baseline.Throughput,
			float64(gateway.P50)/float64(baseline.P50), float64(gateway.P99)/float64(baseline.P99))
	}
	writeCostTable(stdout, costs)
	writeOwnShare(stdout, costs)
	for _, r := range []loadgen.Result{baseline, floor, gateway} {
		if r.Errors > 0 {
			return fmt.Errorf("%s: %d errors, first: %s", r.Name, r.Errors, r.FirstError)
		}
	}
	if len(rates) > 0 {
		if err := runSweep(ctx, stdout, rates, *sweepTime, *conc, authorise, floorDo, *plotFile); err != nil {
			return err
		}
	}
	if *batches > 0 {
		return runBatchBench(ctx, hc, creds, *simURL, runID, cardBase, *batches, stdout)
	}
	return nil
}

// benchCard returns the i-th of a series of Luhn-valid Visa numbers that the
// simulator approves.
func benchCard(i int) string {
	return card.WithCheckDigit(fmt.Sprintf("41%013d", i))
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

// batchSize is the most entries a capture or refund batch may hold.
const batchSize = 50

// runBatchBench times capture batches on manual-capture orders and refund
// batches on paid orders, each of 50 entries, against a baseline of the
// simulator's capture and refund endpoints called directly for the same
// number of charges with the gateway's batch concurrency.
func runBatchBench(ctx context.Context, hc *http.Client, creds demoFile, simURL, runID string, cardBase, batches int, stdout io.Writer) error {
	if creds.ManualAccountID == "" {
		return errors.New("the credentials file has no manual_account_id: run `make run` again to create it")
	}
	manual := demoFile{APIURL: creds.APIURL, MerchantID: creds.MerchantID, AccountID: creds.ManualAccountID, SignKey: creds.ManualSignKey}
	n := batches * batchSize
	// Orders to operate on; paying them is not timed.
	capOrders, err := payOrders(ctx, hc, manual, "BC-"+runID, cardBase, n)
	if err != nil {
		return err
	}
	refOrders, err := payOrders(ctx, hc, creds, "BR-"+runID, cardBase+n, n)
	if err != nil {
		return err
	}

	// Baseline: charges made directly, then captured and refunded directly.
	charge := func(i int, capture bool, prefix string) (string, error) {
		body, _ := json.Marshal(map[string]any{
			"idempotency_key": prefix + runID + "-" + strconv.Itoa(i), "reference": "bench",
			"card_number": benchCard(i), "expiry_month": "12", "expiry_year": "2031", "cvv": "739",
			"amount": 1234, "currency": "USD", "capture": capture,
		})
		var out struct {
			ChargeID string `json:"charge_id"`
		}
		err := postExpect(ctx, hc, simURL+"/v1/charges", "application/json", body, func(b []byte) error { return json.Unmarshal(b, &out) })
		return out.ChargeID, err
	}
	capCharges, refCharges := make([]string, n), make([]string, n)
	for i := range n {
		if capCharges[i], err = charge(i, false, "bcap-"); err != nil {
			return err
		}
		if refCharges[i], err = charge(i, true, "bref-"); err != nil {
			return err
		}
	}
	const conc = 8 // the gateway works on 8 entries of a batch at once
	simOp := func(path string, body map[string]any) error {
		b, _ := json.Marshal(body)
		return postExpect(ctx, hc, simURL+path, "application/json", b, func([]byte) error { return nil })
	}
	capBase := loadgen.Run(ctx, "baseline: simulator capture, direct", n, conc, func(ctx context.Context, i int) error {
		return simOp("/v1/charges/"+capCharges[i]+"/capture", map[string]any{"idempotency_key": "c-" + capCharges[i], "amount": 1234})
	})
	refBase := loadgen.Run(ctx, "baseline: simulator refund, direct", n, conc, func(ctx context.Context, i int) error {
		return simOp("/v1/charges/"+refCharges[i]+"/refunds", map[string]any{"idempotency_key": "r-" + refCharges[i], "amount": 100})
	})

	// The gateway: one batch request at a time, 50 entries each.
	capBatches := loadgen.Run(ctx, "gateway: POST /v1/capture, 50 entries", batches, 1, func(ctx context.Context, b int) error {
		return postBatch(ctx, hc, manual, "/v1/capture", "capture_orders", "capture_status", capOrders[b*batchSize:(b+1)*batchSize], nil)
	})
	refBatches := loadgen.Run(ctx, "gateway: POST /v1/refund, 50 entries", batches, 1, func(ctx context.Context, b int) error {
		return postBatch(ctx, hc, creds, "/v1/refund", "refund_orders", "refund_status", refOrders[b*batchSize:(b+1)*batchSize],
			map[string]string{"refund_amount": "1.00", "refund_reason": "bench"})
	})

	fmt.Fprintf(stdout, "\nbatches: %d of %d entries each; baseline runs the same %d operations with concurrency %d\n\n", batches, batchSize, n, conc)
	fmt.Fprintln(stdout, loadgen.Header)
	for _, r := range []loadgen.Result{capBase, capBatches, refBase, refBatches} {
		fmt.Fprintln(stdout, r)
	}
	entriesPerSec := func(r loadgen.Result) float64 { return r.Throughput * batchSize }
	fmt.Fprintf(stdout, "\nentries/s: capture %.1f (baseline %.1f, ratio %.3f); refund %.1f (baseline %.1f, ratio %.3f)\n",
		entriesPerSec(capBatches), capBase.Throughput, entriesPerSec(capBatches)/capBase.Throughput,
		entriesPerSec(refBatches), refBase.Throughput, entriesPerSec(refBatches)/refBase.Throughput)
	for _, r := range []loadgen.Result{capBase, capBatches, refBase, refBatches} {
		if r.Errors > 0 {
			return fmt.Errorf("%s: %d errors, first: %s", r.Name, r.Errors, r.FirstError)
		}
	}
	return nil
}

type paidOrder struct{ orderNo, transactionID string }

// payOrders pays n orders of 12.34 USD, 16 at a time.
func payOrders(ctx context.Context, hc *http.Client, creds demoFile, prefix string, cardBase, n int) ([]paidOrder, error) {
	out := make([]paidOrder, n)
	r := loadgen.Run(ctx, "setup", n, 16, func(ctx context.Context, i int) error {
		orderNo := prefix + "-" + strconv.Itoa(i)
		vals := [][2]string{
			{"merchant_id", creds.MerchantID}, {"account_id", creds.AccountID}, {"order_no", orderNo},
			{"currency", "USD"}, {"amount", "12.34"}, {"first_name", "Ada"}, {"last_name", "Lovelace"},
			{"card", benchCard(cardBase + 100000 + i)}, {"expiration_year", "2031"}, {"expiration_month", "12"}, {"security_code", "739"},
			{"shopper_email", "batch" + strconv.Itoa(i) + "@example.com"},
		}
		f := url.Values{}
		signed := make([]string, len(vals))
		for j, kv := range vals {
			f.Set(kv[0], kv[1])
			signed[j] = kv[1]
		}
		f.Set("encryption_data", signing.Sign(creds.SignKey, signed...))
		return postExpect(ctx, hc, creds.APIURL+"/v1/authorise", "application/x-www-form-urlencoded", []byte(f.Encode()), func(b []byte) error {
			var res struct {
				OrderStatus   string `xml:"order_status"`
				TransactionID string `xml:"transaction_id"`
				ResultInfo    string `xml:"result_info"`
			}
			if err := xml.Unmarshal(b, &res); err != nil {
				return err
			}
			if res.OrderStatus != "1" {
				return fmt.Errorf("order_status %s: %s", res.OrderStatus, res.ResultInfo)
			}
			out[i] = paidOrder{orderNo: orderNo, transactionID: res.TransactionID}
			return nil
		})
	})
	if r.Errors > 0 {
		return nil, fmt.Errorf("paying the orders to operate on: %d errors, first: %s", r.Errors, r.FirstError)
	}
	return out, nil
}

// postBatch sends one signed batch and checks every entry was done.
func postBatch(ctx context.Context, hc *http.Client, creds demoFile, path, array, statusField string, orders []paidOrder, extra map[string]string) error {
	entries := make([]map[string]string, len(orders))
	signed := []string{creds.MerchantID, creds.AccountID}
	for i, o := range orders {
		e := map[string]string{"transaction_id": o.transactionID, "order_no": o.orderNo, "currency": "USD", "amount": "12.34"}
		for k, v := range extra {
			e[k] = v
		}
		entries[i] = e
		signed = append(signed, o.transactionID)
	}
	body, _ := json.Marshal(map[string]any{"merchant_id": creds.MerchantID, "account_id": creds.AccountID,
		"encryption_data": signing.Sign(creds.SignKey, signed...), array: entries})
	return postExpect(ctx, hc, creds.APIURL+path, "application/json", body, func(b []byte) error {
		var res map[string]json.RawMessage
		if err := json.Unmarshal(b, &res); err != nil {
			return err
		}
		var list []map[string]string
		if err := json.Unmarshal(res[array], &list); err != nil {
			return fmt.Errorf("%s: %.200s", array, b)
		}
		if len(list) != len(orders) {
			return fmt.Errorf("%d entries answered, want %d: %.200s", len(list), len(orders), b)
		}
		for _, e := range list {
			if e[statusField] != "1" {
				return fmt.Errorf("entry %s: %s %s %s", e["transaction_id"], e[statusField], e["error_message"], e["refund_message"])
			}
		}
		return nil
	})
}

// baselineCharge is one charge straight at the acquirer simulator: what the
// acquirer alone costs a payment.
func baselineCharge(hc *http.Client, simURL, runID string) func(context.Context, int) error {
	return func(ctx context.Context, i int) error {
		body, _ := json.Marshal(map[string]any{
			"idempotency_key": "bench-" + runID + "-" + strconv.Itoa(i), "reference": "bench",
			"card_number": benchCard(i), "expiry_month": "12", "expiry_year": "2031", "cvv": "739",
			"amount": 1234, "currency": "USD", "capture": true,
		})
		return postExpect(ctx, hc, simURL+"/v1/charges", "application/json", body, func(b []byte) error {
			if !bytes.Contains(b, []byte(`"approved"`)) {
				return fmt.Errorf("not approved: %.120s", b)
			}
			return nil
		})
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/dev/loadgen"
)

// sweepMaxInFlight bounds the requests an open-loop run keeps open: far
// above what the gateway holds at the rates this machine takes, so the
// arrivals stay open, yet a stalled server cannot pile up goroutines without
// end.
const sweepMaxInFlight = 512

// sweepIndexBase separates the request indexes (order numbers, cards,
// floor workflow ids) of the closed-loop runs and of each open-loop rate.
const sweepIndexBase = 10_000_000

// parseRates reads a comma-separated list of positive, increasing rates.
func parseRates(spec string) ([]float64, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, nil
	}
	var out []float64
	for _, f := range strings.Split(spec, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || r <= 0 {
			return nil, fmt.Errorf("%q is not a positive rate", f)
		}
		if len(out) > 0 && r <= out[len(out)-1] {
			return nil, fmt.Errorf("rates must increase: %v then %v", out[len(out)-1], r)
		}
		out = append(out, r)
	}
	return out, nil
}

// runSweep offers each rate in turn, open loop, to the gateway and then to
// the floor (when there is one), prints a table of both and, when plotFile
// is set, writes the latency plot.
func runSweep(ctx context.Context, stdout io.Writer, rates []float64, d time.Duration, conc int,
	gateway, floor func(context.Context, int) error, plotFile string) error {
	gw := loadgen.Series{Name: "gateway"}
	fl := loadgen.Series{Name: "floor"}
	var errs []error
	for k, rate := range rates {
		base := (k + 1) * sweepIndexBase
		offset := func(do func(context.Context, int) error) func(context.Context, int) error {
			return func(ctx context.Context, i int) error { return do(ctx, base+i) }
		}
		r := loadgen.RunOpen(ctx, fmt.Sprintf("gateway at %g/s", rate), rate, d, sweepMaxInFlight, offset(gateway))
		gw.Offers, gw.Runs = append(gw.Offers, rate), append(gw.Runs, r)
		if r.Errors > 0 {
			errs = append(errs, fmt.Errorf("%s: %d errors, first: %s", r.Name, r.Errors, r.FirstError))
		}
		if floor != nil {
			r := loadgen.RunOpen(ctx, fmt.Sprintf("floor at %g/s", rate), rate, d, sweepMaxInFlight, offset(floor))
			fl.Offers, fl.Runs = append(fl.Offers, rate), append(fl.Runs, r)
			if r.Errors > 0 {
				errs = append(errs, fmt.Errorf("%s: %d errors, first: %s", r.Name, r.Errors, r.FirstError))
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	series := []loadgen.Series{gw}
	if floor != nil {
		series = append(series, fl)
	}
	fmt.Fprintf(stdout, "\nopen loop, %s per rate (latency counted from when each request was due):\n\n%s\n", d, loadgen.Header)
	for i := range gw.Runs {
		fmt.Fprintln(stdout, gw.Runs[i])
		if floor != nil && i < len(fl.Runs) {
			fmt.Fprintln(stdout, fl.Runs[i])
		}
	}
	if plotFile != "" {
		f, err := os.Create(plotFile)
		if err != nil {
			return err
		}
		title := fmt.Sprintf("POST /v1/authorise and the bare-workflow floor, %s per rate", d)
		if err := loadgen.WriteLatencySVG(f, title, series); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nplot: %s\n", plotFile)
	}
	return errors.Join(errs...)
}

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/dev/devenv"
	"github.com/paygate/paygate/internal/dev/proccpu"
)

// The processes whose CPU time the benchmark reports, each a group of
// /proc entries: the gateway's API and worker, the simulators, `paygate
// dev` itself (which only starts and watches the others), Temporal,
// Postgres, and this process (the load, and the floor's worker).
var costGroups = []proccpu.Group{
	{Name: "paygate api", Match: paygateCommand("serve")},
	{Name: "paygate worker", Match: paygateCommand("worker")},
	{Name: "simulators", Match: paygateCommand("simulator")},
	{Name: "paygate dev (launcher)", Match: paygateCommand("dev")},
	{Name: "bench (load; the floor's worker)", Match: paygateCommand("bench")},
	{Name: "temporal", Match: proccpu.ByComm("temporal", "temporal-server")},
	{Name: "postgres", Match: proccpu.ByComm("postgres")},
}

// paygateCommand matches a paygate process running one of the commands.
func paygateCommand(commands ...string) func(string, []string) bool {
	return func(comm string, args []string) bool {
		return comm == "paygate" && len(args) > 1 && slices.Contains(commands, args[1])
	}
}

// costProbe samples what a run cost the stack: each process's CPU time,
// the statements the gateway sent (its paygate_db_statements_total) and
// the transactions its database committed (pg_stat_database).
type costProbe struct {
	metricsURLs []string
	databaseURL string
	hc          *http.Client
}

// costSample is the stack's counters at one moment.
type costSample struct {
	cpu        proccpu.Sample
	statements float64 // -1 when the metrics could not be read
	commits    int64   // -1 when the database could not be read
}

// newCostProbe reads the gateway's metrics and the database its env file
// names; what cannot be read is left out of the report rather than failing
// the benchmark.
func newCostProbe(metricsURLs []string, envFile string) *costProbe {
	return &costProbe{metricsURLs: metricsURLs, databaseURL: envValue(envFile, "DATABASE_URL"), hc: &http.Client{Timeout: 10 * time.Second}}
}

// envValue reads one KEY=value line of an env file; "" when absent.
func envValue(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+"="); ok {
			return v
		}
	}
	return ""
}

// take samples the stack. The database's counts are its backends' flushed
// statistics, which lag a busy backend by up to a second: after a run,
// settle waits until they hold still.
func (p *costProbe) take(ctx context.Context, settle bool) costSample {
	s := costSample{statements: -1, commits: -1}
	if settle && p.databaseURL != "" {
		last, still := p.commits(ctx), 0
		for deadline := time.Now().Add(15 * time.Second); still < 3 && time.Now().Before(deadline); {
			select {
			case <-ctx.Done():
				return s
			case <-time.After(500 * time.Millisecond):
			}
			if n := p.commits(ctx); n == last {
				still++
			} else {
				last, still = n, 0
			}
		}
	}
	s.cpu, _ = proccpu.Take("/proc", costGroups)
	s.statements = p.statements(ctx)
	s.commits = p.commits(ctx)
	return s
}

func (p *costProbe) commits(ctx context.Context) int64 {
	if p.databaseURL == "" {
		return -1
	}
	n, err := devenv.CommitCount(ctx, p.databaseURL)
	if err != nil {
		return -1
	}
	return n
}

// statements sums paygate_db_statements_total from the gateway's
// processes' metrics (the API's and the worker's); -1 when one cannot be
// read.
func (p *costProbe) statements(ctx context.Context) float64 {
	if len(p.metricsURLs) == 0 {
		return -1
	}
	var sum float64
	for _, u := range p.metricsURLs {
		n := p.statementsAt(ctx, u)
		if n < 0 {
			return -1
		}
		sum += n
	}
	return sum
}

func (p *costProbe) statementsAt(ctx context.Context, metricsURL string) float64 {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
	if err != nil {
		return -1
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var sum float64
	found := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "paygate_db_statements_total{") {
			continue
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			sum += v
			found = true
		}
	}
	if !found {
		return -1
	}
	return sum
}

// runCost is what one run cost, per request.
type runCost struct {
	name     string
	requests int
	before   costSample
	after    costSample
}

// writeCostTable prints the runs' cost per request side by side: CPU
// milliseconds by process, statements and commits.
func writeCostTable(w io.Writer, runs []runCost) {
	if len(runs) == 0 {
		return
	}
	fmt.Fprintf(w, "\ncost per request, by process (CPU ms), and the gateway's database work\n\n| |")
	for _, r := range runs {
		fmt.Fprintf(w, " %s |", r.name)
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(runs)))
	for _, g := range costGroups {
		seen := false
		for _, r := range runs {
			seen = seen || len(r.after.cpu[g.Name]) > 0
		}
		if !seen {
			continue
		}
		fmt.Fprintf(w, "| %s |", g.Name)
		for _, r := range runs {
			d := proccpu.Since(r.before.cpu, r.after.cpu)[g.Name]
			fmt.Fprintf(w, " %.2f |", float64(d.Microseconds())/1000/float64(r.requests))
		}
		fmt.Fprintln(w)
	}
	row := func(name string, value func(r runCost) (float64, bool)) {
		fmt.Fprintf(w, "| %s |", name)
		for _, r := range runs {
			if v, ok := value(r); ok {
				fmt.Fprintf(w, " %.2f |", v/float64(r.requests))
			} else {
				fmt.Fprint(w, " n/a |")
			}
		}
		fmt.Fprintln(w)
	}
	row("gateway SQL statements", func(r runCost) (float64, bool) {
		return r.after.statements - r.before.statements, r.before.statements >= 0 && r.after.statements >= 0
	})
	row("gateway database commits", func(r runCost) (float64, bool) {
		return float64(r.after.commits - r.before.commits), r.before.commits >= 0 && r.after.commits >= 0
	})
}

// perRequest is what the named group spent per request in run r, in ms.
func (r runCost) perRequest(group string) float64 {
	if r.requests == 0 {
		return 0
	}
	d := proccpu.Since(r.before.cpu, r.after.cpu)[group]
	return float64(d.Microseconds()) / 1000 / float64(r.requests)
}

// writeOwnShare prints the gateway's own CPU per payment, its API's and
// worker's, against Temporal's (issue 31's goal: at most a quarter).
func writeOwnShare(w io.Writer, costs []runCost) {
	i := slices.IndexFunc(costs, func(c runCost) bool { return c.name == "gateway" })
	if i < 0 {
		return
	}
	gateway := costs[i]
	api, worker := gateway.perRequest("paygate api"), gateway.perRequest("paygate worker")
	temporal := gateway.perRequest("temporal")
	if temporal <= 0 || api+worker <= 0 {
		return
	}
	fmt.Fprintf(w, "\ngateway's own CPU per payment: api %.2f ms + worker %.2f ms = %.2f ms, %.2fx Temporal's %.2f ms\n",
		api, worker, api+worker, (api+worker)/temporal, temporal)
}

package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The suite's stacks share one paygate binary, built once by the first
// stack that needs it, in a directory TestMain removes at the end.
var (
	binDir   string
	binOnce  sync.Once
	binPath  string
	binError error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// paygateBinary builds ./cmd/paygate once, where the postgres OS user can
// run it too.
func paygateBinary(root string) (string, error) {
	binOnce.Do(func() {
		if binDir, binError = os.MkdirTemp("", "paygate-chaos-bin-"); binError != nil {
			return
		}
		if binError = os.Chmod(binDir, 0o755); binError != nil {
			return
		}
		binPath = filepath.Join(binDir, "paygate")
		build := exec.Command("go", "build", "-o", binPath, "./cmd/paygate")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			binError = fmt.Errorf("build paygate: %w\n%s", err, out)
		}
	})
	return binPath, binError
}

// startStack builds paygate and starts a stack in a directory the postgres
// OS user can enter.
func startStack(t *testing.T, ignoreIdempotency bool) *Stack {
	t.Helper()
	return startStackWith(t, Options{IgnoreIdempotency: ignoreIdempotency})
}

// startStackWith is startStack with the stack's shape given.
func startStackWith(t *testing.T, opts Options) *Stack {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".bin", "temporal")); err != nil {
		t.Skip("the temporal CLI is not built (make test builds it)")
	}
	dir, err := os.MkdirTemp("", "paygate-chaos-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// PAYGATE_CHAOS_KEEP keeps a failed run's logs and data to read.
		if t.Failed() && os.Getenv("PAYGATE_CHAOS_KEEP") != "" {
			t.Logf("kept %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	bin, err := paygateBinary(root)
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "stack.log"))
	if err != nil {
		t.Fatal(err)
	}
	var s *Stack
	t.Cleanup(func() {
		logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logFile.Name()); err == nil {
				if len(b) > 8000 {
					b = b[len(b)-8000:]
				}
				t.Logf("last of the processes' output:\n%s", b)
			}
			// Said again after the processes' output, which would otherwise
			// be all a reader of the output's end (a CI summary) sees.
			if s != nil && len(s.verdict) > 0 {
				t.Logf("the failure, again:\n%s", strings.Join(s.verdict, "\n"))
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	opts.Root, opts.Bin, opts.Dir, opts.Log, opts.Logf = root, bin, dir, logFile, t.Logf
	began := time.Now()
	s, err = Start(ctx, opts)
	if err != nil {
		t.Fatalf("start the stack: %v", err)
	}
	t.Logf("the stack is up in %.1fs", time.Since(began).Seconds())
	t.Cleanup(s.Close)
	return s
}

func seed(t *testing.T) uint64 {
	if v := os.Getenv("PAYGATE_CHAOS_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("PAYGATE_CHAOS_SEED: %v", err)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

// TestChaos drives payments, captures, refunds and notifications while it
// breaks the stack, then checks that nothing was lost or done twice. It
// runs the short plan; PAYGATE_CHAOS=full (make chaos) runs every fault.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole stack and breaks it for two minutes")
	}
	t.Parallel() // every test of the suite runs on a stack of its own
	sd := seed(t)
	plan, name := ShortPlan(sd), "short"
	if os.Getenv("PAYGATE_CHAOS") == "full" {
		plan, name = FullPlan(sd), "full"
	}
	onPostgres := os.Getenv("PAYGATE_CHAOS_TEMPORAL") == "postgres"
	if onPostgres {
		name += ", Temporal on Postgres"
	}
	t.Logf("%s plan, seed %d (PAYGATE_CHAOS_SEED=%d repeats it)", name, sd, sd)
	s := startStackWith(t, Options{TemporalOnPostgres: onPostgres})
	rep, err := Run(context.Background(), s, plan)
	if err != nil {
		s.verdict = append(s.verdict, fmt.Sprintf("seed %d: %v", sd, err))
		t.Fatal(err)
	}
	t.Logf("\n%s", rep)
	if rep.Approved == 0 {
		t.Error("no payment was approved: the suite exercised nothing")
	}
	if rep.Failed() {
		s.verdict = append(s.verdict, fmt.Sprintf("seed %d (PAYGATE_CHAOS_SEED repeats it)\n%s", sd, rep))
		t.Error("a safety property was broken (table above)")
		logWorkflowsOf(t, s, rep)
	}
}

// workflowIDs finds the workflow ids a violation names.
var workflowIDs = regexp.MustCompile(`\b(?:order|payout|dispute)/[^\s,]+`)

// logWorkflowsOf shows the processes' log lines of every workflow a broken
// property names: what the workflow did, in order, is what explains it.
func logWorkflowsOf(t *testing.T, s *Stack, rep Report) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Dir(), "stack.log"))
	if err != nil {
		t.Logf("read the stack's log: %v", err)
		return
	}
	for _, p := range rep.Properties {
		for _, v := range p.Violations {
			for _, id := range workflowIDs.FindAllString(v, -1) {
				var lines []string
				for _, line := range strings.Split(string(b), "\n") {
					if strings.Contains(line, id) {
						lines = append(lines, line)
					}
				}
				t.Logf("the log of %s:\n%s", id, strings.Join(lines, "\n"))
			}
		}
	}
}

// TestChaosBites proves the suite sees a double charge: with the acquirer's
// idempotency switched off, a worker killed while slow charges are in
// flight makes the charges that its successor repeats happen twice.
func TestChaosBites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole stack")
	}
	t.Parallel()
	s := startStack(t, true)
	plan := Plan{Rate: 4, Traffic: 25 * time.Second, Seed: seed(t), Cards: []string{"4000000000000267"}, Steps: []Step{
		{8 * time.Second, KillWorker},
		{18 * time.Second, KillWorker},
	}}
	rep, err := Run(context.Background(), s, plan)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", rep)
	for _, p := range rep.Properties {
		if p.Name == "no order charged twice" {
			if len(p.Violations) == 0 {
				t.Fatal("idempotency was off and the worker was killed mid-charge, yet no double charge was reported")
			}
			return
		}
	}
	t.Fatal("the report has no double-charge property")
}

// TestChaosFailoverBites proves the suite sees a failover that charges
// twice: sim-acquirer charges and then answers 503 as if it had not, the
// gateway takes the 503 for "down" and moves routed payments to sim-bank,
// and the double-charge check must name orders charged at both.
func TestChaosFailoverBites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole stack")
	}
	t.Parallel()
	s := startStack(t, false)
	// Every payment is routed: on a loaded machine the other accounts'
	// payments, failing at sim-acquirer first, opened its breaker before
	// a routed payment met the lie, and nothing was charged twice.
	plan := Plan{Rate: 4, Traffic: 25 * time.Second, Seed: seed(t), Cards: []string{"4242424242424242"}, AllRouted: true, Steps: []Step{
		{6 * time.Second, ConnectorLies},
	}}
	rep, err := Run(context.Background(), s, plan)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", rep)
	for _, p := range rep.Properties {
		if p.Name != "no order charged twice" {
			continue
		}
		for _, v := range p.Violations {
			if strings.Contains(v, "sim-acquirer") && strings.Contains(v, "sim-bank") {
				return
			}
		}
		t.Fatalf("sim-acquirer lied about routed charges, yet no order charged at both acquirers was reported: %v", p.Violations)
	}
	t.Fatal("the report has no double-charge property")
}

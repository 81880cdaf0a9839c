package integration

import (
	"context"
	"errors"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/payoutrerun"
	"github.com/paygate/paygate/internal/dev/railsim"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// TestPayoutRerunFailedOnceCompletesOnce: a payout the rail fails on its
// first attempt is re-run by finance (dry-run first, which changes
// nothing), completes under the same idempotency key and is paid once at
// the rail; re-running it again is refused as completed.
func TestPayoutRerunFailedOnceCompletesOnce(t *testing.T) {
	creds := payoutAccount(t, 1_000_000)
	rid := newRequestID()
	_, out := postPayout(t, "/v1/payout", payoutBody(creds, rid, "100.00", railsim.IBANFailOnce))
	if out["status"] != "FAILED" {
		out = awaitPayoutStatus(t, creds, rid)
	}
	if out["status"] != "FAILED" {
		t.Fatalf("first run = %v, want FAILED", out)
	}
	id := workflows.PayoutWorkflowID(creds.MerchantID, rid)
	svc := env.gw.PayoutReruns()
	sel := models.PayoutSelection{IDs: []string{rid}}
	ctx := t.Context()

	items, err := svc.Plan(ctx, sel)
	if err != nil || len(items) != 1 || !items[0].Rerun || items[0].PayoutID != id {
		t.Fatalf("plan = %+v, %v; want %s re-run", items, err, id)
	}
	dry, err := svc.Run(ctx, payoutrerun.Request{Selection: sel, DryRun: true, By: "it", Source: "cli"}, items, nil)
	if err != nil || dry.Rerun.Planned != 1 {
		t.Fatalf("dry-run = %+v, %v", dry.Rerun, err)
	}
	if p, err := models.FindPayout(ctx, env.gw.DB, id); err != nil || p.Status != "FAILED" || p.Run != 1 {
		t.Fatalf("after dry-run payout = %+v, %v; want FAILED run 1", p, err)
	}

	res, err := svc.Run(ctx, payoutrerun.Request{Selection: sel, By: "it", Source: "cli"}, items, nil)
	if err != nil || res.Rerun.Started != 1 || res.Rerun.Status != models.RerunFinished {
		t.Fatalf("re-run = %+v, %v; want one started", res.Rerun, err)
	}
	// The new run's end, by its run id: the row says FAILED (the first
	// run's outcome) until the new run records itself.
	var st workflows.PayoutState
	runID := res.Items[0].RunID
	if err := env.temporal.GetWorkflow(ctx, id, runID).Get(ctx, &st); err != nil || st.Status != "COMPLETED" {
		t.Fatalf("re-run %s ended %+v, %v; want COMPLETED", runID, st, err)
	}
	if p, err := models.FindPayout(ctx, env.gw.DB, id); err != nil || p.Run != 2 {
		t.Fatalf("payout = %+v, %v; want run 2", p, err)
	}
	if out := awaitPayoutStatus(t, creds, rid); out["status"] != "COMPLETED" {
		t.Fatalf("after re-run = %v, want COMPLETED", out)
	}
	if k, ok := railKey(t, creds, rid); !ok || k.Completed != 1 {
		t.Errorf("rail: %+v, want the key completed once", k)
	}

	items, err = svc.Plan(ctx, sel)
	if err != nil || len(items) != 1 || items[0].Rerun || items[0].Reason != payoutrerun.ReasonCompleted {
		t.Fatalf("plan after completion = %+v, %v; want skipped as completed", items, err)
	}
	again, err := svc.Run(ctx, payoutrerun.Request{Selection: sel, By: "it", Source: "cli"}, items, nil)
	if err != nil || again.Rerun.Started != 0 || again.Rerun.Skipped != 1 {
		t.Errorf("second re-run = %+v, %v; want one skipped", again.Rerun, err)
	}
	if k, _ := railKey(t, creds, rid); k.Completed != 1 {
		t.Errorf("rail after refused re-run: %+v, want completed once", k)
	}
}

// TestPayoutRerunBatchInterruptedResumes fails n payouts once at the rail,
// re-runs them as one batch cut short after k starts (the command killed),
// then resumes the batch: every payout completes and is paid exactly once
// at the rail. PAYGATE_RERUN_LOAD=1000 (make rerun-load) runs it at scale.
func TestPayoutRerunBatchInterruptedResumes(t *testing.T) {
	n := 20
	if v := os.Getenv("PAYGATE_RERUN_LOAD"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 10 {
			t.Fatalf("PAYGATE_RERUN_LOAD=%q: want a number of at least 10", v)
		}
	}
	k := n / 3
	creds := payoutAccount(t, int64(n)*20_000)
	rids := make([]string, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range rids {
		rids[i] = newRequestID()
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			postPayout(t, "/v1/payout", payoutBody(creds, rids[i], "10.00", railsim.IBANFailOnce))
		})
	}
	wg.Wait()
	for _, rid := range rids {
		if out := awaitPayoutStatus(t, creds, rid); out["status"] != "FAILED" {
			t.Fatalf("first run of %s = %v, want FAILED", rid, out["status"])
		}
	}

	svc := env.gw.PayoutReruns()
	sel := models.PayoutSelection{MerchantID: creds.MerchantID, FailureType: "RAIL_UNAVAILABLE"}
	items, err := svc.Plan(t.Context(), sel)
	if err != nil || len(items) != n {
		t.Fatalf("plan = %d items, %v; want %d", len(items), err, n)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	start := svc.Start
	var starts atomic.Int64
	svc.Start = func(ctx context.Context, p *models.Payout) (string, error) {
		id, err := start(ctx, p)
		if starts.Add(1) == int64(k) {
			cancel()
		}
		return id, err
	}
	reStart := time.Now()
	first, err := svc.Run(ctx, payoutrerun.Request{Selection: sel, By: "it", Source: "cli"}, items, nil)
	if !errors.Is(err, context.Canceled) || first.Rerun.Status != models.RerunRunning {
		t.Fatalf("interrupted batch = %+v, %v; want running, cancelled", first.Rerun, err)
	}
	if first.Rerun.Started < k || first.Rerun.Started >= n {
		t.Fatalf("interrupted batch started %d, want at least %d and fewer than %d", first.Rerun.Started, k, n)
	}

	svc.Start = start
	began := time.Now()
	_, left, err := svc.Resume(t.Context(), first.Rerun.ID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Run(t.Context(), payoutrerun.Request{Resume: first.Rerun.ID}, left, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Rerun; r.Status != models.RerunFinished || r.Started != n || r.Errors != 0 {
		t.Fatalf("resumed batch = %+v, want finished with %d started", r, n)
	}
	t.Logf("resumed batch started %d re-runs in %s", n-first.Rerun.Started, time.Since(began))
	deadline := time.Now().Add(2*time.Minute + time.Duration(n)*50*time.Millisecond)
	for _, rid := range rids {
		id := workflows.PayoutWorkflowID(creds.MerchantID, rid)
		for {
			p, err := models.FindPayout(t.Context(), env.gw.DB, id)
			if err != nil {
				t.Fatal(err)
			}
			if p.Run == 2 && p.Status == "COMPLETED" {
				break
			}
			if p.Run > 2 || time.Now().After(deadline) {
				t.Fatalf("payout %s: run %d %s, want run 2 COMPLETED", id, p.Run, p.Status)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// The figure make rerun-load reports (docs/benchmarks.md): from the
	// first re-run started to the last one completed.
	t.Logf("%d re-runs completed %s after the batch began", n, time.Since(reStart))
	for _, rid := range rids {
		if st, ok := railKey(t, creds, rid); !ok || st.Completed != 1 {
			t.Errorf("rail %s: %+v, want paid once", rid, st)
		}
	}
}

package chaos

import (
	"context"
	"testing"
	"time"
)

// TestScaleOut: two API processes and two worker processes against one
// Temporal server share the load: payments sent to both APIs in turn are
// all approved, and each worker completes a fair share of the workflow
// tasks. With one worker killed, the other takes all the work.
func TestScaleOut(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two APIs and two workers")
	}
	t.Parallel()
	s := startStackWith(t, Options{APIs: 2, Workers: 2})
	ctx := context.Background()
	rep, err := Run(ctx, s, Plan{Rate: 6, Traffic: 20 * time.Second, Seed: 1, Cards: undisputedCards})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", rep)
	if rep.Failed() || rep.Approved < 100 {
		t.Fatalf("with two of each, %d of %d payments approved or a property broke", rep.Approved, rep.Payments)
	}
	tasks, acts, err := s.WorkerShares(ctx)
	if err != nil {
		t.Fatal(err)
	}
	total := tasks[0] + tasks[1] + tasks[2]
	t.Logf("workflow tasks: worker 1 %d, worker 2 %d, other %d; activities: worker 1 %d, worker 2 %d, other %d",
		tasks[1], tasks[2], tasks[0], acts[1], acts[2], acts[0])
	for _, n := range []int{1, 2} {
		if share := float64(tasks[n]) / float64(total); share < 0.2 {
			t.Errorf("worker %d completed %d of %d workflow tasks (%.0f%%), want at least 20%%", n, tasks[n], total, 100*share)
		}
	}

	// One worker down: the other takes everything.
	s.KillWorkerN(2)
	rep, err = Run(ctx, s, Plan{Rate: 4, Traffic: 10 * time.Second, Seed: 2, Cards: undisputedCards})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after worker 2 was killed:\n%s", rep)
	if rep.Failed() {
		t.Error("a property broke with one worker left")
	}
	for info, n := range rep.Answers {
		if info != "0000:Success" && info != "A0001:Declined" {
			t.Errorf("%d payments answered %s with one worker left", n, info)
		}
	}
}

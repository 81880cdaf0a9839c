package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/adapters/payoutrerun"
	"github.com/paygate/paygate/internal/dev/railsim"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// TestPayoutRerunCommandKilledResumes runs the real `paygate payout rerun`
// as its own process, SIGKILLs it half-way through a batch, and finishes
// the batch with `paygate payout rerun -resume N`: every selected payout
// completes, each was re-run once (run 2) and paid exactly once at the rail,
// and the resume started only what the killed command had not.
//
// Where the kill lands is made certain with Postgres rather than left to
// timing: as soon as the batch's item rows exist, the test locks the rows
// of every payout after the first k (FOR UPDATE), so the command, which
// writes a payout's row "starting" before it asks Temporal for the run,
// re-runs exactly k payouts and then waits on the lock. It is killed
// there, like a command killed at any moment, and the test ends the
// killed process's waiting statements before it lets go of the lock, as
// the death of the process would have.
func TestPayoutRerunCommandKilledResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds paygate and kills a re-run command")
	}
	const n, k = 30, 12
	ctx := t.Context()
	bin := buildPaygate(t)

	creds := payoutAccount(t, int64(n)*20_000)
	rids := make([]string, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
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
	// The command plans a filter in this order (models.FindFailedPayouts):
	// the payouts after the first k are the ones it must not reach.
	sel := models.PayoutSelection{MerchantID: creds.MerchantID}
	order, err := models.FindFailedPayouts(ctx, env.gw.DB, sel, payoutrerun.MaxPayouts+1)
	if err != nil || len(order) != n {
		t.Fatalf("failed payouts = %d, %v; want %d", len(order), err, n)
	}
	var first, rest []string
	for i, p := range order {
		if i < k {
			first = append(first, p.ID)
		} else {
			rest = append(rest, p.ID)
		}
	}

	by := "kill-test-" + creds.MerchantID
	cmd, stdout, stderr := paygateCommand(ctx, bin, "payout", "rerun", "-merchant-id", creds.MerchantID,
		"-yes", "-by", by, "-concurrency", "1", "-every", "1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// exited is closed when the command has ended, with its end in waitErr.
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	// The command is gone before the lock is let go, whatever ends the
	// test: a live command would go on past the lock.
	var lock *rowLock
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
		if lock != nil {
			lock.release(t)
		}
	}()
	output := func() string { return "stdout:\n" + stdout.String() + "\nstderr:\n" + stderr.String() }

	lock = lockRerunItems(t, by, rest, exited, output)
	rerunID := lock.rerunID
	t.Logf("re-run %d: %d of %d items locked with %v", rerunID, len(rest), n, itemOutcomes(t, rerunID))

	// Wait until the first k are started and the command is stuck on the
	// lock: the batch is half done.
	deadline := time.Now().Add(30 * time.Second)
	for {
		counts := itemOutcomes(t, rerunID)
		if counts[models.ItemStarted] == k && lock.waiters(t) > 0 {
			break
		}
		select {
		case <-exited:
			t.Fatalf("the re-run command ended (%v) before it was killed; items %v\n%s", waitErr, counts, output())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("items %v, %d waiting on the lock; want %d started and the command waiting\n%s", counts, lock.waiters(t), k, output())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	if waitErr == nil || !strings.Contains(waitErr.Error(), "killed") {
		t.Fatalf("re-run command ended with %v, want killed\n%s", waitErr, output())
	}
	lock.release(t)

	r, items, err := models.FindPayoutRerun(ctx, env.gw.DB, rerunID)
	if err != nil {
		t.Fatal(err)
	}
	counts := itemOutcomes(t, rerunID)
	if r.Status != models.RerunRunning || counts[models.ItemStarted] != k || counts[models.ItemPlanned] != n-k || len(items) != n {
		t.Fatalf("killed batch = %+v, items %v; want running with %d started and %d planned", r, counts, k, n-k)
	}
	for _, it := range items {
		want := models.ItemPlanned
		if slices.Contains(first, it.PayoutID) {
			want = models.ItemStarted
		}
		if it.Outcome != want {
			t.Errorf("item %s = %s, want %s", it.PayoutID, it.Outcome, want)
		}
	}
	// The listing shows the half-done batch as it is.
	show := runPaygate(t, bin, "payout", "reruns", "-id", fmt.Sprint(rerunID))
	if got := strings.Count(show, "started (run 2)"); got != k {
		t.Errorf("paygate payout reruns -id lists %d started, want %d:\n%s", got, k, show)
	}
	if got := strings.Count(show, "not reached (run 2): resume starts it"); got != n-k {
		t.Errorf("paygate payout reruns -id lists %d not reached, want %d:\n%s", got, n-k, show)
	}

	// The re-runs the killed command started go on without it; once they
	// have recorded themselves (run 2) they are no longer FAILED, so the
	// batch's filter no longer selects them and the resume plans only the
	// rest. Waiting for that keeps the resume's plan exact.
	awaitRuns(t, first, 2)
	out := runPaygate(t, bin, "payout", "rerun", "-resume", fmt.Sprint(rerunID), "-yes", "-by", by)
	for _, want := range []string{
		fmt.Sprintf("%d payouts: %d to re-run, 0 skipped", n-k, n-k),
		fmt.Sprintf("re-run %d finished: %d payouts, %d started, 0 skipped, 0 errors, 0 not reached", rerunID, n, n),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("resume output lacks %q:\n%s", want, out)
		}
	}
	for _, id := range first {
		if strings.Contains(out, id) {
			t.Errorf("the resume planned %s, which the killed command had re-run:\n%s", id, out)
		}
	}
	for _, id := range rest {
		if !strings.Contains(out, id+" ") {
			t.Errorf("the resume did not plan %s, which the killed command never reached:\n%s", id, out)
		}
	}

	deadline = time.Now().Add(60 * time.Second)
	for _, rid := range rids {
		id := workflows.PayoutWorkflowID(creds.MerchantID, rid)
		for {
			p, err := models.FindPayout(ctx, env.gw.DB, id)
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
		// One failed attempt (the first run) and one that paid: the re-run
		// reached the rail once, and the rail paid the 10.00 once.
		if st, ok := railKey(t, creds, rid); !ok || st.Completed != 1 || st.Attempts != 2 || st.Paid != 1000 {
			t.Errorf("rail %s: %+v, want paid 1000 once after 2 attempts", rid, st)
		}
	}
	r, _, err = models.FindPayoutRerun(ctx, env.gw.DB, rerunID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != models.RerunFinished || r.Total != n || r.Started != n || r.Errors != 0 || r.Skipped != 0 {
		t.Errorf("batch = %+v, want finished with %d started", r, n)
	}

	// The admin API lists the same batch: every payout started once.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/admin/payouts/reruns/%d", env.api.URL, rerunID), nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var res payoutrerun.Result
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /admin/payouts/reruns/%d = %d, %v", rerunID, resp.StatusCode, err)
	}
	runIDs := map[string]bool{}
	for _, it := range res.Items {
		if it.Outcome != models.ItemStarted || it.Run != 2 || it.RunID == "" || runIDs[it.RunID] {
			t.Errorf("admin item %+v, want started as run 2 with a run id of its own", it)
		}
		runIDs[it.RunID] = true
	}
	if res.Rerun.ID != rerunID || len(res.Items) != n {
		t.Errorf("admin answer: batch %d with %d items, want %d with %d", res.Rerun.ID, len(res.Items), rerunID, n)
	}
}

// rowLock holds FOR UPDATE locks on some items of a re-run batch in an
// open transaction.
type rowLock struct {
	tx       *gorm.DB
	pid      int // the locking backend
	rerunID  int64
	released bool
}

// lockRerunItems waits for the item rows of the batch requested by `by`
// and locks the rows of payoutIDs before the command reaches them. It fails
// the test if the command reached one first: the test would then not know
// where the kill lands.
func lockRerunItems(t *testing.T, by string, payoutIDs []string, exited <-chan struct{}, output func() string) *rowLock {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		tx := env.gw.DB.Begin()
		if tx.Error != nil {
			t.Fatal(tx.Error)
		}
		var rows []models.PayoutRerunItem
		err := tx.Raw(`SELECT i.* FROM payout_rerun_items i JOIN payout_reruns r ON r.id = i.rerun_id
			WHERE r.requested_by = ? AND i.payout_id IN ? FOR UPDATE OF i`, by, payoutIDs).Scan(&rows).Error
		if err != nil {
			tx.Rollback()
			t.Fatal(err)
		}
		if len(rows) == len(payoutIDs) {
			for _, row := range rows {
				if row.Outcome != models.ItemPlanned {
					tx.Rollback()
					t.Fatalf("the command reached %s (%s) before the lock; the machine is too slow for this test\n%s", row.PayoutID, row.Outcome, output())
				}
			}
			l := &rowLock{tx: tx, rerunID: rows[0].RerunID}
			if err := tx.Raw("SELECT pg_backend_pid()").Scan(&l.pid).Error; err != nil {
				tx.Rollback()
				t.Fatal(err)
			}
			return l
		}
		// The batch's items are written in one statement: none yet.
		tx.Rollback()
		select {
		case <-exited:
			t.Fatalf("the re-run command ended before its batch was recorded\n%s", output())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no re-run batch by %s after 30s\n%s", by, output())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waiters counts the backends waiting for the lock: the command's.
func (l *rowLock) waiters(t *testing.T) int {
	t.Helper()
	var n int
	if err := env.gw.DB.Raw("SELECT count(*) FROM pg_stat_activity WHERE ? = ANY(pg_blocking_pids(pid))", l.pid).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// release ends the statements still waiting for the lock (a killed
// command's, which would otherwise run once the lock is gone, long after
// their process died) and then rolls the locking transaction back.
func (l *rowLock) release(t *testing.T) {
	t.Helper()
	if l.released {
		return
	}
	l.released = true
	deadline := time.Now().Add(10 * time.Second)
	for l.waiters(t) > 0 {
		if err := env.gw.DB.Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE ? = ANY(pg_blocking_pids(pid))", l.pid).Error; err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed command's statements still wait for the lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := l.tx.Rollback().Error; err != nil {
		t.Fatal(err)
	}
}

// itemOutcomes counts a batch's items by outcome.
func itemOutcomes(t *testing.T, rerunID int64) map[string]int {
	t.Helper()
	var rows []struct {
		Outcome string
		N       int
	}
	err := env.gw.DB.Raw("SELECT outcome, count(*) AS n FROM payout_rerun_items WHERE rerun_id = ? GROUP BY outcome", rerunID).Scan(&rows).Error
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.Outcome] = r.N
	}
	return out
}

// buildPaygate builds the paygate command into the test's temporary
// directory.
func buildPaygate(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "paygate")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "../cmd/paygate")
	build.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build paygate: %v\n%s", err, out)
	}
	return bin
}

// paygateCommand is a paygate command against the test's Postgres and
// Temporal, with its output collected.
func paygateCommand(ctx context.Context, bin string, args ...string) (*exec.Cmd, *syncBuffer, *syncBuffer) {
	cfg := env.cfg
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(),
		"DATABASE_URL="+cfg.DatabaseURL, "TEMPORAL_ADDRESS="+cfg.TemporalAddress, "TEMPORAL_NAMESPACE="+cfg.TemporalNamespace,
		"PAYGATE_KEYRING="+cfg.Keyring, "PAYGATE_FINGERPRINT_KEY="+cfg.FingerprintKey,
		"PAYGATE_NOTIFY_SCHEDULE=initial=100ms,max=1s,horizon=1m",
		// Never a question on a terminal: -yes answers it, and CI=true
		// refuses rather than wait should a test forget -yes.
		"CI=true")
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd, stdout, stderr
}

// runPaygate runs a paygate command to its end (at most a minute) and
// returns its standard output; it fails the test if the command fails.
func runPaygate(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd, stdout, stderr := paygateCommand(ctx, bin, args...)
	if err := cmd.Run(); err != nil {
		t.Fatalf("paygate %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout, stderr)
	}
	return stdout.String()
}

// awaitRuns waits until each payout's row shows run `run`: the run has
// begun and recorded itself.
func awaitRuns(t *testing.T, ids []string, run int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, id := range ids {
		for {
			p, err := models.FindPayout(t.Context(), env.gw.DB, id)
			if err != nil {
				t.Fatal(err)
			}
			if p.Run >= run {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("payout %s still at run %d (%s), want run %d", id, p.Run, p.Status, run)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

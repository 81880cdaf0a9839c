package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/dev/devenv"
)

// repoRoot is the repository's root, where .bin and .data live.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// needTemporalCLI skips a test that runs `paygate dev` when the temporal CLI
// is not built.
func needTemporalCLI(t *testing.T, root string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(root, ".bin", "temporal")); err != nil {
		t.Skip("the temporal CLI is not built (make test builds it)")
	}
}

// testDatabase creates a database of the test's own, named prefix and a
// random suffix, on the Postgres the dev setup finds, dropped at the end,
// and returns its URL.
func testDatabase(t *testing.T, root, prefix string) string {
	t.Helper()
	ctx := context.Background()
	pg, err := devenv.EnsurePostgres(ctx, devenv.PostgresOptions{DataDir: filepath.Join(root, ".data", "postgres")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Stop() })
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := prefix + hex.EncodeToString(b)
	if err := devenv.CreateDatabase(ctx, pg.AdminURL, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = devenv.DropDatabase(context.Background(), pg.AdminURL, name) })
	return pg.DatabaseURL(name)
}

// buildPaygate builds this command into dir and returns the binary's path.
func buildPaygate(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "paygate")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// startDev runs `bin args...` (a `paygate dev`) with databaseURL and waits
// until it says it is running; the test fails with its last output if it
// exits first or takes over two minutes.
func startDev(t *testing.T, bin, databaseURL string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+databaseURL)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr tailWriter
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "Paygate is running") {
				ready <- true
			}
		}
		close(ready)
	}()
	select {
	case ok := <-ready:
		if !ok {
			_ = cmd.Wait()
			t.Fatalf("paygate dev exited before it was ready: %v\n%s", cmd.ProcessState, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("paygate dev not ready within 2 minutes")
	}
	return cmd
}

// stopDev interrupts a `paygate dev` as Ctrl-C would and reports whether it
// stopped within 30 s (it is killed otherwise).
func stopDev(cmd *exec.Cmd) bool {
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return false
	}
}

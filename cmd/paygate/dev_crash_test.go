package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/dev/devenv"
)

// TestDevRestartsAfterSIGKILL: `paygate dev` killed with SIGKILL leaves its
// Temporal dev server behind on its ports (the SDK's launcher keeps that
// process to itself); the next `paygate dev` on the same data directory
// ends it and comes up.
func TestDevRestartsAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole dev setup twice")
	}
	ctx := context.Background()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".bin", "temporal")); err != nil {
		t.Skip("the temporal CLI is not built (make test builds it)")
	}
	pg, err := devenv.EnsurePostgres(ctx, devenv.PostgresOptions{DataDir: filepath.Join(root, ".data", "postgres")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Stop()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	db := "paygate_crash_" + hex.EncodeToString(b)
	if err := devenv.CreateDatabase(ctx, pg.AdminURL, db); err != nil {
		t.Fatal(err)
	}
	defer devenv.DropDatabase(context.Background(), pg.AdminURL, db)

	bin := filepath.Join(t.TempDir(), "paygate")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	data := t.TempDir()
	ports := freePorts(t, 6)
	args := []string{"dev", "-data", data, "-bin", filepath.Join(root, ".bin"),
		"-api", "127.0.0.1:" + strconv.Itoa(ports[0]), "-simulator", "127.0.0.1:" + strconv.Itoa(ports[1]),
		"-rail", "127.0.0.1:" + strconv.Itoa(ports[2]), "-simbank", "127.0.0.1:" + strconv.Itoa(ports[3]),
		"-temporal-port", strconv.Itoa(ports[4]), "-ui-port", strconv.Itoa(ports[5])}
	start := func() *exec.Cmd {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "DATABASE_URL="+pg.DatabaseURL(db))
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

	first := start()
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	temporalAddr := "127.0.0.1:" + strconv.Itoa(ports[4])
	// The premise: the killed run's server is still there.
	c, err := net.DialTimeout("tcp", temporalAddr, time.Second)
	if err != nil {
		t.Fatalf("the killed run left no server on %s: nothing to test", temporalAddr)
	}
	c.Close()

	second := start()
	if err := second.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- second.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = second.Process.Kill()
		t.Fatal("paygate dev did not stop within 30 s of an interrupt")
	}
	// Ctrl-C stops everything: the frontend's port is free again.
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", temporalAddr, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("the temporal server still answers on %s after paygate dev stopped", temporalAddr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// tailWriter keeps the last 4 KB written to it, for a failure's message.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > 4096 {
		w.buf = w.buf[len(w.buf)-4096:]
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}

// freePorts returns n distinct free loopback ports.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

package main

import (
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/dev/ports"
)

// TestDevRestartsAfterSIGKILL: `paygate dev` killed with SIGKILL leaves its
// Temporal dev server behind on its ports (the SDK's launcher keeps that
// process to itself); the next `paygate dev` on the same data directory
// ends it and comes up.
func TestDevRestartsAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole dev setup twice")
	}
	root := repoRoot(t)
	needTemporalCLI(t, root)
	dbURL := testDatabase(t, root, "paygate_crash_")
	bin := buildPaygate(t, t.TempDir())
	data := t.TempDir()
	ports := freePorts(t, 6)
	args := []string{"dev", "-data", data, "-bin", filepath.Join(root, ".bin"),
		"-api", "127.0.0.1:" + strconv.Itoa(ports[0]), "-simulator", "127.0.0.1:" + strconv.Itoa(ports[1]),
		"-rail", "127.0.0.1:" + strconv.Itoa(ports[2]), "-simbank", "127.0.0.1:" + strconv.Itoa(ports[3]),
		"-temporal-port", strconv.Itoa(ports[4]), "-ui-port", strconv.Itoa(ports[5])}
	first := startDev(t, bin, dbURL, args...)
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	temporalAddr := "127.0.0.1:" + strconv.Itoa(ports[4])
	// The premise: the killed run's server is usually still there. Once in
	// many runs it was gone (seen in CI on 2026-11-28, cause not found;
	// likely a write to its dead parent's pipe), and then the restart below
	// is all there is to test.
	if c, err := net.DialTimeout("tcp", temporalAddr, time.Second); err != nil {
		t.Logf("the killed run left no server on %s: only the restart is tested", temporalAddr)
	} else {
		c.Close()
	}

	second := startDev(t, bin, dbURL, args...)
	if !stopDev(second) {
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

// freePorts returns n distinct loopback ports held for this test alone
// (package ports): the processes it starts bind them later.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	r, err := ports.Reserve(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Release)
	return r.Ports()
}

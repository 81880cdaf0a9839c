package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paygate/paygate/app"
)

// listenFDsEnv names the listening sockets a parent handed this process,
// as "addr=fd,addr=fd": `paygate dev` binds every port itself, so that a
// taken one is reported before anything starts, and passes each to the
// process that serves it (no port is released and bound again).
const listenFDsEnv = "PAYGATE_LISTEN_FDS"

// inheritedFDs parses listenFDsEnv once.
var inheritedFDs = sync.OnceValue(func() map[string]int {
	fds := map[string]int{}
	for _, pair := range strings.Split(os.Getenv(listenFDsEnv), ",") {
		addr, fd, ok := strings.Cut(pair, "=")
		if n, err := strconv.Atoi(fd); ok && err == nil && n > 2 {
			fds[addr] = n
		}
	}
	return fds
})

// inheritedListener is the socket the parent bound for addr, if it handed
// one over. Each is taken once.
func inheritedListener(addr string) (net.Listener, bool, error) {
	fd, ok := inheritedFDs()[addr]
	if !ok {
		return nil, false, nil
	}
	f := os.NewFile(uintptr(fd), addr)
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, true, fmt.Errorf("listener handed over for %s: %w", addr, err)
	}
	return ln, true, nil
}

// devChild is one process `paygate dev` runs: the simulators, the worker
// or the API, each the same binary under its own command, as they run in
// production (and as the benchmark wants them, to tell their costs apart).
type devChild struct {
	name   string
	cmd    *exec.Cmd
	health string // a URL answering 2xx once the process is ready
	done   chan struct{}
	err    error
}

// startDevChild runs `exe command` with env on top of this process's
// environment, handing it the listeners. The child is sent SIGTERM when
// this process dies, however it dies, so a killed `paygate dev` leaves no
// process behind on its ports.
func startDevChild(exe, name, command string, env []string, lns []net.Listener, health string, stderr io.Writer) (*devChild, error) {
	cmd := exec.Command(exe, command)
	var pairs []string
	for i, ln := range lns {
		f, err := ln.(*net.TCPListener).File()
		if err != nil {
			closeFiles(cmd.ExtraFiles)
			return nil, fmt.Errorf("%s: hand over %s: %w", name, ln.Addr(), err)
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, f)
		pairs = append(pairs, ln.Addr().String()+"="+strconv.Itoa(3+i))
	}
	defer closeFiles(cmd.ExtraFiles)
	cmd.Env = append(append(os.Environ(), env...), listenFDsEnv+"="+strings.Join(pairs, ","))
	cmd.Stdout, cmd.Stderr = stderr, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &devChild{name: name, cmd: cmd, health: health, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// waitReady polls the child's health URL until it answers 2xx; an exit or
// the deadline first is an error.
func (c *devChild) waitReady(ctx context.Context, within time.Duration) error {
	if c.health == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.health, nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				return nil
			}
		}
		select {
		case <-c.done:
			return fmt.Errorf("%s exited before it was ready: %v", c.name, c.err)
		case <-ctx.Done():
			return fmt.Errorf("%s not ready within %s (%s)", c.name, within, c.health)
		case <-tick.C:
		}
	}
}

// devChildren are the processes of one `paygate dev`.
type devChildren []*devChild

// exited answers when any child exits, with its name and error.
func (cs devChildren) exited() <-chan error {
	out := make(chan error, 1)
	for _, c := range cs {
		go func() {
			<-c.done
			select {
			case out <- fmt.Errorf("%s exited: %v", c.name, c.err):
			default:
			}
		}()
	}
	return out
}

// stop sends every child SIGTERM and waits for each, the API first; one
// still running after grace (counted from the signals) is killed.
func (cs devChildren) stop(grace time.Duration, logger *slog.Logger) {
	end := time.Now().Add(grace)
	for i := len(cs) - 1; i >= 0; i-- {
		c := cs[i]
		if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			logger.Warn("stop", "process", c.name, "error", err)
		}
	}
	for i := len(cs) - 1; i >= 0; i-- {
		c := cs[i]
		select {
		case <-c.done:
		case <-time.After(time.Until(end)):
			logger.Warn("killed: did not stop in time", "process", c.name)
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	}
}

// devChildEnv is the configuration `paygate dev` gives its gateway
// processes, on top of its own environment (which a developer's settings
// come from).
func devChildEnv(cfg app.Config, temporalUIURL string) []string {
	env := []string{
		"DATABASE_URL=" + cfg.DatabaseURL,
		"TEMPORAL_ADDRESS=" + cfg.TemporalAddress,
		"PAYGATE_KEYRING=" + cfg.Keyring,
		"PAYGATE_FINGERPRINT_KEY=" + cfg.FingerprintKey,
		"ACQUIRER_URL=" + cfg.Connectors.AcquirerURL,
		"SIMBANK_URL=" + cfg.Connectors.SimBankURL,
		"RAIL_URL=" + cfg.Payouts.RailURL,
		"TEST_RAIL_URL=" + cfg.Payouts.TestRailURL,
		"PAYGATE_PROVIDER_SECRET=" + cfg.Connectors.ProviderSecret,
		"PAYGATE_RAIL_CALLBACK_SECRET=" + cfg.Payouts.RailCallbackSecret,
		"PAYGATE_HTTP_ADDR=" + strings.TrimPrefix(cfg.Edge.PublicURL, "http://"),
		"PAYGATE_PUBLIC_URL=" + cfg.Edge.PublicURL,
		"PAYGATE_CODEC_TOKEN=" + cfg.Edge.Codec.Token,
		"PAYGATE_CODEC_CORS_ORIGIN=" + strings.Join(cfg.Edge.Codec.CORSOrigins, ","),
		"PAYGATE_TEMPORAL_UI_URL=" + temporalUIURL,
		// Locally, shops under test run on this machine, and subscriptions
		// may renew by the minute.
		"PAYGATE_NOTIFY_ALLOW_PRIVATE=true",
		"PAYGATE_SUBSCRIPTION_TEST_INTERVALS=true",
	}
	// The Temporal server is on this machine, and our payloads are
	// encrypted: gzip would only cost CPU on both ends of the connection.
	if os.Getenv("TEMPORAL_GRPC_GZIP") == "" {
		env = append(env, "TEMPORAL_GRPC_GZIP=false")
	}
	// The API starts each payment eagerly on a worker of its own and takes
	// the answer in its process (docs/decisions.md, "Payments started
	// eagerly"); the worker process ignores the setting.
	if os.Getenv("PAYGATE_EAGER_START") == "" {
		env = append(env, "PAYGATE_EAGER_START=true")
	}
	return env
}

// debugAddrTo names the process of `paygate dev` that gets the caller's
// PAYGATE_DEBUG_ADDR ("api" or "worker"): the one where payments' work runs,
// so that its profiles show that work. An API that starts payments eagerly,
// as `paygate dev` has it unless told otherwise, runs their workflow tasks
// and activities on a worker of its own; without eager starts the worker
// process runs them.
func debugAddrTo(getenv func(string) string) string {
	if eager, err := strconv.ParseBool(getenv("PAYGATE_EAGER_START")); err == nil && !eager {
		return "worker"
	}
	return "api"
}

// gatewayProcs is the GOMAXPROCS `paygate dev` gives its API and worker
// processes on a machine of cpus CPUs: half of them, at least one. Locally
// they share the machine with Temporal and Postgres, and a Go process
// scheduling on every CPU spends CPU of its own on it (threads spinning for
// work, goroutines handed between threads, the monitor thread polling
// them) that the others would use: on two CPUs, one each cut their CPU a
// payment against Temporal's by about a tenth, at the same throughput
// (docs/benchmarks.md).
func gatewayProcs(cpus int) int {
	return max(1, cpus/2)
}

// withGatewayProcs adds GOMAXPROCS to the environment of a gateway process
// `paygate dev` starts, unless the caller set it (getenv).
func withGatewayProcs(env []string, getenv func(string) string, cpus int) []string {
	if getenv("GOMAXPROCS") != "" {
		return env
	}
	return append(env, "GOMAXPROCS="+strconv.Itoa(gatewayProcs(cpus)))
}

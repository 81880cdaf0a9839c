package devenv

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/dev/ports"
)

// TemporalCLIModule is the Go package path of the temporal CLI.
const TemporalCLIModule = "github.com/temporalio/cli/cmd/temporal"

// TemporalCLIVersion is the temporal CLI version this package installs and expects.
const TemporalCLIVersion = "v1.5.1"

// temporalStartTimeout bounds how long StartTemporal waits for the server.
const temporalStartTimeout = 60 * time.Second

// EnsureTemporalCLI returns the path of a temporal CLI binary of
// TemporalCLIVersion inside binDir, installing it with `go install` when it is
// missing or of another version. The install output goes to logger.
func EnsureTemporalCLI(ctx context.Context, binDir string, logger *slog.Logger) (string, error) {
	logger = orDiscard(logger)
	dir, err := filepath.Abs(binDir)
	if err != nil {
		return "", fmt.Errorf("resolve bin dir: %w", err)
	}
	bin := filepath.Join(dir, "temporal")
	version, err := temporalCLIVersion(ctx, bin)
	switch {
	case err == nil && version == TemporalCLIVersion:
		return bin, nil
	case err == nil:
		logger.Info("temporal CLI has another version, reinstalling", "path", bin, "found", version, "want", TemporalCLIVersion)
	case errors.Is(err, os.ErrNotExist):
		logger.Info("temporal CLI not found, installing", "path", bin, "version", TemporalCLIVersion)
	default:
		logger.Info("temporal CLI unusable, reinstalling", "path", bin, "err", err)
	}

	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create bin dir: %w", err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("find go to install the temporal CLI: %w", err)
	}
	pkg := TemporalCLIModule + "@" + TemporalCLIVersion
	start := time.Now()
	logger.Info("installing temporal CLI (takes a few minutes the first time)", "package", pkg, "gobin", dir)
	out := &lineLogger{logger: logger, msg: "go install", attrs: []any{"package", pkg}}
	cmd := exec.CommandContext(ctx, goBin, "install", pkg)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOTOOLCHAIN=local")
	cmd.Stdout = out
	cmd.Stderr = out
	err = cmd.Run()
	out.Flush()
	if err != nil {
		return "", fmt.Errorf("go install %s: %w", pkg, err)
	}
	version, err = temporalCLIVersion(ctx, bin)
	if err != nil {
		return "", fmt.Errorf("check installed temporal CLI: %w", err)
	}
	if version != TemporalCLIVersion {
		return "", fmt.Errorf("installed temporal CLI reports %q, want %s", version, TemporalCLIVersion)
	}
	logger.Info("installed temporal CLI", "path", bin, "took", time.Since(start).Round(time.Second))
	return bin, nil
}

// temporalCLIVersion returns TemporalCLIVersion if bin is that version of
// the temporal CLI, or else what bin reports about itself. It runs
// `bin --version`, which must succeed; since `go install` builds report
// "0.0.0-DEV" there, it falls back to the module version recorded in the
// binary's build info.
func temporalCLIVersion(ctx context.Context, bin string) (string, error) {
	out, err := binaryVersion(ctx, bin)
	if err != nil {
		return "", err
	}
	if versionMatches(out, TemporalCLIVersion) {
		return TemporalCLIVersion, nil
	}
	if info, err := buildinfo.ReadFile(bin); err == nil && info.Path == TemporalCLIModule {
		return info.Main.Version, nil
	}
	return out, nil
}

// binaryVersion runs `bin --version` and returns its trimmed output. It
// returns an error wrapping os.ErrNotExist if bin does not exist.
func binaryVersion(ctx context.Context, bin string) (string, error) {
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("stat %s: %w", bin, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("run %s --version: %w", bin, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// versionMatches reports whether the output of `--version` names want
// (with or without its leading "v") as a whole version number.
func versionMatches(output, want string) bool {
	want = strings.TrimPrefix(want, "v")
	for f := range strings.FieldsFuncSeq(output, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '(' || r == ')' || r == ','
	}) {
		if strings.TrimPrefix(f, "v") == want {
			return true
		}
	}
	return false
}

// TemporalOptions configures StartTemporal.
type TemporalOptions struct {
	// Binary is the path of the temporal CLI, see EnsureTemporalCLI.
	Binary string
	// DBFile is the SQLite file holding the server state; it and its
	// directory are created if missing, and it is kept across runs.
	DBFile string
	// IP is the address both the frontend and the UI listen on; default 127.0.0.1.
	IP string
	// Port is the frontend gRPC port; default 7233.
	Port int
	// UIPort is the web UI port; default Port+1000.
	UIPort int
	// Namespace is registered on start; default "default".
	Namespace string
	// SearchAttributes maps custom search attribute names to their types
	// ("Keyword", "Int", ...).
	SearchAttributes map[string]string
	// LogFile receives the server's stdout and stderr (appended); "" discards them.
	LogFile string
	// StartTimeout bounds the wait for the frontend and the UI; default 60s.
	StartTimeout time.Duration
	// CodecEndpoint, when set, is the remote codec the UI decodes payloads
	// with (see UICodecArgs).
	CodecEndpoint string
	// UIServer, when set, is the Temporal Web UI server binary
	// (EnsureTemporalUIServer): the dev server then runs headless and this
	// UI serves UIPort, sending the console's cookie to the codec.
	UIServer string
}

// withDefaults returns o with unset fields filled in.
func (o TemporalOptions) withDefaults() TemporalOptions {
	if o.IP == "" {
		o.IP = "127.0.0.1"
	}
	if o.Port == 0 {
		o.Port = 7233
	}
	if o.UIPort == 0 {
		o.UIPort = o.Port + 1000
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = temporalStartTimeout
	}
	return o
}

// TemporalTuning are the dev server flags beyond what the SDK launcher's
// options name, passed in its ExtraArgs: the SQLite file in WAL mode with
// synchronous=NORMAL (durable enough for a dev database, and many times
// faster under the tests' load), a transfer queue polled fast enough for
// hundreds of workflows a second, room for the many updates that batches
// and racing duplicates send to one order at once, one partition per
// task queue, and activities handed to the worker in the answer to the
// workflow task that scheduled them (eager activities: an update's
// Accepted pause, workflows.acceptFirst, costs no trip through matching).
// With the default four partitions, a workflow task written to a partition
// no poller was waiting on sat there about two seconds (a tenth of the
// payments at 8 concurrent); one node gains nothing from partitions. The
// integration tests' server takes the same.
var TemporalTuning = []string{
	"--sqlite-pragma", "journal_mode=wal",
	"--sqlite-pragma", "synchronous=NORMAL",
	"--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000",
	"--dynamic-config-value", "history.maxInFlightUpdates=200",
	"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
	"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1",
	"--dynamic-config-value", "system.enableActivityEagerExecution=true",
}

// devServerArgs are the CLI's arguments for o, which must have its
// defaults applied, with the HTTP API and metrics on the given ports. The
// UI listens on the frontend's IP: the CLI's --ui-ip defaults to --ip.
// Search attributes come sorted, so the command line is the same each run.
func devServerArgs(o TemporalOptions, httpPort, metricsPort int) ([]string, error) {
	attrs, err := searchAttributes(o.SearchAttributes)
	if err != nil {
		return nil, err
	}
	args := []string{
		"server", "start-dev",
		"--ip", o.IP, "--port", strconv.Itoa(o.Port),
		"--http-port", strconv.Itoa(httpPort), "--metrics-port", strconv.Itoa(metricsPort),
		"--namespace", o.Namespace,
		"--log-format", "json", "--log-level", "warn",
		// No call home for a version check: the machine may have no way out.
		"--dynamic-config-value", "frontend.enableServerVersionCheck=false",
	}
	if o.UIServer != "" {
		args = append(args, "--headless")
	} else {
		args = append(args, "--ui-port", strconv.Itoa(o.UIPort))
	}
	if o.DBFile != "" {
		args = append(args, "--db-filename", o.DBFile)
	}
	var named []string
	for k := range attrs.GetUntypedValues() {
		named = append(named, k.GetName()+"="+k.GetValueType().String())
	}
	slices.Sort(named)
	for _, a := range named {
		args = append(args, "--search-attribute", a)
	}
	if o.UIServer != "" {
		return slices.Concat(args, TemporalTuning), nil
	}
	return slices.Concat(args, TemporalTuning, UICodecArgs(o.CodecEndpoint)), nil
}

// searchAttributes turns names and type names ("Keyword", "Int", ...) into
// the typed keys the launcher registers.
func searchAttributes(types map[string]string) (temporal.SearchAttributes, error) {
	var updates []temporal.SearchAttributeUpdate
	for name, typ := range types {
		var u temporal.SearchAttributeUpdate
		switch typ {
		case "Keyword":
			u = temporal.NewSearchAttributeKeyKeyword(name).ValueSet("")
		case "Text":
			u = temporal.NewSearchAttributeKeyString(name).ValueSet("")
		case "Int":
			u = temporal.NewSearchAttributeKeyInt64(name).ValueSet(0)
		case "Double":
			u = temporal.NewSearchAttributeKeyFloat64(name).ValueSet(0)
		case "Bool":
			u = temporal.NewSearchAttributeKeyBool(name).ValueSet(false)
		case "Datetime":
			u = temporal.NewSearchAttributeKeyTime(name).ValueSet(time.Time{})
		case "KeywordList":
			u = temporal.NewSearchAttributeKeyKeywordList(name).ValueSet(nil)
		default:
			return temporal.SearchAttributes{}, fmt.Errorf("search attribute %s: unknown type %q", name, typ)
		}
		updates = append(updates, u)
	}
	return temporal.NewSearchAttributes(updates...), nil
}

// TemporalServer is a Temporal dev server started by StartTemporal.
type TemporalServer struct {
	proc    *devServerProc
	ui      *exec.Cmd          // the UI server, when the dev server runs headless
	uiDir   string             // its configuration
	ports   *ports.Reservation // the HTTP API's and the metrics' ports
	addr    string
	uiURL   string
	logFile *os.File

	stopOnce sync.Once
	stopErr  error
}

// HostPort returns the frontend's host:port, e.g. "127.0.0.1:7233".
func (s *TemporalServer) HostPort() string { return s.addr }

// UIURL returns the base URL of the web UI, e.g. "http://127.0.0.1:8233".
func (s *TemporalServer) UIURL() string { return s.uiURL }

// startAttempts bounds the starts of a dev server that lost one of its own
// ports (below) to another process.
const startAttempts = 3

// StartTemporal starts `temporal server start-dev` and waits, up to
// opts.StartTimeout and honouring ctx, until the frontend takes a client
// and the UI answers HTTP. The caller must Stop the returned server.
//
//   - The binary comes from EnsureTemporalCLI, pinned to
//     TemporalCLIVersion; nothing is downloaded.
//   - The frontend's and the UI's ports are the caller's, and are checked
//     first, so a taken one is a clear error at once.
//   - The HTTP API's and metrics' ports are reserved here (package ports)
//     and held while the server runs. The history, matching and worker
//     services choose ports of their own inside the CLI by taking a free
//     one and releasing it; when another process takes one first the
//     server exits at once, and the start is tried again, up to
//     startAttempts times.
//   - An empty DBFile keeps the server's state in memory.
func StartTemporal(ctx context.Context, opts TemporalOptions, logger *slog.Logger) (*TemporalServer, error) {
	logger = orDiscard(logger)
	opts = opts.withDefaults()
	if opts.Binary == "" {
		return nil, errors.New("start temporal: no binary given (see EnsureTemporalCLI)")
	}
	if _, err := os.Stat(opts.Binary); err != nil {
		return nil, fmt.Errorf("start temporal: %w", err)
	}
	if opts.DBFile != "" {
		if err := os.MkdirAll(filepath.Dir(opts.DBFile), 0o755); err != nil {
			return nil, fmt.Errorf("create temporal db dir: %w", err)
		}
		if err := reapOrphan(opts.DBFile, logger); err != nil {
			return nil, err
		}
	}
	for _, c := range []struct {
		what string
		port int
	}{{"frontend", opts.Port}, {"UI", opts.UIPort}} {
		// A port an ended orphan held may take a moment to be free.
		err := checkPortFree(opts.IP, c.port)
		for wait := time.Now().Add(5 * time.Second); err != nil && time.Now().Before(wait); {
			time.Sleep(100 * time.Millisecond)
			err = checkPortFree(opts.IP, c.port)
		}
		if err != nil {
			return nil, fmt.Errorf("temporal %s port: %w", c.what, err)
		}
	}
	for attempt := 1; ; attempt++ {
		s, err := startTemporalOnce(ctx, opts, logger)
		if err == nil || !errors.Is(err, errPortTaken) || attempt == startAttempts {
			return s, err
		}
		logger.Warn("temporal dev server lost a port to another process; starting it again", "attempt", attempt, "error", err)
	}
}

func startTemporalOnce(ctx context.Context, opts TemporalOptions, logger *slog.Logger) (*TemporalServer, error) {
	own, err := ports.Reserve(2)
	if err != nil {
		return nil, fmt.Errorf("start temporal: %w", err)
	}
	args, err := devServerArgs(opts, own.Port(0), own.Port(1))
	if err != nil {
		own.Release()
		return nil, fmt.Errorf("start temporal: %w", err)
	}
	tail := &tailBuffer{max: 4096}
	var out io.Writer = tail
	s := &TemporalServer{
		ports: own,
		addr:  frontendAddr(opts.IP, opts.Port),
		uiURL: "http://" + net.JoinHostPort(opts.IP, strconv.Itoa(opts.UIPort)),
	}
	if opts.LogFile != "" {
		if err := os.MkdirAll(filepath.Dir(opts.LogFile), 0o755); err != nil {
			own.Release()
			return nil, fmt.Errorf("create temporal log dir: %w", err)
		}
		f, err := os.OpenFile(opts.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			own.Release()
			return nil, fmt.Errorf("open temporal log file: %w", err)
		}
		s.logFile, out = f, io.MultiWriter(f, tail)
	}

	logger.Info("starting temporal dev server", "addr", s.addr, "ui", s.uiURL, "db", opts.DBFile, "log", opts.LogFile)
	start := time.Now()
	startCtx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	s.proc, err = startDevServerProc(opts.Binary, args, out)
	if err != nil {
		s.release()
		return nil, fmt.Errorf("start temporal: %w", err)
	}
	clientOpts := client.Options{
		HostPort:  s.addr,
		Namespace: opts.Namespace,
		Logger:    sdklog.NewStructuredLogger(logger.With("component", "temporal-devserver")),
	}
	embeddedUI := s.uiURL
	if opts.UIServer != "" {
		embeddedUI = ""
	}
	if err := s.proc.waitReady(startCtx, clientOpts, embeddedUI); err != nil {
		_ = s.Stop()
		return nil, startError(err, s.addr, opts.StartTimeout, tail)
	}
	if opts.UIServer != "" {
		if err := s.startUIServer(startCtx, opts, out); err != nil {
			_ = s.Stop()
			return nil, startError(err, s.addr, opts.StartTimeout, tail)
		}
	}
	if opts.DBFile != "" {
		if err := recordDevServer(opts.DBFile, s.proc.pid()); err != nil {
			// Only a later start after a crash needs it; say so and go on.
			logger.Warn("temporal dev server pid not recorded", "error", err)
		}
	}
	logger.Info("temporal dev server ready", "addr", s.addr, "ui", s.uiURL, "took", time.Since(start).Round(time.Millisecond))
	return s, nil
}

// startError describes a server that did not come up, with the tail of
// its output. A server that exited because a port was taken wraps
// errPortTaken.
func startError(err error, addr string, timeout time.Duration, tail *tailBuffer) error {
	out := bytes.TrimSpace(tail.Bytes())
	msg := fmt.Sprintf("temporal dev server on %s did not come up within %s", addr, timeout)
	if errors.Is(err, errExited) {
		msg = fmt.Sprintf("temporal dev server on %s exited before it came up", addr)
	}
	if len(out) > 0 {
		err = fmt.Errorf("%w; last output:\n%s", err, out)
	}
	if errors.Is(err, errExited) && bytes.Contains(out, []byte("address already in use")) {
		return fmt.Errorf("%s: %w: %w", msg, errPortTaken, err)
	}
	return fmt.Errorf("%s: %w", msg, err)
}

// errPortTaken marks a start that failed because a port was taken.
var errPortTaken = errors.New("a port was taken")

// Stop interrupts the server and waits up to stopGrace for it to exit,
// then kills it. Stop is idempotent: later calls return the result of the
// first one.
func (s *TemporalServer) Stop() error {
	if s == nil {
		return nil
	}
	s.stopOnce.Do(func() {
		defer s.release()
		if s.ui != nil {
			_ = s.ui.Process.Signal(os.Interrupt)
			done := make(chan struct{})
			go func() { _ = s.ui.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(stopGrace):
				_ = s.ui.Process.Kill()
				<-done
			}
		}
		if s.proc != nil {
			s.stopErr = s.proc.stop(stopGrace)
		}
	})
	return s.stopErr
}

// startUIServer runs the UI server on opts.UIPort beside the headless dev
// server and waits until it answers.
func (s *TemporalServer) startUIServer(ctx context.Context, opts TemporalOptions, out io.Writer) (err error) {
	// Beside a kept database the configuration is kept too, written again
	// each run: a run killed with SIGKILL leaves nothing behind in /tmp.
	var dir string
	if opts.DBFile != "" {
		dir = filepath.Join(filepath.Dir(opts.DBFile), "temporal-ui")
	} else {
		if dir, err = os.MkdirTemp("", "paygate-temporal-ui-"); err != nil {
			return fmt.Errorf("temporal ui: %w", err)
		}
		s.uiDir = dir
	}
	root, err := writeUIServerConfig(dir, uiServerConfig{frontend: s.addr, host: opts.IP, port: opts.UIPort, namespace: opts.Namespace, codec: opts.CodecEndpoint})
	if err != nil {
		return err
	}
	s.ui = childCommand(opts.UIServer, "--root", root, "--config", "config", "--env", "paygate", "start")
	s.ui.Stdout, s.ui.Stderr = out, out
	if err := s.ui.Start(); err != nil {
		s.ui = nil
		return fmt.Errorf("start temporal ui: %w", err)
	}
	if err := waitHTTP(ctx, s.uiURL); err != nil {
		return fmt.Errorf("UI %s: %w", s.uiURL, err)
	}
	return nil
}

func (s *TemporalServer) release() {
	if s.uiDir != "" {
		_ = os.RemoveAll(s.uiDir)
		s.uiDir = ""
	}
	if s.logFile != nil {
		_ = s.logFile.Close()
		s.logFile = nil
	}
	s.ports.Release()
}

// stopGrace is how long Stop waits for the server after SIGINT.
const stopGrace = 10 * time.Second

// waitHTTP polls url until it answers HTTP (any status) or ctx ends.
func waitHTTP(ctx context.Context, url string) error {
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if httpAnswers(ctx, client, url) {
			return nil
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-tick.C:
		}
	}
}

// checkPortFree returns an error if ip:port cannot be listened on.
func checkPortFree(ip string, port int) error {
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s is already in use or not available (is another server running?): %w", addr, err)
	}
	return l.Close()
}

// tcpAnswers reports whether addr accepts a TCP connection.
func tcpAnswers(ctx context.Context, addr string) bool {
	d := net.Dialer{Timeout: 500 * time.Millisecond}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// httpAnswers reports whether url answers an HTTP GET with any status.
func httpAnswers(ctx context.Context, client *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	return true
}

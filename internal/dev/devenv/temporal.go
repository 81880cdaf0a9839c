package devenv

import (
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
	"time"
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
	// directory are created if missing.
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
	return o
}

// temporalArgs builds the arguments of `temporal server start-dev` for o,
// which must already have its defaults applied.
func temporalArgs(o TemporalOptions) []string {
	args := []string{
		"server", "start-dev",
		"--db-filename", o.DBFile,
		"--ip", o.IP,
		"--port", strconv.Itoa(o.Port),
		"--ui-ip", o.IP,
		"--ui-port", strconv.Itoa(o.UIPort),
		"--namespace", o.Namespace,
		"--log-format", "json",
		"--log-level", "warn",
		"--sqlite-pragma", "journal_mode=wal",
		"--sqlite-pragma", "synchronous=NORMAL",
		"--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000",
		// Batches and racing duplicates send many updates to one order at once.
		"--dynamic-config-value", "history.maxInFlightUpdates=200",
	}
	names := make([]string, 0, len(o.SearchAttributes))
	for name := range o.SearchAttributes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		args = append(args, "--search-attribute", name+"="+o.SearchAttributes[name])
	}
	return args
}

// StartTemporal starts `temporal server start-dev` and waits (up to 60s,
// honouring ctx) until the frontend port accepts TCP connections and the UI
// answers HTTP. It fails if either port is already in use or the server exits
// early. The caller must Stop the returned process.
func StartTemporal(ctx context.Context, opts TemporalOptions, logger *slog.Logger) (*Process, error) {
	logger = orDiscard(logger)
	opts = opts.withDefaults()
	if opts.Binary == "" {
		return nil, errors.New("start temporal: no binary given (see EnsureTemporalCLI)")
	}
	if _, err := os.Stat(opts.Binary); err != nil {
		return nil, fmt.Errorf("start temporal: %w", err)
	}
	if opts.DBFile == "" {
		return nil, errors.New("start temporal: no database file given")
	}
	if err := os.MkdirAll(filepath.Dir(opts.DBFile), 0o755); err != nil {
		return nil, fmt.Errorf("create temporal db dir: %w", err)
	}
	for _, c := range []struct {
		what string
		port int
	}{{"frontend", opts.Port}, {"UI", opts.UIPort}} {
		if err := checkPortFree(opts.IP, c.port); err != nil {
			return nil, fmt.Errorf("temporal %s port: %w", c.what, err)
		}
	}

	var out io.Writer
	var logFile *os.File
	if opts.LogFile != "" {
		if err := os.MkdirAll(filepath.Dir(opts.LogFile), 0o755); err != nil {
			return nil, fmt.Errorf("create temporal log dir: %w", err)
		}
		f, err := os.OpenFile(opts.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("open temporal log file: %w", err)
		}
		logFile, out = f, f
	}

	args := temporalArgs(opts)
	cmd := exec.Command(opts.Binary, args...)
	p, err := startChild("temporal server", cmd, out, logger)
	if err != nil {
		if logFile != nil {
			_ = logFile.Close()
		}
		return nil, err
	}
	if logFile != nil {
		p.closers = append(p.closers, logFile)
	}
	p.addr = net.JoinHostPort(opts.IP, strconv.Itoa(opts.Port))
	p.uiURL = "http://" + net.JoinHostPort(opts.IP, strconv.Itoa(opts.UIPort))
	logger.Info("starting temporal dev server", "pid", cmd.Process.Pid, "addr", p.addr, "ui", p.uiURL, "db", opts.DBFile, "log", opts.LogFile)

	start := time.Now()
	if err := waitTemporalReady(ctx, p); err != nil {
		_ = p.Stop()
		return nil, err
	}
	logger.Info("temporal dev server ready", "addr", p.addr, "ui", p.uiURL, "took", time.Since(start).Round(time.Millisecond))
	return p, nil
}

// waitTemporalReady polls the frontend and UI ports of p until both answer.
func waitTemporalReady(ctx context.Context, p *Process) error {
	ctx, cancel := context.WithTimeout(ctx, temporalStartTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	frontendUp := false
	for {
		if p.exited() {
			return p.exitError()
		}
		if !frontendUp {
			frontendUp = tcpAnswers(ctx, p.addr)
		}
		if frontendUp && httpAnswers(ctx, client, p.uiURL) {
			return nil
		}
		select {
		case <-ctx.Done():
			if p.exited() {
				return p.exitError()
			}
			return fmt.Errorf("wait for temporal server on %s (UI %s): %w", p.addr, p.uiURL, context.Cause(ctx))
		case <-p.done:
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

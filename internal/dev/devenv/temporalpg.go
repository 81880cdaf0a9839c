package devenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/paygate/paygate/internal/dev/ports"
)

// Versions of the Temporal server, its schema tool and the Web UI server
// that run Temporal on Postgres. Newer ones need a newer Go than this
// project builds with.
const (
	TemporalServerVersion   = "v1.32.1"
	TemporalUIServerVersion = "v2.55.0"
)

// Go packages of those binaries.
const (
	temporalServerPackage  = "go.temporal.io/server/cmd/server"
	temporalSQLToolPackage = "go.temporal.io/server/cmd/tools/sql"
	temporalUIPackage      = "github.com/temporalio/ui-server/v2/cmd/server"
)

// PostgresTemporalOptions configure Temporal on Postgres.
type PostgresTemporalOptions struct {
	// BinDir holds the binaries, installed there on first use.
	BinDir string
	// DatabaseURL is a Postgres URL of a role that may create databases;
	// the server's two databases live on the same server.
	DatabaseURL string
	// Databases names the persistence database; its visibility database
	// is the name with "_visibility". Default "temporal".
	Database string
	// IP, Port and UIPort are where the frontend and the UI listen
	// (127.0.0.1, 7233 and Port+1000 by default); the server's other
	// services take the ports after Port.
	IP     string
	Port   int
	UIPort int
	// Namespace is registered when missing; default "default".
	Namespace string
	// ConfigDir receives the generated configuration files.
	ConfigDir string
	// LogFile receives both processes' output (appended); "" discards it.
	LogFile string
	// CodecEndpoint, when set, is the remote codec the UI decodes
	// payloads with.
	CodecEndpoint string
	// StartTimeout bounds the wait for the frontend and the UI; default 90s.
	StartTimeout time.Duration
}

func (o PostgresTemporalOptions) withDefaults() PostgresTemporalOptions {
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
	if o.Database == "" {
		o.Database = "temporal"
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 90 * time.Second
	}
	return o
}

// PostgresTemporal is a Temporal server persisting to Postgres, with its
// Web UI, run as two child processes.
type PostgresTemporal struct {
	addr, uiURL string
	server, ui  *exec.Cmd
	logFile     *os.File

	stopOnce sync.Once
	stopErr  error
}

// HostPort returns the frontend's host:port.
func (t *PostgresTemporal) HostPort() string { return t.addr }

// UIURL returns the Web UI's base URL.
func (t *PostgresTemporal) UIURL() string { return t.uiURL }

// PostgresTemporalBinaries are the installed binaries.
type PostgresTemporalBinaries struct {
	Server, SQLTool, UI string
}

// EnsurePostgresTemporalBinaries installs the server, its schema tool and
// the UI server into binDir with `go install`, each under a name that
// carries its version, unless they are there already.
func EnsurePostgresTemporalBinaries(ctx context.Context, binDir string, logger *slog.Logger) (PostgresTemporalBinaries, error) {
	logger = orDiscard(logger)
	dir, err := filepath.Abs(binDir)
	if err != nil {
		return PostgresTemporalBinaries{}, fmt.Errorf("resolve bin dir: %w", err)
	}
	var out PostgresTemporalBinaries
	for _, b := range []struct {
		pkg, version, name string
		path               *string
	}{
		{temporalServerPackage, TemporalServerVersion, "temporal-server", &out.Server},
		{temporalSQLToolPackage, TemporalServerVersion, "temporal-sql-tool", &out.SQLTool},
		{temporalUIPackage, TemporalUIServerVersion, "temporal-ui-server", &out.UI},
	} {
		path, err := installVersioned(ctx, dir, b.pkg, b.version, b.name, logger)
		if err != nil {
			return PostgresTemporalBinaries{}, err
		}
		*b.path = path
	}
	return out, nil
}

// installVersioned installs pkg@version as dir/name-version unless that file
// exists. The build goes to a scratch GOBIN first: two of the packages are
// both called "server".
func installVersioned(ctx context.Context, dir, pkg, version, name string, logger *slog.Logger) (string, error) {
	path := filepath.Join(dir, name+"-"+version)
	if isExecutable(path) {
		return path, nil
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("find go to install %s: %w", name, err)
	}
	scratch, err := os.MkdirTemp(dir, name+".tmp")
	if err != nil {
		return "", fmt.Errorf("install %s: %w", name, err)
	}
	defer os.RemoveAll(scratch)
	full := pkg + "@" + version
	start := time.Now()
	logger.Info("installing (takes a few minutes the first time)", "package", full)
	lines := &lineLogger{logger: logger, msg: "go install", attrs: []any{"package", full}}
	cmd := exec.CommandContext(ctx, goBin, "install", full)
	cmd.Env = append(os.Environ(), "GOBIN="+scratch, "GOTOOLCHAIN=local")
	cmd.Stdout, cmd.Stderr = lines, lines
	err = cmd.Run()
	lines.Flush()
	if err != nil {
		return "", fmt.Errorf("go install %s: %w", full, err)
	}
	built := filepath.Join(scratch, filepath.Base(pkg))
	if err := os.Rename(built, path); err != nil {
		return "", fmt.Errorf("install %s: %w", name, err)
	}
	logger.Info("installed", "path", path, "took", time.Since(start).Round(time.Second))
	return path, nil
}

// pgEndpoint is what the server's configuration and the schema tool need
// of a Postgres URL.
type pgEndpoint struct {
	host, port, user, password string
}

func parsePGURL(raw string) (pgEndpoint, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return pgEndpoint{}, fmt.Errorf("postgres URL: want postgres://user[:password]@host:port/db")
	}
	e := pgEndpoint{host: u.Hostname(), port: u.Port(), user: u.User.Username()}
	e.password, _ = u.User.Password()
	if e.port == "" {
		e.port = "5432"
	}
	return e, nil
}

// StartTemporalOnPostgres makes the server's databases and schemas (or
// brings them up to the server's version), writes its configuration,
// starts the server and the UI, registers the namespace, and waits until
// the frontend takes a client and the UI answers. The caller must Stop it.
func StartTemporalOnPostgres(ctx context.Context, bins PostgresTemporalBinaries, opts PostgresTemporalOptions, logger *slog.Logger) (*PostgresTemporal, error) {
	logger = orDiscard(logger)
	opts = opts.withDefaults()
	pg, err := parsePGURL(opts.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if opts.ConfigDir == "" {
		return nil, errors.New("temporal on postgres: no config dir given")
	}
	// The server keeps membership ports (Port+100 and up) in a Postgres
	// smallint column.
	if opts.Port+106 > 32767 {
		return nil, fmt.Errorf("temporal on postgres: port %d too high: the membership ports from %d must stay below 32768", opts.Port, opts.Port+100)
	}
	for _, p := range []int{opts.Port, opts.UIPort} {
		if err := checkPortFree(opts.IP, p); err != nil {
			return nil, fmt.Errorf("temporal on postgres: %w", err)
		}
	}
	t := &PostgresTemporal{
		addr:  frontendAddr(opts.IP, opts.Port),
		uiURL: "http://" + net.JoinHostPort(opts.IP, strconv.Itoa(opts.UIPort)),
	}
	var out io.Writer = io.Discard
	if opts.LogFile != "" {
		f, err := os.OpenFile(opts.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("open temporal log file: %w", err)
		}
		t.logFile, out = f, f
	}
	tail := &tailBuffer{max: 4096}
	out = io.MultiWriter(out, tail)

	if err := setupSchemas(ctx, bins.SQLTool, pg, opts.Database, out); err != nil {
		t.closeLog()
		return nil, err
	}
	serverConfig, err := writeServerConfig(opts, pg)
	if err != nil {
		t.closeLog()
		return nil, err
	}
	uiRoot, err := writeUIServerConfig(filepath.Join(opts.ConfigDir, "ui"), uiServerConfig{
		frontend: frontendAddr(opts.IP, opts.Port), host: opts.IP, port: opts.UIPort, namespace: opts.Namespace, codec: opts.CodecEndpoint})
	if err != nil {
		t.closeLog()
		return nil, err
	}

	logger.Info("starting temporal server on postgres", "addr", t.addr, "ui", t.uiURL, "database", opts.Database)
	start := time.Now()
	t.server = childCommand(bins.Server, "--config-file", serverConfig, "--allow-no-auth", "start")
	t.server.Stdout, t.server.Stderr = out, out
	if err := t.server.Start(); err != nil {
		t.closeLog()
		return nil, fmt.Errorf("start temporal server: %w", err)
	}
	startCtx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	if err := registerNamespace(startCtx, t.addr, opts.Namespace, logger); err != nil {
		_ = t.Stop()
		return nil, startError(err, t.addr, opts.StartTimeout, tail)
	}
	t.ui = childCommand(bins.UI, "--root", uiRoot, "--config", "config", "--env", "paygate", "start")
	t.ui.Stdout, t.ui.Stderr = out, out
	if err := t.ui.Start(); err != nil {
		_ = t.Stop()
		return nil, fmt.Errorf("start temporal ui: %w", err)
	}
	if err := waitHTTP(startCtx, t.uiURL); err != nil {
		_ = t.Stop()
		return nil, startError(fmt.Errorf("UI %s: %w", t.uiURL, err), t.addr, opts.StartTimeout, tail)
	}
	logger.Info("temporal server on postgres ready", "addr", t.addr, "ui", t.uiURL, "took", time.Since(start).Round(time.Millisecond))
	return t, nil
}

// childCommand is a child process that the kernel ends when this process
// dies, however it dies: an orphaned server would keep its ports and fail
// the next start.
func childCommand(bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// setupSchemas creates the persistence and visibility databases when
// missing and brings both schemas to the version the tool embeds; on a
// database already set up, both steps change nothing.
func setupSchemas(ctx context.Context, tool string, pg pgEndpoint, database string, out io.Writer) error {
	for _, s := range []struct{ db, schema string }{
		{database, "postgresql/v12/temporal"},
		{database + "_visibility", "postgresql/v12/visibility"},
	} {
		base := []string{"--plugin", "postgres12_pgx", "--ep", pg.host, "-p", pg.port, "-u", pg.user, "--db", s.db}
		if pg.password != "" {
			base = append(base, "--pw", pg.password)
		}
		steps := [][]string{
			{"create-database"},
			{"setup-schema", "-v", "0.0"},
			{"update-schema", "--schema-name", s.schema},
		}
		for i, step := range steps {
			cmd := exec.CommandContext(ctx, tool, append(append([]string{}, base...), step...)...)
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Run(); err != nil && i < 2 {
				// The database, and the version table setup-schema
				// makes, exist from an earlier start: not an error.
				continue
			} else if err != nil {
				return fmt.Errorf("temporal schema %s on %s: %w", s.schema, s.db, err)
			}
		}
	}
	return nil
}

// ServerDynamicConfig is the Postgres-backed server's dynamic config, and
// the compose file's (deploy/temporal/dynamicconfig.yaml holds the same
// text): the tuning the dev server gets (TemporalTuning), a transfer queue
// polled fast enough for hundreds of workflows a second, room for many
// updates to one workflow at once, one partition per task queue on a
// one-node server, and eager activities.
const ServerDynamicConfig = `history.transferProcessorMaxPollRPS:
  - value: 1000
history.maxInFlightUpdates:
  - value: 200
matching.numTaskqueueReadPartitions:
  - value: 1
matching.numTaskqueueWritePartitions:
  - value: 1
system.enableActivityEagerExecution:
  - value: true
`

// writeServerConfig writes the server's configuration for opts and returns
// its path. The services take consecutive ports after the frontend's.
func writeServerConfig(opts PostgresTemporalOptions, pg pgEndpoint) (string, error) {
	if err := os.MkdirAll(opts.ConfigDir, 0o755); err != nil {
		return "", fmt.Errorf("temporal config dir: %w", err)
	}
	dyn := filepath.Join(opts.ConfigDir, "dynamicconfig.yaml")
	if err := os.WriteFile(dyn, []byte(ServerDynamicConfig), 0o644); err != nil {
		return "", fmt.Errorf("temporal dynamic config: %w", err)
	}
	p := opts.Port
	store := func(db string, conns int) string {
		return fmt.Sprintf(`      sql:
        pluginName: postgres12_pgx
        databaseName: %q
        connectAddr: %q
        connectProtocol: tcp
        user: %q
        password: %q
        maxConns: %d
        maxIdleConns: %d
        maxConnLifetime: 1h
`, db, net.JoinHostPort(pg.host, pg.port), pg.user, pg.password, conns, conns)
	}
	service := func(grpc, membership int, extra string) string {
		return fmt.Sprintf("    rpc:\n      grpcPort: %d\n      membershipPort: %d\n      bindOnIP: %q\n%s", grpc, membership, opts.IP, extra)
	}
	cfg := "log:\n  stdout: true\n  level: warn\n" +
		"persistence:\n  defaultStore: default\n  visibilityStore: visibility\n  numHistoryShards: 4\n  datastores:\n" +
		"    default:\n" + store(opts.Database, 20) +
		"    visibility:\n" + store(opts.Database+"_visibility", 10) +
		fmt.Sprintf("global:\n  membership:\n    maxJoinDuration: 30s\n    broadcastAddress: %q\n", opts.IP) +
		"services:\n" +
		"  frontend:\n" + service(p, p+100, fmt.Sprintf("      httpPort: %d\n", p+10)) +
		"  history:\n" + service(p+1, p+101, "") +
		"  matching:\n" + service(p+2, p+102, "") +
		"  worker:\n" + service(p+6, p+106, "") +
		"clusterMetadata:\n  enableGlobalNamespace: false\n  failoverVersionIncrement: 10\n  masterClusterName: active\n" +
		"  currentClusterName: active\n  clusterInformation:\n    active:\n      enabled: true\n      initialFailoverVersion: 1\n" +
		fmt.Sprintf("      rpcName: frontend\n      rpcAddress: %q\n", net.JoinHostPort(opts.IP, strconv.Itoa(p))) +
		"dcRedirectionPolicy:\n  policy: noop\n" +
		fmt.Sprintf("dynamicConfigClient:\n  filepath: %q\n  pollInterval: 10s\n", dyn)
	path := filepath.Join(opts.ConfigDir, "temporal-server.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return "", fmt.Errorf("temporal server config: %w", err)
	}
	return path, nil
}

// registerNamespace waits for the frontend and registers the namespace
// unless it exists. A standalone server, unlike the dev server, starts
// with none.
func registerNamespace(ctx context.Context, addr, namespace string, logger *slog.Logger) error {
	var nc client.NamespaceClient
	for {
		var err error
		nc, err = client.NewNamespaceClient(client.Options{HostPort: addr, Logger: sdklog.NewStructuredLogger(logger)})
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("frontend %s: %w", addr, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
	defer nc.Close()
	for {
		err := nc.Register(ctx, &workflowservice.RegisterNamespaceRequest{
			Namespace:                        namespace,
			WorkflowExecutionRetentionPeriod: durationpb.New(72 * time.Hour),
		})
		var exists *serviceerror.NamespaceAlreadyExists
		if err == nil || errors.As(err, &exists) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("register namespace %s: %w", namespace, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
	// A new namespace takes a moment to reach every service.
	for {
		if _, err := nc.Describe(ctx, namespace); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("describe namespace %s: %w", namespace, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Stop interrupts the UI and the server and waits up to stopGrace for
// each, then kills what is left. It is idempotent.
func (t *PostgresTemporal) Stop() error {
	if t == nil {
		return nil
	}
	t.stopOnce.Do(func() {
		defer t.closeLog()
		for _, c := range []*exec.Cmd{t.ui, t.server} {
			if c == nil || c.Process == nil {
				continue
			}
			_ = c.Process.Signal(os.Interrupt)
			done := make(chan error, 1)
			go func() { done <- c.Wait() }()
			select {
			case <-done:
			case <-time.After(stopGrace):
				_ = c.Process.Kill()
				<-done
				t.stopErr = errors.Join(t.stopErr, fmt.Errorf("%s did not stop within %s of SIGINT; killed", filepath.Base(c.Path), stopGrace))
			}
		}
	})
	return t.stopErr
}

func (t *PostgresTemporal) closeLog() {
	if t.logFile != nil {
		_ = t.logFile.Close()
		t.logFile = nil
	}
}

// ReservePostgresTemporalPorts holds a base port p for
// StartTemporalOnPostgres and the neighbours the server takes (p to p+10,
// p+50 for the UI, p+100 to p+106 for membership); the caller keeps the
// reservation while the server may run, restarts included. The server
// stores membership ports as a Postgres smallint; reserved ports stay
// below 32768.
func ReservePostgresTemporalPorts() (*ports.Reservation, error) {
	r, err := ports.ReserveBlock(0, 1, 2, 6, 10, 50, 100, 101, 102, 106)
	if err != nil {
		return nil, fmt.Errorf("temporal server ports: %w", err)
	}
	return r, nil
}

package devenv

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// installPostgresHint tells the user how to get a Postgres server.
const installPostgresHint = "install PostgreSQL (Debian/Ubuntu: `apt-get install postgresql`; macOS: `brew install postgresql@16`) " +
	"or set DATABASE_URL to a server you can create databases on"

// maxSocketPath is a safe length limit for a unix socket path (sun_path is 108 bytes on Linux).
const maxSocketPath = 100

// PostgresOptions configures EnsurePostgres.
type PostgresOptions struct {
	// DataDir holds a private cluster if one is needed, e.g. ".data/postgres".
	DataDir string
	// Port is the port of a private cluster; default 55432.
	Port int
}

// withDefaults returns o with unset fields filled in.
func (o PostgresOptions) withDefaults() PostgresOptions {
	if o.Port == 0 {
		o.Port = 55432
	}
	if o.DataDir == "" {
		o.DataDir = filepath.Join(".data", "postgres")
	}
	return o
}

// Postgres is a Postgres server found or started by EnsurePostgres.
type Postgres struct {
	// AdminURL points at the "postgres" database as a user that can create databases.
	AdminURL string
	// Private reports whether the server is a private cluster under DataDir.
	Private bool
	// DataDir is the private cluster's directory, "" for other servers.
	DataDir string

	// proc is set only when this EnsurePostgres call started the cluster.
	proc *Process
}

// Stop stops a private cluster started by the EnsurePostgres call that
// returned p; it is a no-op for any other server. It is idempotent.
func (p *Postgres) Stop() error {
	if p == nil || p.proc == nil {
		return nil
	}
	return p.proc.Stop()
}

// DatabaseURL returns the URL of database name on the same server as AdminURL.
func (p *Postgres) DatabaseURL(name string) string {
	return withDatabase(p.AdminURL, name)
}

// withDatabase replaces the database of a postgres:// URL; it returns rawURL
// unchanged if it cannot be parsed.
func withDatabase(rawURL, name string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String()
}

// localURL returns a URL for user on 127.0.0.1:port, database "postgres".
func localURL(userName string, port int) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(userName),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Path:     "/postgres",
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// EnsurePostgres finds or starts a Postgres server. It uses, in this order:
// DATABASE_URL if set; a server answering on 127.0.0.1:5432 as user
// "postgres" or the current OS user; a private cluster under opts.DataDir,
// created with initdb the first time and started with pg_ctl (or reused if
// it is already running).
func EnsurePostgres(ctx context.Context, opts PostgresOptions, logger *slog.Logger) (*Postgres, error) {
	logger = orDiscard(logger)
	opts = opts.withDefaults()

	if raw := os.Getenv("DATABASE_URL"); raw != "" {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return nil, errors.New("DATABASE_URL must be a postgres:// URL")
		}
		admin := withDatabase(raw, "postgres")
		if !Reachable(ctx, raw) && !Reachable(ctx, admin) {
			return nil, fmt.Errorf("DATABASE_URL server %s does not answer", u.Redacted())
		}
		logger.Info("using postgres from DATABASE_URL", "url", u.Redacted())
		return &Postgres{AdminURL: admin}, nil
	}

	candidates := []string{"postgres"}
	if u, err := user.Current(); err == nil && u.Username != "postgres" {
		candidates = append(candidates, u.Username)
	}
	for _, name := range candidates {
		admin := localURL(name, 5432)
		if canCreateDatabases(ctx, admin) {
			logger.Info("using local postgres", "addr", "127.0.0.1:5432", "user", name)
			return &Postgres{AdminURL: admin}, nil
		}
	}
	logger.Info("no usable postgres on 127.0.0.1:5432, using a private cluster", "dir", opts.DataDir, "port", opts.Port)
	return startPrivatePostgres(ctx, opts, logger)
}

// canCreateDatabases reports whether the server at adminURL answers within 2s
// and its user may create databases.
func canCreateDatabases(ctx context.Context, adminURL string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return false
	}
	defer conn.Close(context.Background())
	var ok bool
	err = conn.QueryRow(ctx, "SELECT rolsuper OR rolcreatedb FROM pg_roles WHERE rolname = current_user").Scan(&ok)
	return err == nil && ok
}

// pgTools locates initdb and pg_ctl.
type pgTools struct {
	initdb string
	pgCtl  string
}

// findPGTools looks for initdb and pg_ctl side by side on PATH, then under
// /usr/lib/postgresql/*/bin, newest version first.
func findPGTools() (pgTools, error) {
	var dirs []string
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	versioned, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(versioned, func(a, b string) int {
		return pgVersionOf(b) - pgVersionOf(a)
	})
	dirs = append(dirs, versioned...)
	for _, d := range dirs {
		t := pgTools{initdb: filepath.Join(d, "initdb"), pgCtl: filepath.Join(d, "pg_ctl")}
		if isExecutable(t.initdb) && isExecutable(t.pgCtl) {
			return t, nil
		}
	}
	return pgTools{}, fmt.Errorf("no PostgreSQL server answers on 127.0.0.1:5432 and initdb/pg_ctl were not found "+
		"(looked on PATH and in /usr/lib/postgresql/*/bin): %s", installPostgresHint)
}

// pgVersionOf returns the major version in a /usr/lib/postgresql/<v>/bin path, or 0.
func pgVersionOf(binDir string) int {
	v, err := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	if err != nil {
		return 0
	}
	return v
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// clusterLayout names the paths of a private cluster under its DataDir.
type clusterLayout struct {
	root    string // DataDir
	data    string // the cluster itself (PGDATA)
	sockets string // unix socket directory
	logFile string // server log
}

func newClusterLayout(dataDir string) (clusterLayout, error) {
	root, err := filepath.Abs(dataDir)
	if err != nil {
		return clusterLayout{}, fmt.Errorf("resolve postgres data dir: %w", err)
	}
	return clusterLayout{
		root:    root,
		data:    filepath.Join(root, "data"),
		sockets: filepath.Join(root, "run"),
		logFile: filepath.Join(root, "postgres.log"),
	}, nil
}

// runAs runs commands either directly or, as root, as the postgres OS user.
type runAs struct {
	runuser string // path of runuser, "" when not root
	uid     int
	gid     int
}

// command builds a command for name and args, wrapped in runuser if needed.
func (r runAs) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if r.runuser != "" {
		cmd = exec.CommandContext(ctx, r.runuser, append([]string{"-u", "postgres", "--", name}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, name, args...)
	}
	// The server started by pg_ctl must not keep our output pipes open.
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// run runs a command and includes its output in any error.
func (r runAs) run(ctx context.Context, name string, args ...string) error {
	out, err := r.command(ctx, name, args...).CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), args[0], err, msg)
	}
	return nil
}

// chown gives path and everything below it to the postgres user (root only).
func (r runAs) chown(path string) error {
	if r.runuser == "" {
		return nil
	}
	return filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, r.uid, r.gid)
	})
}

// newRunAs decides how to run Postgres tools for the current user.
func newRunAs() (runAs, error) {
	if os.Geteuid() != 0 {
		return runAs{}, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return runAs{}, fmt.Errorf("running as root, a private postgres cluster needs a \"postgres\" OS user (created by the postgresql package): %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	ru, err := exec.LookPath("runuser")
	if err != nil {
		for _, p := range []string{"/usr/sbin/runuser", "/sbin/runuser"} {
			if isExecutable(p) {
				ru, err = p, nil
				break
			}
		}
	}
	if err != nil {
		return runAs{}, fmt.Errorf("running as root needs runuser (util-linux) to start postgres as the postgres user: %w", err)
	}
	return runAs{runuser: ru, uid: uid, gid: gid}, nil
}

// StartPrivatePostgres creates (first time) and starts a private cluster
// under opts.DataDir, whatever else answers on this machine: for a test that
// must be able to stop and start its own server. Stop stops it.
func StartPrivatePostgres(ctx context.Context, opts PostgresOptions, logger *slog.Logger) (*Postgres, error) {
	return startPrivatePostgres(ctx, opts, logger)
}

// startPrivatePostgres creates (first time) and starts a private cluster, or
// reuses it if it is already running.
func startPrivatePostgres(ctx context.Context, opts PostgresOptions, logger *slog.Logger) (*Postgres, error) {
	logger = orDiscard(logger)
	opts = opts.withDefaults()
	layout, err := newClusterLayout(opts.DataDir)
	if err != nil {
		return nil, err
	}
	admin := localURL("postgres", opts.Port)
	pg := &Postgres{AdminURL: admin, Private: true, DataDir: layout.root}

	if _, err := os.Stat(filepath.Join(layout.data, "postmaster.pid")); err == nil && Reachable(ctx, admin) {
		logger.Info("reusing running private postgres", "dir", layout.root, "port", opts.Port)
		return pg, nil
	}

	tools, err := findPGTools()
	if err != nil {
		return nil, err
	}
	as, err := newRunAs()
	if err != nil {
		return nil, err
	}
	if err := checkPortFree("127.0.0.1", opts.Port); err != nil {
		return nil, fmt.Errorf("private postgres port: %w", err)
	}
	if err := os.MkdirAll(layout.sockets, 0o755); err != nil {
		return nil, fmt.Errorf("create postgres dir: %w", err)
	}
	if err := as.chown(layout.root); err != nil {
		return nil, fmt.Errorf("chown postgres dir to the postgres user: %w", err)
	}
	if as.runuser != "" {
		if err := as.run(ctx, "test", "-w", layout.root, "-a", "-x", layout.root); err != nil {
			return nil, fmt.Errorf("the postgres OS user cannot use %s; all its parent directories must be searchable (mode 0755): %w", layout.root, err)
		}
	}

	if _, err := os.Stat(filepath.Join(layout.data, "PG_VERSION")); errors.Is(err, fs.ErrNotExist) {
		logger.Info("creating private postgres cluster", "dir", layout.data, "initdb", tools.initdb)
		if err := as.run(ctx, tools.initdb, "-D", layout.data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-locale"); err != nil {
			return nil, fmt.Errorf("create postgres cluster: %w", err)
		}
	}

	serverOpts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s", opts.Port, shellQuote(layout.sockets))
	if sock := filepath.Join(layout.sockets, fmt.Sprintf(".s.PGSQL.%d", opts.Port)); len(sock) > maxSocketPath {
		logger.Warn("postgres socket path too long, listening on TCP only", "path", sock)
		serverOpts = fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -c unix_socket_directories=''", opts.Port)
	}
	logger.Info("starting private postgres", "dir", layout.data, "port", opts.Port, "log", layout.logFile)
	err = as.run(ctx, tools.pgCtl, "start", "-D", layout.data, "-l", layout.logFile, "-w", "-t", "60", "-o", serverOpts)
	if err != nil {
		return nil, fmt.Errorf("start private postgres (see %s): %w", layout.logFile, err)
	}
	if !Reachable(ctx, admin) {
		_ = as.run(context.Background(), tools.pgCtl, "stop", "-D", layout.data, "-m", "fast", "-w")
		return nil, fmt.Errorf("private postgres started but does not answer on 127.0.0.1:%d (see %s)", opts.Port, layout.logFile)
	}
	pg.proc = &Process{
		name:   "private postgres",
		addr:   net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.Port)),
		logger: logger,
		stopFn: func() error {
			logger.Info("stopping private postgres", "dir", layout.data)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if err := as.run(ctx, tools.pgCtl, "stop", "-D", layout.data, "-m", "fast", "-w", "-t", "30"); err != nil {
				return fmt.Errorf("stop private postgres: %w", err)
			}
			return nil
		},
	}
	logger.Info("private postgres ready", "addr", pg.proc.addr)
	return pg, nil
}

// shellQuote quotes s for the shell pg_ctl uses to start the server.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// CreateDatabase creates database name on the server at adminURL unless it
// already exists.
func CreateDatabase(ctx context.Context, adminURL, name string) error {
	if name == "" {
		return errors.New("create database: empty name")
	}
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connect to postgres: %w", err)
	}
	defer conn.Close(context.Background())
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("check database %q: %w", name, err)
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		var pgErr *pgconn.PgError
		// 42P04 duplicate_database; 23505 when a concurrent CREATE won the race.
		if errors.As(err, &pgErr) && (pgErr.Code == "42P04" || pgErr.Code == "23505") {
			return nil
		}
		return fmt.Errorf("create database %q: %w", name, err)
	}
	return nil
}

// DropDatabase drops database name on the server at adminURL if it exists,
// terminating its connections (WITH (FORCE)).
func DropDatabase(ctx context.Context, adminURL, name string) error {
	if name == "" {
		return errors.New("drop database: empty name")
	}
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connect to postgres: %w", err)
	}
	defer conn.Close(context.Background())
	if conn.Config().Database == name {
		return fmt.Errorf("drop database %q: it is the admin connection's database", name)
	}
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %q: %w", name, err)
	}
	return nil
}

// Reachable reports whether a Postgres server at url answers a query within 2s.
func Reachable(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return false
	}
	defer conn.Close(context.Background())
	var one int
	return conn.QueryRow(ctx, "SELECT 1").Scan(&one) == nil
}

// CommitCount is the transactions the database at databaseURL has ended
// (committed or rolled back) as its statistics stand: a benchmark's
// commits per request. The statistics lag a busy backend by up to a second,
// and this query is one more.
func CommitCount(ctx context.Context, databaseURL string) (int64, error) {
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return 0, fmt.Errorf("connect to postgres: %w", err)
	}
	defer conn.Close(context.Background())
	var n int64
	if err := conn.QueryRow(ctx, `SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
		return 0, fmt.Errorf("read pg_stat_database: %w", err)
	}
	return n, nil
}

package devenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// postgresTempDir returns a fresh directory the postgres OS user can reach
// when the tests run as root (t.TempDir's parent is mode 0700).
func postgresTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "paygate-devenv-pg-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// skipWithoutPGTools skips t if a private cluster cannot be made here.
func skipWithoutPGTools(t *testing.T) {
	t.Helper()
	if _, err := findPGTools(); err != nil {
		t.Skipf("cannot make a private postgres cluster: %v", err)
	}
	if _, err := newRunAs(); err != nil {
		t.Skipf("cannot make a private postgres cluster: %v", err)
	}
}

// testAdminURL returns an admin URL of some Postgres server, starting a
// private cluster if needed (stopped when t ends).
func testAdminURL(t *testing.T) string {
	t.Helper()
	t.Setenv("DATABASE_URL", os.Getenv("DATABASE_URL")) // forbid t.Parallel; keep the value
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if _, err := findPGTools(); err != nil && !Reachable(ctx, localURL("postgres", 5432)) && os.Getenv("DATABASE_URL") == "" {
		t.Skipf("no postgres server and no way to make one: %v", err)
	}
	pg, err := EnsurePostgres(ctx, PostgresOptions{DataDir: postgresTempDir(t), Port: freePort(t)}, testLogger(t))
	if err != nil {
		t.Fatalf("EnsurePostgres: %v", err)
	}
	t.Cleanup(func() {
		if err := pg.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return pg.AdminURL
}

func databaseExists(t *testing.T, adminURL, name string) bool {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), adminURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var exists bool
	if err := conn.QueryRow(t.Context(), "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	return exists
}

func TestCreateDropDatabase(t *testing.T) {
	admin := testAdminURL(t)
	suffix := time.Now().UnixNano()
	tests := []struct {
		name string
		db   string
	}{
		{name: "plain", db: fmt.Sprintf("paygate_devenv_test_%d", suffix)},
		{name: "needs quoting", db: fmt.Sprintf(`Paygate "devenv"; DROP-%d`, suffix)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			t.Cleanup(func() { _ = DropDatabase(context.Background(), admin, tt.db) })
			for i := range 2 {
				if err := CreateDatabase(ctx, admin, tt.db); err != nil {
					t.Fatalf("CreateDatabase #%d: %v", i+1, err)
				}
			}
			if !databaseExists(t, admin, tt.db) {
				t.Fatalf("database %q missing after CreateDatabase", tt.db)
			}
			url := (&Postgres{AdminURL: admin}).DatabaseURL(tt.db)
			conn, err := pgx.Connect(ctx, url) // stays open: DropDatabase must force it out
			if err != nil {
				t.Fatalf("connect to %s: %v", url, err)
			}
			defer conn.Close(context.Background())
			var current string
			if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&current); err != nil || current != tt.db {
				t.Fatalf("current_database() = %q, %v; want %q", current, err, tt.db)
			}
			for i := range 2 {
				if err := DropDatabase(ctx, admin, tt.db); err != nil {
					t.Fatalf("DropDatabase #%d: %v", i+1, err)
				}
			}
			if databaseExists(t, admin, tt.db) {
				t.Fatalf("database %q still exists after DropDatabase", tt.db)
			}
		})
	}
}

func TestCreateDropDatabaseErrors(t *testing.T) {
	tests := []struct {
		name    string
		call    func() error
		wantErr string
	}{
		{name: "create empty", call: func() error { return CreateDatabase(t.Context(), "postgres://x@127.0.0.1:1/postgres", "") }, wantErr: "empty name"},
		{name: "drop empty", call: func() error { return DropDatabase(t.Context(), "postgres://x@127.0.0.1:1/postgres", "") }, wantErr: "empty name"},
		{name: "create unreachable", call: func() error {
			return CreateDatabase(t.Context(), "postgres://x@127.0.0.1:1/postgres?sslmode=disable", "db")
		}, wantErr: "connect to postgres"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestDatabaseURL(t *testing.T) {
	tests := []struct {
		name  string
		admin string
		db    string
		want  string
	}{
		{name: "local", admin: "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", db: "paygate", want: "postgres://postgres@127.0.0.1:5432/paygate?sslmode=disable"},
		{name: "password kept", admin: "postgres://u:p%40ss@db:5432/postgres?sslmode=disable", db: "app_test", want: "postgres://u:p%40ss@db:5432/app_test?sslmode=disable"},
		{name: "space escaped", admin: "postgres://u@h/postgres", db: "a b", want: "postgres://u@h/a%20b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (&Postgres{AdminURL: tt.admin}).DatabaseURL(tt.db); got != tt.want {
				t.Errorf("DatabaseURL(%q) = %q, want %q", tt.db, got, tt.want)
			}
		})
	}
}

func TestReachable(t *testing.T) {
	if Reachable(t.Context(), fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", freePort(t))) {
		t.Error("Reachable on a closed port = true")
	}
}

func TestPrivatePostgres(t *testing.T) {
	skipWithoutPGTools(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	opts := PostgresOptions{DataDir: filepath.Join(postgresTempDir(t), "pg"), Port: freePort(t)}

	pg, err := startPrivatePostgres(ctx, opts, testLogger(t))
	if err != nil {
		t.Fatalf("startPrivatePostgres: %v", err)
	}
	t.Cleanup(func() { _ = pg.Stop() })
	if !pg.Private {
		t.Error("Private = false")
	}
	if !Reachable(ctx, pg.AdminURL) {
		t.Fatalf("private cluster at %s does not answer", pg.AdminURL)
	}
	for _, f := range []string{"data/PG_VERSION", "postgres.log"} {
		if _, err := os.Stat(filepath.Join(opts.DataDir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}

	// A second call reuses the running cluster and must not stop it.
	again, err := startPrivatePostgres(ctx, opts, testLogger(t))
	if err != nil {
		t.Fatalf("second startPrivatePostgres: %v", err)
	}
	if err := again.Stop(); err != nil {
		t.Fatalf("Stop of reused cluster: %v", err)
	}
	if !Reachable(ctx, pg.AdminURL) {
		t.Fatal("reused cluster's Stop stopped the server")
	}

	if err := CreateDatabase(ctx, pg.AdminURL, "paygate_private"); err != nil {
		t.Fatalf("CreateDatabase: %v", err)
	}
	if err := pg.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := pg.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if Reachable(ctx, pg.AdminURL) {
		t.Error("private cluster still answers after Stop")
	}

	// Restarting an existing cluster skips initdb and keeps its data.
	restarted, err := startPrivatePostgres(ctx, opts, testLogger(t))
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	defer restarted.Stop()
	if !databaseExists(t, restarted.AdminURL, "paygate_private") {
		t.Error("database lost across restart")
	}
	if err := restarted.Stop(); err != nil {
		t.Fatalf("Stop after restart: %v", err)
	}
}

func TestEnsurePostgresBadDatabaseURL(t *testing.T) {
	tests := []struct {
		name    string
		env     string
		wantErr string
	}{
		{name: "not a url", env: "host=localhost user=x", wantErr: "postgres:// URL"},
		{name: "nobody answers", env: fmt.Sprintf("postgres://x@127.0.0.1:%d/app?sslmode=disable", freePort(t)), wantErr: "does not answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DATABASE_URL", tt.env)
			_, err := EnsurePostgres(t.Context(), PostgresOptions{DataDir: t.TempDir()}, nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

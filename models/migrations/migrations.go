// Package migrations keeps the database schema: numbered SQL files embedded
// in the binary (0001_baseline.sql, 0002_...), each applied once, in order,
// in its own transaction, by `paygate migrate` (Up). The gateway's processes
// only check that the database is at the version they were built for
// (Check); they never change the schema themselves.
//
// An applied migration is never edited: a change to the schema is a new
// file with the next number. Up refuses a database whose record of an
// applied migration differs from the file, or that records a migration
// this binary does not have.
package migrations

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed *.sql
var files embed.FS

// Migration is one numbered SQL file.
type Migration struct {
	Version int
	// Name is the file's name, such as 0001_baseline.sql.
	Name string
	SQL  string
	// Checksum is the hex SHA-256 of the file, recorded when it is applied.
	Checksum string
}

// Reasons a database is refused. Check and Up wrap them with the versions.
var (
	// ErrBehind: the database lacks migrations this binary needs.
	ErrBehind = errors.New("database schema is behind this paygate")
	// ErrAhead: the database records a migration this binary does not
	// have, made by a newer paygate.
	ErrAhead = errors.New("database schema is newer than this paygate")
	// ErrEdited: an applied migration's file has changed since.
	ErrEdited = errors.New("an applied migration differs from this paygate's file")
)

// Table records the applied migrations.
const Table = "schema_migrations"

// lockKey names the session-level advisory lock that serialises `paygate
// migrate` runs on one database; its bytes spell "paygatem". Any constant
// works as long as nothing else in the database takes the same lock.
const lockKey int64 = 0x7061796761746d

// lockTimeout bounds how long one migration waits for a table lock: a
// long transaction holding a table must fail the migration with a clear
// error, not queue every query of the running gateway behind it.
const lockTimeout = "10s"

// All returns the embedded migrations in order. The files must be named
// NNNN_name.sql and numbered 1, 2, 3... without gaps.
var All = sync.OnceValues(func() ([]Migration, error) { return load(files) })

func load(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var out []Migration
	for _, name := range names {
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 || len(num) != 4 {
			return nil, fmt.Errorf("migration %s: want a name such as 0001_baseline.sql", name)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		sum := sha256.Sum256(b)
		out = append(out, Migration{Version: v, Name: name, SQL: string(b), Checksum: hex.EncodeToString(sum[:])})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: want version %d (versions run 1, 2, 3... without gaps or repeats)", m.Name, i+1)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no migrations embedded")
	}
	return out, nil
}

// Latest is the version this binary brings a database to.
func Latest() int {
	ms, err := All()
	if err != nil {
		return 0
	}
	return len(ms)
}

// applied is one row of the schema_migrations table.
type applied struct {
	version  int
	name     string
	checksum string
}

// Version returns the database's schema version: the highest applied
// migration, 0 when none is (no schema_migrations table).
func Version(ctx context.Context, db *sql.DB) (int, error) {
	rows, err := readApplied(ctx, db)
	if err != nil {
		return 0, err
	}
	if len(rows) == 0 {
		return 0, nil
	}
	return rows[len(rows)-1].version, nil
}

// Check returns nil when the database is exactly at this binary's version
// with the same migrations applied; otherwise an error wrapping ErrBehind,
// ErrAhead or ErrEdited that says what to do.
func Check(ctx context.Context, db *sql.DB) error {
	ms, err := All()
	if err != nil {
		return err
	}
	rows, err := readApplied(ctx, db)
	if err != nil {
		return err
	}
	pending, err := compare(ms, rows)
	if err != nil {
		return err
	}
	if len(pending) > 0 {
		if len(rows) == 0 {
			return fmt.Errorf("%w: the database has no schema version, this paygate needs version %d: run `paygate migrate` first",
				ErrBehind, len(ms))
		}
		return fmt.Errorf("%w: the database is at version %d, this paygate needs %d: run `paygate migrate` first",
			ErrBehind, rows[len(rows)-1].version, len(ms))
	}
	return nil
}

// compare checks the applied rows against the migrations and returns the
// migrations still to apply.
func compare(ms []Migration, rows []applied) ([]Migration, error) {
	for _, r := range rows {
		if r.version < 1 || r.version > len(ms) {
			return nil, fmt.Errorf("%w: the database records migration %d (%s), this paygate knows versions 1 to %d: "+
				"run the paygate release that made it, or a newer one", ErrAhead, r.version, r.name, len(ms))
		}
		m := ms[r.version-1]
		if r.checksum != m.Checksum {
			return nil, fmt.Errorf("%w: migration %d was applied as %s (sha256 %s), this paygate has %s (sha256 %s); "+
				"never edit an applied migration, add a new one", ErrEdited, r.version, r.name, short(r.checksum), m.Name, short(m.Checksum))
		}
	}
	var pending []Migration
	for _, m := range ms {
		if !slices.ContainsFunc(rows, func(r applied) bool { return r.version == m.Version }) {
			pending = append(pending, m)
		}
	}
	return pending, nil
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

// querier is what readApplied needs of a *sql.DB or *sql.Conn.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readApplied returns the applied migrations in version order; none when
// the table does not exist yet.
func readApplied(ctx context.Context, q querier) ([]applied, error) {
	var exists bool
	if err := q.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, Table).Scan(&exists); err != nil {
		return nil, fmt.Errorf("read schema version: %w", err)
	}
	if !exists {
		return nil, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT version, name, checksum FROM `+Table+` ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("read schema version: %w", err)
	}
	defer rows.Close()
	var out []applied
	for rows.Next() {
		var r applied
		if err := rows.Scan(&r.version, &r.name, &r.checksum); err != nil {
			return nil, fmt.Errorf("read schema version: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read schema version: %w", err)
	}
	return out, nil
}

// Up applies the migrations the database lacks, in order, each in its own
// transaction together with its row in schema_migrations, and returns the
// versions it applied (none when the database was up to date). It holds a
// Postgres advisory lock meanwhile, so runs that start together take
// turns: the later one finds the work done. A database that records a
// migration this binary does not have, or one whose file has changed, is
// refused before anything is applied.
func Up(ctx context.Context, db *sql.DB, logger *slog.Logger) ([]int, error) {
	ms, err := All()
	if err != nil {
		return nil, err
	}
	return up(ctx, db, ms, logger)
}

func up(ctx context.Context, db *sql.DB, ms []Migration, logger *slog.Logger) (done []int, err error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	// A session-level lock: it outlives each migration's transaction and
	// goes with the session if this process dies.
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, lockKey); err != nil {
		return nil, fmt.Errorf("migrate: take the migration lock: %w", err)
	}
	defer func() {
		// The connection goes back to the pool: it must not keep the
		// lock. When unlocking fails, the connection is discarded instead,
		// which ends the session and so the lock.
		if _, uerr := conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lockKey); uerr != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+Table+` (
	version    integer     PRIMARY KEY,
	name       text        NOT NULL,
	checksum   text        NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`); err != nil {
		return nil, fmt.Errorf("migrate: create %s: %w", Table, err)
	}
	rows, err := readApplied(ctx, conn)
	if err != nil {
		return nil, err
	}
	pending, err := compare(ms, rows)
	if err != nil {
		return nil, err
	}
	for _, m := range pending {
		start := time.Now()
		if err := apply(ctx, conn, m); err != nil {
			return done, err
		}
		done = append(done, m.Version)
		logger.Info("migration applied", "version", m.Version, "name", m.Name, "took", time.Since(start).Round(time.Millisecond))
	}
	return done, nil
}

// apply runs one migration and records it in one transaction: either both
// happen or neither does.
func apply(ctx context.Context, conn *sql.Conn, m Migration) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `SET LOCAL lock_timeout = '`+lockTimeout+`'`); err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	// No arguments: the driver sends the file as one simple-protocol
	// query, so a file may hold many statements.
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+Table+` (version, name, checksum) VALUES ($1, $2, $3)`,
		m.Version, m.Name, m.Checksum); err != nil {
		return fmt.Errorf("migration %s: record it: %w", m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migration %s: commit: %w", m.Name, err)
	}
	return nil
}

package migrations

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/paygate/paygate/internal/dev/devenv"
	"github.com/paygate/paygate/models"
)

// newDB creates an empty database of its own on a real Postgres server
// (DATABASE_URL, 127.0.0.1:5432 or the dev cluster under .data/), dropped
// when the test ends, and returns its URL.
func newDB(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	logger := slog.New(slog.DiscardHandler)
	pg, err := devenv.EnsurePostgres(ctx, devenv.PostgresOptions{DataDir: filepath.Join("..", "..", ".data", "postgres")}, logger)
	if err != nil {
		t.Skipf("no postgres server: %v", err)
	}
	t.Cleanup(func() { _ = pg.Stop() })
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "paygate_migrations_" + hex.EncodeToString(b)
	if err := devenv.CreateDatabase(ctx, pg.AdminURL, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := devenv.DropDatabase(context.Background(), pg.AdminURL, name); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	return pg.DatabaseURL(name)
}

// open opens url with database/sql; closed when the test ends (before the
// database is dropped).
func open(t *testing.T, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// openGorm opens url as the gateway does.
func openGorm(t *testing.T, url string) *gorm.DB {
	t.Helper()
	db, err := models.Open(t.Context(), url, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			_ = sqlDB.Close()
		}
	})
	return db
}

// legacyDDL is how the releases before versioned migrations made the
// tables that are not gorm models of models.All(): models.MigrateNodeLeases
// and models.MigrateReplays, word for word.
var legacyDDL = []string{
	`CREATE TABLE IF NOT EXISTS node_leases (
	node        integer PRIMARY KEY CHECK (node BETWEEN 0 AND 1023),
	holder      text NOT NULL,
	acquired_at timestamptz NOT NULL,
	expires_at  timestamptz NOT NULL
)`,
	`CREATE TABLE IF NOT EXISTS replay_entries (
	scope         text NOT NULL,
	operation     text NOT NULL,
	key           text NOT NULL,
	fingerprint   text NOT NULL,
	state         text NOT NULL CHECK (state IN ('in_progress', 'done')),
	claim         text NOT NULL,
	claimed_until timestamptz NOT NULL,
	status        integer NOT NULL DEFAULT 0,
	content_type  text NOT NULL DEFAULT '',
	body          bytea,
	result_code   text NOT NULL DEFAULT '',
	strong        boolean NOT NULL DEFAULT false,
	created_at    timestamptz NOT NULL,
	expires_at    timestamptz NOT NULL,
	PRIMARY KEY (scope, operation, key)
)`,
	`CREATE INDEX IF NOT EXISTS idx_replay_entries_expires_at ON replay_entries (expires_at)`,
	`CREATE TABLE IF NOT EXISTS signature_nonces (
	account_id text NOT NULL,
	nonce      text NOT NULL,
	expires_at timestamptz NOT NULL,
	PRIMARY KEY (account_id, nonce)
)`,
	`CREATE INDEX IF NOT EXISTS idx_signature_nonces_expires_at ON signature_nonces (expires_at)`,
}

// legacyMigrate prepares a database the old way: gorm's AutoMigrate of
// every model, then the hand-made tables.
func legacyMigrate(t *testing.T, url string) {
	t.Helper()
	db := openGorm(t, url)
	if err := db.AutoMigrate(models.All()...); err != nil {
		t.Fatalf("AutoMigrate: %v", err)
	}
	for _, stmt := range legacyDDL {
		if err := db.Exec(stmt).Error; err != nil {
			t.Fatalf("legacy DDL: %v", err)
		}
	}
}

// catalogQueries describe a schema as sorted lines, leaving out
// schema_migrations: the columns with their types, nullability and
// defaults (not their order, which ALTER TABLE ADD COLUMN cannot choose),
// every index with its definition, every constraint with its definition,
// and the sequences.
var catalogQueries = []string{
	`SELECT format('column %s.%s %s(%s,%s,%s) nullable=%s default=%s', table_name, column_name, data_type,
		character_maximum_length, numeric_precision, numeric_scale, is_nullable, column_default)
	FROM information_schema.columns WHERE table_schema = current_schema() AND table_name <> 'schema_migrations'`,
	`SELECT format('index %s', indexdef) FROM pg_indexes
	WHERE schemaname = current_schema() AND tablename <> 'schema_migrations'`,
	`SELECT format('constraint %s %s %s', conrelid::regclass, conname, pg_get_constraintdef(oid)) FROM pg_constraint
	WHERE connamespace = current_schema()::regnamespace AND conrelid::regclass::text <> 'schema_migrations'`,
	`SELECT format('sequence %s %s start=%s increment=%s min=%s max=%s cycle=%s owned_by=%s', s.sequence_name, s.data_type,
		s.start_value, s.increment, s.minimum_value, s.maximum_value, s.cycle_option,
		(SELECT d.refobjid::regclass || '.' || a.attname FROM pg_depend d
		 JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
		 WHERE d.objid = (quote_ident(s.sequence_name))::regclass AND d.deptype = 'a'))
	FROM information_schema.sequences s WHERE s.sequence_schema = current_schema()`,
	`SELECT format('table %s', table_name) FROM information_schema.tables
	WHERE table_schema = current_schema() AND table_name <> 'schema_migrations'`,
}

// catalog returns the schema of the database at url as sorted lines.
func catalog(t *testing.T, url string) []string {
	t.Helper()
	db := open(t, url)
	var out []string
	for _, q := range catalogQueries {
		rows, err := db.QueryContext(t.Context(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			out = append(out, line)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	slices.Sort(out)
	return out
}

// diffLines names the lines only one of two sorted lists has.
func diffLines(want, got []string) string {
	var b strings.Builder
	for _, l := range want {
		if _, found := slices.BinarySearch(got, l); !found {
			fmt.Fprintf(&b, "\n  missing: %s", l)
		}
	}
	for _, l := range got {
		if _, found := slices.BinarySearch(want, l); !found {
			fmt.Fprintf(&b, "\n  extra:   %s", l)
		}
	}
	return b.String()
}

// ddlRecorder is a gorm logger that keeps the schema-changing statements
// gorm runs.
type ddlRecorder struct {
	mu   sync.Mutex
	ddl  []string
	errs []error
}

func (r *ddlRecorder) LogMode(gormlogger.LogLevel) gormlogger.Interface { return r }
func (r *ddlRecorder) Info(context.Context, string, ...any)             {}
func (r *ddlRecorder) Warn(context.Context, string, ...any)             {}
func (r *ddlRecorder) Error(context.Context, string, ...any)            {}
func (r *ddlRecorder) Trace(_ context.Context, _ time.Time, fc func() (string, int64), err error) {
	stmt, _ := fc()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s: %w", stmt, err))
	}
	switch strings.ToUpper(strings.Fields(stmt + " x")[0]) {
	case "CREATE", "ALTER", "DROP", "COMMENT":
		r.ddl = append(r.ddl, stmt)
	}
}

// TestBaselineIsTheModelsSchema proves the migrations make the schema the
// gateway's code expects: the same catalog as a database made the old way
// (gorm's AutoMigrate of models.All() and the hand-made tables), and a
// schema in which gorm's AutoMigrate finds nothing to change.
func TestBaselineIsTheModelsSchema(t *testing.T) {
	migrated, legacy := newDB(t), newDB(t)
	if _, err := Up(t.Context(), open(t, migrated), nil); err != nil {
		t.Fatalf("Up: %v", err)
	}
	legacyMigrate(t, legacy)

	want, got := catalog(t, legacy), catalog(t, migrated)
	if d := diffLines(want, got); d != "" {
		t.Errorf("the migrated schema differs from the one AutoMigrate makes:%s", d)
	}

	// gorm's own view: every model's table, columns and indexes exist,
	// and AutoMigrate has nothing to create or alter.
	db := openGorm(t, migrated)
	rec := &ddlRecorder{}
	gdb := db.Session(&gorm.Session{Logger: rec})
	for _, m := range append(models.All(), &models.NodeLease{}, &models.ReplayEntry{}, &models.SignatureNonce{}) {
		stmt := &gorm.Statement{DB: gdb}
		if err := stmt.Parse(m); err != nil {
			t.Fatal(err)
		}
		if !gdb.Migrator().HasTable(m) {
			t.Errorf("no table %s", stmt.Schema.Table)
			continue
		}
		for _, f := range stmt.Schema.Fields {
			if f.DBName != "" && !gdb.Migrator().HasColumn(m, f.DBName) {
				t.Errorf("%s: no column %s", stmt.Schema.Table, f.DBName)
			}
		}
		for _, idx := range stmt.Schema.ParseIndexes() {
			if !gdb.Migrator().HasIndex(m, idx.Name) {
				t.Errorf("%s: no index %s", stmt.Schema.Table, idx.Name)
			}
		}
	}
	if err := gdb.AutoMigrate(models.All()...); err != nil {
		t.Fatalf("AutoMigrate over the migrated schema: %v", err)
	}
	if len(rec.ddl) > 0 {
		t.Errorf("AutoMigrate would still change the migrated schema:\n  %s", strings.Join(rec.ddl, "\n  "))
	}
	if d := diffLines(got, catalog(t, migrated)); d != "" {
		t.Errorf("AutoMigrate changed the migrated schema:%s", d)
	}
}

// TestUpAdoptsALegacyDatabase: a database an older release made with
// AutoMigrate is brought under versioned migrations without a change.
func TestUpAdoptsALegacyDatabase(t *testing.T) {
	url := newDB(t)
	legacyMigrate(t, url)
	before := catalog(t, url)
	db := open(t, url)
	if err := Check(t.Context(), db); !errors.Is(err, ErrBehind) {
		t.Fatalf("Check before migrating = %v, want ErrBehind", err)
	}
	done, err := Up(t.Context(), db, nil)
	if err != nil {
		t.Fatalf("Up: %v", err)
	}
	if len(done) != Latest() {
		t.Errorf("applied %v, want all %d", done, Latest())
	}
	if d := diffLines(before, catalog(t, url)); d != "" {
		t.Errorf("adopting changed the schema:%s", d)
	}
	if err := Check(t.Context(), db); err != nil {
		t.Errorf("Check after migrating: %v", err)
	}
}

func TestUpTwiceIsANoOp(t *testing.T) {
	url := newDB(t)
	db := open(t, url)
	first, err := Up(t.Context(), db, nil)
	if err != nil {
		t.Fatalf("first Up: %v", err)
	}
	if len(first) != Latest() {
		t.Errorf("first Up applied %v, want versions 1 to %d", first, Latest())
	}
	before := catalog(t, url)
	second, err := Up(t.Context(), db, nil)
	if err != nil {
		t.Fatalf("second Up: %v", err)
	}
	if len(second) != 0 {
		t.Errorf("second Up applied %v, want nothing", second)
	}
	if d := diffLines(before, catalog(t, url)); d != "" {
		t.Errorf("second Up changed the schema:%s", d)
	}
	if v, err := Version(t.Context(), db); err != nil || v != Latest() {
		t.Errorf("Version() = %d, %v; want %d", v, err, Latest())
	}
}

// TestConcurrentUpAppliesOnce runs several migrate processes at once (each
// with its own connection pool): the advisory lock lets one apply every
// migration and the others find nothing left.
func TestConcurrentUpAppliesOnce(t *testing.T) {
	url := newDB(t)
	const runs = 4
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		all  []int
		errs []error
	)
	start := make(chan struct{})
	for range runs {
		db := open(t, url)
		wg.Go(func() {
			<-start
			done, err := Up(t.Context(), db, nil)
			mu.Lock()
			defer mu.Unlock()
			all = append(all, done...)
			if err != nil {
				errs = append(errs, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Up: %v", err)
	}
	slices.Sort(all)
	want := make([]int, Latest())
	for i := range want {
		want[i] = i + 1
	}
	if !slices.Equal(all, want) {
		t.Errorf("versions applied over all runs = %v, want each of %v once", all, want)
	}
	var n int
	if err := open(t, url).QueryRowContext(t.Context(), `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != Latest() {
		t.Errorf("schema_migrations has %d rows (%v), want %d", n, err, Latest())
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	url := newDB(t)
	db := open(t, url)
	if _, err := Up(t.Context(), db, nil); err != nil {
		t.Fatal(err)
	}
	newer := Latest() + 1
	if _, err := db.ExecContext(t.Context(), `INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, 'x')`,
		newer, fmt.Sprintf("%04d_from_the_future.sql", newer)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"Up", func() error { _, err := Up(t.Context(), db, nil); return err }},
		{"Check", func() error { return Check(t.Context(), db) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			if !errors.Is(err, ErrAhead) {
				t.Fatalf("%s = %v, want ErrAhead", c.name, err)
			}
			if !strings.Contains(err.Error(), "from_the_future") {
				t.Errorf("the error %q does not name the unknown migration", err)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	url := newDB(t)
	db := open(t, url)
	if err := Check(t.Context(), db); !errors.Is(err, ErrBehind) || !strings.Contains(err.Error(), "paygate migrate") {
		t.Errorf("Check on an empty database = %v, want ErrBehind saying to run paygate migrate", err)
	}
	ms, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up(t.Context(), db, ms[:1], nil); err != nil {
		t.Fatal(err)
	}
	if err := Check(t.Context(), db); !errors.Is(err, ErrBehind) {
		t.Errorf("Check part way = %v, want ErrBehind", err)
	}
	if _, err := Up(t.Context(), db, nil); err != nil {
		t.Fatal(err)
	}
	if err := Check(t.Context(), db); err != nil {
		t.Errorf("Check when up to date = %v", err)
	}
	if _, err := db.ExecContext(t.Context(), `UPDATE schema_migrations SET checksum = 'edited' WHERE version = 1`); err != nil {
		t.Fatal(err)
	}
	if err := Check(t.Context(), db); !errors.Is(err, ErrEdited) {
		t.Errorf("Check with an edited migration = %v, want ErrEdited", err)
	}
	if _, err := Up(t.Context(), db, nil); !errors.Is(err, ErrEdited) {
		t.Errorf("Up with an edited migration = %v, want ErrEdited", err)
	}
}

// TestFailedMigrationLeavesNoTrace: a migration that fails half way is
// rolled back with its record, and those before it stay applied.
func TestFailedMigrationLeavesNoTrace(t *testing.T) {
	url := newDB(t)
	db := open(t, url)
	ms := []Migration{
		{Version: 1, Name: "0001_a.sql", SQL: `CREATE TABLE a (id integer)`, Checksum: "1"},
		{Version: 2, Name: "0002_b.sql", SQL: `CREATE TABLE b (id integer); SELECT 1/0;`, Checksum: "2"},
	}
	done, err := up(t.Context(), db, ms, nil)
	if err == nil || !strings.Contains(err.Error(), "0002_b.sql") {
		t.Fatalf("up() error = %v, want one naming 0002_b.sql", err)
	}
	if !slices.Equal(done, []int{1}) {
		t.Errorf("applied %v, want [1]", done)
	}
	var a, b bool
	if err := db.QueryRowContext(t.Context(), `SELECT to_regclass('a') IS NOT NULL, to_regclass('b') IS NOT NULL`).Scan(&a, &b); err != nil {
		t.Fatal(err)
	}
	if !a || b {
		t.Errorf("table a exists %v (want true), table b exists %v (want false)", a, b)
	}
	if v, err := Version(t.Context(), db); err != nil || v != 1 {
		t.Errorf("Version() = %d, %v; want 1", v, err)
	}
}

// TestRefundColumnsHoldTheWorkflowsValues: the 10,000th refund of an
// order (a 25-character reference) and an acquirer's long refund id are
// written, not refused (a refused write was retried without end).
func TestRefundColumnsHoldTheWorkflowsValues(t *testing.T) {
	url := newDB(t)
	if _, err := Up(t.Context(), open(t, url), nil); err != nil {
		t.Fatal(err)
	}
	db := openGorm(t, url)
	tests := []struct {
		name, reference, acquirerRef string
	}{
		{"the 99th refund", "1234567890123456789-99", "re_1"},
		{"the 10,000th refund", "1234567890123456789-10000", "re_2"},
		{"a 1,000-character acquirer id", "1234567890123456789-10001", strings.Repeat("r", 1000)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := models.SaveRefund(t.Context(), db, &models.Refund{RefundReferenceID: tc.reference,
				TransactionID: "1234567890123456789", MerchantID: "M", AccountID: "A", OrderNo: "O", Currency: "USD",
				Amount: 1, Status: "succeeded", ResultCode: "0000", ResultMessage: "Success", AcquirerRef: tc.acquirerRef})
			if err != nil {
				t.Errorf("save refund: %v", err)
			}
		})
	}
}

// TestPayoutModeFromTheAccount: migration 0013 gives every payout made
// before it the mode of its account, so a re-run of an old test payout
// goes to the simulated rail.
func TestPayoutModeFromTheAccount(t *testing.T) {
	url := newDB(t)
	db := open(t, url)
	ms, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up(t.Context(), db, ms[:12], nil); err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct{ id, mode string }{{"A-TEST", "test"}, {"A-LIVE", "live"}} {
		if _, err := db.ExecContext(t.Context(), `INSERT INTO accounts (id, merchant_id, name, sign_key_id, sign_key_sealed,
			allowed_query_ips, currencies, amount_limits, mode) VALUES ($1, 'M', 'n', 'k1', '\x00', '[]', '[]', '{}', $2)`, a.id, a.mode); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(t.Context(), `INSERT INTO payouts (id, merchant_id, account_id, request_id, transaction_id,
			short_reference_id, status, payment_currency, payment_amount, source_currency, request, created_at, updated_at)
			VALUES ('payout/M/'||$1, 'M', $1, $1, substr(md5($1), 1, 19), substr(md5($1), 1, 15), 'FAILED', 'USD', 100, 'USD', '{}', now(), now())`, a.id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Up(t.Context(), db, nil); err != nil {
		t.Fatal(err)
	}
	for account, want := range map[string]string{"A-TEST": "test", "A-LIVE": "live"} {
		var mode string
		if err := db.QueryRowContext(t.Context(), `SELECT mode FROM payouts WHERE account_id = $1`, account).Scan(&mode); err != nil || mode != want {
			t.Errorf("payout of %s: mode %q (%v), want %s", account, mode, err, want)
		}
	}
}

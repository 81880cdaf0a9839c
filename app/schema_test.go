package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/dev/devenv"
	"github.com/paygate/paygate/internal/domain/keyring"
	"github.com/paygate/paygate/models/migrations"
)

// emptyDatabase returns the URL of an empty database of its own on a real
// Postgres server, dropped when the test ends.
func emptyDatabase(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Postgres")
	}
	ctx := t.Context()
	pg, err := devenv.EnsurePostgres(ctx, devenv.PostgresOptions{DataDir: filepath.Join("..", ".data", "postgres")}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Skipf("no postgres server: %v", err)
	}
	t.Cleanup(func() { _ = pg.Stop() })
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "paygate_schema_" + hex.EncodeToString(b)
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

// TestOpenWantsAMigratedDatabase: the gateway's processes never change the
// schema; on a database `paygate migrate` has not brought to their version
// they refuse to start and say what to run.
func TestOpenWantsAMigratedDatabase(t *testing.T) {
	url := emptyDatabase(t)
	ctx := t.Context()
	logger := slog.New(slog.DiscardHandler)
	spec, err := keyring.GenerateSpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{DatabaseURL: url, Keyring: spec, FingerprintKey: base64.StdEncoding.EncodeToString(make([]byte, 32))}

	_, err = Open(ctx, cfg, logger, false)
	if !errors.Is(err, migrations.ErrBehind) || !strings.Contains(err.Error(), "paygate migrate") {
		t.Fatalf("Open on an empty database = %v, want ErrBehind saying to run paygate migrate", err)
	}

	for _, run := range []string{"first", "second"} {
		v, err := Migrate(ctx, url, logger)
		if err != nil || v != migrations.Latest() {
			t.Fatalf("%s Migrate = %d, %v; want version %d", run, v, err, migrations.Latest())
		}
	}
	g, err := Open(ctx, cfg, logger, false)
	if err != nil {
		t.Fatalf("Open after Migrate: %v", err)
	}
	g.Close()
}

func TestMigrateWantsADatabase(t *testing.T) {
	if _, err := Migrate(t.Context(), "", slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Errorf("Migrate without a URL = %v, want an error naming DATABASE_URL", err)
	}
}

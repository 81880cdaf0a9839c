// Package testdb gives a test a database of its own on a real Postgres
// server: created fresh, migrated to the current schema, with personal data
// sealing installed, and dropped when the test ends.
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/dev/devenv"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/models/migrations"
)

// Open returns a migrated database named prefix and a random suffix on the
// Postgres server DATABASE_URL names, 127.0.0.1:5432, or the repository's
// dev cluster under .data/postgres. Without a server the test is skipped.
func Open(tb testing.TB, prefix string) *gorm.DB {
	tb.Helper()
	ctx := tb.Context()
	logger := slog.New(slog.DiscardHandler)
	pg, err := devenv.EnsurePostgres(ctx, devenv.PostgresOptions{DataDir: filepath.Join(repoRoot(tb), ".data", "postgres")}, logger)
	if err != nil {
		tb.Skipf("no postgres server: %v", err)
	}
	tb.Cleanup(func() { _ = pg.Stop() })
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := prefix + hex.EncodeToString(b)
	if err := devenv.CreateDatabase(ctx, pg.AdminURL, name); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := devenv.DropDatabase(context.Background(), pg.AdminURL, name); err != nil {
			tb.Errorf("drop %s: %v", name, err)
		}
	})
	db, err := models.Open(ctx, pg.DatabaseURL(name), logger)
	if err != nil {
		tb.Fatal(err)
	}
	if err := models.ProtectForTest(db); err != nil {
		tb.Fatal(err)
	}
	// Closed before the drop above runs: cleanups run last first.
	tb.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			_ = sqlDB.Close()
		}
	})
	sqlDB, err := db.DB()
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := migrations.Up(ctx, sqlDB, nil); err != nil {
		tb.Fatal(err)
	}
	return db
}

// repoRoot is the directory of the module's go.mod, above the test's.
func repoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/models/migrations"
)

// Migrate brings the database at databaseURL to this binary's schema
// version (models/migrations): `paygate migrate` runs it once per release,
// before the new serve and worker processes start; `paygate dev` and the
// integration tests run it themselves. Concurrent runs are safe: they take
// turns on an advisory lock and the later ones find nothing to do. It
// returns the schema version the database is at.
func Migrate(ctx context.Context, databaseURL string, logger *slog.Logger) (int, error) {
	if databaseURL == "" {
		return 0, errors.New("DATABASE_URL is not set")
	}
	db, err := models.Open(ctx, databaseURL, logger)
	if err != nil {
		return 0, err
	}
	sqlDB, err := db.DB()
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	defer sqlDB.Close()
	done, err := migrations.Up(ctx, sqlDB, logger.With("component", "migrate"))
	if err != nil {
		return 0, err
	}
	version, err := migrations.Version(ctx, sqlDB)
	if err != nil {
		return 0, err
	}
	logger.Info("schema up to date", "version", version, "applied", len(done))
	return version, nil
}

// checkSchema refuses a database that is not at this binary's schema
// version; the error says to run `paygate migrate`.
func checkSchema(ctx context.Context, db *models.DB) error {
	sqlDB, err := db.DB()
	if err != nil {
		return fmt.Errorf("check schema: %w", err)
	}
	return migrations.Check(ctx, sqlDB)
}

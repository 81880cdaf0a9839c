package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/paygate/paygate/internal/dev/devenv"
)

// temporalOnPostgres is the PAYGATE_TEMPORAL value that runs the Temporal
// server on the gateway's Postgres instead of the dev server's SQLite file.
const temporalOnPostgres = "postgres"

// temporalProcess is the Temporal server `paygate dev` runs, whichever kind.
type temporalProcess interface {
	HostPort() string
	UIURL() string
	Stop() error
}

// startDevTemporal runs the Temporal CLI's dev server (SQLite) and the
// Temporal Web UI server beside it, installing both on first use.
func startDevTemporal(ctx context.Context, opts devenv.TemporalOptions, binDir string, logger *slog.Logger) (temporalProcess, error) {
	logger.Info("checking the Temporal CLI; the first build takes a few minutes", "version", devenv.TemporalCLIVersion)
	bin, err := devenv.EnsureTemporalCLI(ctx, binDir, logger)
	if err != nil {
		return nil, err
	}
	opts.Binary = bin
	// The Web UI runs beside the dev server, so that it sends the console's
	// cookie to the codec (devenv.EnsureTemporalUIServer).
	if opts.UIServer, err = devenv.EnsureTemporalUIServer(ctx, binDir, logger); err != nil {
		return nil, err
	}
	return devenv.StartTemporal(ctx, opts, logger)
}

// temporalDatabase names the Temporal server's database after the
// gateway's, so that two dev setups on one Postgres server keep apart.
func temporalDatabase(databaseURL string) string {
	name := "paygate"
	if u, err := url.Parse(databaseURL); err == nil && strings.Trim(u.Path, "/") != "" {
		name = strings.Trim(u.Path, "/")
	}
	return name + "_temporal"
}

// startTemporalOnPostgres runs the Temporal server and its Web UI on the
// Postgres server that holds the gateway's database (databases named after
// it: paygate_temporal and paygate_temporal_visibility for paygate), installing them on
// first use. The custom search attributes are registered by the gateway
// when it connects (app.EnsureSearchAttributes), as on a real cluster. The
// UI decodes payloads through codecEndpoint.
func startTemporalOnPostgres(ctx context.Context, binDir, dataDir, databaseURL string, port, uiPort int, codecEndpoint string, logger *slog.Logger) (temporalProcess, error) {
	logger.Info("checking the Temporal server on Postgres; the first build takes several minutes",
		"server", devenv.TemporalServerVersion, "ui", devenv.TemporalUIServerVersion)
	bins, err := devenv.EnsurePostgresTemporalBinaries(ctx, binDir, logger)
	if err != nil {
		return nil, fmt.Errorf("temporal on postgres: %w", err)
	}
	return devenv.StartTemporalOnPostgres(ctx, bins, devenv.PostgresTemporalOptions{
		DatabaseURL: databaseURL,
		Database:    temporalDatabase(databaseURL),
		Port:        port,
		UIPort:      uiPort,
		ConfigDir:   filepath.Join(dataDir, "temporal-postgres"),
		LogFile:     filepath.Join(dataDir, "temporal.log"),

		CodecEndpoint: codecEndpoint,
	}, logger)
}

package integration

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/paygate/paygate/internal/dev/devenv"
	"github.com/paygate/paygate/internal/dev/ports"
)

// startTestTemporal starts the Temporal server the suite runs on: the dev
// server on an in-memory SQLite database (the default, and CI's), or, with
// PAYGATE_TEST_TEMPORAL=postgres, the Temporal server on the suite's
// Postgres (make test-temporal-postgres). Either way its Web UI decodes
// payloads through ui's codec endpoint, and ui learns the UI's address. It
// returns the frontend's address and what stops it.
func startTestTemporal(ctx context.Context, root string, pg *devenv.Postgres, logger *slog.Logger, ui *testUI) (string, func(), error) {
	if os.Getenv("PAYGATE_TEST_TEMPORAL") == "postgres" {
		return startPostgresTemporal(ctx, root, pg, logger, ui)
	}
	bin, err := devenv.EnsureTemporalCLI(ctx, filepath.Join(root, ".bin"), logger)
	if err != nil {
		return "", nil, err
	}
	// The frontend's and the UI's ports are held for the whole run; the
	// server's state is in memory. The same tuning and codec wiring as
	// `paygate dev`: the UI server beside a headless dev server.
	uiServer, err := devenv.EnsureTemporalUIServer(ctx, filepath.Join(root, ".bin"), logger)
	if err != nil {
		return "", nil, err
	}
	held, err := ports.Reserve(2)
	if err != nil {
		return "", nil, err
	}
	server, err := devenv.StartTemporal(ctx, devenv.TemporalOptions{
		Binary: bin, Port: held.Port(0), UIPort: held.Port(1), CodecEndpoint: ui.endpoint, UIServer: uiServer,
	}, logger)
	if err != nil {
		held.Release()
		return "", nil, err
	}
	ui.url = server.UIURL()
	return server.HostPort(), func() {
		_ = server.Stop()
		held.Release()
	}, nil
}

// startPostgresTemporal runs the Temporal server and UI on databases of
// their own on the suite's Postgres, on free ports, and drops the
// databases afterwards.
func startPostgresTemporal(ctx context.Context, root string, pg *devenv.Postgres, logger *slog.Logger, ui *testUI) (string, func(), error) {
	bins, err := devenv.EnsurePostgresTemporalBinaries(ctx, filepath.Join(root, ".bin"), logger)
	if err != nil {
		return "", nil, err
	}
	held, err := devenv.ReservePostgresTemporalPorts()
	if err != nil {
		return "", nil, err
	}
	port := held.Port(0)
	db := "temporal_it_" + randomHex(6)
	dir, err := os.MkdirTemp("", "paygate-temporal-pg-")
	if err != nil {
		held.Release()
		return "", nil, err
	}
	t, err := devenv.StartTemporalOnPostgres(ctx, bins, devenv.PostgresTemporalOptions{
		DatabaseURL: pg.AdminURL, Database: db, Port: port, UIPort: port + 50, ConfigDir: dir,
		LogFile: filepath.Join(dir, "temporal.log"), CodecEndpoint: ui.endpoint,
	}, logger)
	if err != nil {
		os.RemoveAll(dir)
		held.Release()
		return "", nil, err
	}
	ui.url = t.UIURL()
	return t.HostPort(), func() {
		_ = t.Stop()
		_ = devenv.DropDatabase(context.Background(), pg.AdminURL, db)
		_ = devenv.DropDatabase(context.Background(), pg.AdminURL, db+"_visibility")
		os.RemoveAll(dir)
		held.Release()
	}, nil
}

package integration

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"go.temporal.io/sdk/testsuite"

	"github.com/paygate/paygate/internal/dev/devenv"
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
	// A start can fail for its ports (the launcher picks the frontend's, we
	// pick the UI's, and another process may take one first); the next
	// try picks new ones.
	var server *testsuite.DevServer
	var uiPort int
	for attempt := 1; ; attempt++ {
		uiPort, err = freePort()
		if err != nil {
			return "", nil, err
		}
		server, err = testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
			ExistingPath: bin,
			LogLevel:     "error",
			// The same tuning and codec wiring as `paygate dev`; here
			// with an in-memory database and free ports.
			ExtraArgs: slices.Concat(devenv.TemporalTuning, devenv.UICodecArgs(ui.endpoint)),
			EnableUI:  true,
			UIPort:    strconv.Itoa(uiPort),
			Stdout:    os.Stderr,
			Stderr:    os.Stderr,
		})
		if err == nil {
			break
		}
		if attempt == 3 {
			return "", nil, fmt.Errorf("start temporal dev server: %w", err)
		}
		logger.Warn("temporal dev server did not start; trying again", "attempt", attempt, "error", err)
	}
	host, _, _ := net.SplitHostPort(server.FrontendHostPort())
	ui.url = "http://" + net.JoinHostPort(host, strconv.Itoa(uiPort))
	return server.FrontendHostPort(), func() { _ = server.Stop() }, nil
}

// startPostgresTemporal runs the Temporal server and UI on databases of
// their own on the suite's Postgres, on free ports, and drops the
// databases afterwards.
func startPostgresTemporal(ctx context.Context, root string, pg *devenv.Postgres, logger *slog.Logger, ui *testUI) (string, func(), error) {
	bins, err := devenv.EnsurePostgresTemporalBinaries(ctx, filepath.Join(root, ".bin"), logger)
	if err != nil {
		return "", nil, err
	}
	port, err := devenv.FreePostgresTemporalPorts()
	if err != nil {
		return "", nil, err
	}
	db := "temporal_it_" + randomHex(6)
	dir, err := os.MkdirTemp("", "paygate-temporal-pg-")
	if err != nil {
		return "", nil, err
	}
	t, err := devenv.StartTemporalOnPostgres(ctx, bins, devenv.PostgresTemporalOptions{
		DatabaseURL: pg.AdminURL, Database: db, Port: port, UIPort: port + 50, ConfigDir: dir,
		LogFile: filepath.Join(dir, "temporal.log"), CodecEndpoint: ui.endpoint,
	}, logger)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	ui.url = t.UIURL()
	return t.HostPort(), func() {
		_ = t.Stop()
		_ = devenv.DropDatabase(context.Background(), pg.AdminURL, db)
		_ = devenv.DropDatabase(context.Background(), pg.AdminURL, db+"_visibility")
		os.RemoveAll(dir)
	}, nil
}

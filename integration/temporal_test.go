package integration

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"go.temporal.io/sdk/testsuite"

	"github.com/paygate/paygate/internal/dev/devenv"
)

// startTestTemporal starts the Temporal server the suite runs on: the dev
// server on an in-memory SQLite database (the default, and CI's), or, with
// PAYGATE_TEST_TEMPORAL=postgres, the Temporal server on the suite's
// Postgres (make test-temporal-postgres). It returns the frontend's address
// and what stops it.
func startTestTemporal(ctx context.Context, root string, pg *devenv.Postgres, logger *slog.Logger) (string, func(), error) {
	if os.Getenv("PAYGATE_TEST_TEMPORAL") == "postgres" {
		return startPostgresTemporal(ctx, root, pg, logger)
	}
	bin, err := devenv.EnsureTemporalCLI(ctx, filepath.Join(root, ".bin"), logger)
	if err != nil {
		return "", nil, err
	}
	server, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath: bin,
		LogLevel:     "error",
		// The same tuning as `paygate dev`; here with an in-memory
		// database, no UI and a free port.
		ExtraArgs: devenv.TemporalTuning,
		Stdout:    os.Stderr,
		Stderr:    os.Stderr,
	})
	if err != nil {
		return "", nil, fmt.Errorf("start temporal dev server: %w", err)
	}
	return server.FrontendHostPort(), func() { _ = server.Stop() }, nil
}

// startPostgresTemporal runs the Temporal server and UI on databases of
// their own on the suite's Postgres, on free ports, and drops the
// databases afterwards.
func startPostgresTemporal(ctx context.Context, root string, pg *devenv.Postgres, logger *slog.Logger) (string, func(), error) {
	bins, err := devenv.EnsurePostgresTemporalBinaries(ctx, filepath.Join(root, ".bin"), logger)
	if err != nil {
		return "", nil, err
	}
	port, err := freePortRange()
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
		LogFile: filepath.Join(dir, "temporal.log"),
	}, logger)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return t.HostPort(), func() {
		_ = t.Stop()
		_ = devenv.DropDatabase(context.Background(), pg.AdminURL, db)
		_ = devenv.DropDatabase(context.Background(), pg.AdminURL, db+"_visibility")
		os.RemoveAll(dir)
	}, nil
}

// freePortRange finds a base port p whose neighbours the server takes (p to
// p+10, p+50 for the UI, p+100 to p+106 for membership) are all free.
func freePortRange() (int, error) {
	for range 50 {
		p := 20000 + rand.IntN(20000)
		free := true
		for _, off := range []int{0, 1, 2, 6, 10, 50, 100, 101, 102, 106} {
			ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p+off)))
			if err != nil {
				free = false
				break
			}
			ln.Close()
		}
		if free {
			return p, nil
		}
	}
	return 0, fmt.Errorf("no free port range for the temporal server")
}

package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/adapters/vault"
	"github.com/paygate/paygate/internal/dev/railsim"
	"github.com/paygate/paygate/internal/dev/simbank"
	"github.com/paygate/paygate/internal/dev/simulator"
)

func runServe(ctx context.Context, logger *slog.Logger) error {
	cfg, err := gatewayConfig(app.Serve)
	if err != nil {
		return err
	}
	if cfg.Edge.EagerStart {
		cfg.TemporalIdentity = app.EagerAPIIdentity(cfg.NodeName)
	}
	metricsLn, err := listenMetrics(cfg.Telemetry.MetricsAddr)
	if err != nil {
		return err
	}
	g, err := app.Open(ctx, cfg, logger, true)
	if err != nil {
		if metricsLn != nil {
			metricsLn.Close()
		}
		return err
	}
	defer g.Close()
	if metricsLn != nil {
		serveMetrics(ctx, metricsLn, g.Metrics, always, logger.With("component", "metrics"))
	}
	if cfg.Edge.EagerStart {
		// The worker must run before the API takes a payment to it.
		w, err := g.EagerWorker()
		if err != nil {
			return err
		}
		if err := w.Start(); err != nil {
			return fmt.Errorf("start the API's worker: %w", err)
		}
		defer w.Stop()
		logger.Info("payments start eagerly on the API's own worker")
	}
	return serveHTTP(ctx, cfg.Edge.HTTPAddr, g.APIHandler(), logger.With("component", "api"))
}

func runWorker(ctx context.Context, logger *slog.Logger) error {
	cfg, err := gatewayConfig(app.Worker)
	if err != nil {
		return err
	}
	metricsLn, err := listenMetrics(cfg.Telemetry.MetricsAddr)
	if err != nil {
		return err
	}
	g, err := app.Open(ctx, cfg, logger, true)
	if err != nil {
		if metricsLn != nil {
			metricsLn.Close()
		}
		return err
	}
	defer g.Close()
	// /healthz answers 200 from the worker's start to its stop.
	var running atomic.Bool
	if metricsLn != nil {
		serveMetrics(ctx, metricsLn, g.Metrics, running.Load, logger.With("component", "metrics"))
	}
	w, err := g.NewWorker()
	if err != nil {
		return err
	}
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	running.Store(true)
	defer running.Store(false)
	logger.Info("worker started")
	if err := g.EnsurePersonalDataSchedule(ctx); err != nil {
		w.Stop()
		return err
	}
	if err := g.EnsureScheduledPayouts(ctx); err != nil {
		w.Stop()
		return err
	}
	if err := g.EnsureReconSchedules(ctx); err != nil {
		w.Stop()
		return err
	}
	go g.PruneChargeSendsEvery(ctx, time.Hour, logger.With("component", "charge-notes"))
	if cfg.Worker.VaultSweepEvery > 0 {
		// The order workflows drop each security code themselves; the sweep
		// is the net under them (see paygate vault sweep).
		go g.Vault.SweepEvery(ctx, cfg.Worker.VaultSweepEvery, vault.DefaultSweepGrace, logger.With("component", "vault-sweep"))
	}
	<-ctx.Done()
	w.Stop()
	return nil
}

// gatewayConfig reads the configuration of a gateway process and refuses
// it when a secret the process needs is missing, a default or too weak.
func gatewayConfig(p app.Process) (app.Config, error) {
	cfg, err := app.FromEnv()
	if err != nil {
		return cfg, fmt.Errorf("configuration:\n%w", err)
	}
	if err := cfg.CheckSecrets(p); err != nil {
		return cfg, fmt.Errorf("refusing to start without proper secrets (only `paygate dev` has local defaults):\n%w", err)
	}
	return cfg, nil
}

func runSimulator(ctx context.Context, logger *slog.Logger) error {
	cfg, err := app.FromEnv()
	if err != nil {
		return fmt.Errorf("configuration:\n%w", err)
	}
	// The acquirer simulator keeps its charges in a file across restarts,
	// so what was really charged can be counted after a crash.
	sim, err := simulator.Open(simulator.Options{Logger: logger.With("component", "simulator"), Secret: cfg.Connectors.ProviderSecret,
		DataPath: cfg.Dev.SimulatorDataPath, PublicURL: cfg.Dev.SimulatorPublicURL, CallbackVia: cfg.Dev.SimulatorCallbackVia,
		DisputeAfter: time.Minute, DisputeCallbackURL: cfg.Edge.PublicURL + "/v1/disputes/callback"})
	if err != nil {
		return err
	}
	defer sim.Close()
	simLn, err := listen(cfg.Dev.SimulatorAddr)
	if err != nil {
		return err
	}
	// The payout rail simulator runs beside the acquirer's, on its own
	// address, and keeps its transfers in a file across restarts.
	railLogger := logger.With("component", "rail-simulator")
	// It tells the API when a transfer moves, where the acquirer's
	// callbacks go (the API's address on the compose network, else its
	// public one), signed with the simulators' secret.
	var railCallback string
	if base := cmp.Or(cfg.Dev.SimulatorCallbackVia, cfg.Edge.PublicURL); base != "" {
		railCallback = strings.TrimSuffix(base, "/") + "/v1/payout/rail-callback"
	}
	rail, err := railsim.NewServer(railsim.Options{Logger: railLogger, DataPath: cfg.Dev.RailDataPath,
		CallbackURL: railCallback, Secret: cfg.Connectors.ProviderSecret})
	if err != nil {
		simLn.Close()
		return err
	}
	defer rail.Close()
	railLn, err := listen(cfg.Dev.RailAddr)
	if err != nil {
		simLn.Close()
		return err
	}
	// The second simulated acquirer (connector sim-bank) has its own
	// address and API.
	bankLogger := logger.With("component", "simbank")
	bank := simbank.NewServer(simbank.Options{Logger: bankLogger})
	defer bank.Close()
	bankLn, err := listen(cfg.Dev.SimBankAddr)
	if err != nil {
		simLn.Close()
		railLn.Close()
		return err
	}
	// When one server stops, the other is stopped too.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 3)
	go func() { errc <- serveOn(runCtx, simLn, sim.Handler(), logger.With("component", "simulator")) }()
	go func() { errc <- serveOn(runCtx, railLn, rail.Handler(), railLogger) }()
	go func() { errc <- serveOn(runCtx, bankLn, bank.Handler(), bankLogger) }()
	err = <-errc
	cancel()
	return errors.Join(err, <-errc, <-errc)
}

// runMigrate applies the schema migrations the database lacks. It needs
// only DATABASE_URL: no secret, no Temporal.
func runMigrate(ctx context.Context, logger *slog.Logger) error {
	cfg, err := app.FromEnv()
	if err != nil {
		return fmt.Errorf("configuration:\n%w", err)
	}
	_, err = app.Migrate(ctx, cfg.DatabaseURL, logger)
	return err
}

// listen binds addr now, so that a taken port is reported before anything
// else starts, or takes the socket `paygate dev` bound for it.
func listen(addr string) (net.Listener, error) {
	if ln, ok, err := inheritedListener(addr); ok {
		return ln, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

func serveHTTP(ctx context.Context, addr string, h http.Handler, logger *slog.Logger) error {
	ln, err := listen(addr)
	if err != nil {
		return err
	}
	return serveOn(ctx, ln, h, logger)
}

// serveOn serves until ctx ends, then shuts down gracefully.
func serveOn(ctx context.Context, ln net.Listener, h http.Handler, logger *slog.Logger) error {
	srv := app.NewHTTPServer(h)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	logger.Info("listening", "addr", ln.Addr().String())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

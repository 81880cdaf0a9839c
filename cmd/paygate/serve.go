package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/paygate/paygate/internal/app"
	simulator "github.com/paygate/paygate/internal/simulator/acquirer"
)

func runServe(ctx context.Context, logger *slog.Logger) error {
	cfg := app.FromEnv()
	g, err := app.Open(ctx, cfg, logger, true)
	if err != nil {
		return err
	}
	defer g.Close()
	return serveHTTP(ctx, cfg.HTTPAddr, g.APIHandler(), logger.With("component", "api"))
}

func runWorker(ctx context.Context, logger *slog.Logger) error {
	g, err := app.Open(ctx, app.FromEnv(), logger, true)
	if err != nil {
		return err
	}
	defer g.Close()
	w, err := g.NewWorker()
	if err != nil {
		return err
	}
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	logger.Info("worker started")
	<-ctx.Done()
	w.Stop()
	return nil
}

func runSimulator(ctx context.Context, logger *slog.Logger) error {
	sim := simulator.NewServer(simulator.Options{Logger: logger.With("component", "simulator"), Secret: app.FromEnv().ProviderSecret})
	defer sim.Close()
	return serveHTTP(ctx, app.FromEnv().SimulatorAddr, sim.Handler(), logger.With("component", "simulator"))
}

func runMigrate(ctx context.Context, logger *slog.Logger) error {
	g, err := app.Open(ctx, app.FromEnv(), logger, false)
	if err != nil {
		return err
	}
	g.Close()
	logger.Info("schema up to date")
	return nil
}

// listen binds addr now, so that a taken port is reported before anything
// else starts.
func listen(addr string) (net.Listener, error) {
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
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
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

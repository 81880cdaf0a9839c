package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/paygate/paygate/internal/adapters/telemetry"
)

// serveMetrics serves Prometheus's /metrics and a /healthz that answers 200
// while healthy() holds, on ln, until ctx ends. It is a listener of its own
// so that the metrics stay off the merchants' API.
func serveMetrics(ctx context.Context, ln net.Listener, m *telemetry.Metrics, healthy func() bool, logger *slog.Logger) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if !healthy() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	serveInBackground(ctx, ln, mux, logger, "metrics listener")
	logger.Info("metrics listener", "url", "http://"+ln.Addr().String()+"/metrics")
}

// serveInBackground serves h on ln until ctx ends: the operators' side
// listeners (metrics, profiles), whose failure is logged, not fatal.
func serveInBackground(ctx context.Context, ln net.Listener, h http.Handler, logger *slog.Logger, what string) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error(what, "error", err)
		}
	}()
}

// listenMetrics binds PAYGATE_METRICS_ADDR; "" is no listener.
func listenMetrics(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := listen(addr)
	if err != nil {
		return nil, fmt.Errorf("PAYGATE_METRICS_ADDR: %w", err)
	}
	return ln, nil
}

func always() bool { return true }

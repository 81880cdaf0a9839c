package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
)

// startDebugListener serves Go's profiles (/debug/pprof/) on addr when it is
// set (PAYGATE_DEBUG_ADDR), for as long as ctx lasts. The profiles show
// memory and goroutines, never request bodies, but they are for operators
// only: the address must be a loopback one, reached on the host or through
// an operator's tunnel. It returns the address it listens on ("" when off).
func startDebugListener(ctx context.Context, addr string, logger *slog.Logger) (string, error) {
	if addr == "" {
		return "", nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("PAYGATE_DEBUG_ADDR: %w", err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", fmt.Errorf("PAYGATE_DEBUG_ADDR %s: the debug listener takes a loopback address only", addr)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("PAYGATE_DEBUG_ADDR: %w", err)
	}
	serveInBackground(ctx, ln, mux, logger, "debug listener")
	logger.Info("debug listener (pprof)", "addr", ln.Addr().String())
	return ln.Addr().String(), nil
}

package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

func TestDebugListener(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	tests := []struct {
		name    string
		addr    string
		wantErr string
	}{
		{name: "off when unset", addr: ""},
		{name: "loopback", addr: "127.0.0.1:0"},
		{name: "every interface is refused", addr: "0.0.0.0:6060", wantErr: "loopback address only"},
		{name: "a public name is refused", addr: "example.com:6060", wantErr: "loopback address only"},
		{name: "no port", addr: "127.0.0.1", wantErr: "missing port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, err := startDebugListener(ctx, tt.addr, logger)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestDebugListenerServesProfiles(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := startDebugListener(ctx, "127.0.0.1:0", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "heap profile") {
		t.Errorf("GET heap: %d %.80s", resp.StatusCode, b)
	}
}

package app

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestNewHTTPServerLimits(t *testing.T) {
	srv := NewHTTPServer(http.NotFoundHandler())
	// The longest a handler waits: /v1/authorise and the batch operations
	// wait 60 s for a workflow's answer.
	const longestWait = 60 * time.Second
	tests := []struct {
		name string
		got  time.Duration
		ok   func(time.Duration) bool
	}{
		{"ReadHeaderTimeout set", srv.ReadHeaderTimeout, func(d time.Duration) bool { return d > 0 && d <= 30*time.Second }},
		{"ReadTimeout set and not below the header's", srv.ReadTimeout, func(d time.Duration) bool { return d >= srv.ReadHeaderTimeout }},
		{"WriteTimeout above the longest wait", srv.WriteTimeout, func(d time.Duration) bool { return d >= longestWait+15*time.Second }},
		{"IdleTimeout set", srv.IdleTimeout, func(d time.Duration) bool { return d > 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.ok(tt.got) {
				t.Errorf("%s", tt.got)
			}
		})
	}
	if srv.MaxHeaderBytes <= 0 || srv.MaxHeaderBytes >= http.DefaultMaxHeaderBytes {
		t.Errorf("MaxHeaderBytes = %d, want set below the 1 MiB default", srv.MaxHeaderBytes)
	}
}

// TestNewHTTPServerRefusesHugeHeaders serves for real: a header over the
// limit gets 431, a normal request passes.
func TestNewHTTPServerRefusesHugeHeaders(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	tests := []struct {
		name   string
		header int
		want   int
	}{
		{"normal", 100, http.StatusNoContent},
		{"over the limit", 2 * HTTPMaxHeaderBytes, http.StatusRequestHeaderFieldsTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Filler", strings.Repeat("a", tt.header))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
}

package outbound

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestBaseURL(t *testing.T) {
	tests := []struct {
		name, raw, want, err string
	}{
		{"plain", "http://127.0.0.1:8090", "http://127.0.0.1:8090", ""},
		{"trailing slashes go", "https://acquirer.example/api//", "https://acquirer.example/api", ""},
		{"not http", "ftp://acquirer.example", "", `x: base url scheme must be http or https, got "ftp"`},
		{"no host", "http:///path", "", "x: base url has no host"},
		{"user info", "https://u:p@acquirer.example", "", "x: base url must not carry user info, query or fragment"},
		{"query", "https://acquirer.example/?a=1", "", "x: base url must not carry user info, query or fragment"},
		{"unparsable", "http://[::1", "", `x: parse base url: parse "http://[::1": missing ']' in host`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := BaseURL("x", tc.raw)
			switch {
			case tc.err != "":
				if err == nil || err.Error() != tc.err {
					t.Errorf("BaseURL(%q) error = %v, want %q", tc.raw, err, tc.err)
				}
			case err != nil || u.String() != tc.want:
				t.Errorf("BaseURL(%q) = %v, %v; want %q", tc.raw, u, err, tc.want)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	if d, err := Timeout("x", 0); d != DefaultTimeout || err != nil {
		t.Errorf("Timeout(0) = %v, %v; want the default", d, err)
	}
	if d, err := Timeout("x", 3*time.Second); d != 3*time.Second || err != nil {
		t.Errorf("Timeout(3s) = %v, %v", d, err)
	}
	if _, err := Timeout("x", -time.Second); err == nil || err.Error() != "x: negative timeout -1s" {
		t.Errorf("Timeout(-1s) error = %v", err)
	}
}

var (
	errTimeout     = errors.New("timeout")
	errUnavailable = errors.New("unavailable")
	testFailures   = Failures{Timeout: errTimeout, Unavailable: errUnavailable}
)

// TestFailuresOf: only a call that provably never arrived is unavailable;
// everything else leaves the outcome unknown.
func TestFailuresOf(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want error
		text string
	}{
		{"refused connection", context.Background(), &net.OpError{Op: "dial", Err: errors.New("connection refused")}, errUnavailable,
			"charge: unavailable: cannot connect: connection refused"},
		{"unknown host", context.Background(), &net.DNSError{Err: "no such host", Name: "acquirer.invalid"}, errUnavailable,
			"charge: unavailable: cannot resolve host"},
		{"reset after sending", context.Background(), &net.OpError{Op: "read", Err: errors.New("connection reset")}, errTimeout,
			"charge: timeout: read: connection reset"},
		{"deadline", expired, errors.New("context deadline exceeded"), errTimeout, "charge: timeout: context deadline exceeded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := testFailures.Of(tc.ctx, "charge", tc.err)
			if !errors.Is(got, tc.want) || got.Error() != tc.text {
				t.Errorf("Of = %v, want %v (%q)", got, tc.want, tc.text)
			}
		})
	}
}

// TestExchange reads a real server's answer up to the limit.
func TestExchange(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte(strings.Repeat("a", 100)))
	}))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	code, body, err := testFailures.Exchange(context.Background(), srv.Client(), req, 10, "get")
	if err != nil || code != http.StatusTeapot || string(body) != strings.Repeat("a", 10) {
		t.Errorf("Exchange = %d %q %v", code, body, err)
	}
}

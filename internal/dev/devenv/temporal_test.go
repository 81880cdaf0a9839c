package devenv

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/dev/ports"
)

func TestDevServerArgs(t *testing.T) {
	tests := []struct {
		name    string
		opts    TemporalOptions
		want    []string // the arguments before the tuning flags
		wantErr bool
	}{
		{
			name: "defaults",
			opts: TemporalOptions{Binary: "/bin/temporal", DBFile: "/d/t.db"},
			want: []string{"server", "start-dev", "--ip", "127.0.0.1", "--port", "7233",
				"--http-port", "20001", "--metrics-port", "20002", "--namespace", "default",
				"--log-format", "json", "--log-level", "warn", "--dynamic-config-value", "frontend.enableServerVersionCheck=false",
				"--ui-port", "8233", "--db-filename", "/d/t.db"},
		},
		{
			name: "ui port follows port, state in memory",
			opts: TemporalOptions{Binary: "/bin/temporal", Port: 17233, Namespace: "paygate"},
			want: []string{"server", "start-dev", "--ip", "127.0.0.1", "--port", "17233",
				"--http-port", "20001", "--metrics-port", "20002", "--namespace", "paygate",
				"--log-format", "json", "--log-level", "warn", "--dynamic-config-value", "frontend.enableServerVersionCheck=false",
				"--ui-port", "18233"},
		},
		{
			name: "explicit ip and ui port, typed search attributes in order",
			opts: TemporalOptions{
				Binary: "/bin/temporal", DBFile: "t.db", IP: "0.0.0.0", Port: 7000, UIPort: 9000,
				SearchAttributes: map[string]string{"PaymentStatus": "Int", "MerchantId": "Keyword", "Note": "Text"},
			},
			want: []string{"server", "start-dev", "--ip", "0.0.0.0", "--port", "7000",
				"--http-port", "20001", "--metrics-port", "20002", "--namespace", "default",
				"--log-format", "json", "--log-level", "warn", "--dynamic-config-value", "frontend.enableServerVersionCheck=false",
				"--ui-port", "9000", "--db-filename", "t.db", "--search-attribute", "MerchantId=Keyword", "--search-attribute", "Note=Text", "--search-attribute", "PaymentStatus=Int"},
		},
		{
			name:    "unknown search attribute type",
			opts:    TemporalOptions{Binary: "/bin/temporal", DBFile: "t.db", SearchAttributes: map[string]string{"X": "Money"}},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := devServerArgs(tt.opts.withDefaults(), 20001, 20002)
			if tt.wantErr {
				if err == nil {
					t.Fatal("devServerArgs succeeded, want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := slices.Concat(tt.want, TemporalTuning); !slices.Equal(got, want) {
				t.Errorf("args =\n%q\nwant\n%q", got, want)
			}
		})
	}
}

func TestVersionMatches(t *testing.T) {
	tests := []struct {
		name   string
		output string
		want   bool
	}{
		{name: "cli output", output: "temporal version 1.5.1 (Server 1.29.1, UI 2.42.1)", want: true},
		{name: "with v prefix", output: "temporal version v1.5.1", want: true},
		{name: "other version", output: "temporal version 1.4.1 (Server 1.28.0, UI 2.41.0)", want: false},
		{name: "longer version", output: "temporal version 1.5.10", want: false},
		{name: "empty", output: "", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionMatches(tt.output, TemporalCLIVersion); got != tt.want {
				t.Errorf("versionMatches(%q) = %v, want %v", tt.output, got, tt.want)
			}
		})
	}
}

// testLogger returns a logger writing to the test's output.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// writeScript writes an executable shell script and returns its path.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTemporalCLIVersion(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		bin     string
		want    string
		wantErr bool
	}{
		{name: "reports the version", bin: writeScript(t, dir, "good", `echo "temporal version 1.5.1 (Server 1.29.1, UI 2.42.1)"`), want: TemporalCLIVersion},
		{name: "reports another version", bin: writeScript(t, dir, "old", `echo "temporal version 1.4.1"`), want: "temporal version 1.4.1"},
		{name: "fails to run", bin: writeScript(t, dir, "broken", `exit 1`), wantErr: true},
		{name: "missing", bin: filepath.Join(dir, "missing"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := temporalCLIVersion(t.Context(), tt.bin)
			if (err != nil) != tt.wantErr {
				t.Fatalf("temporalCLIVersion() error = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("temporalCLIVersion() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEnsureTemporalCLIKeepsMatchingBinary(t *testing.T) {
	dir := t.TempDir()
	want := writeScript(t, dir, "temporal", `echo "temporal version 1.5.1 (Server 1.29.1, UI 2.42.1)"`)
	got, err := EnsureTemporalCLI(t.Context(), dir, testLogger(t))
	if err != nil {
		t.Fatalf("EnsureTemporalCLI: %v", err)
	}
	if got != want {
		t.Errorf("EnsureTemporalCLI = %q, want %q", got, want)
	}
}

// freePort returns a port held for this test alone (package ports).
func freePort(t *testing.T) int {
	t.Helper()
	r, err := ports.Reserve(1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Release)
	return r.Port(0)
}

func TestStartTemporalErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port

	dir := t.TempDir()
	failing := writeScript(t, dir, "failing", `echo "boom: bad flag" >&2; exit 3`)
	tests := []struct {
		name    string
		opts    TemporalOptions
		wantErr []string
	}{
		{
			name:    "frontend port in use",
			opts:    TemporalOptions{Binary: failing, DBFile: filepath.Join(dir, "a.db"), Port: busyPort, UIPort: freePort(t)},
			wantErr: []string{"frontend port", "already in use", strconv.Itoa(busyPort)},
		},
		{
			name:    "ui port in use",
			opts:    TemporalOptions{Binary: failing, DBFile: filepath.Join(dir, "b.db"), Port: freePort(t), UIPort: busyPort},
			wantErr: []string{"UI port", "already in use"},
		},
		{
			// Reported when it happens, with the server's output.
			name: "exits early",
			opts: TemporalOptions{Binary: failing, DBFile: filepath.Join(dir, "c.db"), Port: freePort(t), UIPort: freePort(t),
				StartTimeout: 2 * time.Second},
			wantErr: []string{"exited before it came up", "exit status 3", "boom: bad flag"},
		},
		{
			name:    "missing binary",
			opts:    TemporalOptions{Binary: filepath.Join(dir, "nope"), DBFile: filepath.Join(dir, "d.db")},
			wantErr: []string{"no such file"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := StartTemporal(t.Context(), tt.opts, nil)
			if err == nil {
				_ = p.Stop()
				t.Fatal("StartTemporal succeeded, want error")
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestStartTemporal(t *testing.T) {
	bin, err := filepath.Abs(filepath.Join("..", "..", "..", ".bin", "temporal"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); errors.Is(err, os.ErrNotExist) {
		t.Skipf("no temporal CLI at %s; install it with: GOBIN=$PWD/.bin go install %s@%s", bin, TemporalCLIModule, TemporalCLIVersion)
	}
	if v, err := temporalCLIVersion(t.Context(), bin); err != nil || v != TemporalCLIVersion {
		t.Skipf("temporal CLI at %s is not a usable %s (found %q, err %v); it may still be installing", bin, TemporalCLIVersion, v, err)
	}

	dir := t.TempDir()
	opts := TemporalOptions{
		Binary:           bin,
		DBFile:           filepath.Join(dir, "state", "temporal.db"),
		Port:             freePort(t),
		UIPort:           freePort(t),
		Namespace:        "paygate-test",
		SearchAttributes: map[string]string{"PaygateStatus": "Keyword"},
		LogFile:          filepath.Join(dir, "logs", "temporal.log"),
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	p, err := StartTemporal(ctx, opts, testLogger(t))
	if err != nil {
		t.Fatalf("StartTemporal: %v", err)
	}
	t.Cleanup(func() { _ = p.Stop() })

	if want := "127.0.0.1:" + strconv.Itoa(opts.Port); p.HostPort() != want {
		t.Errorf("HostPort() = %q, want %q", p.HostPort(), want)
	}
	if want := "http://127.0.0.1:" + strconv.Itoa(opts.UIPort); p.UIURL() != want {
		t.Errorf("UIURL() = %q, want %q", p.UIURL(), want)
	}
	resp, err := http.Get(p.UIURL())
	if err != nil {
		t.Fatalf("GET UI: %v", err)
	}
	resp.Body.Close()
	if _, err := os.Stat(opts.DBFile); err != nil {
		t.Errorf("db file: %v", err)
	}
	// The pragmas travel among the arguments: in WAL mode SQLite
	// keeps a -wal file beside the database while it is open.
	if _, err := os.Stat(opts.DBFile + "-wal"); err != nil {
		t.Errorf("no WAL file, is journal_mode=wal applied? %v", err)
	}

	if err := p.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if tcpAnswers(t.Context(), p.HostPort()) {
		t.Errorf("frontend %s still answers after Stop", p.HostPort())
	}

	// A second run starts on the same database file, as `make run` does.
	again, err := StartTemporal(ctx, opts, testLogger(t))
	if err != nil {
		t.Fatalf("StartTemporal on the kept database: %v", err)
	}
	if err := again.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

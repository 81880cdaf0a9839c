package proccpu

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestParseStat: the command name and CPU time from stat lines, the name
// holding spaces and parentheses as process names may.
func TestParseStat(t *testing.T) {
	tests := []struct {
		name     string
		line     string
		wantComm string
		wantCPU  time.Duration
		wantOK   bool
	}{
		{"plain", "42 (postgres) S 1 42 42 0 -1 4194560 1200 0 0 0 250 130 0 0 20 0 1 0 100 0 0", "postgres", 380 * clockTick, true},
		{"a name with spaces and parentheses", "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1 0 0", "a (b) c", 7 * clockTick, true},
		{"cut short", "7 (temporal) S 1 7", "", 0, false},
		{"no name", "7 temporal S", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			comm, cpu, ok := parseStat([]byte(tt.line))
			if comm != tt.wantComm || cpu != tt.wantCPU || ok != tt.wantOK {
				t.Errorf("parseStat = %q, %v, %v; want %q, %v, %v", comm, cpu, ok, tt.wantComm, tt.wantCPU, tt.wantOK)
			}
		})
	}
}

// TestTake: processes are added up by the first group that matches them,
// by command name or arguments; other entries are passed over.
func TestTake(t *testing.T) {
	root := t.TempDir()
	proc := func(pid, stat, cmdline string) {
		dir := filepath.Join(root, pid)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cmdline"), []byte(cmdline), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	proc("10", "10 (postgres) S 1 1 1 0 -1 0 0 0 0 0 100 50 0 0 20 0 1 0 1 0 0", "postgres: checkpointer\x00")
	proc("11", "11 (postgres) S 1 1 1 0 -1 0 0 0 0 0 20 5 0 0 20 0 1 0 1 0 0", "postgres: paygate idle\x00")
	proc("12", "12 (paygate) S 1 1 1 0 -1 0 0 0 0 0 300 100 0 0 20 0 1 0 1 0 0", "/tmp/go-build/paygate\x00dev\x00")
	proc("13", "13 (paygate) S 1 1 1 0 -1 0 0 0 0 0 9 9 0 0 20 0 1 0 1 0 0", "/tmp/go-build/paygate\x00bench\x00")
	if err := os.MkdirAll(filepath.Join(root, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	groups := []Group{
		{"gateway", func(comm string, args []string) bool { return comm == "paygate" && len(args) > 1 && args[1] == "dev" }},
		{"postgres", ByComm("postgres")},
		{"temporal", ByComm("temporal")},
	}
	s, err := Take(root, groups)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{"gateway": 400 * clockTick, "postgres": 175 * clockTick}
	for name, cpu := range want {
		if total := Since(Sample{}, s)[name]; total != cpu {
			t.Errorf("%s: %v, want %v", name, total, cpu)
		}
	}
	if len(s["postgres"]) != 2 || len(s["gateway"]) != 1 || len(s["temporal"]) != 0 {
		t.Errorf("processes %v", s)
	}
	// Later: the gateway spent 100 ticks more; postgres backend 11 ended
	// and a new one, 14, spent 30.
	later := Sample{"gateway": {12: 500 * clockTick}, "postgres": {10: 150 * clockTick, 14: 30 * clockTick}}
	if d := Since(s, later); d["gateway"] != 100*clockTick || d["postgres"] != 30*clockTick {
		t.Errorf("since %v, want gateway 100 ticks, postgres 30", d)
	}
}

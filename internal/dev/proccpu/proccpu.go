// Package proccpu reads the CPU time processes have spent, from Linux's
// /proc, so that a benchmark can say what each process of a stack spent per
// request: the gateway, Temporal, Postgres.
package proccpu

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc's CPU times (USER_HZ), 100 on every Linux
// this runs on.
const clockTick = 10 * time.Millisecond

// Group names the processes whose CPU time is added up under one name.
type Group struct {
	Name string
	// Match reports whether a process, by its command name (comm, at most
	// 15 bytes) and arguments, belongs to the group.
	Match func(comm string, args []string) bool
}

// ByComm matches processes whose command name is one of names.
func ByComm(names ...string) func(string, []string) bool {
	return func(comm string, _ []string) bool {
		for _, n := range names {
			if comm == n {
				return true
			}
		}
		return false
	}
}

// Sample is the CPU time (user and system) each process had spent when it
// was taken, by group and process id.
type Sample map[string]map[int]time.Duration

// Take reads every process under root (/proc) and keeps the CPU time of
// those a group matches, under the first group that does.
func Take(root string, groups []Group) (Sample, error) {
	s := Sample{}
	entries, err := os.ReadDir(root)
	if err != nil {
		return s, fmt.Errorf("read %s: %w", root, err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join(root, e.Name())
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue // gone since the listing
		}
		comm, cpu, ok := parseStat(stat)
		if !ok {
			continue
		}
		raw, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		for _, g := range groups {
			if g.Match(comm, args) {
				if s[g.Name] == nil {
					s[g.Name] = map[int]time.Duration{}
				}
				s[g.Name][pid] = cpu
				break
			}
		}
	}
	return s, nil
}

// parseStat reads the command name and the user plus system CPU time from
// a /proc/<pid>/stat line. The name is in parentheses and may hold spaces
// and parentheses itself, so the fields are counted from its last ')'.
func parseStat(b []byte) (string, time.Duration, bool) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return "", 0, false
	}
	comm := string(b[open+1 : end])
	// After the name: state (field 3) ... utime is field 14, stime 15.
	fields := strings.Fields(string(b[end+1:]))
	if len(fields) < 13 {
		return "", 0, false
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return "", 0, false
	}
	return comm, time.Duration(utime+stime) * clockTick, true
}

// Since is what each group spent between two samples, process by process:
// a process that started since counts whole, one that ended since loses
// what it spent after the first sample (a pool's short-lived connections),
// which group totals alone would turn into a negative figure.
func Since(before, after Sample) map[string]time.Duration {
	out := map[string]time.Duration{}
	for name, procs := range after {
		for pid, cpu := range procs {
			out[name] += max(cpu-before[name][pid], 0)
		}
	}
	return out
}

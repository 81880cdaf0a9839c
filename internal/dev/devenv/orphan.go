package devenv

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The dev server is not asked to end with its parent (Pdeathsig): the
// kernel sends that signal when the thread that started the child ends,
// which in a Go program need not be the process ending. A `paygate dev`
// killed with SIGKILL therefore leaves the server running on its ports and
// its SQLite file. The pid file beside the database names the server this
// data directory started; the next start ends it before it begins.

// pidFile is where the dev server's process id is kept for dbFile.
func pidFile(dbFile string) string { return dbFile + ".pid" }

// reapOrphan ends a dev server a killed earlier run left on dbFile: the
// process named in the pid file, if it is still a temporal server on that
// same file. Anything else under that pid is left alone.
func reapOrphan(dbFile string, logger *slog.Logger) error {
	b, err := os.ReadFile(pidFile(dbFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read temporal pid file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return os.Remove(pidFile(dbFile))
	}
	if !isDevServerOn(pid, dbFile) {
		return os.Remove(pidFile(dbFile))
	}
	logger.Warn("ending the temporal dev server a killed run left behind", "pid", pid, "db", dbFile)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("end orphaned temporal dev server %d: %w", pid, err)
	}
	// A process's command line reads empty while it exits, before its
	// sockets are closed: wait until it is gone or a zombie.
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("orphaned temporal dev server %d did not end", pid)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return os.Remove(pidFile(dbFile))
}

// alive reports whether pid exists and has not exited.
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	f := bytes.Fields(stat[i+1:])
	return len(f) > 0 && string(f[0]) != "Z" && string(f[0]) != "X"
}

// isDevServerOn reports whether pid is a running temporal dev server on
// dbFile, by its command line.
func isDevServerOn(pid int, dbFile string) bool {
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return false
	}
	if stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat")); err == nil {
		// A zombie has exited; only its parent's wait is missing.
		if f := bytes.Fields(stat); len(f) > 2 && string(f[2]) == "Z" {
			return false
		}
	}
	args := bytes.Split(bytes.TrimRight(cmdline, "\x00"), []byte{0})
	hasStartDev, hasDB := false, false
	for _, a := range args {
		switch string(a) {
		case "start-dev":
			hasStartDev = true
		case dbFile:
			hasDB = true
		}
	}
	return hasStartDev && hasDB
}

// recordDevServer writes the pid of the dev server on dbFile.
func recordDevServer(dbFile string, pid int) error {
	return os.WriteFile(pidFile(dbFile), []byte(strconv.Itoa(pid)+"\n"), 0o644)
}

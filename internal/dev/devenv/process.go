package devenv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long Stop waits after SIGINT before it kills a process.
const stopGrace = 10 * time.Second

// Process is a local service started by this package: either a child process
// owned by this Go process (the Temporal dev server) or a daemon that is
// stopped through a command (a private Postgres cluster via pg_ctl).
type Process struct {
	name   string
	addr   string
	uiURL  string
	logger *slog.Logger

	// cmd, done, waitErr and tail are set for child processes.
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	tail    *tailBuffer
	closers []io.Closer

	// stopFn is set for daemons that are not our children.
	stopFn func() error

	stopOnce sync.Once
	stopErr  error
}

// Name returns a short human-readable name of the service.
func (p *Process) Name() string { return p.name }

// HostPort returns the host:port the service listens on, e.g. "127.0.0.1:7233".
func (p *Process) HostPort() string { return p.addr }

// UIURL returns the base URL of the service's web UI, or "" if it has none.
func (p *Process) UIURL() string { return p.uiURL }

// Stop stops the service. A child process gets SIGINT and is killed if it has
// not exited within 10s. Stop is idempotent: later calls return the result of
// the first one.
func (p *Process) Stop() error {
	if p == nil {
		return nil
	}
	p.stopOnce.Do(func() {
		if p.stopFn != nil {
			p.stopErr = p.stopFn()
			return
		}
		p.stopErr = p.stopChild()
	})
	return p.stopErr
}

// startChild starts cmd with its output going to out (which may be nil) and
// to an in-memory tail used in error messages.
func startChild(name string, cmd *exec.Cmd, out io.Writer, logger *slog.Logger) (*Process, error) {
	p := &Process{
		name:   name,
		logger: logger,
		cmd:    cmd,
		done:   make(chan struct{}),
		tail:   &tailBuffer{max: 4096},
	}
	var w io.Writer = p.tail
	if out != nil {
		w = io.MultiWriter(out, p.tail)
	}
	cmd.Stdout = w
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		for _, c := range p.closers {
			_ = c.Close()
		}
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the child process has exited.
func (p *Process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitError describes an early exit of the child, with the tail of its output.
func (p *Process) exitError() error {
	msg := fmt.Sprintf("%s exited early", p.name)
	if p.waitErr != nil {
		msg += " (" + p.waitErr.Error() + ")"
	}
	if out := bytes.TrimSpace(p.tail.Bytes()); len(out) > 0 {
		msg += "; last output:\n" + string(out)
	}
	return errors.New(msg)
}

func (p *Process) stopChild() error {
	if p.cmd == nil || p.cmd.Process == nil || p.exited() {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("interrupt %s: %w", p.name, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(stopGrace):
	}
	p.logger.Warn("process did not exit after SIGINT, killing it", "process", p.name, "grace", stopGrace)
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill %s: %w", p.name, err)
	}
	<-p.done
	return nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

// Write appends b, dropping the oldest bytes beyond the limit.
func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

// Bytes returns a copy of the buffered output.
func (t *tailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Clone(t.buf)
}

// lineLogger is an io.Writer that logs each complete line it receives.
type lineLogger struct {
	logger *slog.Logger
	msg    string
	attrs  []any
	mu     sync.Mutex
	buf    []byte
}

// Write logs every complete line in b and keeps the remainder.
func (l *lineLogger) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, b...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.emit(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
	return len(b), nil
}

// Flush logs a trailing partial line, if any.
func (l *lineLogger) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.emit(l.buf)
	l.buf = nil
}

func (l *lineLogger) emit(line []byte) {
	line = bytes.TrimRight(line, "\r")
	if len(line) == 0 {
		return
	}
	l.logger.Info(l.msg, append(append([]any{}, l.attrs...), "line", string(line))...)
}

// orDiscard returns logger, or a logger that drops everything if it is nil.
func orDiscard(logger *slog.Logger) *slog.Logger {
	if logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return logger
}

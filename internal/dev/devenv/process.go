package devenv

import (
	"bytes"
	"log/slog"
	"sync"
)

// Process is a local service this package started as a daemon that is
// stopped through a command (a private Postgres cluster via pg_ctl). The
// Temporal dev server is a TemporalServer: the SDK's launcher owns that
// child process.
type Process struct {
	name   string
	addr   string
	logger *slog.Logger

	stopFn func() error

	stopOnce sync.Once
	stopErr  error
}

// Name returns a short human-readable name of the service.
func (p *Process) Name() string { return p.name }

// HostPort returns the host:port the service listens on, e.g. "127.0.0.1:5432".
func (p *Process) HostPort() string { return p.addr }

// Stop stops the service. Stop is idempotent: later calls return the
// result of the first one.
func (p *Process) Stop() error {
	if p == nil || p.stopFn == nil {
		return nil
	}
	p.stopOnce.Do(func() { p.stopErr = p.stopFn() })
	return p.stopErr
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

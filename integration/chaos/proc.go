package chaos

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is one gateway process (api or worker) that the suite kills and
// starts again with the same command and environment.
type proc struct {
	name  string
	bin   string
	args  []string
	env   []string
	ready string // a URL answering 200 once the process is up; "" waits for readyLog
	// readyLog is a line the process logs once it is up.
	readyLog string
	log      io.Writer

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	starts int
	kills  int
}

// start runs the process and waits until it is ready.
func (p *proc) start(ctx context.Context) error {
	p.mu.Lock()
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	lines := &lineWatch{want: p.readyLog, seen: make(chan struct{}), out: p.log}
	cmd.Stdout = lines
	cmd.Stderr = lines
	if err := cmd.Start(); err != nil {
		p.mu.Unlock()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	p.cmd, p.done = cmd, done
	p.starts++
	p.mu.Unlock()

	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case <-done:
			return fmt.Errorf("%s exited while starting: %s", p.name, lines.tail())
		default:
		}
		if p.ready != "" && httpOK(ctx, p.ready) {
			return nil
		}
		if p.ready == "" && lines.hasSeen() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within 90 s: %s", p.name, lines.tail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kill ends the process with SIGKILL, as a crash would, and waits for it.
func (p *proc) kill() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.kills++
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// stop asks the process to end (SIGINT) and kills it after 20 s.
func (p *proc) stop() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
	}
}

func httpOK(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// lineWatch passes a process's output on and notes a wanted line.
type lineWatch struct {
	want string
	out  io.Writer

	mu   sync.Mutex
	buf  []byte
	seen chan struct{}
	once sync.Once
}

func (l *lineWatch) Write(b []byte) (int, error) {
	l.mu.Lock()
	l.buf = append(l.buf, b...)
	if len(l.buf) > 8192 {
		l.buf = l.buf[len(l.buf)-8192:]
	}
	hit := l.want != "" && bytes.Contains(l.buf, []byte(l.want))
	l.mu.Unlock()
	if hit {
		l.once.Do(func() { close(l.seen) })
	}
	if l.out != nil {
		_, _ = l.out.Write(b)
	}
	return len(b), nil
}

func (l *lineWatch) hasSeen() bool {
	select {
	case <-l.seen:
		return true
	default:
		return false
	}
}

func (l *lineWatch) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := string(l.buf)
	if i := strings.LastIndexByte(s[:max(0, len(s)-2000)], '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

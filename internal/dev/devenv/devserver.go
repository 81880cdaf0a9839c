package devenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
)

// devServerProc is one `temporal server start-dev` child. It is started
// here rather than through the SDK's launcher so that an early exit, such
// as on a taken port, is seen at once and the process can be killed when
// it does not stop.
type devServerProc struct {
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
}

// errExited marks a dev server that ended before it was ready.
var errExited = errors.New("exited")

func startDevServerProc(bin string, args []string, out io.Writer) (*devServerProc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	// A process group of its own: a Ctrl-C meant for `paygate dev` reaches
	// the server only through Stop, in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &devServerProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *devServerProc) pid() int { return p.cmd.Process.Pid }

// waitReady waits until the frontend takes a client in the namespace and
// the UI answers HTTP (none to wait for when uiURL is empty), or the
// process exits, or ctx ends.
func (p *devServerProc) waitReady(ctx context.Context, opts client.Options, uiURL string) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	frontendUp := false
	httpClient := &http.Client{Timeout: time.Second}
	for {
		select {
		case <-p.done:
			return fmt.Errorf("%w: %v", errExited, p.waitErr)
		default:
		}
		if !frontendUp && tcpAnswers(ctx, opts.HostPort) {
			dialCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
			c, err := client.DialContext(dialCtx, opts)
			cancel()
			if err == nil {
				c.Close()
				frontendUp = true
			}
		}
		if frontendUp && (uiURL == "" || httpAnswers(ctx, httpClient, uiURL)) {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%w: %v", errExited, p.waitErr)
		case <-ctx.Done():
			if !frontendUp {
				return fmt.Errorf("frontend: %w", context.Cause(ctx))
			}
			return fmt.Errorf("UI %s: %w", uiURL, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// stop sends SIGINT and waits up to grace, then kills the process.
func (p *devServerProc) stop(grace time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return fmt.Errorf("temporal dev server %d did not stop within %s of SIGINT; killed", p.pid(), grace)
}

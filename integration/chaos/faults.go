package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/paygate/paygate/internal/dev/devenv"
)

// Fault is one way the suite breaks the stack. Apply breaks it and puts it
// right again before it returns.
type Fault struct {
	Name  string
	Apply func(ctx context.Context, s *Stack) error
}

// The faults, one per part of the stack.
var (
	// KillWorker ends the worker with SIGKILL, mid-charge when a slow card
	// is in flight, and starts a new one after a pause.
	KillWorker = Fault{"SIGKILL worker", func(ctx context.Context, s *Stack) error {
		s.worker.kill()
		pause(ctx, 2*time.Second)
		return s.worker.start(ctx)
	}}
	// KillAPI ends the API with SIGKILL, dropping the requests it holds; the
	// traffic retries them as a merchant would.
	KillAPI = Fault{"SIGKILL api", func(ctx context.Context, s *Stack) error {
		s.api.kill()
		pause(ctx, time.Second)
		return s.api.start(ctx)
	}}
	// RestartTemporal stops the Temporal dev server and starts it again on
	// its file and ports.
	RestartTemporal = Fault{"restart Temporal", func(ctx context.Context, s *Stack) error {
		s.tMu.Lock()
		defer s.tMu.Unlock()
		if err := s.tsrv.Stop(); err != nil {
			return fmt.Errorf("stop temporal: %w", err)
		}
		pause(ctx, 2*time.Second)
		srv, err := s.startTemporal(ctx)
		if err != nil {
			return fmt.Errorf("start temporal again: %w", err)
		}
		s.tsrv = srv
		return nil
	}}
	// RestartPostgres stops the private cluster (fast shutdown: sessions
	// are cut) and starts it again.
	RestartPostgres = Fault{"restart Postgres", func(ctx context.Context, s *Stack) error {
		s.pgMu.Lock()
		defer s.pgMu.Unlock()
		if err := s.pg.Stop(); err != nil {
			return fmt.Errorf("stop postgres: %w", err)
		}
		pause(ctx, 3*time.Second)
		pg, err := devenv.StartPrivatePostgres(ctx, s.pgOpts, nil)
		if err != nil {
			return fmt.Errorf("start postgres again: %w", err)
		}
		s.pg = pg
		return nil
	}}
	// AcquirerErrors has the acquirer answer 503 to half of its operations
	// for ten seconds.
	AcquirerErrors = Fault{"acquirer 5xx", func(ctx context.Context, s *Stack) error {
		return s.acquirerFault(ctx, map[string]any{"mode": "error", "rate": 0.5}, 10*time.Second)
	}}
	// AcquirerHangs has the acquirer hold a third of its operations past
	// the gateway's timeout, doing nothing, for ten seconds.
	AcquirerHangs = Fault{"acquirer hangs", func(ctx context.Context, s *Stack) error {
		return s.acquirerFault(ctx, map[string]any{"mode": "hang", "rate": 0.3, "for_ms": 10_000}, 10*time.Second)
	}}
	// ConnectorDown has sim-acquirer answer 503 to every operation for ten
	// seconds: routed payments go on to sim-bank.
	ConnectorDown = Fault{"sim-acquirer down", func(ctx context.Context, s *Stack) error {
		return s.acquirerFault(ctx, map[string]any{"mode": "error", "rate": 1}, 10*time.Second)
	}}
	// ConnectorSlow has sim-acquirer hold every operation past the
	// gateway's timeout, doing nothing, for ten seconds: routed payments
	// are asked about, then go on to sim-bank (and, once its breaker
	// opens, skip sim-acquirer).
	ConnectorSlow = Fault{"sim-acquirer slow past the timeout", func(ctx context.Context, s *Stack) error {
		return s.acquirerFault(ctx, map[string]any{"mode": "hang", "rate": 1, "for_ms": 10_000}, 10*time.Second)
	}}
	// ConnectorLies has sim-acquirer charge and then answer 503 as if it
	// had not, for ten seconds: a gateway that trusted the 503 would charge
	// routed payments twice. Only for the bite test.
	ConnectorLies = Fault{"sim-acquirer charges and answers 503", func(ctx context.Context, s *Stack) error {
		return s.acquirerFault(ctx, map[string]any{"mode": "charge_then_error", "rate": 1}, 10*time.Second)
	}}
	// RestartAcquirer stops the simulator, cutting its connections, and
	// opens it again on its store.
	RestartAcquirer = Fault{"restart acquirer", func(ctx context.Context, s *Stack) error {
		s.simMu.Lock()
		_ = s.simHTTP.Close()
		s.sim.Close()
		secret := s.simSecret
		s.simMu.Unlock()
		pause(ctx, 2*time.Second)
		return s.startSimulator(secret)
	}}
)

// Together applies faults at the same moment and waits for all of them.
func Together(faults ...Fault) Fault {
	name := ""
	for i, f := range faults {
		if i > 0 {
			name += " + "
		}
		name += f.Name
	}
	return Fault{name, func(ctx context.Context, s *Stack) error {
		errs := make(chan error, len(faults))
		for _, f := range faults {
			go func() { errs <- f.Apply(ctx, s) }()
		}
		var first error
		for range faults {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		return first
	}}
}

func (s *Stack) acquirerFault(ctx context.Context, setting map[string]any, d time.Duration) error {
	if err := s.setFaults(ctx, setting); err != nil {
		return err
	}
	pause(ctx, d)
	return s.setFaults(context.WithoutCancel(ctx), map[string]any{"mode": "none"})
}

func (s *Stack) setFaults(ctx context.Context, setting map[string]any) error {
	b, _ := json.Marshal(setting)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.SimulatorURL()+"/_sim/faults", bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.simSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("set acquirer faults: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("set acquirer faults: HTTP %d", resp.StatusCode)
	}
	return nil
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

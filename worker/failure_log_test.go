package worker

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// logRecords keeps what a slog logger was given, a line per record.
type logRecords struct {
	mu    sync.Mutex
	lines []logLine
}

type logLine struct {
	Level slog.Level
	Msg   string
	Attrs map[string]string
}

func (h *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecords) WithAttrs(as []slog.Attr) slog.Handler    { return &withAttrs{h, as} }
func (h *logRecords) WithGroup(string) slog.Handler            { return h }
func (h *logRecords) Handle(_ context.Context, r slog.Record) error {
	return h.keep(r, nil)
}

func (h *logRecords) keep(r slog.Record, pre []slog.Attr) error {
	line := logLine{Level: r.Level, Msg: r.Message, Attrs: map[string]string{}}
	for _, a := range pre {
		line.Attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		line.Attrs[a.Key] = a.Value.String()
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, line)
	return nil
}

// failures are the lines the interceptor wrote.
func (h *logRecords) failures() []logLine {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []logLine
	for _, l := range h.lines {
		if l.Msg == "local activity attempt failed" {
			out = append(out, l)
		}
	}
	return out
}

type withAttrs struct {
	h  *logRecords
	as []slog.Attr
}

func (w *withAttrs) Enabled(context.Context, slog.Level) bool { return true }
func (w *withAttrs) WithAttrs(as []slog.Attr) slog.Handler {
	return &withAttrs{w.h, append(append([]slog.Attr{}, w.as...), as...)}
}
func (w *withAttrs) WithGroup(string) slog.Handler { return w }
func (w *withAttrs) Handle(_ context.Context, r slog.Record) error {
	return w.h.keep(r, w.as)
}

// failingStep fails its first failures attempts with err, then succeeds.
func failingStep(failures int32, err error) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		if activity.GetInfo(ctx).Attempt <= failures {
			return "", err
		}
		return "done", nil
	}
}

// stepWorkflow runs step once, as a local activity or a regular one, and
// ends without failing whatever the step's end (as the gateway's
// workflows take a refusal as data).
func stepWorkflow(step func(context.Context) (string, error), local bool) func(workflow.Context) (string, error) {
	return func(ctx workflow.Context) (string, error) {
		retry := &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 1, MaximumAttempts: 5}
		var out string
		var err error
		if local {
			ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
				StartToCloseTimeout: 10 * time.Second, ScheduleToCloseTimeout: time.Minute, RetryPolicy: retry})
			err = workflow.ExecuteLocalActivity(ctx, step).Get(ctx, &out)
		} else {
			ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second, RetryPolicy: retry})
			err = workflow.ExecuteActivity(ctx, step).Get(ctx, &out)
		}
		if err != nil {
			// The step's own message, without the SDK's wrapping.
			for errors.Unwrap(err) != nil {
				err = errors.Unwrap(err)
			}
			var app *temporal.ApplicationError
			if errors.As(err, &app) {
				return "ended: " + app.Message(), nil
			}
			return "ended: " + err.Error(), nil
		}
		return out, nil
	}
}

// TestLocalFailureLog: every failed attempt of a local activity is a log
// line naming the attempt, as loud as the failure is; regular activities
// are left to the SDK, which logs them itself.
func TestLocalFailureLog(t *testing.T) {
	refused := temporal.NewNonRetryableApplicationError("rail refused: account closed", "PayoutRailRejected", nil)
	benign := temporal.NewApplicationErrorWithOptions("not yet", "NotYet", temporal.ApplicationErrorOptions{
		Category: temporal.ApplicationErrorCategoryBenign})
	tests := []struct {
		name       string
		step       func(context.Context) (string, error)
		local      bool
		wantResult string
		want       []logLine // Level, Msg and the attributes named here
	}{
		{name: "a step that succeeds says nothing", step: failingStep(0, nil), local: true, wantResult: "done"},
		{name: "each retried attempt is a warning", step: failingStep(2, errors.New("dial rail: connection refused")), local: true,
			wantResult: "done", want: []logLine{
				{Level: slog.LevelWarn, Attrs: map[string]string{"Attempt": "1", "retryable": "true", "error": "dial rail: connection refused"}},
				{Level: slog.LevelWarn, Attrs: map[string]string{"Attempt": "2", "retryable": "true", "error": "dial rail: connection refused"}},
			}},
		{name: "attempts run out: every one is a warning", step: failingStep(9, errors.New("store down")), local: true,
			wantResult: "ended: store down", want: []logLine{
				{Level: slog.LevelWarn, Attrs: map[string]string{"Attempt": "1"}},
				{Level: slog.LevelWarn, Attrs: map[string]string{"Attempt": "2"}},
				{Level: slog.LevelWarn, Attrs: map[string]string{"Attempt": "3"}},
				{Level: slog.LevelWarn, Attrs: map[string]string{"Attempt": "4"}},
				{Level: slog.LevelWarn, Attrs: map[string]string{"Attempt": "5"}},
			}},
		{name: "a refusal is information, once", step: failingStep(9, refused), local: true,
			wantResult: "ended: rail refused: account closed", want: []logLine{
				{Level: slog.LevelInfo, Attrs: map[string]string{"Attempt": "1", "retryable": "false", "error_type": "PayoutRailRejected"}},
			}},
		{name: "a benign error is debug", step: failingStep(1, benign), local: true, wantResult: "done", want: []logLine{
			{Level: slog.LevelDebug, Attrs: map[string]string{"Attempt": "1", "error_type": "NotYet"}},
		}},
		{name: "a regular activity is the SDK's to log", step: failingStep(1, errors.New("store down")), wantResult: "done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			logs := &logRecords{}
			s.SetLogger(sdklog.NewStructuredLogger(slog.New(logs)))
			env := s.NewTestWorkflowEnvironment()
			env.SetWorkerOptions(Options())
			env.RegisterActivityWithOptions(tt.step, activity.RegisterOptions{Name: "Step"})
			env.ExecuteWorkflow(stepWorkflow(tt.step, tt.local))
			if err := env.GetWorkflowError(); err != nil {
				t.Fatalf("workflow: %v", err)
			}
			var got string
			if err := env.GetWorkflowResult(&got); err != nil || got != tt.wantResult {
				t.Fatalf("result %q (%v), want %q", got, err, tt.wantResult)
			}
			lines := logs.failures()
			if len(lines) != len(tt.want) {
				t.Fatalf("%d failure lines, want %d: %+v", len(lines), len(tt.want), lines)
			}
			for i, want := range tt.want {
				if lines[i].Level != want.Level {
					t.Errorf("line %d at %v, want %v", i, lines[i].Level, want.Level)
				}
				for k, v := range want.Attrs {
					if lines[i].Attrs[k] != v {
						t.Errorf("line %d: %s = %q, want %q (%v)", i, k, lines[i].Attrs[k], v, lines[i].Attrs)
					}
				}
				if lines[i].Attrs["WorkflowID"] == "" || lines[i].Attrs["ActivityType"] == "" {
					t.Errorf("line %d names no workflow or activity: %v", i, lines[i].Attrs)
				}
			}
		})
	}
}

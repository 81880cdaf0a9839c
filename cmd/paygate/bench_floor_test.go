package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	"github.com/paygate/paygate/internal/dev/devenv"
	"github.com/paygate/paygate/internal/dev/ports"
)

// TestBenchFloor runs the benchmark's floor both ways on a real Temporal
// dev server: by Update-with-Start (the goals' floor) and started eagerly
// with the answer taken in the process (-floor-eager). Each answers every
// request; only the first's workflows take an update.
func TestBenchFloor(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	root := repoRoot(t)
	needTemporalCLI(t, root)
	held, err := ports.Reserve(2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(held.Release)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	server, err := devenv.StartTemporal(ctx, devenv.TemporalOptions{
		Binary: filepath.Join(root, ".bin", "temporal"), Port: held.Port(0), UIPort: held.Port(1),
		LogFile: filepath.Join(t.TempDir(), "temporal.log"),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Stop() })

	for _, tc := range []struct {
		name        string
		runID       string
		eager       bool
		wantUpdates int
	}{
		{"update-with-start", "uws", false, 1},
		{"started eagerly", "eager", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := startFloor(ctx, server.HostPort(), "default", tc.runID, false, 4, tc.eager)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for i := range 10 {
				if err := f.Do(ctx, i); err != nil {
					t.Fatalf("floor workflow %d: %v", i, err)
				}
			}
			if n := floorAnswers.Waiting(); n != 0 {
				t.Errorf("%d requests still wait for an answer", n)
			}
			iter := f.c.GetWorkflowHistory(ctx, f.queue+"-0", "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			updates := 0
			for iter.HasNext() {
				ev, err := iter.Next()
				if err != nil {
					t.Fatal(err)
				}
				if ev.GetEventType() == enums.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED {
					updates++
				}
			}
			if updates != tc.wantUpdates {
				t.Errorf("the floor workflow took %d updates, want %d", updates, tc.wantUpdates)
			}
		})
	}
}

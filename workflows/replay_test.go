package workflows_test

import (
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/worker"
)

// TestReplayRecordedHistories replays the histories kept in testdata
// (orders of every kind, stored-card charges, subscriptions, payouts,
// redeliveries, personal-data runs) on the workflows as the worker
// registers them: a change that would break running ones fails here and
// must go behind a change id (changes.go). TestEveryWorkflowTypeIsRecorded
// makes sure each type has a history here.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recorded histories in testdata")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			h, err := client.HistoryFromJSON(mustOpen(t, f), client.HistoryJSONOptions{})
			if err != nil {
				t.Fatal(err)
			}
			r := sdkworker.NewWorkflowReplayer()
			worker.RegisterWorkflows(r)
			if err := r.ReplayWorkflowHistory(nil, h); err != nil {
				t.Errorf("replay %s: %v", f, err)
			}
		})
	}
}

func mustOpen(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// recordingRegistry records the workflow types RegisterWorkflows names.
type recordingRegistry struct{ names []string }

func (r *recordingRegistry) RegisterWorkflowWithOptions(_ any, o workflow.RegisterOptions) {
	r.names = append(r.names, o.Name)
}

// TestEveryWorkflowTypeIsRecorded: every workflow type the worker runs has
// at least one recorded history in testdata, so each is replayed.
func TestEveryWorkflowTypeIsRecorded(t *testing.T) {
	var reg recordingRegistry
	worker.RegisterWorkflows(&reg)
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]bool{}
	for _, f := range files {
		h, err := client.HistoryFromJSON(mustOpen(t, f), client.HistoryJSONOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if evs := h.GetEvents(); len(evs) > 0 {
			recorded[evs[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName()] = true
		}
	}
	for _, name := range reg.names {
		if !recorded[name] {
			t.Errorf("no recorded history of a %s workflow in testdata (PAYGATE_RECORD_HISTORIES=1 go test -run TestRecordHistories ./integration)", name)
		}
	}
}

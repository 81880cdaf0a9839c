package workflows_test

import (
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/workflows"
)

// TestReplayRecordedHistories replays the histories kept in testdata
// (orders, subscriptions, payouts): a change to a workflow that would break
// running ones fails here and must go behind workflow.GetVersion.
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
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(workflows.Order, workflow.RegisterOptions{Name: workflows.OrderWorkflowType})
			r.RegisterWorkflowWithOptions(workflows.Subscription, workflow.RegisterOptions{Name: workflows.SubscriptionWorkflowType})
			r.RegisterWorkflowWithOptions(workflows.Payout, workflow.RegisterOptions{Name: workflows.PayoutWorkflowType})
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

package workflows_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/paygate/paygate/internal/domain/capture"
	"github.com/paygate/paygate/workflows"
)

// TestOperationsAcceptedBeforeTheirFirstStep: an operation's update ends its
// workflow task (an activity that does nothing) before its first local activity, so that
// Temporal holds the update before the acquirer or the record hears of it
// (change update-accepted-first; the crash it prevents is
// integration/chaos's TestCaptureSurvivesCrashes).
func TestOperationsAcceptedBeforeTheirFirstStep(t *testing.T) {
	tests := []struct {
		name        string
		captureMode capture.Mode
		update      string
		arg         any
		firstStep   string
	}{
		{"capture", "manual", workflows.UpdateCapture, workflows.CaptureRequest{Entry: entry}, "CaptureCharge"},
		{"cancel", "manual", workflows.UpdateCancel, workflows.CancelRequest{Entry: entry}, "VoidCharge"},
		// A refund's first step is its row, pending, then the acquirer.
		{"refund", "auto", workflows.UpdateRefund, workflows.RefundRequest{Entry: entry, RefundAmount: 100}, "SaveRefund"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, &acquirer{risk: accepted, authorise: answer(approved(amount))})
			sent := false
			var after []string
			env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				if sent {
					after = append(after, "activity "+info.ActivityType.Name)
				}
			})
			env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
				if sent {
					after = append(after, info.ActivityType.Name)
				}
			})
			outs := make([]outcome, 1)
			env.RegisterDelayedCallback(func() {
				sent = true
				env.UpdateWorkflow(tc.update, "", &testsuite.TestUpdateCallback{
					OnAccept: func() {},
					OnReject: func(err error) { outs[0].answered, outs[0].rejected = true, err },
					OnComplete: func(v any, err error) {
						outs[0].answered, outs[0].err = true, err
						if r, ok := v.(workflows.OperationResult); ok {
							outs[0].result = r
						}
					},
				}, tc.arg)
			}, time.Hour)
			run(t, env, orderInput(tc.captureMode))
			if got := outs[0].code(); got != "0000" {
				t.Fatalf("the %s was answered %q, want 0000", tc.name, got)
			}
			if len(after) < 2 || after[0] != "activity Accepted" || after[1] != tc.firstStep {
				t.Errorf("after the update came: %v, want [activity Accepted %s ...]", after, tc.firstStep)
			}
		})
	}
}

package worker

import (
	"slices"
	"testing"
	"time"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/workflows"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

func TestOptions(t *testing.T) {
	tests := []struct {
		name        string
		tune        []func(*sdkworker.Options)
		wantPollers int
		wantSlots   int
	}{
		{name: "defaults", wantPollers: 16, wantSlots: 200},
		{name: "deployment tuning wins", tune: []func(*sdkworker.Options){func(o *sdkworker.Options) {
			o.MaxConcurrentWorkflowTaskPollers = 4
			o.MaxConcurrentWorkflowTaskExecutionSize = 50
		}}, wantPollers: 4, wantSlots: 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options(tt.tune...)
			if o.MaxConcurrentWorkflowTaskPollers != tt.wantPollers || o.MaxConcurrentWorkflowTaskExecutionSize != tt.wantSlots {
				t.Errorf("pollers %d, workflow task slots %d; want %d and %d",
					o.MaxConcurrentWorkflowTaskPollers, o.MaxConcurrentWorkflowTaskExecutionSize, tt.wantPollers, tt.wantSlots)
			}
			if o.StickyScheduleToStartTimeout != 30*time.Second || o.MaxConcurrentLocalActivityExecutionSize != 200 {
				t.Errorf("sticky timeout %v, local activity slots %d; want 30s and 200",
					o.StickyScheduleToStartTimeout, o.MaxConcurrentLocalActivityExecutionSize)
			}
		})
	}
}

// registry records what Register puts on it.
type registry struct {
	sdkworker.Registry
	workflows  []string
	activities []any
}

func (r *registry) RegisterWorkflowWithOptions(_ any, o workflow.RegisterOptions) {
	r.workflows = append(r.workflows, o.Name)
}

func (r *registry) RegisterActivity(a any) { r.activities = append(r.activities, a) }

// TestRegisterPutsEverything: one call registers every workflow type the
// gateway starts and every activity struct.
func TestRegisterPutsEverything(t *testing.T) {
	var r registry
	acts := Activities{Orders: &activities.Activities{}, Payouts: &activities.PayoutActivities{}, Ledger: &activities.LedgerActivities{},
		Recon: &activities.ReconActivities{}, Disputes: &activities.DisputeActivities{}}
	Register(&r, acts)
	want := []string{workflows.OrderWorkflowType, workflows.RedeliverWorkflowType, workflows.SubscriptionWorkflowType,
		workflows.PayoutWorkflowType, workflows.PersonalDataWorkflowType, workflows.ReconcileDayWorkflowType, workflows.ReconcileDueWorkflowType,
		workflows.ScheduledPayoutsWorkflowType, workflows.DisputeWorkflowType}
	if !slices.Equal(r.workflows, want) {
		t.Errorf("workflows %v, want %v", r.workflows, want)
	}
	if len(r.activities) != 5 || r.activities[0] != any(acts.Orders) || r.activities[1] != any(acts.Payouts) ||
		r.activities[2] != any(acts.Ledger) || r.activities[3] != any(acts.Recon) || r.activities[4] != any(acts.Disputes) {
		t.Errorf("activities %v, want the order, payout, ledger, reconciliation and dispute activities", r.activities)
	}
}

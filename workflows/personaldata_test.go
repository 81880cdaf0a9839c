package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/workflows"
)

// TestPersonalData: a run seals batches until one comes back short, then,
// with a retention period, erases batches before the cut-off until one
// comes back short; without one it erases nothing.
func TestPersonalData(t *testing.T) {
	start := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		in        workflows.PersonalDataInput
		sealed    []activities.SealLegacyResult
		erased    []activities.EraseExpiredResult
		want      workflows.PersonalDataResult
		wantErase int
	}{
		{
			name:   "nothing to do, retention off",
			in:     workflows.PersonalDataInput{Batch: 2},
			sealed: []activities.SealLegacyResult{{}},
		},
		{
			name:   "legacy rows in three batches, retention off",
			in:     workflows.PersonalDataInput{Batch: 2},
			sealed: []activities.SealLegacyResult{{Orders: 2, Payouts: 1}, {Orders: 1, Payouts: 2}, {Payouts: 1}},
			want:   workflows.PersonalDataResult{SealedOrders: 3, SealedPayouts: 4},
		},
		{
			name:      "retention: erases until a short batch",
			in:        workflows.PersonalDataInput{Batch: 2, RetentionDays: 400},
			sealed:    []activities.SealLegacyResult{{Orders: 1}},
			erased:    []activities.EraseExpiredResult{{Orders: 2, Payouts: 0, ErasureID: 1}, {Orders: 1, Payouts: 2, ErasureID: 2}, {Orders: 0, ErasureID: 0}},
			want:      workflows.PersonalDataResult{SealedOrders: 1, ErasedOrders: 3, ErasedPayouts: 2},
			wantErase: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.SetStartTime(start)
			env.RegisterWorkflowWithOptions(workflows.PersonalData, workflow.RegisterOptions{Name: workflows.PersonalDataWorkflowType})
			seals, erases := 0, 0
			env.OnActivity(acts.SealLegacyPersonalData, anyArg, anyArg).Return(
				func(_ context.Context, in activities.SealLegacyInput) (activities.SealLegacyResult, error) {
					if in.Limit != tt.in.Batch {
						return activities.SealLegacyResult{}, errors.New("wrong limit")
					}
					seals++
					return tt.sealed[seals-1], nil
				})
			env.OnActivity(acts.EraseExpiredPersonalData, anyArg, anyArg).Return(
				func(_ context.Context, in activities.EraseExpiredInput) (activities.EraseExpiredResult, error) {
					if want := start.Add(-400 * 24 * time.Hour); !in.Before.Equal(want) || in.Limit != tt.in.Batch {
						t.Errorf("erase %+v, want before %v and limit %d", in, want, tt.in.Batch)
					}
					erases++
					return tt.erased[erases-1], nil
				})
			env.ExecuteWorkflow(workflows.PersonalDataWorkflowType, tt.in)
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			var got workflows.PersonalDataResult
			if err := env.GetWorkflowResult(&got); err != nil {
				t.Fatal(err)
			}
			if got != tt.want || seals != len(tt.sealed) || erases != tt.wantErase {
				t.Errorf("result %+v after %d seals and %d erasures, want %+v after %d and %d",
					got, seals, erases, tt.want, len(tt.sealed), tt.wantErase)
			}
		})
	}
}

package redeliver

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

type startCall struct {
	options  client.StartWorkflowOptions
	workflow any
	args     []any
}

type fakeStarter struct {
	calls []startCall
	err   error
}

func (f *fakeStarter) ExecuteWorkflow(_ context.Context, o client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	f.calls = append(f.calls, startCall{o, wf, args})
	return nil, f.err
}

func TestStart(t *testing.T) {
	schedule := notify.Schedule{Initial: time.Second, Max: time.Minute, Horizon: time.Hour}
	byOrder := models.NotificationSelection{MerchantID: "10086", AccountID: "10086001", OrderNos: []string{"ORD-1", "ORD-2"}}
	dbDown := errors.New("db down")
	tempDown := errors.New("temporal down")
	tests := []struct {
		name      string
		sel       models.NotificationSelection
		found     []models.Notification
		findErr   error
		startErr  error
		want      Result
		wantErr   error
		wantStart bool
		// wantGroups: the ids by transaction, when more than one.
		wantGroups [][]string
	}{
		{
			name: "started with the ids in found order, by order",
			sel:  byOrder,
			found: []models.Notification{{NotifyID: "1379868670095785984-n02", TransactionID: "1379868670095785984"},
				{NotifyID: "1379868670095785984-n01", TransactionID: "1379868670095785984"},
				{NotifyID: "1379868670095785985-n01", TransactionID: "1379868670095785985"}},
			want: Result{WorkflowID: "redeliver/RANDOM",
				NotifyIDs: []string{"1379868670095785984-n02", "1379868670095785984-n01", "1379868670095785985-n01"}},
			wantStart:  true,
			wantGroups: [][]string{{"1379868670095785984-n02", "1379868670095785984-n01"}, {"1379868670095785985-n01"}},
		},
		{
			name: "one order's notifications: no groups",
			sel:  byOrder,
			found: []models.Notification{{NotifyID: "1379868670095785984-n01", TransactionID: "1379868670095785984"},
				{NotifyID: "1379868670095785984-n02", TransactionID: "1379868670095785984"}},
			want:      Result{WorkflowID: "redeliver/RANDOM", NotifyIDs: []string{"1379868670095785984-n01", "1379868670095785984-n02"}},
			wantStart: true,
		},
		{name: "nothing found", sel: byOrder, wantErr: ErrNothingToResend},
		{name: "empty selection", sel: models.NotificationSelection{MerchantID: "10086", AccountID: "10086001"}, wantErr: ErrEmptySelection},
		{name: "database fails", sel: byOrder, findErr: dbDown, wantErr: dbDown},
		{name: "temporal fails", sel: byOrder, found: []models.Notification{{NotifyID: "x-n01"}}, startErr: tempDown, wantErr: tempDown, wantStart: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			starter := &fakeStarter{err: tc.startErr}
			var gotSel models.NotificationSelection
			var gotLimit int
			s := &Service{
				Temporal: starter,
				Find: func(_ context.Context, sel models.NotificationSelection, limit int) ([]models.Notification, error) {
					gotSel, gotLimit = sel, limit
					return tc.found, tc.findErr
				},
				NewID: func() string { return "RANDOM" },
			}
			got, err := s.Start(context.Background(), tc.sel, schedule)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("result = %+v, want %+v", got, tc.want)
			}
			if tc.wantErr != ErrEmptySelection && (!reflect.DeepEqual(gotSel, tc.sel) || gotLimit != 1000) {
				t.Errorf("find(%+v, %d), want (%+v, 1000)", gotSel, gotLimit, tc.sel)
			}
			if !tc.wantStart {
				if len(starter.calls) != 0 {
					t.Fatalf("started %d workflows, want none", len(starter.calls))
				}
				return
			}
			if len(starter.calls) != 1 {
				t.Fatalf("started %d workflows, want 1", len(starter.calls))
			}
			c := starter.calls[0]
			ids := make([]string, len(tc.found))
			for i, n := range tc.found {
				ids[i] = n.NotifyID
			}
			wantArgs := []any{workflows.RedeliverInput{NotifyIDs: ids, Schedule: schedule, Groups: tc.wantGroups}}
			if c.options.ID != "redeliver/RANDOM" || c.options.TaskQueue != "paygate" ||
				c.workflow != "Redeliver" || !reflect.DeepEqual(c.args, wantArgs) {
				t.Errorf("started %+v %v %+v, want id redeliver/RANDOM on paygate, Redeliver %+v", c.options, c.workflow, c.args, wantArgs)
			}
		})
	}
}

func TestRandomWorkflowIDs(t *testing.T) {
	starter := &fakeStarter{}
	s := &Service{Temporal: starter, Find: func(context.Context, models.NotificationSelection, int) ([]models.Notification, error) {
		return []models.Notification{{NotifyID: "a-n01"}}, nil
	}}
	sel := models.NotificationSelection{NotifyIDs: []string{"a-n01"}}
	a, err1 := s.Start(context.Background(), sel, notify.Schedule{})
	b, err2 := s.Start(context.Background(), sel, notify.Schedule{})
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if a.WorkflowID == b.WorkflowID || len(a.WorkflowID) != len("redeliver/")+26 {
		t.Errorf("workflow ids %q and %q: want distinct redeliver/ + 26 random characters", a.WorkflowID, b.WorkflowID)
	}
}

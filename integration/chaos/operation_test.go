package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// TestCaptureSurvivesCrashes breaks the stack while a capture is at the
// acquirer: the capture's update has reached the order's workflow, and its
// call to the acquirer is held. Whatever breaks, the order must end the same
// in the record, in its workflow and at the acquirer, captured once, with
// its capture notification delivered; nobody sends the capture again.
func TestCaptureSurvivesCrashes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole stack")
	}
	t.Parallel()
	s := startStack(t, false)
	tr := NewTraffic(s)
	for i, tc := range []struct {
		name string
		// hold is how long the acquirer holds the capture before it drops
		// it unanswered; the capture's next attempt is served.
		hold  time.Duration
		fault func(ctx context.Context, s *Stack) error
	}{
		{"the worker killed", time.Minute, func(ctx context.Context, s *Stack) error {
			s.worker.kill()
			return s.worker.start(ctx)
		}},
		{"the worker and the API killed", time.Minute, func(ctx context.Context, s *Stack) error {
			s.api.kill()
			s.worker.kill()
			if err := s.worker.start(ctx); err != nil {
				return err
			}
			return s.api.start(ctx)
		}},
		// The capture's next attempt is done while Temporal is down: the
		// workflow task that did it cannot be completed.
		{"Temporal restarted and the API killed", 1500 * time.Millisecond, func(ctx context.Context, s *Stack) error {
			s.api.kill()
			if err := RestartTemporal.Apply(ctx, s); err != nil {
				return err
			}
			return s.api.start(ctx)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			// An amount of its own keeps the hang to this order's capture.
			amount := int64(4100 + i)
			p := &Payment{OrderNo: fmt.Sprintf("CRASH-%s-%d", tr.run, i), Manual: true, Card: "4242424242424242", Amount: amount}
			tr.authorise(ctx, s.Manual, p)
			if p.Status != "1" {
				t.Fatalf("the payment was answered %q (%s), want 1", p.Status, p.ResultInfo)
			}
			// The capture comes to a workflow with nothing else to do, as
			// most captures do: its workflow task is one Temporal does not
			// write down unless the worker completes it.
			if err := s.Quiesce(ctx, time.Minute); err != nil {
				t.Fatal(err)
			}
			if err := s.setFaults(ctx, map[string]any{"mode": "hang", "rate": 1, "for_ms": tc.hold.Milliseconds(), "amount": amount}); err != nil {
				t.Fatal(err)
			}
			sent := make(chan struct{})
			go func() {
				defer close(sent)
				tr.batch(ctx, s.Manual, &Operation{Kind: "capture", TransactionID: p.TransactionID, OrderNo: p.OrderNo, Amount: amount, OrderAmount: amount})
			}()
			for s.Simulator().Held() == 0 {
				if ctx.Err() != nil {
					t.Fatal("the capture never reached the acquirer")
				}
				pause(ctx, 20*time.Millisecond)
			}
			if err := s.setFaults(ctx, map[string]any{"mode": "none"}); err != nil {
				t.Fatal(err)
			}
			if err := tc.fault(ctx, s); err != nil {
				t.Fatal(err)
			}
			<-sent
			c, err := s.temporalClient(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			wfID := workflows.OrderWorkflowID(s.Manual.MerchantID, s.Manual.AccountID, p.OrderNo)
			if err := workflowAtRest(ctx, c, wfID); err != nil {
				t.Fatal(err)
			}
			if err := s.Quiesce(ctx, 2*time.Minute); err != nil {
				t.Fatal(err)
			}
			checkCapturedEverywhere(ctx, t, s, c, wfID, p.TransactionID, amount)
		})
	}
}

// checkCapturedEverywhere asserts that the order is captured once, for
// amount, at the acquirer, in the record and in its workflow, and that its
// notifications were delivered.
func checkCapturedEverywhere(ctx context.Context, t *testing.T, s *Stack, c client.Client, wfID, txID string, amount int64) {
	t.Helper()
	var captured []int64
	for _, c := range s.Simulator().Charges() {
		if c.Reference == txID {
			captured = append(captured, c.CapturedAmount)
		}
	}
	if len(captured) != 1 || captured[0] != amount {
		t.Errorf("at the acquirer: captured %v, want [%d]", captured, amount)
	}
	var o models.Order
	if err := s.DB.DB.WithContext(ctx).Where("transaction_id = ?", txID).First(&o).Error; err != nil {
		t.Fatal(err)
	}
	if o.PaymentStatus != status.Paid {
		t.Errorf("the record: %s, want %s", o.PaymentStatus, status.Paid)
	}
	var notices []models.Notification
	if err := s.DB.DB.WithContext(ctx).Where("transaction_id = ?", txID).Order("seq").Find(&notices).Error; err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range notices {
		got = append(got, n.NotifyType+":"+string(n.Status))
	}
	if want := fmt.Sprint([]string{"payment:delivered", "capture:delivered"}); fmt.Sprint(got) != want {
		t.Errorf("notifications %v, want %s", got, want)
	}
	st, err := (&flows.TemporalOrders{Client: c}).State(ctx, wfID)
	if err != nil {
		t.Fatalf("query the order's workflow: %v", err)
	}
	if st.PaymentStatus != status.Paid {
		t.Errorf("the workflow: %s, want %s", st.PaymentStatus, status.Paid)
	}
	if t.Failed() {
		t.Logf("the history of %s ends: %s", wfID, historyTail(ctx, c, wfID, 30))
	}
}

// workflowAtRest waits until the order's workflow has closed, or has no
// workflow task and no activity pending three times in a row a second
// apart: a task lost with a killed worker is pending until Temporal times
// it out, and the record does not show that it is still to come.
func workflowAtRest(ctx context.Context, c client.Client, wfID string) error {
	for still := 0; still < 3; pause(ctx, time.Second) {
		if ctx.Err() != nil {
			return fmt.Errorf("%s never came to rest: %w", wfID, ctx.Err())
		}
		d, err := c.DescribeWorkflowExecution(ctx, wfID, "")
		if err != nil {
			still = 0
			continue
		}
		if d.WorkflowExecutionInfo.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return nil
		}
		if d.PendingWorkflowTask == nil && len(d.PendingActivities) == 0 {
			still++
		} else {
			still = 0
		}
	}
	return nil
}

package workflows

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/internal/domain/status"
)

// The flows of the order workflow only make moves the state table allows
// (the tests of the real workflow prove it), so these tests provoke an
// illegal move the way a flaw would: they build an order whose state
// disagrees with the step that runs next, and run the real steps and
// handlers on it.

const transitionAmount = int64(5000)

// flawedOrder is the state a test gives its order.
type flawedOrder struct {
	Status   status.Payment
	Captured int64
	// APMPaymentID, when set, leaves the order waiting for that APM payment
	// whatever its status.
	APMPaymentID string
}

func (f flawedOrder) build(ctx workflow.Context) *orderWorkflow {
	w := &orderWorkflow{
		root: ctx,
		in: OrderInput{
			TransactionID: "1379868670095785984", MerchantID: "M1", AccountID: "A1", OrderNo: "ORD-T",
			Amount: transitionAmount, Currency: "USD", Kind: KindAPM,
		},
		id:     workflow.GetInfo(ctx).WorkflowExecution.ID,
		lock:   workflow.NewMutex(ctx),
		loaded: true,
		st: order.State{Status: f.Status, Since: workflow.Now(ctx), ChargeID: "ch_1",
			Ledger: order.Ledger{Authorised: transitionAmount, Captured: f.Captured}},
	}
	w.in.Details.NotifyURL = "https://merchant.example/notify"
	if f.APMPaymentID != "" {
		w.st.APM = order.APMStep{PaymentID: f.APMPaymentID, Awaiting: true}
	}
	return w
}

// servedFlawedOrder serves a flawed order as Order serves one after its
// payment: the real handlers, notifications and deadlines, until the order
// ends. It returns the order's final status.
func servedFlawedOrder(ctx workflow.Context, f flawedOrder) (status.Payment, error) {
	w := f.build(ctx)
	if err := w.registerHandlers(ctx); err != nil {
		return 0, err
	}
	w.startDelivery()
	if err := w.lifecycle(ctx); err != nil {
		return 0, err
	}
	err := workflow.Await(ctx, func() bool {
		return workflow.AllHandlersFinished(ctx) && w.notificationsIdle() && w.inFlight == 0
	})
	return w.st.Status, err
}

// stepOutcome is what one step on a flawed order did.
type stepOutcome struct {
	Error  string
	Status status.Payment
}

// flawedStep is one step run on a flawed order.
type flawedStep struct {
	Order flawedOrder
	Step  string
}

// runFlawedStep runs one real step of the order workflow on a flawed order
// and reports its error as data.
func runFlawedStep(ctx workflow.Context, s flawedStep) (stepOutcome, error) {
	w := s.Order.build(ctx)
	var err error
	switch s.Step {
	case "capture saved":
		err = w.save(ctx, status.Paid)
	case "declined":
		_, err = w.finish(ctx, activities.FinishOrderInput{PaymentStatus: status.Failed}, codes.Declined, true)
	case "refund settled":
		next, _, effects := w.st.RefundSettled(order.Refund{Reference: w.in.TransactionID + "-01", Amount: w.st.Captured},
			refund.Succeeded, false, w.in.Currency)
		err = w.carryOut(ctx)(next, effects)
	case "authorisation lapsed":
		err = w.authorisationLapsed(ctx)
	default:
		return stepOutcome{}, fmt.Errorf("unknown step %q", s.Step)
	}
	out := stepOutcome{Status: w.st.Status}
	if err != nil {
		if !errors.Is(err, status.ErrIllegalTransition) {
			return stepOutcome{}, err
		}
		out.Error = err.Error()
	}
	return out, nil
}

// calls records the activities a test's order ran.
type calls struct {
	mu       sync.Mutex
	names    []string
	states   []activities.SaveOrderStateInput
	refunds  []activities.SaveRefundInput
	notes    []activities.RecordNotificationInput
	upserted []string
}

func (c *calls) add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.names = append(c.names, name)
}

func (c *calls) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, got := range c.names {
		if got == name {
			n++
		}
	}
	return n
}

// errorLog keeps the workflow's error lines.
type errorLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *errorLog) Debug(string, ...any) {}
func (l *errorLog) Info(string, ...any)  {}
func (l *errorLog) Warn(string, ...any)  {}
func (l *errorLog) Error(msg string, keyvals ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprint(append([]any{msg}, keyvals...)...))
}

func (l *errorLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// transitionEnv is a test environment whose activities record their calls
// and answer as the acquirer would; GetAPMPayment answers apmStatus.
func transitionEnv(t *testing.T, apmStatus connector.APMStatus) (*testsuite.TestWorkflowEnvironment, *calls, *errorLog) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	log := &errorLog{}
	s.SetLogger(log)
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(servedFlawedOrder)
	env.RegisterWorkflow(runFlawedStep)
	env.RegisterActivity(&activities.Activities{})
	env.RegisterActivity(&activities.LedgerActivities{})
	for _, act := range []any{la.LedgerCreditOrder, la.LedgerDebitRefund} {
		env.OnActivity(act, mock.Anything, mock.Anything).Return(activities.LedgerPostingResult{}, nil).Maybe()
	}
	c := &calls{}
	for name, act := range map[string]any{
		"DropCVV": a.DropCVV, "FinishOrder": a.FinishOrder, "VoidCharge": a.VoidCharge,
		"MarkNotification": a.MarkNotification,
	} {
		env.OnActivity(act, mock.Anything, mock.Anything).Return(nil).Run(func(mock.Arguments) { c.add(name) }).Maybe()
	}
	env.OnActivity(a.SaveOrderState, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SaveOrderStateInput) error {
			c.add("SaveOrderState")
			c.mu.Lock()
			defer c.mu.Unlock()
			c.states = append(c.states, in)
			return nil
		}).Maybe()
	env.OnActivity(a.SaveRefund, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SaveRefundInput) error {
			c.add("SaveRefund")
			c.mu.Lock()
			defer c.mu.Unlock()
			c.refunds = append(c.refunds, in)
			return nil
		}).Maybe()
	env.OnActivity(a.RecordNotification, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RecordNotificationInput) error {
			c.add("RecordNotification")
			c.mu.Lock()
			defer c.mu.Unlock()
			c.notes = append(c.notes, in)
			return nil
		}).Maybe()
	env.OnActivity(a.DeliverNotification, mock.Anything, mock.Anything).Return(
		activities.DeliverResult{Delivered: true, StatusCode: 200}, nil).Maybe()
	env.OnActivity(a.RefundCharge, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RefundInput) (activities.RefundOutcome, error) {
			c.add("RefundCharge")
			return activities.RefundOutcome{RefundID: "re_1", Status: refund.Succeeded}, nil
		}).Maybe()
	env.OnActivity(a.GetAPMPayment, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.APMStatusInput) (activities.APMOutcome, error) {
			c.add("GetAPMPayment")
			return activities.APMOutcome{PaymentID: in.PaymentID, Status: apmStatus}, nil
		}).Maybe()
	env.OnUpsertTypedSearchAttributes(mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.upserted = append(c.upserted, fmt.Sprint(args.Get(0)))
	}).Maybe()
	return env, c, log
}

// TestIllegalMovesAreRefused runs steps that would make moves the state
// table refuses: each is refused with the exact error, and the order's
// status, record and search attribute stay as they were.
func TestIllegalMovesAreRefused(t *testing.T) {
	tests := []struct {
		name      string
		step      flawedStep
		wantError string
		// wantCalls are the activities the step still runs before its move.
		wantCalls []string
	}{
		{
			name:      "a capture does not pay a cancelled order",
			step:      flawedStep{Order: flawedOrder{Status: status.Cancelled}, Step: "capture saved"},
			wantError: "5000 (cancelled) to 3000 (paid): illegal payment_status transition",
		},
		{
			name:      "a late decline does not fail a paid order",
			step:      flawedStep{Order: flawedOrder{Status: status.Paid, Captured: transitionAmount}, Step: "declined"},
			wantError: "3000 (paid) to 6000 (failed): illegal payment_status transition",
		},
		{
			// The refund is a fact at the acquirer, so its row is still
			// recorded; only the order's move is refused.
			name:      "a refund does not refund an order not captured",
			step:      flawedStep{Order: flawedOrder{Status: status.Authorised, Captured: transitionAmount}, Step: "refund settled"},
			wantError: "2000 (authorised) to 4000 (refunded): illegal payment_status transition",
			wantCalls: []string{"SaveRefund"},
		},
		{
			name:      "an authorisation deadline does not expire a paid order",
			step:      flawedStep{Order: flawedOrder{Status: status.Paid, Captured: transitionAmount}, Step: "authorisation lapsed"},
			wantError: "3000 (paid) to 7000 (expired): illegal payment_status transition",
			wantCalls: []string{"VoidCharge"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, c, log := transitionEnv(t, "")
			env.ExecuteWorkflow(runFlawedStep, tc.step)
			if !env.IsWorkflowCompleted() {
				t.Fatal("workflow did not complete")
			}
			if err := env.GetWorkflowError(); err != nil {
				t.Fatalf("workflow failed: %v", err)
			}
			var got stepOutcome
			if err := env.GetWorkflowResult(&got); err != nil {
				t.Fatal(err)
			}
			want := stepOutcome{Error: tc.wantError, Status: tc.step.Order.Status}
			if got != want {
				t.Errorf("step = %+v, want %+v", got, want)
			}
			if strings.Join(c.names, ",") != strings.Join(tc.wantCalls, ",") {
				t.Errorf("activities run = %v, want %v", c.names, tc.wantCalls)
			}
			if len(c.upserted) != 0 {
				t.Errorf("PaymentStatus upserted: %v", c.upserted)
			}
			lines := log.all()
			if len(lines) != 1 || !strings.Contains(lines[0], "payment_status move refused") ||
				!strings.Contains(lines[0], tc.wantError) {
				t.Errorf("error log = %q, want one refusal naming %q", lines, tc.wantError)
			}
		})
	}
}

// TestIllegalMoveDoesNotFailTheOrder: a flaw makes an order that is paid
// still wait for its APM payment, and the provider then reports the payment
// cancelled. Failing the paid order is refused; the order stays paid, is
// not notified of the refused move, still takes a refund, and ends at the
// end of its refund window without failing.
func TestIllegalMoveDoesNotFailTheOrder(t *testing.T) {
	env, c, log := transitionEnv(t, connector.APMCancelled)
	var during status.Payment
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalAPMResult, APMResult{PaymentID: "ap_1"})
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QueryOrderState)
		if err != nil {
			t.Errorf("query: %v", err)
			return
		}
		var st OrderState
		if err := v.Get(&st); err != nil {
			t.Error(err)
		}
		during = st.PaymentStatus
	}, 2*time.Hour)
	var refunded OperationResult
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(UpdateRefund, "", &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { t.Errorf("refund rejected: %v", err) },
			OnComplete: func(v any, err error) {
				if err != nil {
					t.Errorf("refund: %v", err)
				}
				refunded, _ = v.(OperationResult)
			},
		}, RefundRequest{Entry: EntryRef{TransactionID: "1379868670095785984", OrderNo: "ORD-T", Currency: "USD",
			Amount: transitionAmount}, RefundAmount: 1000})
	}, 3*time.Hour)

	env.ExecuteWorkflow(servedFlawedOrder, flawedOrder{Status: status.Paid, Captured: transitionAmount, APMPaymentID: "ap_1"})
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow failed: %v", err)
	}
	var final status.Payment
	if err := env.GetWorkflowResult(&final); err != nil {
		t.Fatal(err)
	}

	if c.count("GetAPMPayment") != 1 {
		t.Errorf("provider asked %d times, want 1", c.count("GetAPMPayment"))
	}
	if during != status.Paid {
		t.Errorf("status after the refused move = %v, want %v", during, status.Paid)
	}
	if n := c.count("FinishOrder") + c.count("DropCVV"); n != 0 {
		t.Errorf("the refused payment outcome ran %d record activities, want none", n)
	}
	wantRefund := OperationResult{Status: EntryDone, ResultCode: "0000", ResultMessage: "Success",
		PaymentStatus: status.PartiallyRefunded, RefundReferenceID: "1379868670095785984-01", RefundReference: "re_1"}
	if refunded != wantRefund {
		t.Errorf("refund = %+v, want %+v", refunded, wantRefund)
	}
	if final != status.PartiallyRefunded {
		t.Errorf("final status = %v, want %v", final, status.PartiallyRefunded)
	}
	if len(c.states) != 1 || c.states[0].PaymentStatus != status.PartiallyRefunded {
		t.Errorf("order writes = %+v, want one, 4100", c.states)
	}
	if len(c.notes) != 1 || c.notes[0].Type != NotifyRefund {
		t.Errorf("notifications = %+v, want the refund's only", c.notes)
	}
	want := "3000 (paid) to 6000 (failed): illegal payment_status transition"
	lines := log.all()
	if len(lines) != 2 || !strings.Contains(lines[0], "payment_status move refused") || !strings.Contains(lines[0], want) ||
		!strings.Contains(lines[1], "shopper result") {
		t.Errorf("error log = %q, want the refusal naming %q, then the callback's error", lines, want)
	}
}

// TestStepFailedRefusesTheEntry: a batch entry whose move was refused is
// answered refused (I0018) with the order as it stands; any other error
// still fails the update.
func TestStepFailedRefusesTheEntry(t *testing.T) {
	w := &orderWorkflow{st: order.State{Status: status.Paid}}
	refused := fmt.Errorf("save: %w", status.Check(status.Paid, status.Failed))
	got, err := w.stepFailed(refused)
	want := OperationResult{Status: EntryRefused, ResultCode: "I0018",
		ResultMessage: "Operation not allowed in the order's current state: save: 3000 (paid) to 6000 (failed): illegal payment_status transition",
		PaymentStatus: status.Paid}
	if err != nil || got != want {
		t.Errorf("stepFailed(refused move) = %+v, %v; want %+v, nil", got, err, want)
	}
	other := errors.New("database down")
	if got, err := w.stepFailed(other); err != other || got != (OperationResult{}) {
		t.Errorf("stepFailed(other) = %+v, %v; want the error", got, err)
	}
}

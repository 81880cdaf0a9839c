package workflows_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/capture"
	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/workflows"
)

// entry is a batch entry that matches the test order.
var entry = workflows.EntryRef{TransactionID: txID, OrderNo: orderNo, Currency: currency, Amount: amount}

var heldForReview = risk.Result{Action: risk.Review, Score: 60, Rule: "velocity_card"}

// outcome is what a test learns of one update.
type outcome struct {
	answered bool // false when the workflow had already ended
	rejected error
	result   workflows.OperationResult
	err      error
}

func (o outcome) code() string {
	if !o.answered {
		return "closed"
	}
	var appErr *temporal.ApplicationError
	if errors.As(o.rejected, &appErr) {
		var id string
		_ = appErr.Details(&id)
		return id
	}
	if o.rejected != nil {
		return "?"
	}
	return o.result.ResultCode
}

// step is an update sent at a point in (skipped) time.
type step struct {
	at   time.Duration
	name string
	arg  any
}

// sendSteps has env send each step's update at its time; each outcome is
// filled in as its update is answered.
func sendSteps(env *testsuite.TestWorkflowEnvironment, steps []step) []outcome {
	outs := make([]outcome, len(steps))
	for i, s := range steps {
		env.RegisterDelayedCallback(func() {
			env.UpdateWorkflow(s.name, "", &testsuite.TestUpdateCallback{
				OnAccept: func() {},
				OnReject: func(err error) { outs[i].answered, outs[i].rejected = true, err },
				OnComplete: func(v any, err error) {
					outs[i].answered, outs[i].err = true, err
					if r, ok := v.(workflows.OperationResult); ok {
						outs[i].result = r
					}
				},
			}, s.arg)
		}, s.at)
	}
	return outs
}

// runSteps runs the order with the updates sent at their times and returns
// each update's outcome and the order's final state.
func runSteps(t *testing.T, acq *acquirer, captureMode capture.Mode, steps []step) ([]outcome, workflows.OrderState) {
	t.Helper()
	env := newEnv(t, acq)
	outs := sendSteps(env, steps)
	run(t, env, orderInput(captureMode))
	v, err := env.QueryWorkflow(workflows.QueryOrderState)
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	var st workflows.OrderState
	if err := v.Get(&st); err != nil {
		t.Fatal(err)
	}
	return outs, st
}

func TestOrderOperations(t *testing.T) {
	const hour = time.Hour
	day := 24 * hour
	other := func(mut func(*workflows.EntryRef)) workflows.EntryRef {
		e := entry
		mut(&e)
		return e
	}
	type want struct {
		status int
		code   string
	}
	tests := []struct {
		name        string
		captureMode capture.Mode
		risk        risk.Result
		// authorise is the acquirer's answer; approved when nil.
		authorise func(n int) (activities.ChargeOutcome, error)
		steps     []step
		want      []want
		final     status.Payment
		captures  []int64
		voids     int
		refunds   []int64
	}{
		{
			name: "full capture", captureMode: "manual",
			steps: []step{{hour, workflows.UpdateCapture, workflows.CaptureRequest{Entry: entry}}},
			want:  []want{{1, "0000"}}, final: status.Paid, captures: []int64{amount},
		},
		{
			name: "partial capture then a second capture refused", captureMode: "manual",
			steps: []step{
				{hour, workflows.UpdateCapture, workflows.CaptureRequest{Entry: entry, CaptureAmount: 10000}},
				{2 * hour, workflows.UpdateCapture, workflows.CaptureRequest{Entry: entry, CaptureAmount: 100}},
			},
			want: []want{{1, "0000"}, {0, "I0018"}}, final: status.Paid, captures: []int64{10000},
		},
		{
			name: "capture over the authorised amount", captureMode: "manual",
			steps: []step{{hour, workflows.UpdateCapture, workflows.CaptureRequest{Entry: entry, CaptureAmount: amount + 1}}},
			want:  []want{{0, "I0003"}}, final: status.Expired, voids: 1,
		},
		{
			name: "capture of a paid order", captureMode: "auto",
			steps: []step{{hour, workflows.UpdateCapture, workflows.CaptureRequest{Entry: entry}}},
			want:  []want{{0, "I0018"}}, final: status.Paid,
		},
		{
			name: "entries that do not match the order", captureMode: "manual",
			steps: []step{
				{hour, workflows.UpdateCapture, workflows.CaptureRequest{Entry: other(func(e *workflows.EntryRef) { e.TransactionID = "1" })}},
				{hour, workflows.UpdateCapture, workflows.CaptureRequest{Entry: other(func(e *workflows.EntryRef) { e.OrderNo = "X" })}},
				{hour, workflows.UpdateCapture, workflows.CaptureRequest{Entry: other(func(e *workflows.EntryRef) { e.Currency = "USD" })}},
				{hour, workflows.UpdateCapture, workflows.CaptureRequest{Entry: other(func(e *workflows.EntryRef) { e.Amount = 1 })}},
			},
			want:  []want{{0, "I0019"}, {0, "I0019"}, {0, "I0019"}, {0, "I0019"}},
			final: status.Expired, voids: 1,
		},
		{
			name: "cancel before capture voids", captureMode: "manual",
			steps: []step{
				{hour, workflows.UpdateCancel, workflows.CancelRequest{Entry: entry}},
				{2 * hour, workflows.UpdateCapture, workflows.CaptureRequest{Entry: entry}},
			},
			// A cancelled order's workflow ends: later entries find it closed
			// (the API answers I0018).
			want: []want{{1, "0000"}, {0, "closed"}}, final: status.Cancelled, voids: 1,
		},
		{
			name: "cancel after capture refused", captureMode: "auto",
			steps: []step{{hour, workflows.UpdateCancel, workflows.CancelRequest{Entry: entry}}},
			want:  []want{{0, "I0018"}}, final: status.Paid,
		},
		{
			name: "authorisation window lapses: voided and expired", captureMode: "manual",
			steps: []step{{8 * day, workflows.UpdateCapture, workflows.CaptureRequest{Entry: entry}}},
			want:  []want{{0, "closed"}}, final: status.Expired, voids: 1,
		},
		{
			name: "review approve, auto capture", captureMode: "auto", risk: heldForReview,
			steps: []step{{hour, workflows.UpdateReview, workflows.ReviewRequest{Entry: entry, Approve: true}}},
			want:  []want{{1, "0000"}}, final: status.Paid,
		},
		{
			name: "review approve, manual capture", captureMode: "manual", risk: heldForReview,
			steps: []step{
				{hour, workflows.UpdateReview, workflows.ReviewRequest{Entry: entry, Approve: true}},
				{2 * hour, workflows.UpdateCapture, workflows.CaptureRequest{Entry: entry}},
			},
			want: []want{{1, "0000"}, {1, "0000"}}, final: status.Paid, captures: []int64{amount},
		},
		{
			// The shared table (docs/design.md §4) has 2100→2000|3000|5000; the acquirer may still
			// decline what review approved, so 2100→6000 is in the table too.
			name: "review approve, then declined: 2100 → 6000", captureMode: "auto", risk: heldForReview,
			authorise: answer(declined("do_not_honor")),
			steps:     []step{{hour, workflows.UpdateReview, workflows.ReviewRequest{Entry: entry, Approve: true}}},
			want:      []want{{1, "A0001"}}, final: status.Failed,
		},
		{
			name: "review reject cancels", captureMode: "auto", risk: heldForReview,
			steps: []step{{hour, workflows.UpdateReview, workflows.ReviewRequest{Entry: entry}}},
			want:  []want{{1, "0000"}}, final: status.Cancelled,
		},
		{
			name: "review window lapses: rejected", captureMode: "auto", risk: heldForReview,
			steps: []step{{4 * day, workflows.UpdateReview, workflows.ReviewRequest{Entry: entry, Approve: true}}},
			want:  []want{{0, "closed"}}, final: status.Cancelled,
		},
		{
			name: "review of an order that is not held", captureMode: "auto",
			steps: []step{{hour, workflows.UpdateReview, workflows.ReviewRequest{Entry: entry, Approve: true}}},
			want:  []want{{0, "I0018"}}, final: status.Paid,
		},
		{
			name: "partial then full refunds: 3000 → 4100 → 4000", captureMode: "auto",
			steps: []step{
				{hour, workflows.UpdateRefund, workflows.RefundRequest{Entry: entry, RefundAmount: 2345, Reason: "damaged"}},
				{2 * hour, workflows.UpdateRefund, workflows.RefundRequest{Entry: entry, RefundAmount: 10000}},
				{3 * hour, workflows.UpdateRefund, workflows.RefundRequest{Entry: entry, RefundAmount: 1}},
			},
			// Refunded in full, the order's workflow ends.
			want:  []want{{1, "0000"}, {1, "0000"}, {0, "closed"}},
			final: status.Refunded, refunds: []int64{2345, 10000},
		},
		{
			name: "refund over the captured amount", captureMode: "auto",
			steps: []step{
				{hour, workflows.UpdateRefund, workflows.RefundRequest{Entry: entry, RefundAmount: 10000}},
				{2 * hour, workflows.UpdateRefund, workflows.RefundRequest{Entry: entry, RefundAmount: 2346}},
				{3 * hour, workflows.UpdateRefund, workflows.RefundRequest{Entry: entry, RefundAmount: 0}},
			},
			want:  []want{{1, "0000"}, {0, "I0003"}, {0, "I0003"}},
			final: status.PartiallyRefunded, refunds: []int64{10000},
		},
		{
			name: "refund of an authorised order", captureMode: "manual",
			steps: []step{{hour, workflows.UpdateRefund, workflows.RefundRequest{Entry: entry, RefundAmount: 100}}},
			want:  []want{{0, "I0018"}}, final: status.Expired, voids: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.risk
			if r.Action == "" {
				r = accepted
			}
			acq := &acquirer{risk: r, authorise: answer(approved(0))}
			if tc.captureMode == "auto" {
				acq.authorise = answer(approved(amount))
			}
			if tc.authorise != nil {
				acq.authorise = tc.authorise
			}
			outs, st := runSteps(t, acq, tc.captureMode, tc.steps)
			for i, o := range outs {
				if o.err != nil {
					t.Errorf("step %d: update error %v", i, o.err)
					continue
				}
				got := want{status: o.result.Status, code: o.code()}
				if o.rejected != nil {
					got.status = 0
				}
				if got != tc.want[i] {
					t.Errorf("step %d (%s): got %+v, want %+v (rejected: %v)", i, tc.steps[i].name, got, tc.want[i], o.rejected)
				}
			}
			if st.PaymentStatus != tc.final {
				t.Errorf("final status = %v, want %v", st.PaymentStatus, tc.final)
			}
			var captures, refunds []int64
			for _, c := range acq.captures {
				captures = append(captures, c.Amount)
			}
			for _, r := range acq.refunds {
				refunds = append(refunds, r.Amount)
			}
			if !reflect.DeepEqual(captures, tc.captures) {
				t.Errorf("captures at the acquirer = %v, want %v", captures, tc.captures)
			}
			if !reflect.DeepEqual(refunds, tc.refunds) {
				t.Errorf("refunds at the acquirer = %v, want %v", refunds, tc.refunds)
			}
			if len(acq.voids) != tc.voids {
				t.Errorf("voids = %d, want %d", len(acq.voids), tc.voids)
			}
		})
	}
}

// TestRefundReferencesAndKeys checks refund ids <transaction_id>-NN and that
// each refund has its own idempotency key at the acquirer.
// TestRefundAnsweredFailed: a refund the acquirer answers failed at once
// is the merchant's refusal, with the acquirer's code and the refund's
// references; the order stays paid and nothing is debited. It was answered
// done (0000) while its row said failed.
func TestRefundAnsweredFailed(t *testing.T) {
	tests := []struct {
		name       string
		status     refund.Status
		wantEntry  int
		wantCode   string
		wantStatus status.Payment
		wantDebits int
	}{
		{"succeeded", refund.Succeeded, workflows.EntryDone, "0000", status.PartiallyRefunded, 1},
		{"failed", refund.Failed, workflows.EntryRefused, "C0001", status.Paid, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acq := &acquirer{risk: accepted, authorise: answer(approved(amount)),
				refundStatus: func(int) refund.Status { return tc.status }}
			outs, st := runSteps(t, acq, "auto", []step{
				{time.Hour, workflows.UpdateRefund, workflows.RefundRequest{Entry: entry, RefundAmount: 100}},
			})
			r := outs[0].result
			if r.Status != tc.wantEntry || r.ResultCode != tc.wantCode || r.RefundReferenceID != txID+"-01" {
				t.Errorf("answer %+v, want entry %d code %s", r, tc.wantEntry, tc.wantCode)
			}
			if st.PaymentStatus != tc.wantStatus || len(acq.debits) != tc.wantDebits {
				t.Errorf("order %d with %d debits, want %d and %d", st.PaymentStatus, len(acq.debits), tc.wantStatus, tc.wantDebits)
			}
		})
	}
}

func TestRefundReferencesAndKeys(t *testing.T) {
	acq := &acquirer{risk: accepted, authorise: answer(approved(amount))}
	outs, _ := runSteps(t, acq, "auto", []step{
		{time.Hour, workflows.UpdateRefund, workflows.RefundRequest{Entry: entry, RefundAmount: 100, Reason: "a"}},
		{2 * time.Hour, workflows.UpdateRefund, workflows.RefundRequest{Entry: entry, RefundAmount: 200, Reason: "b"}},
	})
	for i, want := range []string{txID + "-01", txID + "-02"} {
		if got := outs[i].result.RefundReferenceID; got != want {
			t.Errorf("refund %d reference id = %q, want %q", i, got, want)
		}
		if got := outs[i].result.RefundReference; got == "" {
			t.Errorf("refund %d has no acquirer reference", i)
		}
	}
	if len(acq.refunds) != 2 || acq.refunds[0].IdempotencyKey == acq.refunds[1].IdempotencyKey {
		t.Errorf("refund keys = %+v, want two distinct", acq.refunds)
	}
	// Each refund's row is written pending before its send, then as the
	// acquirer answered.
	if len(acq.saved) != 4 || acq.saved[0].Status != "pending" || acq.saved[0].AcquirerRef != "" || acq.saved[1].Status != "succeeded" ||
		acq.saved[2].Status != "pending" || acq.saved[3].Reason != "b" || acq.saved[3].Amount != 200 {
		t.Errorf("saved refunds = %+v", acq.saved)
	}
}

// TestPendingRefundSettlesLater: the acquirer answers pending; the entry says
// -1, the order does not move until the acquirer settles.
func TestPendingRefundSettlesLater(t *testing.T) {
	acq := &acquirer{risk: accepted, authorise: answer(approved(amount)),
		refundStatus: func(int) refund.Status { return refund.Pending },
		pollStatus: func(n int) refund.Status {
			if n < 3 {
				return refund.Pending
			}
			return refund.Succeeded
		},
	}
	var during workflows.OrderState
	env := newEnv(t, acq)
	var res workflows.OperationResult
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(workflows.UpdateRefund, "", &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { t.Errorf("rejected: %v", err) },
			OnComplete: func(v any, err error) { res, _ = v.(workflows.OperationResult) },
		}, workflows.RefundRequest{Entry: entry, RefundAmount: amount})
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		v, _ := env.QueryWorkflow(workflows.QueryOrderState)
		_ = v.Get(&during)
	}, time.Hour+500*time.Millisecond)
	run(t, env, orderInput("auto"))
	if res.Status != workflows.EntryPending || res.ResultCode != "0001" {
		t.Errorf("entry = %+v, want pending 0001", res)
	}
	if during.PaymentStatus != status.Paid {
		t.Errorf("while pending the order is %v, want %v", during.PaymentStatus, status.Paid)
	}
	if len(acq.polls) != 4 {
		t.Errorf("polled %d times, want 4", len(acq.polls))
	}
	last := acq.states[len(acq.states)-1]
	if last.PaymentStatus != status.Refunded || last.RefundedAmount != amount {
		t.Errorf("last saved state = %+v, want 4000 with %d refunded", last, amount)
	}
	if n := len(acq.saved); n != 3 || acq.saved[0].Status != "pending" || acq.saved[0].AcquirerRef != "" ||
		acq.saved[1].Status != "pending" || acq.saved[1].AcquirerRef == "" || acq.saved[2].Status != "succeeded" {
		t.Errorf("saved refunds = %+v, want pending before the send, pending as answered, then succeeded", acq.saved)
	}
}

// TestConcurrentRefundsNeverExceedCaptured sends 50 refunds of 10.00 at once
// to an order of 100.00: exactly 10 go through.
func TestConcurrentRefundsNeverExceedCaptured(t *testing.T) {
	acq := &acquirer{risk: accepted, authorise: answer(approved(10000))}
	in := orderInput("auto")
	in.Amount = 10000
	env := newEnv(t, acq)
	e := entry
	e.Amount = 10000
	outs := make([]outcome, 50)
	env.RegisterDelayedCallback(func() {
		for i := range outs {
			env.UpdateWorkflow(workflows.UpdateRefund, "", &testsuite.TestUpdateCallback{
				OnAccept: func() {},
				OnReject: func(err error) { outs[i].answered, outs[i].rejected = true, err },
				OnComplete: func(v any, err error) {
					outs[i].err = err
					outs[i].result, _ = v.(workflows.OperationResult)
				},
			}, workflows.RefundRequest{Entry: e, RefundAmount: 1000})
		}
	}, time.Hour)
	run(t, env, in)
	done, refused := 0, 0
	for _, o := range outs {
		switch {
		case o.rejected != nil || o.result.Status == workflows.EntryRefused:
			refused++
		case o.result.Status == workflows.EntryDone:
			done++
		}
	}
	var total int64
	for _, r := range acq.refunds {
		total += r.Amount
	}
	if done != 10 || refused != 40 || total != 10000 {
		t.Errorf("done %d refused %d refunded %d, want 10, 40, 10000", done, refused, total)
	}
}

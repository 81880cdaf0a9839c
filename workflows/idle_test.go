package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/paygate/paygate/internal/domain/capture"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/workflows"
)

// paidAt is when the tests' orders are paid.
var paidAt = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// savedInput is the order's last saved state for reopening.
func savedInput(t *testing.T, acq *acquirer) workflows.OrderInput {
	t.Helper()
	if len(acq.reopenSaves) == 0 {
		t.Fatal("nothing saved for reopening")
	}
	var in workflows.OrderInput
	if err := json.Unmarshal(acq.reopenSaves[len(acq.reopenSaves)-1].Input, &in); err != nil {
		t.Fatal(err)
	}
	return in
}

// payClosing pays an order of shape 3 and returns the time its run ended.
func payClosing(t *testing.T, acq *acquirer, mode capture.Mode) time.Time {
	t.Helper()
	env := newEnv(t, acq)
	env.SetStartTime(paidAt)
	in := orderInput(mode)
	in.Shape = workflows.CurrentOrderShape
	run(t, env, in)
	return env.Now()
}

func TestPaidOrderClosesWhenIdle(t *testing.T) {
	tests := []struct {
		name        string
		mode        capture.Mode
		shape       int
		wantEndedBy time.Duration // the run ends this long after the payment, at most
		wantSaves   int
		// wantFolded is how many of the saves rode in the outcome's write.
		wantFolded int
		notifyURL  string
	}{
		// No timer runs the refund window: the order closes once its
		// payment is answered and its ledger credit posted. From shape 4
		// its state is saved with its outcome.
		{name: "a paid order closes at once", mode: "auto", shape: workflows.CurrentOrderShape, wantEndedBy: time.Minute, wantSaves: 1, wantFolded: 1},
		{name: "a shape 3 paid order saves its state in a step of its own", mode: "auto", shape: 3, wantEndedBy: time.Minute, wantSaves: 1},
		// Its notification pending, the order is not idle when its
		// outcome is written: it saves its state once it has delivered.
		{name: "a paid order with a notification saves after it", mode: "auto", shape: workflows.CurrentOrderShape,
			notifyURL: "https://shop.example/notify", wantEndedBy: time.Minute, wantSaves: 1},
		// An authorisation's window is due: it is voided at its end, and
		// the expired order ends with nothing saved (nothing to reopen).
		{name: "an authorised order waits for its window", mode: "manual", shape: workflows.CurrentOrderShape,
			wantEndedBy: workflows.DefaultAuthorisationWindow + time.Minute},
		// Orders started before shape 3 keep their refund window's timer.
		{name: "a shape 2 order stays open through its refund window", mode: "auto", shape: 2,
			wantEndedBy: workflows.DefaultRefundWindow + time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acq := &acquirer{risk: accepted, authorise: answer(approved(amountIf(tc.mode)))}
			env := newEnv(t, acq)
			env.SetStartTime(paidAt)
			in := orderInput(tc.mode)
			in.Shape = tc.shape
			in.Details.NotifyURL = tc.notifyURL
			run(t, env, in)
			if took := env.Now().Sub(paidAt); took > tc.wantEndedBy || tc.wantEndedBy > time.Minute && took < tc.wantEndedBy-2*time.Minute {
				t.Errorf("run ended %v after the payment, want about %v", took, tc.wantEndedBy)
			}
			if len(acq.reopenSaves) != tc.wantSaves || acq.foldedSaves != tc.wantFolded {
				t.Fatalf("%d saves for reopening (%d with the outcome), want %d (%d)", len(acq.reopenSaves), acq.foldedSaves, tc.wantSaves, tc.wantFolded)
			}
			if tc.wantSaves == 0 {
				return
			}
			got := savedInput(t, acq)
			switch {
			case got.Reopen || got.Resume == nil || got.Resume.Status != status.Paid || got.Resume.Result == nil ||
				got.Resume.Result.ResultCode != "0000" || got.Resume.Captured != amount:
				t.Errorf("saved state = %+v, want paid %d with its result", got.Resume, amount)
			case got.Details.ShopperEmail != "" || got.Details.FirstName != "" || got.Details.LastName != "":
				t.Errorf("saved details keep personal data: %+v", got.Details)
			case got.Details.OrderNo != orderNo || got.Card.Token != cardToken || got.TransactionID != txID || got.Shape != tc.shape:
				t.Errorf("saved input lost the order: %+v", got)
			}
		})
	}
}

// TestFoldedSaveIsTheStateCloseIdleSaves: the state a shape 4 order saves
// with its outcome is, byte for byte, the state a shape 3 order saves in a
// step of its own once it is idle (the shape aside): a reopened order
// cannot tell them apart.
func TestFoldedSaveIsTheStateCloseIdleSaves(t *testing.T) {
	saved := map[int][]byte{}
	for _, shape := range []int{3, 4} {
		acq := &acquirer{risk: accepted, authorise: answer(approved(amount))}
		env := newEnv(t, acq)
		env.SetStartTime(paidAt)
		in := orderInput("auto")
		in.Shape = shape
		run(t, env, in)
		if len(acq.reopenSaves) != 1 {
			t.Fatalf("shape %d: %d saves, want 1", shape, len(acq.reopenSaves))
		}
		var st map[string]any
		if err := json.Unmarshal(acq.reopenSaves[0].Input, &st); err != nil {
			t.Fatal(err)
		}
		delete(st, "Shape")
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		saved[shape] = b
	}
	if string(saved[3]) != string(saved[4]) {
		t.Errorf("shape 4 saved\n%s\nshape 3 saved\n%s", saved[4], saved[3])
	}
}

// amountIf is what the acquirer captures for a charge in mode.
func amountIf(mode capture.Mode) int64 {
	if mode == "auto" {
		return amount
	}
	return 0
}

// reopen runs the order reopened at at with the updates of steps, as an
// Update-with-Start does: the updates reach the run as it starts.
func reopen(t *testing.T, acq *acquirer, at time.Time, steps []step) []outcome {
	t.Helper()
	env := newEnv(t, acq)
	env.SetStartTime(at)
	outs := sendSteps(env, steps)
	run(t, env, workflows.OrderInput{TransactionID: txID, OrderNo: orderNo, Shape: workflows.CurrentOrderShape, Reopen: true})
	return outs
}

func TestOrderReopens(t *testing.T) {
	refund := func(amount int64) step {
		return step{0, workflows.UpdateRefund, workflows.RefundRequest{Entry: entry, RefundAmount: amount}}
	}
	type want struct {
		status int
		code   string
	}
	tests := []struct {
		name string
		// prepare changes the record before the reopen; after is how long
		// after the payment the operations come.
		prepare func(acq *acquirer)
		after   time.Duration
		// rounds are the reopens, each with its operations.
		rounds [][]step
		want   [][]want
		// wantSaved is the last saved state's status, wantHeld the run
		// left holding the row ("" when free).
		wantSaved   status.Payment
		wantHeld    string
		wantRefunds []int64
	}{
		{
			name: "a refund reopens the order, which closes again", after: time.Hour,
			rounds: [][]step{{refund(3000)}}, want: [][]want{{{1, "0000"}}},
			wantSaved: status.PartiallyRefunded, wantRefunds: []int64{3000},
		},
		{
			name: "each reopen starts from the last: the second refund is over what is left", after: time.Hour,
			rounds:    [][]step{{refund(10000)}, {refund(2346)}, {refund(2345)}},
			want:      [][]want{{{1, "0000"}}, {{0, "I0003"}}, {{1, "0000"}}},
			wantSaved: status.Refunded, wantRefunds: []int64{10000, 2345},
		},
		{
			name: "two refunds in one reopen are taken in turn", after: 24 * time.Hour,
			rounds:    [][]step{{refund(10000), refund(10000)}},
			want:      [][]want{{{1, "0000"}, {0, "I0003"}}},
			wantSaved: status.PartiallyRefunded, wantRefunds: []int64{10000},
		},
		{
			name: "a capture of a paid order is refused for what the order is", after: time.Hour,
			rounds:    [][]step{{{0, workflows.UpdateCapture, workflows.CaptureRequest{Entry: entry}}}},
			want:      [][]want{{{0, "I0018"}}},
			wantSaved: status.Paid,
		},
		{
			name: "a refunded order is refused a refund", after: time.Hour,
			rounds:    [][]step{{refund(amount)}, {refund(1)}},
			want:      [][]want{{{1, "0000"}}, {{0, "I0018"}}},
			wantSaved: status.Refunded, wantRefunds: []int64{amount},
		},
		{
			name: "an entry that does not match the order is refused", after: time.Hour,
			rounds: [][]step{{{0, workflows.UpdateRefund, workflows.RefundRequest{
				Entry: workflows.EntryRef{TransactionID: txID, OrderNo: orderNo, Currency: "USD", Amount: amount}, RefundAmount: 100}}}},
			want:      [][]want{{{0, "I0019"}}},
			wantSaved: status.Paid,
		},
		{
			name: "the refund window ended since the order closed", after: workflows.DefaultRefundWindow + time.Hour,
			rounds: [][]step{{refund(100)}}, want: [][]want{{{0, "I0018"}}},
			// The state is given back as it was, for the next operation.
			wantSaved: status.Paid,
		},
		{
			name: "nothing saved: the order ended", after: time.Hour,
			prepare: func(acq *acquirer) { acq.reopenInput, acq.reopenSaves = nil, nil },
			rounds:  [][]step{{refund(100)}}, want: [][]want{{{0, "I0018"}}},
		},
		{
			name: "the state is held by a run that ended without saving it", after: time.Hour,
			prepare: func(acq *acquirer) { acq.reopenRun = "run-that-was-terminated" },
			rounds:  [][]step{{refund(100)}}, want: [][]want{{{0, "I0018"}}},
			wantSaved: status.Paid, wantHeld: "run-that-was-terminated",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acq := &acquirer{risk: accepted, authorise: answer(approved(amount))}
			payClosing(t, acq, "auto")
			if tc.prepare != nil {
				tc.prepare(acq)
			}
			for i, steps := range tc.rounds {
				outs := reopen(t, acq, paidAt.Add(tc.after+time.Duration(i)*time.Minute), steps)
				for j, o := range outs {
					w := tc.want[i][j]
					if got := o.code(); got != w.code || o.answered && o.rejected == nil && o.result.Status != w.status {
						t.Errorf("round %d operation %d: %d %s (%+v), want %d %s", i, j, o.result.Status, got, o, w.status, w.code)
					}
				}
			}
			var refunds []int64
			for _, r := range acq.refunds {
				refunds = append(refunds, r.Amount)
			}
			if !slices.Equal(refunds, tc.wantRefunds) {
				t.Errorf("refunds at the acquirer = %v, want %v", refunds, tc.wantRefunds)
			}
			if acq.reopenRun != tc.wantHeld {
				t.Errorf("row held by %q, want %q", acq.reopenRun, tc.wantHeld)
			}
			if tc.wantSaved == 0 {
				if len(acq.reopenSaves) != 0 {
					t.Errorf("saved %d times, want none", len(acq.reopenSaves))
				}
				return
			}
			if got := savedInput(t, acq); got.Resume.Status != tc.wantSaved {
				t.Errorf("saved status %v, want %v", got.Resume.Status, tc.wantSaved)
			}
		})
	}
}

// TestFoldedSaveFollowsAFullRefund: a shape 4 order saves itself paid with
// its outcome, but its run stays open (its ledger credit fell over to an
// activity) and is refunded in full before it closes. The run leaves the
// refunded state in the record, so a later refund that reopens the order
// is refused for what it is, as at shape 3, and reaches no acquirer.
func TestFoldedSaveFollowsAFullRefund(t *testing.T) {
	for _, shape := range []int{3, workflows.CurrentOrderShape} {
		t.Run(fmt.Sprintf("shape %d", shape), func(t *testing.T) {
			acq := &acquirer{risk: accepted, authorise: answer(approved(amount))}
			// The credit's local attempts fail: it goes on as an activity,
			// and the run stays open for it.
			acq.ledgerErr = func(n int) error {
				if n < 8 {
					return errors.New("ledger unavailable")
				}
				return nil
			}
			env := newEnv(t, acq)
			env.SetStartTime(paidAt)
			first := sendSteps(env, []step{{100 * time.Millisecond, workflows.UpdateRefund,
				workflows.RefundRequest{Entry: entry, RefundAmount: amount}}})
			in := orderInput("auto")
			in.Shape = shape
			run(t, env, in)
			if got := first[0].code(); got != "0000" {
				t.Fatalf("full refund in the first run = %s, want 0000", got)
			}
			later := reopen(t, acq, paidAt.Add(time.Hour), []step{{0, workflows.UpdateRefund,
				workflows.RefundRequest{Entry: entry, RefundAmount: amount}}})
			if got := later[0].code(); got != "I0018" || len(acq.refunds) != 1 {
				t.Errorf("refund after the order closed = %s with %d refunds at the acquirer, want I0018 and 1", got, len(acq.refunds))
			}
		})
	}
}

// TestFullRefundWhileTheStateIsSaved: a full refund that arrives while the
// first run saves its state for reopening (the order idle a moment
// before) ends the order refunded; the run leaves that state in the
// record, so a later refund reopens it refunded and is refused, not taken
// again under the same reference, key and ledger posting.
func TestFullRefundWhileTheStateIsSaved(t *testing.T) {
	tests := []struct {
		name      string
		shape     int
		notifyURL string
	}{
		{"shape 3", 3, ""},
		{"a notified order", workflows.CurrentOrderShape, "https://shop.example/notify"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acq := &acquirer{risk: accepted, authorise: answer(approved(amount))}
			env := newEnv(t, acq)
			env.SetStartTime(paidAt)
			in := orderInput("auto")
			in.Shape, in.Details.NotifyURL = tc.shape, tc.notifyURL
			sent := false
			var first outcome
			env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
				if sent || info.ActivityType.Name != "SaveOrderReopen" {
					return
				}
				sent = true
				env.UpdateWorkflow(workflows.UpdateRefund, "", &testsuite.TestUpdateCallback{
					OnAccept: func() {}, OnReject: func(err error) { first.answered, first.rejected = true, err },
					OnComplete: func(v any, err error) {
						first.answered, first.err = true, err
						if r, ok := v.(workflows.OperationResult); ok {
							first.result = r
						}
					},
				}, workflows.RefundRequest{Entry: entry, RefundAmount: amount})
			})
			run(t, env, in)
			if !sent || first.code() != "0000" {
				t.Fatalf("the full refund while the state was saved: sent %v, answered %s", sent, first.code())
			}
			if saved := savedInput(t, acq); saved.Resume == nil || saved.Resume.Status != status.Refunded || saved.Resume.Refunded != amount {
				t.Fatalf("the record's last state %+v, want refunded in full", saved.Resume)
			}
			later := reopen(t, acq, paidAt.Add(time.Hour), []step{{0, workflows.UpdateRefund,
				workflows.RefundRequest{Entry: entry, RefundAmount: 5000}}})
			if got := later[0].code(); got != "I0018" || len(acq.refunds) != 1 || len(acq.debits) != 1 {
				t.Errorf("a refund after the order closed = %s with %d refunds and %d debits, want I0018, 1 and 1",
					got, len(acq.refunds), len(acq.debits))
			}
		})
	}
}

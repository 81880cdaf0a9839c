package workflows_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/workflows"
)

// refusedValues is what the store activities return when Postgres refuses a
// write for its values (here: a NUL byte in a text column).
func refusedValues() error {
	return temporal.NewNonRetryableApplicationError("insert order: invalid byte sequence for encoding UTF8: 0x00 (SQLSTATE 22021)",
		activities.ErrTypeRecordRejected, nil)
}

func takenTransactionID() error {
	return temporal.NewNonRetryableApplicationError("insert order: transaction id already belongs to another order",
		activities.ErrTypeTransactionIDConflict, nil)
}

// failing answers the calls in fail with err and the others with nil.
func failing(err func() error, fail ...int) func(int) error {
	return func(n int) error {
		for _, f := range fail {
			if f == n {
				return err()
			}
		}
		return nil
	}
}

// TestOrderThatCannotBeRecorded: a first record write that cannot succeed
// ends the order at once, final, with the card removed from the vault; the
// workflow completes, it never fails, and the merchant's update is answered
// with the final code.
func TestOrderThatCannotBeRecorded(t *testing.T) {
	tests := []struct {
		name      string
		recordErr func(int) error
		existing  string // transaction id of an older order with the order_no

		wantCode     codes.Code
		wantTxID     string
		wantRecords  int  // RecordOrder calls: the order, then its keys only
		wantDeleted  bool // the card entry removed from the vault
		wantNotified bool
		wantExisting string
	}{
		{
			name: "values refused: keys recorded, final S0002", recordErr: failing(refusedValues, 0),
			wantCode: codes.RecordRejected, wantTxID: txID, wantRecords: 2, wantDeleted: true, wantNotified: true,
		},
		{
			name: "values refused and keys refused too: final S0002, nothing recorded", recordErr: failing(refusedValues, 0, 1),
			wantCode: codes.RecordRejected, wantTxID: txID, wantRecords: 2, wantDeleted: true,
		},
		{
			name: "transaction id of another order: final S0003, nothing recorded", recordErr: failing(takenTransactionID, 0),
			wantCode: codes.TransactionIDConflict, wantRecords: 1, wantDeleted: true,
		},
		{
			name: "values refused and the order_no is an older order's: answered from that order", recordErr: failing(refusedValues, 0),
			existing: "1111111111111111111", wantRecords: 2, wantExisting: "1111111111111111111",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acq := &acquirer{risk: accepted, recordErr: tc.recordErr, existing: tc.existing}
			env := newEnv(t, acq)
			in := orderInput("auto")
			in.Details.Note = "a\x00b"
			in.Details.NotifyURL = "https://shop.example/notify"
			var answer workflows.PaymentResult
			var answerErr error
			env.RegisterDelayedCallback(func() {
				env.UpdateWorkflow(workflows.UpdateAuthorise, "", &testsuite.TestUpdateCallback{
					OnAccept: func() {},
					OnReject: func(err error) { answerErr = err },
					OnComplete: func(v any, err error) {
						answerErr = err
						answer, _ = v.(workflows.PaymentResult)
					},
				}, workflows.AuthoriseRequest{RequestFingerprint: fingerprint})
			}, 0)
			res := run(t, env, in) // fails the test unless the workflow completed without error

			if answerErr != nil || !reflect.DeepEqual(answer, res) {
				t.Errorf("authorise update answered %+v, %v; want the workflow's result %+v", answer, answerErr, res)
			}
			if len(acq.records) != tc.wantRecords {
				t.Fatalf("RecordOrder calls = %d, want %d (a refused write is not retried)", len(acq.records), tc.wantRecords)
			}
			if len(acq.risks)+len(acq.auths)+len(acq.drops)+len(acq.finish) != 0 {
				t.Errorf("after a refused record: %d risk checks, %d charges, %d CVV drops, %d outcome writes; want none",
					len(acq.risks), len(acq.auths), len(acq.drops), len(acq.finish))
			}
			wantDeletes := []activities.DeleteCardInput{}
			if tc.wantDeleted {
				wantDeletes = []activities.DeleteCardInput{{CardToken: cardToken}}
			}
			if len(acq.deletes) != len(wantDeletes) || len(wantDeletes) == 1 && acq.deletes[0] != wantDeletes[0] {
				t.Errorf("DeleteCard inputs = %+v, want %+v", acq.deletes, wantDeletes)
			}
			if tc.wantExisting != "" {
				if res.ExistingTransactionID != tc.wantExisting || res.ResultCode != "" {
					t.Errorf("result = %+v, want the older order %s", res, tc.wantExisting)
				}
				return
			}

			want := workflows.PaymentResult{
				TransactionID: tc.wantTxID, MerchantID: merchantID, AccountID: accountID, OrderNo: orderNo,
				Amount: amount, Currency: currency, PaymentStatus: status.Failed, OrderStatus: status.OrderFailure,
				ResultCode: tc.wantCode.ID, ResultMessage: tc.wantCode.Message, CardMasked: in.Card.Masked,
			}
			if !reflect.DeepEqual(res, want) {
				t.Errorf("result =\n %+v\nwant\n %+v", res, want)
			}
			st := finalState(t, env)
			if st.PaymentStatus != status.Failed || st.Result == nil || !reflect.DeepEqual(*st.Result, want) {
				t.Errorf("order state = %v %+v", st.PaymentStatus, st.Result)
			}
			if tc.wantRecords == 2 {
				keys := acq.records[1]
				wantKeys := activities.RecordOrderInput{
					TransactionID: txID, WorkflowID: workflows.OrderWorkflowID(merchantID, accountID, orderNo),
					MerchantID: merchantID, AccountID: accountID, OrderNo: orderNo, Currency: currency, Amount: amount,
					PaymentStatus: status.Failed, OrderStatus: status.OrderFailure,
					ResultCode: tc.wantCode.ID, ResultMessage: tc.wantCode.Message, CaptureMode: "auto",
					CardMasked: in.Card.Masked, CardBrand: in.Card.Brand, CardFingerprint: in.Card.Fingerprint,
					RequestFingerprint: fingerprint,
					Details:            order.Details{MerchantID: merchantID, AccountID: accountID, OrderNo: orderNo, Currency: currency},
				}
				if !reflect.DeepEqual(keys, wantKeys) {
					t.Errorf("second record =\n %+v\nwant the keys only\n %+v", keys, wantKeys)
				}
			}
			if notified := len(acq.notes) > 0; notified != tc.wantNotified {
				t.Errorf("notified = %v, want %v (%+v)", notified, tc.wantNotified, acq.notes)
			}
			if tc.wantNotified && (len(acq.notes) != 1 || acq.notes[0].Fields["result_info"] != tc.wantCode.String() ||
				acq.notes[0].Fields["payment_status"] != "6000") {
				t.Errorf("notifications = %+v, want one payment notification with %s", acq.notes, tc.wantCode)
			}
		})
	}
}

// TestRefusedRecordIsNotRetried: the store's retry policy leaves a
// non-retryable RecordRejected error alone, while a plain error (a lost
// connection) is retried until the write succeeds.
func TestRefusedRecordIsNotRetried(t *testing.T) {
	acq := &acquirer{risk: accepted, authorise: answer(approved(amount)), recordErr: failing(func() error {
		return errors.New("connection reset by peer")
	}, 0, 1)}
	env := newEnv(t, acq)
	res := run(t, env, orderInput("auto"))
	if res.PaymentStatus != status.Paid || len(acq.records) != 3 {
		t.Errorf("status %v after %d record attempts, want paid after 3", res.PaymentStatus, len(acq.records))
	}
}

// TestOutcomeRefusedByTheRecord: when the record refuses a payment outcome
// for its values, the outcome is written again without details; if even that
// is refused, the workflow goes on and completes with the outcome.
func TestOutcomeRefusedByTheRecord(t *testing.T) {
	for _, tc := range []struct {
		name      string
		finishErr func(int) error
	}{
		{"bare outcome written", failing(refusedValues, 0)},
		{"bare outcome refused too", failing(refusedValues, 0, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			acq := &acquirer{risk: accepted, authorise: answer(approved(amount)), finishErr: tc.finishErr}
			env := newEnv(t, acq)
			res := run(t, env, orderInput("auto"))
			if res.PaymentStatus != status.Paid || res.ResultCode != codes.OK.ID || res.AuthCode != authCode {
				t.Errorf("result = %+v, want paid with the auth code", res)
			}
			if len(acq.finish) != 2 {
				t.Fatalf("FinishOrder calls = %d, want 2", len(acq.finish))
			}
			bare := acq.finish[1]
			want := activities.FinishOrderInput{
				TransactionID: txID, Version: 2, PaymentStatus: status.Paid, OrderStatus: status.OrderSuccess,
				ResultCode: codes.OK.ID, ResultMessage: codes.OK.Message, CapturedAmount: amount, Connector: workflows.DefaultConnector,
			}
			if !equalFinish(bare, want) {
				t.Errorf("second write = %+v, want the bare outcome %+v", bare, want)
			}
			// Both writes name the workflow task that makes them, the same
			// one: a run of it again, later, would carry a later one.
			if first := acq.finish[0]; first.Task <= 0 || bare.Task != first.Task {
				t.Errorf("writes' tasks = %d, %d, want the same task, above 0", first.Task, bare.Task)
			}
			if len(acq.drops) != 1 {
				t.Errorf("CVV drops = %d, want 1", len(acq.drops))
			}
		})
	}
}

func equalFinish(a, b activities.FinishOrderInput) bool {
	return a.TransactionID == b.TransactionID && a.Version == b.Version && a.PaymentStatus == b.PaymentStatus &&
		a.OrderStatus == b.OrderStatus && a.ResultCode == b.ResultCode && a.ResultMessage == b.ResultMessage &&
		a.CapturedAmount == b.CapturedAmount && a.Connector == b.Connector && a.ConnectorRef == b.ConnectorRef &&
		a.AuthCode == b.AuthCode && len(a.Risk.Reasons) == 0 && a.Risk.Action == "" && !a.Is3DS && a.ThreeDSResult == ""
}

// TestCVVDroppedWhenFinal: on every path that makes a card order final the
// security code is dropped; while the order may still be charged (waiting
// for the shopper's 3-D Secure challenge, held for review) it is kept.
func TestCVVDroppedWhenFinal(t *testing.T) {
	challenge := activities.ThreeDSOutcome{AuthenticationID: "au_1", Status: "challenge_required", ACSURL: "http://sim/acs/au_1"}
	threeDS := func() workflows.OrderInput {
		in := orderInput("auto")
		in.ThreeDS = true
		return in
	}
	hosted := func() workflows.OrderInput {
		in := orderInput("auto")
		in.Kind = workflows.KindCheckout
		in.Card = workflows.CardRef{}
		return in
	}
	card := orderInput("auto").Card
	reviewEntry := workflows.ReviewRequest{Entry: entry, Approve: false}
	tests := []struct {
		name    string
		in      func() workflows.OrderInput
		acq     *acquirer
		acs     *acs // the ACS's word when the order asks it; nil: not asked
		updates []step
		signal  any
		// waitAt is a time at which the order still waits and must keep
		// its CVV (0: the order is final at once).
		waitAt time.Duration
		final  status.Payment
		drops  int
	}{
		{name: "approved", in: func() workflows.OrderInput { return orderInput("auto") },
			acq: &acquirer{risk: accepted, authorise: answer(approved(amount))}, final: status.Paid, drops: 1},
		{name: "declined", in: func() workflows.OrderInput { return orderInput("auto") },
			acq: &acquirer{risk: accepted, authorise: answer(declined("do_not_honor"))}, final: status.Failed, drops: 1},
		{name: "rejected by risk", in: func() workflows.OrderInput { return orderInput("auto") },
			acq: &acquirer{risk: rejectedCard}, final: status.Failed, drops: 1},
		{name: "held, then the review lapses", in: func() workflows.OrderInput { return orderInput("auto") },
			acq: &acquirer{risk: heldForReview}, waitAt: time.Hour, final: status.Cancelled, drops: 1},
		{name: "held, then rejected", in: func() workflows.OrderInput { return orderInput("auto") },
			acq: &acquirer{risk: heldForReview}, updates: []step{{time.Hour, workflows.UpdateReview, reviewEntry}},
			waitAt: 30 * time.Minute, final: status.Cancelled, drops: 1},
		{name: "3-D Secure challenge failed", in: threeDS, acq: &acquirer{risk: accepted, threeDS: challenge}, acs: acsSays("failed"),
			signal: workflows.ThreeDSResult{AuthenticationID: "au_1"}, waitAt: 30 * time.Second,
			final: status.Failed, drops: 1},
		{name: "3-D Secure challenge never answered", in: threeDS, acq: &acquirer{risk: accepted, threeDS: challenge},
			waitAt: 10 * time.Minute, final: status.Failed, drops: 1},
		{name: "hosted page: card given, challenge never answered", in: func() workflows.OrderInput {
			in := hosted()
			in.ThreeDS = true
			return in
		}, acq: &acquirer{risk: accepted, threeDS: challenge},
			updates: []step{{time.Minute, workflows.UpdatePay, workflows.PayRequest{Card: card}}}, waitAt: 10 * time.Minute,
			final: status.Failed, drops: 1},
		{name: "hosted page abandoned before a card was given", in: hosted, acq: &acquirer{risk: accepted},
			final: status.Expired, drops: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, tc.acq)
			if tc.acs != nil {
				withACS(env, tc.acs)
			}
			for _, s := range tc.updates {
				env.RegisterDelayedCallback(func() {
					env.UpdateWorkflow(s.name, "", &testsuite.TestUpdateCallback{
						OnAccept: func() {}, OnReject: func(err error) { t.Errorf("%s rejected: %v", s.name, err) },
						OnComplete: func(any, error) {},
					}, s.arg)
				}, s.at)
			}
			if tc.signal != nil {
				env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalThreeDSResult, tc.signal) }, time.Minute+time.Second)
			}
			dropsWhileWaiting := -1
			if tc.waitAt > 0 {
				env.RegisterDelayedCallback(func() {
					tc.acq.mu.Lock()
					defer tc.acq.mu.Unlock()
					dropsWhileWaiting = 0
					for _, d := range tc.acq.drops {
						if d.CardToken != "" {
							dropsWhileWaiting++
						}
					}
				}, tc.waitAt)
			}
			run(t, env, tc.in())
			if tc.waitAt > 0 && dropsWhileWaiting != 0 {
				t.Errorf("CVV drops while the order could still be charged = %d, want 0", dropsWhileWaiting)
			}
			st := finalState(t, env)
			if st.PaymentStatus != tc.final {
				t.Errorf("final status %v, want %v", st.PaymentStatus, tc.final)
			}
			// An order without a card drops "nothing": that call is a no-op.
			drops := 0
			for _, d := range tc.acq.drops {
				switch d.CardToken {
				case cardToken:
					drops++
				case "":
				default:
					t.Errorf("CVV dropped for %q, want %q", d.CardToken, cardToken)
				}
			}
			if drops != tc.drops {
				t.Errorf("CVV drops = %+v, want %d of %s", tc.acq.drops, tc.drops, cardToken)
			}
		})
	}
}

// TestOrderOutlastsADatabaseOutage: record writes are retried while the
// database is away for longer than one attempt's timeout (twelve refused
// connections, about 50 s of backoff), and the order then pays as usual
// instead of failing.
func TestOrderOutlastsADatabaseOutage(t *testing.T) {
	refused := func() error { return errors.New("dial tcp 127.0.0.1:5432: connect: connection refused") }
	acq := &acquirer{risk: accepted, authorise: answer(approved(amount)),
		recordErr: failing(refused, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)}
	env := newEnv(t, acq)
	res := run(t, env, orderInput("auto"))
	if res.PaymentStatus != status.Paid || len(acq.records) != 13 || len(acq.auths) != 1 {
		t.Errorf("status %v after %d record attempts and %d charges, want paid after 13 and 1", res.PaymentStatus, len(acq.records), len(acq.auths))
	}
}

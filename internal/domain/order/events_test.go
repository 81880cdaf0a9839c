package order

import (
	"reflect"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/capture"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/internal/domain/status"
)

// TestCharged: an approval authorises the whole amount and takes the
// acquirer's captured amount; a sale (capture auto) is paid at once; a
// decline fails and leaves the money as it was. Whoever answered is kept.
func TestCharged(t *testing.T) {
	approved := Charge{Connector: "sim-acquirer", ChargeID: "ch_1", Approved: true, AuthCode: "A1"}
	tests := []struct {
		name   string
		charge Charge
		mode   capture.Mode
		want   State
		to     status.Payment
	}{
		{"authorised for a later capture", approved, capture.Manual,
			State{AnsweredBy: "sim-acquirer", ChargeID: "ch_1", Ledger: Ledger{Authorised: 5000}}, status.Authorised},
		{"sale captured with the charge", func() Charge { c := approved; c.CapturedAmount = 5000; return c }(), capture.Auto,
			State{AnsweredBy: "sim-acquirer", ChargeID: "ch_1", Ledger: Ledger{Authorised: 5000, Captured: 5000}}, status.Paid},
		{"declined", Charge{Connector: "sim-acquirer", ChargeID: "ch_2", Decline: connector.DeclineInsufficientFunds}, capture.Auto,
			State{AnsweredBy: "sim-acquirer"}, status.Failed},
		{"no connector answered", Charge{}, capture.Auto, State{AnsweredBy: "before"}, status.Failed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, to := State{AnsweredBy: "before"}.Charged(tc.charge, 5000, tc.mode)
			if !reflect.DeepEqual(got, tc.want) || to != tc.to {
				t.Errorf("Charged = %+v, %v; want %+v, %v", got, to, tc.want, tc.to)
			}
		})
	}
}

// TestChargeCode: each decline reason answers with its own code.
func TestChargeCode(t *testing.T) {
	tests := []struct {
		name   string
		charge Charge
		want   codes.Code
	}{
		{"approved", Charge{Approved: true}, codes.OK},
		{"insufficient funds", Charge{Decline: connector.DeclineInsufficientFunds}, codes.InsufficientFunds},
		{"expired card", Charge{Decline: connector.DeclineExpiredCard}, codes.ExpiredCard},
		{"incorrect cvc", Charge{Decline: connector.DeclineIncorrectCVC}, codes.WrongCVV},
		{"authentication required", Charge{Decline: connector.DeclineAuthenticationRequired}, codes.ThreeDSNotAvailable},
		{"the issuer's do not retry: a decline to the merchant", Charge{Decline: connector.DeclineDoNotRetry}, codes.Declined},
		{"any other reason", Charge{Decline: connector.DeclineReason("do_not_honour")}, codes.Declined},
		{"no reason", Charge{}, codes.Declined},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ChargeCode(tc.charge); got != tc.want {
				t.Errorf("ChargeCode = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestOperationEffects: a capture, a cancellation and an expiry each save
// the order at its new status, then notify the merchant, with the exact
// type, code and fields.
func TestOperationEffects(t *testing.T) {
	authorised := State{Status: status.Authorised, ChargeID: "ch_1", Ledger: Ledger{Authorised: 5000}}
	tests := []struct {
		name    string
		run     func() (State, []Effect)
		ledger  Ledger
		effects []Effect
	}{
		{"capture in part", func() (State, []Effect) { return authorised.CaptureDone(3000, "USD") },
			Ledger{Authorised: 5000, Captured: 3000},
			[]Effect{SaveOrder{To: status.Paid}, Notify{Type: notify.TypeCapture, Code: codes.OK,
				Extra: map[string]string{"capture_amount": "30.00"}}}},
		{"capture in a zero-decimal currency", func() (State, []Effect) { return authorised.CaptureDone(5000, "JPY") },
			Ledger{Authorised: 5000, Captured: 5000},
			[]Effect{SaveOrder{To: status.Paid}, Notify{Type: notify.TypeCapture, Code: codes.OK,
				Extra: map[string]string{"capture_amount": "5000"}}}},
		{"voided", authorised.Voided, Ledger{Authorised: 5000},
			[]Effect{SaveOrder{To: status.Cancelled}, Notify{Type: notify.TypeCancel, Code: codes.OK}}},
		{"expired", authorised.Expired, Ledger{Authorised: 5000},
			[]Effect{SaveOrder{To: status.Expired}, Notify{Type: notify.TypeExpiry, Code: codes.AuthorisationExpired}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			next, effects := tc.run()
			if next.Ledger != tc.ledger || next.Status != status.Authorised {
				t.Errorf("state = %v %+v; want still authorised (the move is the save's) with %+v", next.Status, next.Ledger, tc.ledger)
			}
			if !reflect.DeepEqual(effects, tc.effects) {
				t.Errorf("effects = %#v\nwant      %#v", effects, tc.effects)
			}
		})
	}
}

// TestRefundAsked numbers the order's refunds after its earlier ones.
func TestRefundAsked(t *testing.T) {
	s := State{Status: status.Paid, RefundSeq: 9}
	next, r := s.RefundAsked("1000000000000000001", 1500, "damaged")
	want := Refund{Reference: "1000000000000000001-10", Amount: 1500, Reason: "damaged"}
	if next.RefundSeq != 10 || r != want {
		t.Errorf("RefundAsked = seq %d, %+v; want 10, %+v", next.RefundSeq, r, want)
	}
}

// TestRefundSent: what the acquirer answered decides the refund's row, the
// money held, the ledger and the order's next status, and what the merchant
// is told.
func TestRefundSent(t *testing.T) {
	paid := State{Status: status.Paid, ChargeID: "ch_1", Ledger: Ledger{Authorised: 5000, Captured: 5000}}
	asked := Refund{Reference: "T-02", Amount: 1500, Reason: "late"}
	refundNotice := func(code codes.Code, refundStatus, acquirerRef string) Notify {
		return Notify{Type: notify.TypeRefund, Code: code, Extra: map[string]string{
			"refund_amount": "15.00", "refund_reference_id": "T-02", "refund_reference": acquirerRef,
			"refund_status": refundStatus, "refund_message": code.String(), "refund_reason": "late",
		}}
	}
	succeeded := Refund{Reference: "T-02", AcquirerRef: "re_1", Amount: 1500, Reason: "late", Status: refund.Succeeded, Settled: true, Code: codes.OK}
	failed := Refund{Reference: "T-02", AcquirerRef: "re_1", Amount: 1500, Reason: "late", Status: refund.Failed, Settled: true, Code: codes.ConnectorError}
	tests := []struct {
		name     string
		from     State
		answer   RefundAnswer
		settled  refund.Status
		ledger   Ledger
		refund   Refund
		effects  []Effect
		fromFull bool
	}{
		{"no answer: held and sent again", paid, RefundUnanswered, "",
			Ledger{Authorised: 5000, Captured: 5000, RefundPending: 1500},
			Refund{Reference: "T-02", Amount: 1500, Reason: "late", Status: refund.Pending, Code: codes.RefundPending},
			[]Effect{SaveRefund{Refund: Refund{Reference: "T-02", Amount: 1500, Reason: "late", Status: refund.Pending, Code: codes.RefundPending}},
				ResendRefund{Refund: Refund{Reference: "T-02", Amount: 1500, Reason: "late", Status: refund.Pending, Code: codes.RefundPending}}}, false},
		{"refused: failed, nothing held, nobody notified", paid, RefundRefused, "",
			paid.Ledger,
			Refund{Reference: "T-02", Amount: 1500, Reason: "late", Status: refund.Failed, Settled: true, Code: codes.ConnectorError},
			[]Effect{SaveRefund{Refund: Refund{Reference: "T-02", Amount: 1500, Reason: "late", Status: refund.Failed, Settled: true, Code: codes.ConnectorError}}}, false},
		{"pending: held and watched", paid, RefundAnswered, refund.Pending,
			Ledger{Authorised: 5000, Captured: 5000, RefundPending: 1500},
			Refund{Reference: "T-02", AcquirerRef: "re_1", Amount: 1500, Reason: "late", Status: refund.Pending, Code: codes.RefundPending},
			[]Effect{SaveRefund{Refund: Refund{Reference: "T-02", AcquirerRef: "re_1", Amount: 1500, Reason: "late", Status: refund.Pending, Code: codes.RefundPending}},
				WatchRefund{Refund: Refund{Reference: "T-02", AcquirerRef: "re_1", Amount: 1500, Reason: "late", Status: refund.Pending, Code: codes.RefundPending}}}, false},
		{"succeeded in part: partly refunded, ledger debited", paid, RefundAnswered, refund.Succeeded,
			Ledger{Authorised: 5000, Captured: 5000, Refunded: 1500}, succeeded,
			[]Effect{SaveRefund{Refund: succeeded}, DebitLedger{Reference: "refund/T-02", Amount: 1500},
				SaveOrder{To: status.PartiallyRefunded}, refundNotice(codes.OK, "1", "re_1")}, false},
		{"succeeded for the rest: refunded", State{Status: status.PartiallyRefunded, Ledger: Ledger{Authorised: 5000, Captured: 5000, Refunded: 3500}},
			RefundAnswered, refund.Succeeded,
			Ledger{Authorised: 5000, Captured: 5000, Refunded: 5000}, succeeded,
			[]Effect{SaveRefund{Refund: succeeded}, DebitLedger{Reference: "refund/T-02", Amount: 1500},
				SaveOrder{To: status.Refunded}, refundNotice(codes.OK, "1", "re_1")}, true},
		{"failed at the acquirer: the order stays, the merchant is told", paid, RefundAnswered, refund.Failed,
			paid.Ledger, failed,
			[]Effect{SaveRefund{Refund: failed}, SaveOrder{To: status.Paid}, refundNotice(codes.ConnectorError, "0", "re_1")}, false},
		{"an unknown status is failed", paid, RefundAnswered, refund.Status("weird"),
			paid.Ledger, failed,
			[]Effect{SaveRefund{Refund: failed}, SaveOrder{To: status.Paid}, refundNotice(codes.ConnectorError, "0", "re_1")}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			next, r, effects := tc.from.RefundSent(asked, tc.answer, tc.settled, "re_1", "USD")
			if next.Ledger != tc.ledger {
				t.Errorf("ledger = %+v, want %+v", next.Ledger, tc.ledger)
			}
			if r != tc.refund {
				t.Errorf("refund = %+v, want %+v", r, tc.refund)
			}
			if !reflect.DeepEqual(effects, tc.effects) {
				t.Errorf("effects = %#v\nwant      %#v", effects, tc.effects)
			}
		})
	}
}

// TestRefundSettledReleasesTheHold: a refund settled after it was held
// releases its amount, whatever the outcome.
func TestRefundSettledReleasesTheHold(t *testing.T) {
	held := State{Status: status.Paid, Ledger: Ledger{Authorised: 5000, Captured: 5000, RefundPending: 2000}}
	r := Refund{Reference: "T-01", AcquirerRef: "re_1", Amount: 2000, Status: refund.Pending}
	tests := []struct {
		name    string
		settled refund.Status
		want    Ledger
		to      status.Payment
	}{
		{"succeeded", refund.Succeeded, Ledger{Authorised: 5000, Captured: 5000, Refunded: 2000}, status.PartiallyRefunded},
		{"failed", refund.Failed, Ledger{Authorised: 5000, Captured: 5000}, status.Paid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			next, _, effects := held.RefundSettled(r, tc.settled, true, "USD")
			if next.Ledger != tc.want {
				t.Errorf("ledger = %+v, want %+v", next.Ledger, tc.want)
			}
			var to status.Payment
			for _, e := range effects {
				if s, ok := e.(SaveOrder); ok {
					to = s.To
				}
			}
			if to != tc.to {
				t.Errorf("saved at %v, want %v", to, tc.to)
			}
		})
	}
}

// TestDeadlines: each status runs its own window (the account's, or the
// default), a final status none.
func TestDeadlines(t *testing.T) {
	custom := Windows{Review: time.Hour, Authorisation: 2 * time.Hour, Refund: 3 * time.Hour, Session: 4 * time.Minute, APM: 5 * time.Hour}
	tests := []struct {
		name   string
		status status.Payment
		kind   Kind
		w      Windows
		want   Deadline
	}{
		{"card waiting for 3-D Secure", status.Pending, KindCard, custom, Deadline{Window: 4 * time.Minute, Lapse: LapseShopper}},
		{"hosted page", status.Pending, KindCheckout, Windows{}, Deadline{Window: DefaultSessionWindow, Lapse: LapseShopper}},
		{"APM waiting for its provider", status.Pending, KindAPM, custom, Deadline{Window: 5 * time.Hour, Lapse: LapseShopper}},
		{"APM by default", status.Pending, KindAPM, Windows{}, Deadline{Window: DefaultAPMWindow, Lapse: LapseShopper}},
		{"held for review", status.HeldForReview, KindCard, custom, Deadline{Window: time.Hour, Lapse: LapseReview}},
		{"authorised", status.Authorised, KindCard, Windows{}, Deadline{Window: DefaultAuthorisationWindow, Lapse: LapseAuthorisation}},
		{"paid", status.Paid, KindCard, custom, Deadline{Window: 3 * time.Hour, Lapse: LapseEnd, Refundable: true}},
		{"partly refunded", status.PartiallyRefunded, KindCard, Windows{}, Deadline{Window: DefaultRefundWindow, Lapse: LapseEnd, Refundable: true}},
		{"refunded", status.Refunded, KindCard, custom, Deadline{Final: true}},
		{"failed", status.Failed, KindCard, custom, Deadline{Final: true}},
		{"cancelled", status.Cancelled, KindCard, custom, Deadline{Final: true}},
		{"expired", status.Expired, KindCard, custom, Deadline{Final: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := (State{Status: tc.status}).Deadline(tc.kind, tc.w); got != tc.want {
				t.Errorf("Deadline = %+v, want %+v", got, tc.want)
			}
		})
	}
	start := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	d := Deadline{Window: time.Hour}
	if got := d.Remaining(start, start.Add(20*time.Minute)); got != 40*time.Minute {
		t.Errorf("Remaining = %v, want 40m", got)
	}
	if got := d.Remaining(start, start.Add(2*time.Hour)); got != -time.Hour {
		t.Errorf("Remaining after the window = %v, want -1h", got)
	}
}

package order

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/status"
)

// TestStateReadsTheCarriedCopy: a run started by an earlier version carried
// its state in a hand-made copy (OrderResume, whose JSON is below as that
// version wrote it). State reads it whole, and Resumed takes the stored
// card and the subscription from its result.
func TestStateReadsTheCarriedCopy(t *testing.T) {
	const carried = `{"Status":4100,"Since":"2026-11-20T10:00:00Z",
	"Result":{"TransactionID":"1000000000000000001","MerchantID":"M1","AccountID":"A1","OrderNo":"ORDER-1","Amount":5000,
	  "Currency":"USD","PaymentStatus":3000,"OrderStatus":1,"ResultCode":"0000","ResultMessage":"Success","CardMasked":"411111******1111",
	  "CardToken":"tok_1","Connector":"sim-acquirer","AuthCode":"A1","Risk":{"action":"approve","score":10,"reasons":null},
	  "Is3DS":false,"ThreeDSResult":"","IssuerURL":"","ExistingTransactionID":"","TokenID":"card_1",
	  "Recurring":{"ContractName":"gold","RecurringID":"R1","Period":"1 month","Next":"2026-12-20T10:00:00Z","Status":1}},
	"Risk":{"action":"approve","score":10,"reasons":null},
	"Card":{"Token":"tok_1","Masked":"411111******1111","Brand":"visa","Fingerprint":"fp","Stored":true,"TokenID":"card_1"},
	"ChargeID":"ch_1","AnsweredBy":"sim-acquirer","Authorised":5000,"Captured":5000,"Refunded":1200,"RefundSeq":2,
	"Writes":7,"NoticeSeq":3,"Notifications":[{"NotifyID":"1000000000000000001-n03","Type":"refund","Status":"pending","Attempts":1}],
	"Unrecorded":false,"Runs":1}`
	var got State
	if err := json.Unmarshal([]byte(carried), &got); err != nil {
		t.Fatal(err)
	}
	got = got.Resumed()
	recurring := &RecurringResult{ContractName: "gold", RecurringID: "R1", Period: "1 month",
		Next: time.Date(2026, 12, 20, 10, 0, 0, 0, time.UTC), Status: 1}
	want := State{
		Status: status.PartiallyRefunded, Since: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC),
		Result: &Result{TransactionID: "1000000000000000001", MerchantID: "M1", AccountID: "A1", OrderNo: "ORDER-1", Amount: 5000,
			Currency: "USD", PaymentStatus: status.Paid, OrderStatus: 1, ResultCode: "0000", ResultMessage: "Success",
			CardMasked: "411111******1111", CardToken: "tok_1", Connector: "sim-acquirer", AuthCode: "A1",
			Risk: risk.Result{Action: "approve", Score: 10}, TokenID: "card_1", Recurring: recurring},
		Risk:     risk.Result{Action: "approve", Score: 10},
		Card:     CardRef{Token: "tok_1", Masked: "411111******1111", Brand: "visa", Fingerprint: "fp", Stored: true, TokenID: "card_1"},
		ChargeID: "ch_1", AnsweredBy: "sim-acquirer",
		Ledger:    Ledger{Authorised: 5000, Captured: 5000, Refunded: 1200},
		RefundSeq: 2, Writes: 7, NoticeSeq: 3,
		Notifications: []notify.Delivery{{NotifyID: "1000000000000000001-n03", Type: "refund", Status: notify.Pending, Attempts: 1}},
		Runs:          1, TokenID: "card_1", Recurring: recurring,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("state read from the carried copy:\n got %+v\nwant %+v", got, want)
	}
	// What it writes reads back the same.
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var again State
	if err := json.Unmarshal(b, &again); err != nil || !reflect.DeepEqual(again, want) {
		t.Errorf("state does not read back as it was written: %v\n%+v", err, again)
	}
}

// TestCarried: the next run keeps the latest notifications only, on a copy,
// and counts one run more; nothing else changes.
func TestCarried(t *testing.T) {
	var notes []notify.Delivery
	for _, id := range []string{"n01", "n02", "n03", "n04"} {
		notes = append(notes, notify.Delivery{NotifyID: id})
	}
	s := State{Status: status.Paid, Ledger: Ledger{Captured: 10}, Notifications: notes, Runs: 2}
	got := s.Carried(2)
	if got.Runs != 3 || got.Status != status.Paid || got.Captured != 10 {
		t.Errorf("Carried = %+v", got)
	}
	if ids := []string{got.Notifications[0].NotifyID, got.Notifications[1].NotifyID}; len(got.Notifications) != 2 || ids[0] != "n03" || ids[1] != "n04" {
		t.Errorf("carried notifications = %+v, want n03 and n04", got.Notifications)
	}
	got.Notifications[0].Attempts = 9
	if s.Notifications[2].Attempts != 0 {
		t.Error("the carried notifications share their array with this run's")
	}
	if few := (State{Notifications: notes[:1]}).Carried(20); len(few.Notifications) != 1 {
		t.Errorf("a run with few notifications carried %d of 1", len(few.Notifications))
	}
}

// TestMoves: a move follows the state table; restating the status is no
// move; only the move that makes the order paid credits the merchant.
func TestMoves(t *testing.T) {
	tests := []struct {
		name    string
		from    status.Payment
		to      status.Payment
		refused bool
		credits bool
	}{
		{"authorised to paid", status.Authorised, status.Paid, false, true},
		{"pending to paid", status.Pending, status.Paid, false, true},
		{"pending restated", status.Pending, status.Pending, false, false},
		{"paid restated", status.Paid, status.Paid, false, false},
		{"paid to partly refunded", status.Paid, status.PartiallyRefunded, false, false},
		{"paid to failed", status.Paid, status.Failed, true, false},
		{"refunded to paid", status.Refunded, status.Paid, true, true},
		{"cancelled to authorised", status.Cancelled, status.Authorised, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := State{Status: tc.from}
			err := s.CheckMove(tc.to)
			if refused := errors.Is(err, status.ErrIllegalTransition); refused != tc.refused || (err != nil && !refused) {
				t.Errorf("CheckMove = %v, want refused %v", err, tc.refused)
			}
			if got := s.CreditsOnMove(tc.to); got != tc.credits {
				t.Errorf("CreditsOnMove = %v, want %v", got, tc.credits)
			}
		})
	}
	at := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	moved := State{Status: status.Pending, Since: at.Add(-time.Hour)}.Moved(status.Pending, at)
	if moved.Status != status.Pending || !moved.Since.Equal(at) {
		t.Errorf("a restated pending status keeps its old time: %+v", moved)
	}
}

// TestNewState: a new order is pending from now, with its card and the
// stored card it charges.
func TestNewState(t *testing.T) {
	at := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	card := CardRef{Token: "tok", Stored: true, TokenID: "card_1"}
	got := NewState(card, at)
	want := State{Status: status.Pending, Since: at, Card: card, TokenID: "card_1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NewState = %+v, want %+v", got, want)
	}
}

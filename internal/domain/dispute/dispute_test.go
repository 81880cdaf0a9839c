package dispute

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// TestCheck: the table of moves, with its refusals.
func TestCheck(t *testing.T) {
	tests := []struct {
		from, to Status
		ok       bool
	}{
		{NeedsResponse, UnderReview, true},
		{NeedsResponse, Accepted, true},
		{NeedsResponse, Lost, true},
		{NeedsResponse, Closed, true},
		{UnderReview, Won, true},
		{UnderReview, Lost, true},
		{UnderReview, NeedsResponse, true},
		{UnderReview, Closed, true},
		{UnderReview, Accepted, false},
		{Won, Lost, false},
		{Lost, Won, false},
		{Closed, NeedsResponse, false},
		{Won, Won, true},
	}
	for _, tc := range tests {
		t.Run(string(tc.from)+"→"+string(tc.to), func(t *testing.T) {
			err := Check(tc.from, tc.to)
			if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrIllegalMove) {
				t.Errorf("Check = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// TestMoney: a chargeback holds at once, an inquiry only once it
// escalates or is lost (the acquirer takes the money back then); the
// outcome releases or takes what is held.
func TestMoney(t *testing.T) {
	holds := []struct {
		name   string
		held   bool
		stage  Stage
		status Status
		want   bool
	}{
		{"a chargeback", false, Chargeback, NeedsResponse, true},
		{"a chargeback under review", false, Chargeback, UnderReview, true},
		{"pre-arbitration", false, PreArbitration, NeedsResponse, true},
		{"a chargeback held already", true, Chargeback, NeedsResponse, false},
		{"an inquiry", false, Inquiry, NeedsResponse, false},
		{"an inquiry under review", false, Inquiry, UnderReview, false},
		{"an inquiry closed", false, Inquiry, Closed, false},
		{"an inquiry won", false, Inquiry, Won, false},
		{"an inquiry lost", false, Inquiry, Lost, true},
		{"an inquiry accepted", false, Inquiry, Accepted, true},
	}
	for _, tc := range holds {
		if got := NeedsHold(tc.held, tc.stage, tc.status); got != tc.want {
			t.Errorf("NeedsHold, %s: %t, want %t", tc.name, got, tc.want)
		}
	}
	tests := []struct {
		held  bool
		final Status
		want  Money
	}{
		{true, Won, Release}, {true, Lost, Take}, {true, Accepted, Take}, {false, Closed, Keep}, {false, Lost, Keep},
	}
	for _, tc := range tests {
		if got := Settle(tc.held, tc.final); got != tc.want {
			t.Errorf("Settle(%v, %s) = %v, want %v", tc.held, tc.final, got, tc.want)
		}
	}
	for cur, want := range map[string]int64{"USD": 1500, "EUR": 1500, "JPY": 15} {
		if fee, err := Fee(cur); err != nil || fee.Minor != want {
			t.Errorf("Fee(%s) = %v %v, want %d", cur, fee, err, want)
		}
	}
}

// TestBlocksRefund: a refund is refused while the acquirer has taken the
// money back or decides a chargeback that takes it; an inquiry still open
// takes one (it settles the inquiry), as do a dispute won and one closed.
func TestBlocksRefund(t *testing.T) {
	tests := []struct {
		name   string
		stage  Stage
		status Status
		want   bool
	}{
		{"a chargeback awaiting the merchant", Chargeback, NeedsResponse, true},
		{"a chargeback under review", Chargeback, UnderReview, true},
		{"a chargeback lost", Chargeback, Lost, true},
		{"a chargeback accepted", Chargeback, Accepted, true},
		{"a chargeback won", Chargeback, Won, false},
		{"pre-arbitration", PreArbitration, NeedsResponse, true},
		{"pre-arbitration won", PreArbitration, Won, false},
		{"an inquiry", Inquiry, NeedsResponse, false},
		{"an inquiry under review", Inquiry, UnderReview, false},
		{"an inquiry lost", Inquiry, Lost, true},
		{"an inquiry accepted", Inquiry, Accepted, true},
		{"an inquiry closed", Inquiry, Closed, false},
		{"an inquiry won", Inquiry, Won, false},
	}
	for _, tc := range tests {
		if got := BlocksRefund(tc.stage, tc.status); got != tc.want {
			t.Errorf("BlocksRefund, %s: %t, want %t", tc.name, got, tc.want)
		}
	}
}

// TestRemindersBefore: 72 and 24 hours before the deadline, those still
// ahead.
func TestRemindersBefore(t *testing.T) {
	due := time.Date(2027, 3, 8, 9, 0, 0, 0, time.UTC)
	if got := RemindersBefore(due, due.Add(-7*24*time.Hour)); !slices.Equal(got, []time.Time{due.Add(-72 * time.Hour), due.Add(-24 * time.Hour)}) {
		t.Errorf("a week ahead: %v", got)
	}
	if got := RemindersBefore(due, due.Add(-48*time.Hour)); !slices.Equal(got, []time.Time{due.Add(-24 * time.Hour)}) {
		t.Errorf("two days ahead: %v", got)
	}
	if got := RemindersBefore(due, due.Add(-time.Hour)); len(got) != 0 {
		t.Errorf("an hour ahead: %v", got)
	}
}

// TestRead: the acquirer's words, and the ones not understood.
func TestRead(t *testing.T) {
	if st, s, ok := Read("chargeback", "needs_response"); !ok || st != Chargeback || s != NeedsResponse {
		t.Errorf("chargeback needs_response = %s %s %v", st, s, ok)
	}
	for _, bad := range [][2]string{{"retrieval", "needs_response"}, {"chargeback", "accepted"}, {"chargeback", "warning"}} {
		if _, _, ok := Read(bad[0], bad[1]); ok {
			t.Errorf("Read(%v) understood", bad)
		}
	}
}

// TestFileKind: a file named after a kind, in any case, with an extension,
// spaces or hyphens, is of that kind; any other name is the uncategorized
// file.
func TestFileKind(t *testing.T) {
	tests := []struct{ name, want string }{
		{"receipt", FileReceipt},
		{"Receipt.pdf", FileReceipt},
		{" RECEIPT.PNG ", FileReceipt},
		{"shipping-documentation.pdf", FileShippingDocumentation},
		{"Customer Communication.png", FileCustomerCommunication},
		{"duplicate_charge_documentation.jpeg", FileDuplicateChargeDocumentation},
		{"uncategorized_file.pdf", FileOther},
		{"receipt.final.pdf", FileOther},
		{"my receipt.pdf", FileOther},
		{".pdf", FileOther},
		{"", FileOther},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := FileKind(tc.name); got != tc.want {
				t.Errorf("FileKind(%q) = %q, want %q", tc.name, got, tc.want)
			}
		})
	}
}

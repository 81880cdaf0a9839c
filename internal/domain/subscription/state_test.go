package subscription

import (
	"reflect"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/codes"
)

// TestCharged: an approved charge moves to the next cycle; a declined one
// is retried after the next dunning offset until none is left, then the
// subscription is suspended; a deleted card suspends it at once.
func TestCharged(t *testing.T) {
	due := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	offsets := []time.Duration{24 * time.Hour, 72 * time.Hour}
	start := State{RecurringID: "R1", Status: Active, Cycle: 3, Charges: 3, Next: due}
	approved := ChargeResult{Cycle: 4, TransactionID: "T4", OrderNo: "R1-c4", Approved: true, ResultCode: "0000"}
	declined := func(attempt int) ChargeResult {
		return ChargeResult{Cycle: 4, Attempt: attempt, OrderNo: ChargeOrderNo("R1", 4, attempt), ResultCode: codes.Declined.ID}
	}
	deleted := ChargeResult{Cycle: 4, OrderNo: "R1-c4", ResultCode: codes.TokenDeleted.ID}
	tests := []struct {
		name     string
		attempt  int
		res      ChargeResult
		step     Step
		cycle    int
		charges  int
		attempts int
		next     time.Time
	}{
		{"approved on the due date", 0, approved, NextCycle, 4, 4, 0, due},
		{"approved on the last retry", 2, approved, NextCycle, 4, 4, 0, due},
		{"declined: retried a day later", 0, declined(0), Retry, 3, 3, 1, due.Add(24 * time.Hour)},
		{"declined again: retried three days after the due date", 1, declined(1), Retry, 3, 3, 2, due.Add(72 * time.Hour)},
		{"declined on the last retry: suspended", 2, declined(2), Suspend, 3, 3, 3, due},
		{"card deleted: suspended at once", 0, deleted, Suspend, 3, 3, 1, due},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, step := start.Charged(4, tc.attempt, tc.res, due, offsets)
			if step != tc.step || got.Cycle != tc.cycle || got.Charges != tc.charges || got.Attempts != tc.attempts || !got.Next.Equal(tc.next) {
				t.Errorf("Charged = step %v cycle %d charges %d attempts %d next %v; want %v %d %d %d %v",
					step, got.Cycle, got.Charges, got.Attempts, got.Next, tc.step, tc.cycle, tc.charges, tc.attempts, tc.next)
			}
			if len(got.History) != 1 || got.History[0] != tc.res || len(start.History) != 0 {
				t.Errorf("history = %+v (was %+v), want the charge added", got.History, start.History)
			}
			if got.Status != Active {
				t.Errorf("status = %v: a charge alone never ends the subscription", got.Status)
			}
		})
	}
}

// TestAttemptAt: the first attempt is on the due date, each retry after its
// offset from it.
func TestAttemptAt(t *testing.T) {
	due := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	offsets := []time.Duration{time.Hour, 5 * time.Hour}
	for attempt, want := range []time.Time{due, due.Add(time.Hour), due.Add(5 * time.Hour)} {
		if got := AttemptAt(due, offsets, attempt); !got.Equal(want) {
			t.Errorf("AttemptAt(%d) = %v, want %v", attempt, got, want)
		}
	}
}

// TestEndings: a cancel ends an active subscription only; every ending
// clears the next charge.
func TestEndings(t *testing.T) {
	next := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		from    Status
		want    Status
		changed bool
	}{
		{"active", Active, Cancelled, true},
		{"already suspended", Suspended, Suspended, false},
		{"already finished", Finished, Finished, false},
		{"already cancelled", Cancelled, Cancelled, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := State{Status: tc.from, Next: next}.Cancel()
			if got.Status != tc.want || changed != tc.changed || changed && !got.Next.IsZero() {
				t.Errorf("Cancel = %v, %v (next %v); want %v, %v", got.Status, changed, got.Next, tc.want, tc.changed)
			}
		})
	}
	if got := (State{Status: Active, Next: next}).Ended(Finished); got.Status != Finished || !got.Next.IsZero() {
		t.Errorf("Ended(Finished) = %+v", got)
	}
	if got, want := (State{Next: next, Attempts: 2}).CycleDue(next.AddDate(0, 1, 0)), (State{Next: next.AddDate(0, 1, 0)}); !reflect.DeepEqual(got, want) {
		t.Errorf("CycleDue = %+v, want %+v", got, want)
	}
	if got := ChargeOrderNo("R1", 12, 0); got != "R1-c12" {
		t.Errorf("ChargeOrderNo first attempt = %q", got)
	}
	if got := ChargeOrderNo("R1", 12, 2); got != "R1-c12-r2" {
		t.Errorf("ChargeOrderNo retry = %q", got)
	}
}

// TestIsChargeOrderNo: the form of the charges' order numbers, which a
// merchant's order may not take; near misses are the merchant's.
func TestIsChargeOrderNo(t *testing.T) {
	tests := []struct {
		orderNo string
		want    bool
	}{
		{ChargeOrderNo("R1379868670095785984", 4, 0), true},
		{ChargeOrderNo("R1379868670095785984", 12, 3), true},
		{"R1379868670095785984-c", false},
		{"R137986867009578598-c4", false},
		{"R1379868670095785984-c4-x", false},
		{"ORD-R1379868670095785984-c4", false},
		{"R1379868670095785984-c4-r", false},
		{"ORDER-2026-0001", false},
	}
	for _, tc := range tests {
		if got := IsChargeOrderNo(tc.orderNo); got != tc.want {
			t.Errorf("IsChargeOrderNo(%q) = %v, want %v", tc.orderNo, got, tc.want)
		}
	}
}

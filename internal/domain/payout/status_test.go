package payout

import (
	"errors"
	"fmt"
	"testing"
)

func TestCanTransition(t *testing.T) {
	// A payout's own life: NEW → SCHEDULED (future payment_date) → SUBMITTED
	// → COMPLETED, and FAILED from any step before the end. Nothing else; a
	// re-run is not a transition (TestRerun).
	allowed := map[[2]Status]bool{
		{StatusNew, StatusScheduled}:       true,
		{StatusNew, StatusSubmitted}:       true,
		{StatusNew, StatusFailed}:          true,
		{StatusScheduled, StatusSubmitted}: true,
		{StatusScheduled, StatusFailed}:    true,
		{StatusSubmitted, StatusCompleted}: true,
		{StatusSubmitted, StatusFailed}:    true,
	}
	all := append(Statuses(), Status("PAID"), Status(""))
	for _, from := range all {
		for _, to := range all {
			want := allowed[[2]Status{from, to}]
			t.Run(fmt.Sprintf("%s->%s", from, to), func(t *testing.T) {
				if got := CanTransition(from, to); got != want {
					t.Errorf("CanTransition(%q, %q) = %t, want %t", from, to, got, want)
				}
			})
		}
	}
}

func TestRefusedTransitions(t *testing.T) {
	tests := []struct {
		name     string
		from, to Status
	}{
		{"a completed payout never fails afterwards", StatusCompleted, StatusFailed},
		{"a completed payout is not submitted again", StatusCompleted, StatusSubmitted},
		{"a failed payout does not complete", StatusFailed, StatusCompleted},
		{"a failed payout is not resubmitted by itself", StatusFailed, StatusSubmitted},
		{"nothing completes without the rail", StatusNew, StatusCompleted},
		{"nothing completes from the schedule", StatusScheduled, StatusCompleted},
		{"no way back to NEW", StatusSubmitted, StatusNew},
		{"no way back to SCHEDULED", StatusSubmitted, StatusScheduled},
		{"staying is not a transition", StatusSubmitted, StatusSubmitted},
		{"unknown statuses go nowhere", Status("PAID"), StatusCompleted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if CanTransition(tc.from, tc.to) {
				t.Errorf("CanTransition(%s, %s) = true, want refused", tc.from, tc.to)
			}
		})
	}
}

func TestFinalAndKnown(t *testing.T) {
	tests := []struct {
		s     Status
		known bool
		final bool
	}{
		{StatusNew, true, false},
		{StatusScheduled, true, false},
		{StatusSubmitted, true, false},
		{StatusCompleted, true, true},
		{StatusFailed, true, true},
		{Status("completed"), false, false},
		{Status(""), false, false},
	}
	for _, tc := range tests {
		t.Run(string(tc.s), func(t *testing.T) {
			if got := tc.s.Known(); got != tc.known {
				t.Errorf("Known = %t, want %t", got, tc.known)
			}
			if got := tc.s.Final(); got != tc.final {
				t.Errorf("Final = %t, want %t", got, tc.final)
			}
		})
	}
}

func TestRerun(t *testing.T) {
	tests := []struct {
		from    Status
		want    Status
		wantErr error
	}{
		{StatusFailed, StatusNew, nil},
		{StatusCompleted, "", ErrRerunCompleted},
		{StatusNew, "", ErrRerunInFlight},
		{StatusScheduled, "", ErrRerunInFlight},
		{StatusSubmitted, "", ErrRerunInFlight},
		{Status("RETRIED"), "", ErrUnknownStatus},
	}
	for _, tc := range tests {
		t.Run(string(tc.from), func(t *testing.T) {
			got, err := Rerun(tc.from)
			if got != tc.want || !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Errorf("Rerun(%s) = %q, %v; want %q, %v", tc.from, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestFailureTypes(t *testing.T) {
	tests := []struct {
		f            FailureType
		rerunMayHelp bool
	}{
		{FailureInsufficientFunds, true},
		{FailureQuoteUnavailable, true},
		{FailureAmountNotPayable, false},
		{FailureBeneficiaryAccount, false},
		{FailureRailRejected, false},
		{FailureRailUnavailable, true},
		{FailureUnknown, true},
	}
	if len(tests) != len(FailureTypes()) {
		t.Fatalf("test lists %d failure types, FailureTypes %d", len(tests), len(FailureTypes()))
	}
	reasons := map[string]FailureType{}
	for i, tc := range tests {
		t.Run(string(tc.f), func(t *testing.T) {
			if FailureTypes()[i] != tc.f {
				t.Errorf("FailureTypes()[%d] = %s", i, FailureTypes()[i])
			}
			if got := tc.f.RerunMayHelp(); got != tc.rerunMayHelp {
				t.Errorf("RerunMayHelp = %t, want %t", got, tc.rerunMayHelp)
			}
			r := tc.f.Reason()
			if other, dup := reasons[r]; dup {
				t.Errorf("reason %q shared with %s", r, other)
			}
			reasons[r] = tc.f
		})
	}
	if FailureUnknown != "UNKNOWN" {
		t.Errorf("FailureUnknown = %q, the interface writes UNKNOWN", FailureUnknown)
	}
	if StatusCompleted != "COMPLETED" {
		t.Errorf("StatusCompleted = %q, the interface writes COMPLETED", StatusCompleted)
	}
}

package subscription

import (
	"errors"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/money"
)

// monthly is a monthly subscription of 10.00 EUR after a first payment of
// 1.00 EUR, promoted for two charges, paid first on 31 January 2027.
var (
	firstPaid = time.Date(2027, 1, 31, 9, 0, 0, 0, time.UTC)
	monthly   = Terms{ContractName: "Gold", Amount: money.FromMinor(1000, "EUR"), PromoAmount: money.FromMinor(100, "EUR"),
		Interval: Month, IntervalCount: 1, PromotionCycles: 2}
)

func day9(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 9, 0, 0, 0, time.UTC) }

// TestPlanDue: the plan moves the schedule by its anchor and skip, always
// from an anchor so a month end stays a month end.
func TestPlanDue(t *testing.T) {
	tests := []struct {
		name  string
		plan  Plan
		cycle int
		want  time.Time
	}{
		{"no change: the terms' schedule", Plan{}, 3, day9(2027, 3, 31)},
		{"no change: February clamped", Plan{}, 2, day9(2027, 2, 28)},
		{"one date skipped by a pause", Plan{Skip: 1}, 2, day9(2027, 3, 31)},
		{"anchored: the anchor's cycle on the anchor", Plan{Anchor: day9(2027, 5, 15), AnchorCycle: 3}, 3, day9(2027, 5, 15)},
		{"anchored: later cycles follow it", Plan{Anchor: day9(2027, 5, 15), AnchorCycle: 3}, 5, day9(2027, 7, 15)},
		{"anchored: earlier cycles as agreed", Plan{Anchor: day9(2027, 5, 15), AnchorCycle: 3}, 2, day9(2027, 2, 28)},
		{"anchored and skipped", Plan{Anchor: day9(2027, 5, 15), AnchorCycle: 3, Skip: 2}, 3, day9(2027, 7, 15)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.plan.Due(monthly, firstPaid, tc.cycle); !got.Equal(tc.want) {
				t.Errorf("Due(%d) = %v, want %v", tc.cycle, got, tc.want)
			}
		})
	}
}

// TestPlanAmountOf: a new amount replaces the promotion and the contract
// amount from its cycle on.
func TestPlanAmountOf(t *testing.T) {
	changed := Plan{Amount: money.FromMinor(1500, "EUR"), AmountFrom: 2}
	tests := []struct {
		name  string
		plan  Plan
		cycle int
		want  int64
	}{
		{"as agreed: promotion", Plan{}, 2, 100},
		{"as agreed: contract amount", Plan{}, 3, 1000},
		{"changed: before its cycle", changed, 1, 100},
		{"changed: in the promotion", changed, 2, 1500},
		{"changed: after the promotion", changed, 7, 1500},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.plan.AmountOf(monthly, tc.cycle); got != money.FromMinor(tc.want, "EUR") {
				t.Errorf("AmountOf(%d) = %v, want %d EUR", tc.cycle, got, tc.want)
			}
		})
	}
}

// TestPlanEnded: billing_cycle counts charges, so a pause does not shorten
// it; contract_end is a date, so a pause does not lengthen it.
func TestPlanEnded(t *testing.T) {
	limited := monthly
	limited.BillingCycles = 3
	ending := monthly
	ending.End = day9(2027, 5, 1)
	tests := []struct {
		name  string
		terms Terms
		plan  Plan
		cycle int
		want  bool
	}{
		{"third of three charges", limited, Plan{}, 3, false},
		{"third of three charges after a pause", limited, Plan{Skip: 4}, 3, false},
		{"fourth of three", limited, Plan{}, 4, true},
		{"March before contract_end", ending, Plan{}, 3, false},
		{"pause pushes it past contract_end", ending, Plan{Skip: 2}, 3, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.plan.Ended(tc.terms, firstPaid, tc.cycle); got != tc.want {
				t.Errorf("Ended(%d) = %v, want %v", tc.cycle, got, tc.want)
			}
		})
	}
}

// TestPauseResumeAmend: the merchant's changes, each counted; ended
// subscriptions do not change.
func TestPauseResumeAmend(t *testing.T) {
	active := State{RecurringID: "R1", Status: Active, Cycle: 2, Charges: 2, Next: day9(2027, 3, 31)}
	paused, _ := active.Pause()
	tests := []struct {
		name    string
		change  func(State) (State, bool)
		from    State
		changed bool
		status  Status
		next    time.Time
		amount  int64
		changes int
	}{
		{"pause an active one", State.Pause, active, true, Paused, time.Time{}, 1000, 1},
		{"pause a paused one", State.Pause, paused, false, Paused, time.Time{}, 1000, 1},
		{"pause a cancelled one", State.Pause, active.Ended(Cancelled), false, Cancelled, time.Time{}, 1000, 0},
		{"resume before the next date: as scheduled", func(s State) (State, bool) {
			return s.Resume(monthly, firstPaid, day9(2027, 3, 2))
		}, paused, true, Active, day9(2027, 3, 31), 1000, 2},
		{"resume after two dates passed: they are skipped", func(s State) (State, bool) {
			return s.Resume(monthly, firstPaid, day9(2027, 5, 10))
		}, paused, true, Active, day9(2027, 5, 31), 1000, 2},
		{"resume an active one", func(s State) (State, bool) {
			return s.Resume(monthly, firstPaid, day9(2027, 5, 10))
		}, active, false, Active, day9(2027, 3, 31), 1000, 0},
		{"amend the amount", func(s State) (State, bool) {
			return s.Amend(monthly, firstPaid, Amendment{Amount: money.FromMinor(2500, "EUR")})
		}, active, true, Active, day9(2027, 3, 31), 2500, 1},
		{"amend the date", func(s State) (State, bool) {
			return s.Amend(monthly, firstPaid, Amendment{Next: day9(2027, 3, 5)})
		}, active, true, Active, day9(2027, 3, 5), 1000, 1},
		{"amend a paused one: stays paused", func(s State) (State, bool) {
			return s.Amend(monthly, firstPaid, Amendment{Amount: money.FromMinor(2500, "EUR"), Next: day9(2027, 4, 1)})
		}, paused, true, Paused, time.Time{}, 2500, 2},
		{"the same amendment again", func(s State) (State, bool) {
			s, _ = s.Amend(monthly, firstPaid, Amendment{Amount: money.FromMinor(2500, "EUR"), Next: day9(2027, 3, 5)})
			return s.Amend(monthly, firstPaid, Amendment{Amount: money.FromMinor(2500, "EUR"), Next: day9(2027, 3, 5)})
		}, active, false, Active, day9(2027, 3, 5), 2500, 1},
		{"amend a finished one", func(s State) (State, bool) {
			return s.Amend(monthly, firstPaid, Amendment{Amount: money.FromMinor(2500, "EUR")})
		}, active.Ended(Finished), false, Finished, time.Time{}, 1000, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := tc.change(tc.from)
			if changed != tc.changed || got.Status != tc.status || !got.Next.Equal(tc.next) ||
				got.NextAmount(monthly) != money.FromMinor(tc.amount, "EUR") || got.Plan.Changes != tc.changes {
				t.Errorf("= changed %v status %v next %v amount %v changes %d; want %v %v %v %d %d", changed, got.Status,
					got.Next, got.NextAmount(monthly), got.Plan.Changes, tc.changed, tc.status, tc.next, tc.amount, tc.changes)
			}
		})
	}
}

// TestCancelPaused: a paused subscription can be cancelled.
func TestCancelPaused(t *testing.T) {
	paused, _ := State{Status: Active, Cycle: 2}.Pause()
	if got, changed := paused.Cancel(); !changed || got.Status != Cancelled {
		t.Errorf("Cancel of a paused one = %v %v, want cancelled", got.Status, changed)
	}
}

// TestParseAmendment: what POST /v1/updatesubscription takes.
func TestParseAmendment(t *testing.T) {
	now := day9(2027, 3, 1)
	ending := monthly
	ending.End = day9(2027, 9, 1)
	tests := []struct {
		name         string
		terms        Terms
		amount, next string
		want         Amendment
		field        string
	}{
		{"amount", monthly, "12.50", "", Amendment{Amount: money.FromMinor(1250, "EUR")}, ""},
		{"date", monthly, "", "2027-03-10", Amendment{Next: time.Date(2027, 3, 10, 0, 0, 0, 0, time.UTC)}, ""},
		{"time as answers write it", monthly, "", "2027-03-10 08:30:00", Amendment{Next: time.Date(2027, 3, 10, 8, 30, 0, 0, time.UTC)}, ""},
		{"both", monthly, " 5 ", " 20270310 ", Amendment{Amount: money.FromMinor(500, "EUR"), Next: time.Date(2027, 3, 10, 0, 0, 0, 0, time.UTC)}, ""},
		{"neither", monthly, "", "", Amendment{}, "contract_amount"},
		{"zero amount", monthly, "0", "", Amendment{}, "contract_amount"},
		{"too many decimals", monthly, "1.234", "", Amendment{}, "contract_amount"},
		{"not a date", monthly, "", "soon", Amendment{}, "recurring_deduction_time"},
		{"in the past", monthly, "", "2027-02-01", Amendment{}, "recurring_deduction_time"},
		{"more than a year ahead", monthly, "", "2028-03-02", Amendment{}, "recurring_deduction_time"},
		{"after contract_end", ending, "", "2027-09-02", Amendment{}, "recurring_deduction_time"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAmendment(tc.terms, tc.amount, tc.next, now)
			var fe *FieldError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field):
				t.Fatalf("err = %v, want a refusal of %s", err, tc.field)
			case got.Amount != tc.want.Amount || !got.Next.Equal(tc.want.Next):
				t.Errorf("= %+v, want %+v", got, tc.want)
			}
		})
	}
}

package recon

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	dayEnd = time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	cfg    = Config{SettleWithin: 48 * time.Hour, Fees: FeeSchedule{Fixed: 30, BasisPoints: 290, Tolerance: 1}}
	old    = dayEnd.Add(-72 * time.Hour)
)

// captured is a capture recorded here, old enough to be due.
func captured(order, ref string, amount int64, currency string) Expected {
	return Expected{OrderKey: order, Reference: ref, Type: Capture, Amount: amount, Currency: currency, At: old}
}

// neighbour is e owed on a day beside the one reconciled.
func neighbour(e Expected) Expected {
	e.Neighbour = true
	return e
}

// settled is the acquirer's line of a capture at the contracted fee.
func settled(no int, order, ref string, gross int64, currency string) Line {
	fee := cfg.Fees.Fee(gross)
	return Line{No: no, Reference: ref, OrderKey: order, Type: Capture, Gross: gross, Fee: fee, Net: gross - fee, Currency: currency, Batch: "B1"}
}

// TestFeeSchedule: fixed plus basis points, rounded half up.
func TestFeeSchedule(t *testing.T) {
	f := FeeSchedule{Fixed: 30, BasisPoints: 290}
	for _, tc := range []struct{ gross, want int64 }{{1000, 59}, {1017, 59}, {1018, 60}, {0, 30}, {100000, 2930}} {
		if got := f.Fee(tc.gross); got != tc.want {
			t.Errorf("Fee(%d) = %d, want %d", tc.gross, got, tc.want)
		}
	}
}

// TestReconcile: each kind of discrepancy, seeded once among matched lines,
// is found and classified, and nothing else is.
func TestReconcile(t *testing.T) {
	bad := func(l Line, edit func(*Line)) Line {
		edit(&l)
		return l
	}
	tests := []struct {
		name      string
		expected  []Expected
		lines     []Line
		wantLines []Class // per line, in report order
		wantExp   []Class // per expectation
	}{
		{"a capture settled as recorded",
			[]Expected{captured("T1", "ch_1", 1000, "USD")},
			[]Line{settled(1, "T1", "ch_1", 1000, "USD")},
			[]Class{Matched}, []Class{Matched}},
		{"a capture never settled, and one not due yet",
			[]Expected{captured("T1", "ch_1", 1000, "USD"), {OrderKey: "T2", Reference: "ch_2", Type: Capture, Amount: 500, Currency: "USD", At: dayEnd.Add(-time.Hour)}},
			nil, nil, []Class{MissingAtAcquirer, Pending}},
		{"settled there, unknown here",
			nil,
			[]Line{settled(1, "T9", "ch_9", 1000, "USD")},
			[]Class{MissingHere}, nil},
		{"off by a cent",
			[]Expected{captured("T1", "ch_1", 1000, "USD")},
			[]Line{settled(1, "T1", "ch_1", 999, "USD")},
			[]Class{AmountMismatch}, []Class{Matched}},
		{"another currency",
			[]Expected{captured("T1", "ch_1", 1000, "USD")},
			[]Line{settled(1, "T1", "ch_1", 1000, "EUR")},
			[]Class{CurrencyMismatch}, []Class{Matched}},
		{"a duplicate line",
			[]Expected{captured("T1", "ch_1", 1000, "USD")},
			[]Line{settled(1, "T1", "ch_1", 1000, "USD"), settled(2, "T1", "ch_1", 1000, "USD")},
			[]Class{Matched, Duplicate}, []Class{Matched}},
		{"a fee above the contract",
			[]Expected{captured("T1", "ch_1", 1000, "USD")},
			[]Line{bad(settled(1, "T1", "ch_1", 1000, "USD"), func(l *Line) { l.Fee, l.Net = 75, 925 })},
			[]Class{FeeOutside}, []Class{Matched}},
		{"a fee within the tolerance",
			[]Expected{captured("T1", "ch_1", 1000, "USD")},
			[]Line{bad(settled(1, "T1", "ch_1", 1000, "USD"), func(l *Line) { l.Fee, l.Net = 60, 940 })},
			[]Class{Matched}, []Class{Matched}},
		{"gross less fee is not net",
			[]Expected{captured("T1", "ch_1", 1000, "USD")},
			[]Line{bad(settled(1, "T1", "ch_1", 1000, "USD"), func(l *Line) { l.Net = 900 })},
			[]Class{AmountMismatch}, []Class{Matched}},
		{"a refund settled for another amount",
			[]Expected{captured("T1", "ch_1", 1000, "USD"), {OrderKey: "T1", Reference: "re_1", Type: Refund, Amount: 200, Currency: "USD", At: old}},
			[]Line{settled(1, "T1", "ch_1", 1000, "USD"), {No: 2, Reference: "re_1", OrderKey: "T1", Type: Refund, Gross: 250, Net: -250, Currency: "USD"}},
			[]Class{Matched, RefundMismatch}, []Class{Matched, Matched}},
		{"an acquirer without its own references matches by order, one line each",
			[]Expected{{OrderKey: "T1", Type: Refund, Amount: 100, Currency: "USD", At: old}, {OrderKey: "T1", Type: Refund, Amount: 100, Currency: "USD", At: old}},
			[]Line{{No: 1, OrderKey: "T1", Type: Refund, Gross: 100, Net: -100, Currency: "USD"}, {No: 2, OrderKey: "T1", Type: Refund, Gross: 100, Net: -100, Currency: "USD"},
				{No: 3, OrderKey: "T1", Type: Refund, Gross: 100, Net: -100, Currency: "USD"}},
			[]Class{Matched, Matched, Duplicate}, []Class{Matched, Matched}},
		{"a charge we never recorded does not take ours by the order key",
			[]Expected{captured("T1", "ch_1", 1000, "USD")},
			[]Line{settled(1, "T1", "ch_2", 1000, "USD"), settled(2, "T1", "ch_1", 1000, "USD")},
			[]Class{Duplicate, Matched}, []Class{Matched}},
		{"partial refunds without references pair by amount",
			[]Expected{{OrderKey: "T1", Type: Refund, Amount: 300, Currency: "USD", At: old}, {OrderKey: "T1", Type: Refund, Amount: 700, Currency: "USD", At: old}},
			[]Line{{No: 1, OrderKey: "T1", Type: Refund, Gross: 700, Net: -700, Currency: "USD"}, {No: 2, OrderKey: "T1", Type: Refund, Gross: 300, Net: -300, Currency: "USD"}},
			[]Class{Matched, Matched}, []Class{Matched, Matched}},
		{"the acquirer's chargeback and fee adjustment",
			[]Expected{captured("T1", "ch_1", 1000, "USD")},
			[]Line{settled(1, "T1", "ch_1", 1000, "USD"), {No: 2, OrderKey: "T1", Type: Chargeback, Gross: 1000, Net: -1000, Currency: "USD"},
				{No: 3, OrderKey: "T7", Type: FeeAdjustment, Fee: 15, Net: -15, Currency: "USD"}},
			[]Class{Matched, Matched, MissingHere}, []Class{Matched}},
		{"the acquirer's own fee, of no order, is the gateway's cost",
			nil,
			[]Line{{No: 1, Reference: "txn_4", Type: FeeAdjustment, Net: -200, Currency: "USD"}},
			[]Class{Matched}, nil},
		{"a refund whose net is more than it and its fee",
			[]Expected{{OrderKey: "T1", Reference: "re_1", Type: Refund, Amount: 1000, Currency: "USD", At: old}},
			[]Line{{No: 1, Reference: "re_1", OrderKey: "T1", Type: Refund, Gross: 1000, Net: -1100, Currency: "USD"}},
			[]Class{RefundMismatch}, []Class{Matched}},
		{"a refund with its fee taken, and one whose fee came back",
			[]Expected{{OrderKey: "T1", Reference: "re_1", Type: Refund, Amount: 1000, Currency: "USD", At: old},
				{OrderKey: "T2", Reference: "re_2", Type: Refund, Amount: 2500, Currency: "USD", At: old}},
			[]Line{{No: 1, Reference: "re_1", OrderKey: "T1", Type: Refund, Gross: 1000, Fee: 30, Net: -1030, Currency: "USD"},
				{No: 2, Reference: "re_2", OrderKey: "T2", Type: Refund, Gross: 2500, Fee: -80, Net: -2420, Currency: "USD"}},
			[]Class{Matched, Matched}, []Class{Matched, Matched}},
		{"a chargeback twice in one report, and its reinstatement once",
			nil,
			[]Line{{No: 1, Reference: "dp_5", OrderKey: "T5", Type: Chargeback, Gross: 1000, Fee: 15, Net: -1015, Currency: "USD"},
				{No: 2, Reference: "dp_5", OrderKey: "T5", Type: Chargeback, Gross: 1000, Fee: 15, Net: -1015, Currency: "USD"},
				{No: 3, Reference: "dp_5", OrderKey: "T5", Type: Chargeback, Gross: -1000, Net: 1000, Currency: "USD"}},
			[]Class{Matched, Duplicate, Matched}, nil},
		{"a neighbouring day's capture, settled here by its reference",
			[]Expected{captured("T1", "ch_1", 1000, "USD"), neighbour(captured("T2", "ch_2", 500, "USD"))},
			[]Line{settled(1, "T1", "ch_1", 1000, "USD"), settled(2, "T2", "ch_2", 500, "USD")},
			[]Class{Matched, Matched}, []Class{Matched, Matched}},
		{"a neighbouring day's capture no line settles is its own day's",
			[]Expected{neighbour(captured("T2", "ch_2", 500, "USD")), captured("T1", "ch_1", 1000, "USD")},
			[]Line{settled(1, "T1", "ch_1", 1000, "USD")},
			[]Class{Matched}, []Class{Matched}},
		{"a neighbour is not taken by its order key alone",
			[]Expected{neighbour(Expected{OrderKey: "T2", Type: Refund, Amount: 100, Currency: "USD", At: old})},
			[]Line{{No: 1, OrderKey: "T2", Type: Refund, Gross: 100, Net: -100, Currency: "USD"}},
			[]Class{MissingHere}, nil},
		{"a chargeback another day's report settled, again here; its reinstatement is new",
			nil,
			[]Line{{No: 1, Reference: "dp_7", OrderKey: "T5", Type: Chargeback, Gross: 1000, Fee: 15, Net: -1015, Currency: "USD"},
				{No: 2, Reference: "dp_7", OrderKey: "T5", Type: Chargeback, Gross: -1000, Net: 1000, Currency: "USD"}},
			[]Class{Duplicate, Matched}, nil},
		{"a chargeback weeks after its capture, of an order here, and of one nowhere",
			nil,
			[]Line{{No: 1, Reference: "dp_5", OrderKey: "T5", Type: Chargeback, Gross: 1000, Fee: 15, Net: -1015, Currency: "USD"},
				{No: 2, Reference: "dp_6", OrderKey: "T6", Type: Chargeback, Gross: 1000, Net: -1000, Currency: "USD"}},
			[]Class{Matched, MissingHere}, nil},
		{"a refund the acquirer gave back, of an order here and of none",
			nil,
			[]Line{{No: 1, Reference: "re_5", OrderKey: "T5", Type: RefundFailure, Gross: -200, Net: 200, Currency: "USD"},
				{No: 2, Reference: "re_6", Type: RefundFailure, Gross: -300, Net: 300, Currency: "USD"}},
			[]Class{RefundReversed, RefundReversed}, nil},
		{"a refund given back the day it is owed still settles it",
			[]Expected{{OrderKey: "T1", Reference: "re_1", Type: Refund, Amount: 200, Currency: "USD", At: old}},
			[]Line{{No: 1, Reference: "re_1", OrderKey: "T1", Type: Refund, Gross: 200, Net: -200, Currency: "USD"},
				{No: 2, Reference: "re_1", OrderKey: "T1", Type: RefundFailure, Gross: -200, Net: 200, Currency: "USD"}},
			[]Class{Matched, RefundReversed}, []Class{Matched}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := cfg
			// T5 was captured on another day.
			cfg.Orders = map[string]bool{"T5": true}
			// dp_7's debit was on an earlier report.
			cfg.ChargebacksElsewhere = map[OwnLine]string{{Reference: "dp_7", Debit: true}: "line 3 of 2026-11-20"}
			rep := Reconcile(dayEnd, tc.lines, tc.expected, cfg)
			var lines, exp []Class
			for _, l := range rep.Lines {
				lines = append(lines, l.Class)
			}
			for _, e := range rep.Expected {
				exp = append(exp, e.Class)
			}
			if !slices.Equal(lines, tc.wantLines) || !slices.Equal(exp, tc.wantExp) {
				t.Errorf("lines %v, expected %v; want %v, %v", lines, exp, tc.wantLines, tc.wantExp)
			}
		})
	}
}

// TestReconcileAgainGivesTheSame: a day reconciled twice, its lines in
// another order, gives the same report.
func TestReconcileAgainGivesTheSame(t *testing.T) {
	expected := []Expected{captured("T1", "ch_1", 1000, "USD"), captured("T2", "ch_2", 2000, "USD"), captured("T3", "ch_3", 300, "USD")}
	lines := []Line{settled(1, "T1", "ch_1", 1000, "USD"), settled(2, "T2", "ch_2", 2001, "USD"), settled(3, "T1", "ch_1", 1000, "USD"), settled(4, "T8", "ch_8", 5, "USD")}
	first := Reconcile(dayEnd, lines, expected, cfg)
	reversed := slices.Clone(lines)
	slices.Reverse(reversed)
	again := Reconcile(dayEnd, reversed, expected, cfg)
	if !slices.Equal(first.Lines, again.Lines) || !slices.Equal(first.Expected, again.Expected) {
		t.Errorf("the same day gave\n%+v\nthen\n%+v", first, again)
	}
	want := map[Class]int{Matched: 1, AmountMismatch: 1, Duplicate: 1, MissingHere: 1, MissingAtAcquirer: 1}
	if got := first.Counts(); !maps.Equal(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	exLines, exExpected := first.Exceptions()
	if len(exLines) != 3 || len(exExpected) != 1 || exExpected[0].OrderKey != "T3" {
		t.Errorf("exceptions: %d lines, %v", len(exLines), exExpected)
	}
}

// TestCheckLines: a report is refused whole, naming its first line that no
// reconciliation can hold; a report of good lines, in any order, passes.
func TestCheckLines(t *testing.T) {
	good := []Line{settled(2, "T2", "ch_2", 1000, "EUR"), settled(1, "T1", "ch_1", 1000, "EUR")}
	with := func(edit func(*Line)) []Line {
		ls := slices.Clone(good)
		edit(&ls[1])
		return ls
	}
	long := func(n int) string { return strings.Repeat("k", n) }
	tests := []struct {
		name  string
		lines []Line
		want  string // "" for a report that passes
	}{
		{"good lines", good, ""},
		{"no lines", nil, ""},
		{"the longest keys the record holds", with(func(l *Line) { l.OrderKey, l.Reference = long(64), long(255) }), ""},
		{"a line numbered twice", with(func(l *Line) { l.No = 2 }), "entry 2: line number 2 comes twice"},
		{"a line numbered 0", with(func(l *Line) { l.No = 0 }), "entry 2: line number 0 is not positive"},
		{"a negative line number", with(func(l *Line) { l.No = -4 }), "entry 2: line number -4 is not positive"},
		{"a type nobody knows", with(func(l *Line) { l.Type = "payout" }), `entry 2: line 1: type "payout"`},
		{"a currency in lower case", with(func(l *Line) { l.Currency = "eur" }), `entry 2: line 1: currency "eur"`},
		{"no currency", with(func(l *Line) { l.Currency = "" }), `entry 2: line 1: currency ""`},
		{"an order key too long", with(func(l *Line) { l.OrderKey = long(65) }), "entry 2: line 1: order key longer than 64 bytes"},
		{"a reference too long", with(func(l *Line) { l.Reference = long(256) }), "entry 2: line 1: reference longer than 255 bytes"},
		{"a reference not UTF-8", with(func(l *Line) { l.Reference = "ch_\xff" }), "entry 2: line 1: a reference or order key that is not text"},
		{"an order key with a NUL", with(func(l *Line) { l.OrderKey = "T\x001" }), "entry 2: line 1: a reference or order key that is not text"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckLines(tc.lines)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrBadReport) || !strings.HasSuffix(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrBadReport ending %q", err, tc.want)
			}
		})
	}
}

// Package recon matches what an acquirer settled against what the gateway
// recorded, for one connector and one settlement day, and classifies every
// settlement line and every expected settlement: matched, missing at the
// acquirer, missing here, amount or currency mismatch, duplicate, refund
// mismatch, fee outside the contracted schedule. It is pure: the caller
// reads the acquirer's report and the record, and the same inputs always
// give the same report, so re-running a day gives the same result.
package recon

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// LineType is what a settlement line settles.
type LineType string

// Line types.
const (
	Capture       LineType = "capture"
	Refund        LineType = "refund"
	Chargeback    LineType = "chargeback"
	FeeAdjustment LineType = "fee_adjustment"
	// RefundFailure is a refund the acquirer gave back after it had
	// succeeded (the card's issuer could not take it): the money is the
	// merchant's again, and the shopper was not refunded.
	RefundFailure LineType = "refund_failure"
)

// Line is one line of an acquirer's settlement report. Amounts are minor
// units of Currency; Net is what the acquirer paid (or took, negative) for
// the line: Gross less Fee for a capture.
type Line struct {
	// Reference is the acquirer's id of what it settled (its charge or
	// refund id); OrderKey is ours (the transaction id) as the acquirer
	// was given it.
	Reference string
	OrderKey  string
	Type      LineType
	Gross     int64
	Fee       int64
	Net       int64
	Currency  string
	Batch     string
	// No is the line's place in the report, for the exceptions queue.
	No int
}

// ErrBadReport: the acquirer's settlement report cannot be reconciled as
// it stands (unreadable, a line numbered twice, a field no line can hold).
// Reading it again gives the same, so it is not retried: the day waits for
// the acquirer's corrected report.
var ErrBadReport = errors.New("the settlement report cannot be read")

// Bounds of a line's fields: what the reconciliation's record holds.
const (
	maxOrderKey  = 64
	maxReference = 255
)

// CheckLines finds what makes a report impossible to reconcile: a line
// number that is not positive or comes twice (a line is known by its
// number on every run of its day), a type the engine does not know, a
// currency that is not three capital letters, a reference or order key
// longer than the record holds. The error wraps ErrBadReport and names the
// first such line.
func CheckLines(lines []Line) error {
	seen := make(map[int]bool, len(lines))
	for i, l := range lines {
		var why string
		switch {
		case l.No <= 0:
			why = fmt.Sprintf("line number %d is not positive", l.No)
		case seen[l.No]:
			why = fmt.Sprintf("line number %d comes twice", l.No)
		case !l.Type.known():
			why = fmt.Sprintf("line %d: type %q", l.No, l.Type)
		case !isCurrency(l.Currency):
			why = fmt.Sprintf("line %d: currency %q", l.No, l.Currency)
		case len(l.OrderKey) > maxOrderKey:
			why = fmt.Sprintf("line %d: order key longer than %d bytes", l.No, maxOrderKey)
		case len(l.Reference) > maxReference:
			why = fmt.Sprintf("line %d: reference longer than %d bytes", l.No, maxReference)
		case !isText(l.OrderKey) || !isText(l.Reference):
			// Postgres takes no NUL and no bytes that are not UTF-8.
			why = fmt.Sprintf("line %d: a reference or order key that is not text", l.No)
		}
		if why != "" {
			return fmt.Errorf("%w: entry %d: %s", ErrBadReport, i+1, why)
		}
		seen[l.No] = true
	}
	return nil
}

func (t LineType) known() bool {
	switch t {
	case Capture, Refund, Chargeback, FeeAdjustment, RefundFailure:
		return true
	}
	return false
}

func isText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

func isCurrency(c string) bool {
	if len(c) != 3 {
		return false
	}
	for _, r := range []byte(c) {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}

// Expected is a settlement the record says is owed: a capture or a refund
// the acquirer confirmed, at At.
type Expected struct {
	OrderKey  string
	Reference string // the acquirer's charge or refund id
	Type      LineType
	Amount    int64
	Currency  string
	At        time.Time
	// Key is ours of what is owed: the order's transaction id for a
	// capture, the refund's reference id for a refund. MerchantID and
	// AccountID own the order. The engine carries them through.
	Key        string
	MerchantID string
	AccountID  string
	// Neighbour marks a settlement owed on a day beside this one, offered
	// here only to a line that names it by the acquirer's reference: an
	// acquirer whose day ends at another moment than ours (a capture it
	// made at 23:59:59.8, recorded here at 00:00:00.3), or that settles a
	// day late. One no line settles is left out of the report.
	Neighbour bool
}

// FeeSchedule is the contracted fee of a capture: Fixed minor units plus
// BasisPoints of the gross (rounded half up), with Tolerance minor units
// either way before a fee counts as outside the schedule.
type FeeSchedule struct {
	Fixed       int64 `json:"fixed"`
	BasisPoints int64 `json:"basis_points"`
	Tolerance   int64 `json:"tolerance,omitempty"`
}

// Fee is the contracted fee of a capture of gross.
func (f FeeSchedule) Fee(gross int64) int64 {
	return f.Fixed + (gross*f.BasisPoints*2+10000)/20000
}

// Config is how a day is reconciled.
type Config struct {
	// SettleWithin is how long after a capture or refund the acquirer
	// settles it (T+1, T+2...); one not settled by Day's end after that
	// long is missing at the acquirer, one younger is still pending.
	SettleWithin time.Duration
	Fees         FeeSchedule
	// Orders are the orders here that the report's chargebacks and fee
	// adjustments name, whatever day they were captured: a chargeback
	// comes weeks after its capture.
	Orders map[string]bool
	// ChargebacksElsewhere are the chargeback lines of other days' reports
	// that settle a dispute's debit or reinstatement, each with where it
	// is ("line 4 of 2026-11-20"): the same one on this day's report is a
	// duplicate, not the acquirer's money moved again.
	ChargebacksElsewhere map[OwnLine]string
}

// Class is what reconciliation found of a line or an expected settlement.
type Class string

// Classes.
const (
	Matched           Class = "matched"
	Pending           Class = "pending"             // expected, not due yet
	MissingAtAcquirer Class = "missing_at_acquirer" // expected and due, never settled
	MissingHere       Class = "missing_here"        // settled, unknown or not owed here
	AmountMismatch    Class = "amount_mismatch"     // a capture settled for another amount, or gross less fee is not net
	CurrencyMismatch  Class = "currency_mismatch"
	Duplicate         Class = "duplicate"       // a second line of what was already settled
	RefundMismatch    Class = "refund_mismatch" // a refund settled for another amount
	FeeOutside        Class = "fee_outside_schedule"
	// RefundReversed is a RefundFailure line: a refund the record holds as
	// made did not reach the shopper, which the merchant must hear of.
	RefundReversed Class = "refund_reversed"
)

// LineResult is a line and what it was found to be. Settles is the index
// in Report.Expected of the settlement the line settled (or was a
// duplicate of), -1 for none.
type LineResult struct {
	Line
	Class   Class
	Detail  string
	Settles int
}

// ExpectedResult is an expected settlement and what became of it.
type ExpectedResult struct {
	Expected
	Class Class
	// Line is the report line that settled it (its No); 0 for none.
	Line int
}

// Report is one day's reconciliation of one connector.
type Report struct {
	Lines    []LineResult
	Expected []ExpectedResult
}

// Exceptions are the lines and expectations that need a person.
func (r Report) Exceptions() (lines []LineResult, expected []ExpectedResult) {
	for _, l := range r.Lines {
		if l.Class != Matched {
			lines = append(lines, l)
		}
	}
	for _, e := range r.Expected {
		if e.Class != Matched && e.Class != Pending {
			expected = append(expected, e)
		}
	}
	return lines, expected
}

// Counts are the lines and expectations per class.
func (r Report) Counts() map[Class]int {
	out := map[Class]int{}
	for _, l := range r.Lines {
		out[l.Class]++
	}
	for _, e := range r.Expected {
		if e.Class == MissingAtAcquirer || e.Class == Pending {
			out[e.Class]++
		}
	}
	return out
}

type key struct {
	typ LineType
	ref string
}

// OwnLine is a chargeback line's dispute (the acquirer's reference) and
// whether it takes the money (a debit) or gives it back (a reinstatement):
// one line of each settles it.
type OwnLine struct {
	Reference string
	Debit     bool
}

// OwnLineOf is the chargeback that line l settles, if l is a chargeback
// that names its dispute.
func OwnLineOf(l Line) (OwnLine, bool) {
	if l.Type != Chargeback || l.Reference == "" {
		return OwnLine{}, false
	}
	return OwnLine{Reference: l.Reference, Debit: l.Gross > 0}, true
}

// Reconcile matches the report's lines of a day (dayEnd is the end of the
// settlement day) against what is expected. A line matches the expected
// settlement of its type and reference (or, for an acquirer that gives
// none, its order key); the first such line settles it and any other is a
// duplicate. Chargebacks (a dispute's debit, or its reinstatement when
// won) and fee adjustments are the acquirer's own: they are matched to the
// order they name when it exists here (owed that day or in cfg.Orders),
// else missing here. A refund failure is always an exception.
func Reconcile(dayEnd time.Time, lines []Line, expected []Expected, cfg Config) Report {
	var rep Report
	byRef := map[key]int{}
	byOrder := map[key][]int{}
	orders := map[string]bool{}
	for i, e := range expected {
		rep.Expected = append(rep.Expected, ExpectedResult{Expected: e})
		if e.Reference != "" {
			if j, taken := byRef[key{e.Type, e.Reference}]; !taken || expected[j].Neighbour {
				byRef[key{e.Type, e.Reference}] = i
			}
		}
		if e.Neighbour {
			continue
		}
		byOrder[key{e.Type, e.OrderKey}] = append(byOrder[key{e.Type, e.OrderKey}], i)
		orders[e.OrderKey] = true
	}
	sorted := slices.Clone(lines)
	slices.SortStableFunc(sorted, func(a, b Line) int { return cmp.Compare(a.No, b.No) })
	// Lines that name what they settle by the acquirer's reference go
	// first, so that a line matched by its order key alone never takes an
	// expectation another line names (a charge of the order we never
	// recorded took ours, and ours was called the duplicate).
	named := map[key]bool{}
	for _, l := range sorted {
		if _, ok := byRef[key{l.Type, l.Reference}]; ok {
			named[key{l.Type, l.Reference}] = true
		}
	}
	// The acquirer's own lines by their reference and direction (a
	// chargeback's debit, its reinstatement), for the one line each.
	own := map[OwnLine]int{}
	results := make([]LineResult, len(sorted))
	for _, byReference := range []bool{true, false} {
		for i, l := range sorted {
			if named[key{l.Type, l.Reference}] != byReference {
				continue
			}
			r := classify(&rep, l, byRef, byOrder, named, func(k string) bool { return orders[k] || cfg.Orders[k] }, cfg)
			if k, ok := OwnLineOf(l); ok && r.Class == Matched {
				if where, seen := cfg.ChargebacksElsewhere[k]; seen {
					r.Class, r.Detail = Duplicate, "already settled by "+where
				} else if first, seen := own[k]; seen {
					r.Class, r.Detail = Duplicate, fmt.Sprintf("already settled by line %d", first)
				} else {
					own[k] = l.No
				}
			}
			results[i] = r
		}
	}
	rep.Lines = append(rep.Lines, results...)
	for i := range rep.Expected {
		e := &rep.Expected[i]
		if e.Line != 0 {
			continue
		}
		if dayEnd.Sub(e.At) >= cfg.SettleWithin {
			e.Class = MissingAtAcquirer
		} else {
			e.Class = Pending
		}
	}
	return rep.withoutIdleNeighbours()
}

// withoutIdleNeighbours drops the neighbouring days' settlements no line
// settled here: they are their own day's.
func (r Report) withoutIdleNeighbours() Report {
	kept := make([]ExpectedResult, 0, len(r.Expected))
	index := make([]int, len(r.Expected))
	for i, e := range r.Expected {
		index[i] = -1
		if e.Neighbour && e.Line == 0 {
			continue
		}
		index[i] = len(kept)
		kept = append(kept, e)
	}
	for i := range r.Lines {
		if s := r.Lines[i].Settles; s >= 0 {
			r.Lines[i].Settles = index[s]
		}
	}
	r.Expected = kept
	return r
}

func classify(rep *Report, l Line, byRef map[key]int, byOrder map[key][]int, named map[key]bool, known func(string) bool, cfg Config) LineResult {
	r := LineResult{Line: l, Settles: -1}
	if l.Type == RefundFailure {
		// Always a person's: the record says refunded, and nothing here
		// undoes that by itself.
		r.Class, r.Detail = RefundReversed, fmt.Sprintf("the acquirer gave refund %s back: the shopper was not refunded", l.Reference)
		if !known(l.OrderKey) {
			r.Detail += "; no refund of that reference here"
		}
		return r
	}
	if l.Type == FeeAdjustment && l.OrderKey == "" {
		// The acquirer's charge to us that names no payment (Stripe's
		// own fees): the gateway's cost, booked as such, not an exception
		// for finance to write off one by one.
		r.Class, r.Detail = Matched, "the acquirer's own fee, of no order: the gateway's cost"
		return r
	}
	if l.Type == Chargeback || l.Type == FeeAdjustment {
		if known(l.OrderKey) {
			r.Class, r.Detail = Matched, "the acquirer's own line, of an order here"
		} else {
			r.Class, r.Detail = MissingHere, "no order "+l.OrderKey+" here"
		}
		return r
	}
	i, ok := byRef[key{l.Type, l.Reference}]
	if !ok {
		// An acquirer without its own reference: an open expectation of
		// the order and type that no line names, one of the line's own
		// amount first (two partial refunds of one order pair by amount).
		var candidates []int
		for _, j := range byOrder[key{l.Type, l.OrderKey}] {
			if e := rep.Expected[j]; e.Line == 0 && (e.Reference == "" || !named[key{e.Type, e.Reference}]) {
				candidates = append(candidates, j)
			}
		}
		for _, j := range candidates {
			if rep.Expected[j].Amount == l.Gross {
				i, ok = j, true
				break
			}
		}
		if !ok && len(candidates) > 0 {
			i, ok = candidates[0], true
		}
		if !ok && len(byOrder[key{l.Type, l.OrderKey}]) > 0 {
			i, ok = byOrder[key{l.Type, l.OrderKey}][0], true
		}
	}
	if !ok {
		r.Class, r.Detail = MissingHere, fmt.Sprintf("no %s %s of order %s here", l.Type, l.Reference, l.OrderKey)
		return r
	}
	e := &rep.Expected[i]
	r.Settles = i
	if e.Line != 0 {
		r.Class, r.Detail = Duplicate, fmt.Sprintf("already settled by line %d", e.Line)
		return r
	}
	e.Line, e.Class = l.No, Matched
	switch {
	case l.Currency != e.Currency:
		r.Class, r.Detail = CurrencyMismatch, fmt.Sprintf("settled in %s, recorded in %s", l.Currency, e.Currency)
	case l.Gross != e.Amount && l.Type == Refund:
		r.Class, r.Detail = RefundMismatch, fmt.Sprintf("settled %d, recorded %d", l.Gross, e.Amount)
	case l.Type == Refund && l.Net != -(l.Gross+l.Fee):
		// The refund and its fee are what the acquirer took: a net beyond
		// them was written off unseen.
		r.Class, r.Detail = RefundMismatch, fmt.Sprintf("gross %d and fee %d are not net %d", l.Gross, l.Fee, -l.Net)
	case l.Gross != e.Amount:
		r.Class, r.Detail = AmountMismatch, fmt.Sprintf("settled %d, recorded %d", l.Gross, e.Amount)
	case l.Type == Capture && l.Gross-l.Fee != l.Net:
		r.Class, r.Detail = AmountMismatch, fmt.Sprintf("gross %d less fee %d is not net %d", l.Gross, l.Fee, l.Net)
	case l.Type == Capture && abs(l.Fee-cfg.Fees.Fee(l.Gross)) > cfg.Fees.Tolerance:
		r.Class, r.Detail = FeeOutside, fmt.Sprintf("fee %d, contracted %d", l.Fee, cfg.Fees.Fee(l.Gross))
	default:
		r.Class = Matched
	}
	return r
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// Pricing is what a merchant account pays for its captures. Without a
// blended schedule the acquirer's fee is passed through: the merchant pays
// exactly what the acquirer took. With one, the merchant pays the gateway's
// Blended fee and the gateway bears the acquirer's.
type Pricing struct {
	Blended *FeeSchedule `json:"blended,omitempty"`
}

// MerchantFee is the merchant's fee of a capture of gross whose acquirer's
// fee was acquirerFee.
func (p Pricing) MerchantFee(gross, acquirerFee int64) int64 {
	if p.Blended != nil {
		return p.Blended.Fee(gross)
	}
	return acquirerFee
}

// Action is what finance may do with an exception.
type Action string

// Actions on exceptions.
const (
	// Resolve closes the exception with a note; no money moves.
	Resolve Action = "resolved"
	// WriteOff posts what was owed as settled and books the difference
	// (or the whole line, for one nothing here owed) to write-off.
	WriteOff Action = "written_off"
	// Claim marks the exception for the acquirer, whom finance asks to pay
	// or explain; it stays to be resolved or written off.
	Claim Action = "claimed"
)

// Allows reports whether an exception of class c may be closed by a.
// Nothing can be written off across currencies, and a fee outside the
// schedule is posted as the acquirer took it, so there is no difference
// left to write off.
func (c Class) Allows(a Action) bool {
	switch a {
	case Resolve, Claim:
		return c != Matched && c != Pending
	case WriteOff:
		return c == MissingAtAcquirer || c == MissingHere || c == AmountMismatch || c == Duplicate || c == RefundMismatch
	}
	return false
}

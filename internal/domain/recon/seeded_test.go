package recon

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// seeded is a day of n captures with each kind of discrepancy seeded at
// about 1%, and the class each seeded one must get.
func seeded(n int, seed uint64) (expected []Expected, lines []Line, wantLine map[int]Class, wantExpected map[string]Class) {
	rnd := rand.New(rand.NewPCG(seed, seed^0x5eed))
	wantLine, wantExpected = map[int]Class{}, map[string]Class{}
	no := 0
	line := func(l Line) int {
		no++
		l.No = no
		lines = append(lines, l)
		return no
	}
	for i := range n {
		order, ref := fmt.Sprintf("T%07d", i), fmt.Sprintf("ch_%07d", i)
		amount := int64(100 + rnd.IntN(100000))
		expected = append(expected, Expected{OrderKey: order, Reference: ref, Type: Capture, Amount: amount, Currency: "USD", At: old})
		l := settled(0, order, ref, amount, "USD")
		switch rnd.IntN(100) {
		case 0: // never settled
			wantExpected[order] = MissingAtAcquirer
		case 1: // off by a cent
			l.Gross++
			l.Net = l.Gross - l.Fee
			wantLine[line(l)] = AmountMismatch
		case 2: // a duplicate line
			line(l)
			wantLine[line(l)] = Duplicate
		case 3: // a fee above the contract
			l.Fee += 50
			l.Net = l.Gross - l.Fee
			wantLine[line(l)] = FeeOutside
		case 4: // another currency
			l.Currency = "EUR"
			wantLine[line(l)] = CurrencyMismatch
		default:
			line(l)
		}
		if rnd.IntN(100) == 0 { // unknown here
			wantLine[line(settled(0, "X"+order, "ch_x"+ref, 500, "USD"))] = MissingHere
		}
	}
	return expected, lines, wantLine, wantExpected
}

// TestSeededDiscrepancies: in a day of 10,000 captures with every kind of
// discrepancy seeded at about 1%, each seeded one is found with its class
// and nothing else is flagged.
func TestSeededDiscrepancies(t *testing.T) {
	expected, lines, wantLine, wantExpected := seeded(10000, 26)
	rep := Reconcile(dayEnd, lines, expected, cfg)
	for _, l := range rep.Lines {
		want, seededHere := wantLine[l.No]
		if !seededHere {
			want = Matched
		}
		if l.Class != want {
			t.Errorf("line %d (%s): %s, want %s", l.No, l.OrderKey, l.Class, want)
		}
	}
	for _, e := range rep.Expected {
		want, seededHere := wantExpected[e.OrderKey]
		if !seededHere {
			want = Matched
		}
		if e.Class != want {
			t.Errorf("expected %s: %s, want %s", e.OrderKey, e.Class, want)
		}
	}
	if len(wantLine) < 300 || len(wantExpected) < 50 {
		t.Errorf("only %d lines and %d expectations seeded", len(wantLine), len(wantExpected))
	}
}

// BenchmarkReconcile100k reconciles a day of 100,000 captures, about 5%
// of them discrepant (go test -bench Reconcile ./internal/domain/recon).
func BenchmarkReconcile100k(b *testing.B) {
	expected, lines, _, _ := seeded(100000, 1)
	b.ResetTimer()
	for b.Loop() {
		Reconcile(dayEnd, lines, expected, Config{SettleWithin: 48 * time.Hour, Fees: cfg.Fees})
	}
}

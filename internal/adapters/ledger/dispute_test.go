package ledger_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/models"
)

func hold(ref string, amount, fee int64) ledger.DisputeHold {
	return ledger.DisputeHold{Reference: ref, OrderKey: "1379868670095785984", MerchantID: merchantID, AccountID: accountID,
		Currency: usd, Amount: amount, Fee: fee}
}

// TestDisputeMoney follows issue 30: a dispute "holds the disputed amount
// and the dispute fee in the ledger (from the merchant's available balance,
// or a negative balance the rules allow)" and "settles on the outcome: won
// (release), lost (debit final, fee kept), accepted by the merchant". Every
// balance is checked to the cent, and Check finds the ledger true.
func TestDisputeMoney(t *testing.T) {
	tests := []struct {
		name    string
		deposit int64
		outcome string // "release", "take" or "" (still open)
		want    map[string]int64
	}{
		{"held from the deposit", 10000, "", map[string]int64{
			models.LedgerDeposit: 6500, models.LedgerDisputeHold: 3500}},
		{"held beyond the deposit: the rest is the merchant's debt", 2000, "", map[string]int64{
			models.LedgerDeposit: 0, models.LedgerDebt: -1500, models.LedgerDisputeHold: 3500}},
		{"won: back where it came from", 2000, "release", map[string]int64{
			models.LedgerDeposit: 2000, models.LedgerDebt: 0, models.LedgerDisputeHold: 0}},
		{"lost: the amount to the acquirer, the fee to the gateway", 10000, "take", map[string]int64{
			models.LedgerDeposit: 6500, models.LedgerDisputeHold: 0, models.LedgerDisputeClearing: 2000, models.LedgerFeeIncome: 1500}},
		{"lost beyond the deposit: the debt stays", 2000, "take", map[string]int64{
			models.LedgerDeposit: 0, models.LedgerDebt: -1500, models.LedgerDisputeHold: 0,
			models.LedgerDisputeClearing: 2000, models.LedgerFeeIncome: 1500}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := testDB(t)
			l := ledger.New(db)
			topUp(t, l, "funding", tc.deposit)
			for range 2 { // a repeat posts nothing more
				if _, err := l.HoldDispute(t.Context(), hold("sim-acquirer:dp_1", 2000, 1500)); err != nil {
					t.Fatal(err)
				}
				switch tc.outcome {
				case "release":
					if _, err := l.ReleaseDispute(t.Context(), "sim-acquirer:dp_1"); err != nil {
						t.Fatal(err)
					}
				case "take":
					if _, err := l.TakeDispute(t.Context(), "sim-acquirer:dp_1", 1500); err != nil {
						t.Fatal(err)
					}
				}
			}
			b := balances(t, db)
			for kind, want := range tc.want {
				if b[kind] != want {
					t.Errorf("%s = %d, want %d (all: %v)", kind, b[kind], want, b)
				}
			}
			assertInvariants(t, db)
		})
	}
}

// TestDisputeOutcomeOnce: a release and a take racing: one goes through,
// the other is refused; an outcome without a hold is refused.
func TestDisputeOutcomeOnce(t *testing.T) {
	db := testDB(t)
	l := ledger.New(db)
	topUp(t, l, "funding", 10000)
	if _, err := l.HoldDispute(t.Context(), hold("d1", 2000, 1500)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var relErr, takeErr error
	wg.Go(func() { _, relErr = l.ReleaseDispute(t.Context(), "d1") })
	wg.Go(func() { _, takeErr = l.TakeDispute(t.Context(), "d1", 1500) })
	wg.Wait()
	if (relErr == nil) == (takeErr == nil) || !errors.Is(relErr, ledger.ErrDisputeClosed) && !errors.Is(takeErr, ledger.ErrDisputeClosed) {
		t.Errorf("release %v, take %v; want one through and the other refused", relErr, takeErr)
	}
	if _, err := l.ReleaseDispute(t.Context(), "never-held"); !errors.Is(err, ledger.ErrDisputeNotHeld) {
		t.Errorf("release without a hold = %v, want ErrDisputeNotHeld", err)
	}
	assertInvariants(t, db)
}

// TestDisputeWithTheAcquirersReport: a dispute's money through its hold,
// the acquirer's chargeback line (the debit, and the reinstatement of a won
// dispute) and the outcome, in the orders they can come in, and a later
// capture's settlement repaying the merchant's dispute debt. The merchant's
// money moves once, the acquirer's side ends at zero, and every balance is
// checked to the cent after each step list is posted twice.
func TestDisputeWithTheAcquirersReport(t *testing.T) {
	const ref = "sim-acquirer:dp_7"
	type step struct {
		name string
		do   func(l *ledger.Ledger) error
	}
	holdIt := step{"hold", func(l *ledger.Ledger) error {
		h := hold(ref, 2000, 1500)
		h.OrderKey = "7"
		_, err := l.HoldDispute(t.Context(), h)
		return err
	}}
	line := func(no string, net, fee int64) step {
		return step{"line " + no, func(l *ledger.Ledger) error {
			_, err := l.PostSettlement(t.Context(), ledger.Settlement{Kind: ledger.SettleChargeback, OrderKey: "7", MerchantID: merchantID,
				AccountID: accountID, Currency: usd, Net: net, Fee: fee, Line: "sim-acquirer/2026-11-26/" + no})
			return err
		}}
	}
	debit, reinstated := line("1", -2015, 15), line("2", 2000, 0)
	take := step{"take", func(l *ledger.Ledger) error { _, err := l.TakeDispute(t.Context(), ref, 1500); return err }}
	release := step{"release", func(l *ledger.Ledger) error { _, err := l.ReleaseDispute(t.Context(), ref); return err }}
	// Order 8, paid 100.00 and settled at 96.80 (fee 3.20 passed through).
	settled := step{"order 8 settled", func(l *ledger.Ledger) error {
		if _, err := l.CreditOrder(t.Context(), paid("8", 10000)); err != nil {
			return err
		}
		_, err := l.PostSettlement(t.Context(), capture("8", 10000, 9680, 320, 320))
		return err
	}}
	// The accounts every case ends with, beside what it names.
	base := map[string]int64{models.LedgerDisputeHold: 0, models.LedgerDisputeClearing: 0, models.LedgerPending: 0, models.LedgerAcquirerClearing: 0}
	tests := []struct {
		name    string
		deposit int64
		steps   []step
		want    map[string]int64
	}{
		{"lost: debited, taken", 10000, []step{holdIt, debit, take}, map[string]int64{
			models.LedgerDeposit: 6500, models.LedgerDebt: 0, models.LedgerSettlementCash: 2015, models.LedgerFeeExpense: -15,
			models.LedgerFeeIncome: 1500}},
		{"lost: taken before the report's debit", 10000, []step{holdIt, take, debit}, map[string]int64{
			models.LedgerDeposit: 6500, models.LedgerSettlementCash: 2015, models.LedgerFeeExpense: -15, models.LedgerFeeIncome: 1500}},
		{"won: debited, released, reinstated", 10000, []step{holdIt, debit, release, reinstated}, map[string]int64{
			models.LedgerDeposit: 10000, models.LedgerSettlementCash: 15, models.LedgerFeeExpense: -15, models.LedgerFeeIncome: 0}},
		{"lost beyond the deposit, the debt repaid by the next settlement", 2000, []step{holdIt, debit, take, settled}, map[string]int64{
			models.LedgerDeposit: 2000 - 2000 + 9680 - 1500, models.LedgerDebt: 0, models.LedgerSettlementCash: 2015 - 9680,
			models.LedgerFeeExpense: -15 - 320, models.LedgerFeeIncome: 1500 + 320}},
		{"won after the debt was repaid: all back to the deposit", 2000, []step{holdIt, settled, debit, release, reinstated}, map[string]int64{
			models.LedgerDeposit: 2000 + 9680, models.LedgerDebt: 0, models.LedgerSettlementCash: 15 - 9680,
			models.LedgerFeeExpense: -15 - 320, models.LedgerFeeIncome: 320}},
		{"won while still in debt: the debt cleared first", 2000, []step{holdIt, release}, map[string]int64{
			models.LedgerDeposit: 2000, models.LedgerDebt: 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := testDB(t)
			l := ledger.New(db)
			topUp(t, l, "funding", tc.deposit)
			for range 2 { // a repeat posts nothing more
				for _, s := range tc.steps {
					if err := s.do(l); err != nil {
						t.Fatalf("%s: %v", s.name, err)
					}
				}
			}
			b := balances(t, db)
			for _, want := range []map[string]int64{base, tc.want} {
				for kind, w := range want {
					if b[kind] != w {
						t.Errorf("%s = %d, want %d (all: %v)", kind, b[kind], w, b)
					}
				}
			}
			assertInvariants(t, db)
		})
	}
}

// TestChargebackWaitsForItsDispute: a chargeback line that comes before the
// dispute's callback is refused with ErrNotDisputed, posting nothing, and
// posts once the dispute is held.
func TestChargebackWaitsForItsDispute(t *testing.T) {
	db := testDB(t)
	l := ledger.New(db)
	topUp(t, l, "funding", 10000)
	cb := ledger.Settlement{Kind: ledger.SettleChargeback, OrderKey: "9", MerchantID: merchantID, AccountID: accountID,
		Currency: usd, Net: -2000, Line: "sim-acquirer/2026-11-26/4"}
	if _, err := l.PostSettlement(t.Context(), cb); !errors.Is(err, ledger.ErrNotDisputed) {
		t.Fatalf("before the hold: %v, want ErrNotDisputed", err)
	}
	h := hold("sim-acquirer:dp_9", 2000, 1500)
	h.OrderKey = "9"
	if _, err := l.HoldDispute(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	if _, err := l.PostSettlement(t.Context(), cb); err != nil {
		t.Fatalf("after the hold: %v", err)
	}
	if b := balances(t, db); b[models.LedgerDisputeClearing] != -2000 || b[models.LedgerSettlementCash] != 2000 || b[models.LedgerDeposit] != 6500 {
		t.Errorf("balances %v", b)
	}
	assertInvariants(t, db)
}

// TestDisputeHoldRepeatedWhileLocked: two attempts of one hold that both
// wait for the merchant's accounts (a retry overlapping an attempt still
// running) post it once and both answer that entry; a repeat looked for
// before the lock was missed, and the second attempt, reading the deposit
// the first had emptied, was refused as a conflicting posting.
func TestDisputeHoldRepeatedWhileLocked(t *testing.T) {
	db := testDB(t)
	l := ledger.New(db)
	ctx := t.Context()
	topUp(t, l, "funding", 2000)
	// Every account the hold locks exists, so both attempts go straight
	// to the lock.
	if _, err := l.HoldDispute(ctx, hold("sim-acquirer:dp_0", 100, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ReleaseDispute(ctx, "sim-acquirer:dp_0"); err != nil {
		t.Fatal(err)
	}
	blocker := db.Begin()
	if err := blocker.Exec("SELECT id FROM ledger_accounts WHERE merchant_id = ? AND kind = ? FOR UPDATE",
		merchantID, models.LedgerDeposit).Error; err != nil {
		blocker.Rollback()
		t.Fatal(err)
	}
	type answer struct {
		entry ledger.Entry
		err   error
	}
	answers := make(chan answer, 2)
	for range 2 {
		go func() {
			e, err := l.HoldDispute(ctx, hold("sim-acquirer:dp_1", 2000, 1500))
			answers <- answer{e, err}
		}()
	}
	// Both attempts wait on the blocker's lock before it lets go.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for waiting := 0; waiting < 2; {
		select {
		case <-ctx.Done():
			blocker.Rollback()
			t.Fatal(ctx.Err())
		case <-tick.C:
		}
		if err := db.Raw("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").
			Scan(&waiting).Error; err != nil {
			blocker.Rollback()
			t.Fatal(err)
		}
	}
	if err := blocker.Commit().Error; err != nil {
		t.Fatal(err)
	}
	first, second := <-answers, <-answers
	if first.err != nil || second.err != nil || first.entry.ID != second.entry.ID {
		t.Fatalf("attempts answered %+v and %+v, want one entry twice", first, second)
	}
	got := balances(t, db)
	want := map[string]int64{models.LedgerDeposit: 0, models.LedgerDebt: -1500, models.LedgerDisputeHold: 3500}
	for kind, v := range want {
		if got[kind] != v {
			t.Errorf("%s = %d, want %d", kind, got[kind], v)
		}
	}
}

package ledger_test

import (
	"errors"
	"sync"
	"testing"

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
			models.LedgerDeposit: 0, models.LedgerDisputeDebt: -1500, models.LedgerDisputeHold: 3500}},
		{"won: back where it came from", 2000, "release", map[string]int64{
			models.LedgerDeposit: 2000, models.LedgerDisputeDebt: 0, models.LedgerDisputeHold: 0}},
		{"lost: the amount to the acquirer, the fee to the gateway", 10000, "take", map[string]int64{
			models.LedgerDeposit: 6500, models.LedgerDisputeHold: 0, models.LedgerSettlementCash: 2000, models.LedgerFeeIncome: 1500}},
		{"lost beyond the deposit: the debt stays", 2000, "take", map[string]int64{
			models.LedgerDeposit: 0, models.LedgerDisputeDebt: -1500, models.LedgerDisputeHold: 0,
			models.LedgerSettlementCash: 2000, models.LedgerFeeIncome: 1500}},
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

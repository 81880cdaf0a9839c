package ledger_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/models"
)

func capture(tx string, owed, net, fee, merchantFee int64) ledger.Settlement {
	return ledger.Settlement{Kind: ledger.SettleCapture, OrderKey: tx, MerchantID: merchantID, AccountID: accountID,
		Currency: usd, Owed: owed, Net: net, Fee: fee, MerchantFee: merchantFee}
}

func refundSettled(tx, key string, owed, net int64) ledger.Settlement {
	return ledger.Settlement{Kind: ledger.SettleRefund, OrderKey: tx, RefundKey: key, MerchantID: merchantID, AccountID: accountID,
		Currency: usd, Owed: owed, Net: net}
}

func paid(tx string, amount int64) ledger.OrderPosting {
	return ledger.OrderPosting{Reference: "order/" + tx + "/paid", OrderKey: tx, MerchantID: merchantID, AccountID: accountID,
		Currency: usd, Amount: amount}
}

func refunded(tx, key string, amount int64) ledger.OrderPosting {
	return ledger.OrderPosting{Reference: "refund/" + key, OrderKey: tx, MerchantID: merchantID, AccountID: accountID,
		Currency: usd, Amount: amount}
}

// TestSettlement runs each step list twice from a deposit of 100.00 and
// checks every balance to the cent, and the invariants (Check) after.
func TestSettlement(t *testing.T) {
	type step func(ctx context.Context, l *ledger.Ledger) error
	credit := func(tx string, amount int64) step {
		return func(ctx context.Context, l *ledger.Ledger) error {
			_, err := l.CreditOrder(ctx, paid(tx, amount))
			return err
		}
	}
	refund := func(tx, key string, amount int64) step {
		return func(ctx context.Context, l *ledger.Ledger) error {
			_, err := l.DebitRefund(ctx, refunded(tx, key, amount))
			return err
		}
	}
	settle := func(s ledger.Settlement) step {
		return func(ctx context.Context, l *ledger.Ledger) error { _, err := l.PostSettlement(ctx, s); return err }
	}
	holdOf := func(tx string, amount, fee int64) step {
		return func(ctx context.Context, l *ledger.Ledger) error {
			h := hold("sim-acquirer:dp_"+tx, amount, fee)
			h.OrderKey = tx
			_, err := l.HoldDispute(ctx, h)
			return err
		}
	}
	reserve := func(ref string, amount int64) step {
		return func(ctx context.Context, l *ledger.Ledger) error { return l.Reserve(ctx, reservation(ref, amount, 0)) }
	}
	fund := func(ref string, amount int64) step {
		return func(ctx context.Context, l *ledger.Ledger) error {
			_, err := l.TopUp(ctx, ledger.TopUp{Reference: ref, MerchantID: merchantID, AccountID: accountID, Currency: usd, Amount: amount})
			return err
		}
	}
	// paidOut: a capture of 100.00 settled in full, then 190.00 of the
	// deposit's 200.00 reserved for a payout, leaving 10.00.
	paidOut := []step{credit("1", 10000), settle(capture("1", 10000, 10000, 0, 0)), reserve("payout/1", 19000)}
	tests := []struct {
		name    string
		steps   []step
		wantErr error
		want    map[string]int64 // balances by kind; missing kinds are zero
		entries int64
	}{
		{
			name:  "a capture settles less the acquirer's fee, passed through",
			steps: []step{credit("1", 10000), settle(capture("1", 10000, 9680, 320, 320))},
			want: map[string]int64{models.LedgerDeposit: 19680, models.LedgerSettlementCash: -9680, models.LedgerFeeExpense: -320,
				models.LedgerFeeIncome: 320, models.LedgerOperatorFunding: -10000},
			entries: 3,
		},
		{
			name:  "blended pricing: the merchant pays the gateway's fee, the gateway the acquirer's",
			steps: []step{credit("1", 10000), settle(capture("1", 10000, 9680, 320, 250))},
			want: map[string]int64{models.LedgerDeposit: 19750, models.LedgerSettlementCash: -9680, models.LedgerFeeExpense: -320,
				models.LedgerFeeIncome: 250, models.LedgerOperatorFunding: -10000},
			entries: 3,
		},
		{
			name:  "captured and not settled: pending, owed by the acquirer",
			steps: []step{credit("1", 10000)},
			want: map[string]int64{models.LedgerPending: 10000, models.LedgerDeposit: 10000, models.LedgerAcquirerClearing: -10000,
				models.LedgerOperatorFunding: -10000},
			entries: 2,
		},
		{
			name: "a refund before the settlement draws on pending, then both settle",
			steps: []step{credit("1", 10000), refund("1", "1-01", 3000), settle(capture("1", 10000, 9680, 320, 320)),
				settle(refundSettled("1", "1-01", 3000, -3000))},
			want: map[string]int64{models.LedgerDeposit: 16680, models.LedgerSettlementCash: -6680, models.LedgerFeeExpense: -320,
				models.LedgerFeeIncome: 320, models.LedgerOperatorFunding: -10000},
			entries: 5,
		},
		{
			name:  "a refund after the settlement draws on the deposit",
			steps: []step{credit("1", 10000), settle(capture("1", 10000, 9680, 320, 320)), refund("1", "1-01", 3000)},
			want: map[string]int64{models.LedgerDeposit: 16680, models.LedgerAcquirerClearing: 3000, models.LedgerSettlementCash: -9680,
				models.LedgerFeeExpense: -320, models.LedgerFeeIncome: 320, models.LedgerOperatorFunding: -10000},
			entries: 4,
		},
		{
			name:  "a refund beyond the deposit takes what the deposit lacks as the merchant's debt",
			steps: append(slices.Clone(paidOut), refund("1", "1-01", 10000)),
			want: map[string]int64{models.LedgerReserved: 19000, models.LedgerDebt: -9000, models.LedgerAcquirerClearing: 10000,
				models.LedgerSettlementCash: -10000, models.LedgerOperatorFunding: -10000},
			entries: 5,
		},
		{
			name:  "the next capture's settlement repays a refund's debt before the deposit",
			steps: append(slices.Clone(paidOut), refund("1", "1-01", 10000), credit("2", 5000), settle(capture("2", 5000, 5000, 0, 0))),
			want: map[string]int64{models.LedgerReserved: 19000, models.LedgerDebt: -4000, models.LedgerAcquirerClearing: 10000,
				models.LedgerSettlementCash: -15000, models.LedgerOperatorFunding: -10000},
			entries: 7,
		},
		{
			name:  "a top-up repays the merchant's debt, the rest to the deposit",
			steps: append(slices.Clone(paidOut), refund("1", "1-01", 10000), fund("t2", 10000)),
			want: map[string]int64{models.LedgerDeposit: 1000, models.LedgerReserved: 19000, models.LedgerAcquirerClearing: 10000,
				models.LedgerSettlementCash: -10000, models.LedgerOperatorFunding: -20000},
			entries: 6,
		},
		{
			name:  "a top-up smaller than the debt repays part of it",
			steps: append(slices.Clone(paidOut), refund("1", "1-01", 10000), fund("t2", 2500)),
			want: map[string]int64{models.LedgerReserved: 19000, models.LedgerDebt: -6500, models.LedgerAcquirerClearing: 10000,
				models.LedgerSettlementCash: -10000, models.LedgerOperatorFunding: -12500},
			entries: 6,
		},
		{
			name:  "a capture never settled, written off: the gateway bears it",
			steps: []step{credit("1", 10000), settle(capture("1", 10000, 0, 0, 320))},
			want: map[string]int64{models.LedgerDeposit: 19680, models.LedgerWriteOff: -10000, models.LedgerFeeIncome: 320,
				models.LedgerOperatorFunding: -10000},
			entries: 3,
		},
		{
			name:  "a cent short, written off",
			steps: []step{credit("1", 10000), settle(capture("1", 10000, 9679, 320, 320))},
			want: map[string]int64{models.LedgerDeposit: 19680, models.LedgerSettlementCash: -9679, models.LedgerFeeExpense: -320,
				models.LedgerWriteOff: -1, models.LedgerFeeIncome: 320, models.LedgerOperatorFunding: -10000},
			entries: 3,
		},
		{
			name: "a chargeback of a held dispute: the acquirer's side, the merchant's money moved by the hold alone",
			steps: []step{holdOf("1", 2000, 1500), settle(ledger.Settlement{Kind: ledger.SettleChargeback, OrderKey: "1", MerchantID: merchantID,
				AccountID: accountID, Currency: usd, Net: -2015, Fee: 15, Line: "sim/2026-11-25/7"})},
			want: map[string]int64{models.LedgerDeposit: 6500, models.LedgerDisputeHold: 3500, models.LedgerSettlementCash: 2015,
				models.LedgerFeeExpense: -15, models.LedgerDisputeClearing: -2000, models.LedgerOperatorFunding: -10000},
			entries: 3,
		},
		{
			name:    "a capture's settlement before its credit waits",
			steps:   []step{settle(capture("1", 10000, 9680, 320, 320))},
			wantErr: ledger.ErrNotCredited,
			want:    map[string]int64{models.LedgerDeposit: 10000, models.LedgerOperatorFunding: -10000},
			entries: 1,
		},
		{
			name:    "a refund's settlement before the refund waits",
			steps:   []step{credit("1", 10000), settle(refundSettled("1", "1-01", 3000, -3000))},
			wantErr: ledger.ErrNotCredited,
			want: map[string]int64{models.LedgerPending: 10000, models.LedgerDeposit: 10000, models.LedgerAcquirerClearing: -10000,
				models.LedgerOperatorFunding: -10000},
			entries: 2,
		},
		{
			name:    "a chargeback of an order with no dispute held waits",
			steps:   []step{settle(ledger.Settlement{Kind: ledger.SettleChargeback, OrderKey: "1", MerchantID: merchantID, AccountID: accountID, Currency: usd, Net: -10016, Fee: 15, Line: "sim/2026-11-25/8"})},
			wantErr: ledger.ErrNotDisputed,
			want:    map[string]int64{models.LedgerDeposit: 10000, models.LedgerOperatorFunding: -10000},
			entries: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := testDB(t)
			l := ledger.New(db)
			topUp(t, l, "t1", 10000)
			for round := range 2 {
				var err error
				for _, s := range tc.steps {
					if err = s(t.Context(), l); err != nil {
						break
					}
				}
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("round %d: error = %v, want %v", round+1, err, tc.wantErr)
				}
				got := balances(t, db)
				for _, kind := range []string{models.LedgerPending, models.LedgerDeposit, models.LedgerReserved, models.LedgerAcquirerClearing,
					models.LedgerSettlementCash, models.LedgerFeeExpense, models.LedgerFeeIncome, models.LedgerWriteOff, models.LedgerOperatorFunding,
					models.LedgerDisputeHold, models.LedgerDebt, models.LedgerDisputeClearing} {
					if got[kind] != tc.want[kind] {
						t.Errorf("round %d: %s balance = %d, want %d", round+1, kind, got[kind], tc.want[kind])
					}
				}
				if n := countEntries(t, db); n != tc.entries {
					t.Errorf("round %d: %d entries, want %d", round+1, n, tc.entries)
				}
			}
			assertInvariants(t, db)
		})
	}
}

// TestWriteOffLine: a line nothing here owed, written off, lands on the
// connector's house account, once.
func TestWriteOffLine(t *testing.T) {
	db := testDB(t)
	l := ledger.New(db)
	for range 2 {
		if _, err := l.WriteOffLine(t.Context(), "sim-acquirer", "sim-acquirer/2026-11-25/3", usd, 9680); err != nil {
			t.Fatal(err)
		}
	}
	var rows []models.LedgerAccount
	if err := db.Where("merchant_id = ? AND account_id = ?", ledger.HouseMerchant, "sim-acquirer").Order("kind").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Kind != models.LedgerSettlementCash || rows[0].Balance != -9680 ||
		rows[1].Kind != models.LedgerWriteOff || rows[1].Balance != 9680 {
		t.Errorf("house accounts = %+v", rows)
	}
	if n := countEntries(t, db); n != 1 {
		t.Errorf("%d entries, want 1", n)
	}
	assertInvariants(t, db)
}

// TestRefundRacesSettlement: a refund and its capture's settlement posted
// at once, many times over: whichever goes first, the merchant's money adds
// up and the invariants hold.
func TestRefundRacesSettlement(t *testing.T) {
	db := testDB(t)
	l := ledger.New(db)
	topUp(t, l, "t1", 100000)
	const orders = 20
	for i := range orders {
		tx := string(rune('a'+i)) + "tx"
		if _, err := l.CreditOrder(t.Context(), paid(tx, 10000)); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() { _, errs[0] = l.DebitRefund(t.Context(), refunded(tx, tx+"-01", 2500)) })
		wg.Go(func() { _, errs[1] = l.PostSettlement(t.Context(), capture(tx, 10000, 9680, 320, 320)) })
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("order %s: %v", tx, err)
			}
		}
	}
	got := balances(t, db)
	// Each order: 100.00 captured, 3.20 fee, 25.00 refunded.
	if want := int64(100000 + orders*(10000-320-2500)); got[models.LedgerDeposit] != want || got[models.LedgerPending] != 0 {
		t.Errorf("deposit %d pending %d, want %d and 0", got[models.LedgerDeposit], got[models.LedgerPending], want)
	}
	assertInvariants(t, db)
}

// TestPostSettlements: a batch posts what PostSettlement would, once, and
// gives each settlement it cannot take its own error.
func TestPostSettlements(t *testing.T) {
	db := testDB(t)
	l := ledger.New(db)
	topUp(t, l, "t1", 10000)
	for _, tx := range []string{"1", "2", "3"} {
		if _, err := l.CreditOrder(t.Context(), paid(tx, 10000)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.DebitRefund(t.Context(), refunded("2", "2-01", 4000)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.PostSettlement(t.Context(), capture("3", 10000, 9680, 320, 320)); err != nil {
		t.Fatal(err)
	}
	batch := []ledger.Settlement{
		capture("1", 10000, 9680, 320, 320),
		capture("2", 10000, 9680, 320, 320),
		refundSettled("2", "2-01", 4000, -4000),
		capture("3", 10000, 9680, 320, 320),   // posted before: nothing more
		capture("9", 5000, 4825, 175, 175),    // never credited
		refundSettled("1", "1-01", 100, -100), // a refund never posted
		capture("1", 10000, 9680, 320, 320),   // twice in the batch
		{Kind: ledger.SettleCapture, OrderKey: "", MerchantID: merchantID, AccountID: accountID, Currency: "XXZ", Owed: 1}, // malformed
	}
	for round := range 2 {
		res, err := l.PostSettlements(t.Context(), batch)
		if err != nil {
			t.Fatal(err)
		}
		wantErr := []error{nil, nil, nil, nil, ledger.ErrNotCredited, ledger.ErrNotCredited, nil, ledger.ErrInvalid}
		for i, r := range res {
			if !errors.Is(r.Err, wantErr[i]) || (wantErr[i] == nil) != (r.Err == nil) {
				t.Errorf("round %d: settlement %d: %v, want %v", round+1, i, r.Err, wantErr[i])
			}
		}
		got := balances(t, db)
		// Three captures less 3.20 each, less the 40.00 refunded.
		want := map[string]int64{models.LedgerDeposit: 10000 + 3*9680 - 4000, models.LedgerPending: 0,
			models.LedgerAcquirerClearing: 0, models.LedgerSettlementCash: -3*9680 + 4000, models.LedgerFeeExpense: -960,
			models.LedgerFeeIncome: 960}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("round %d: %s = %d, want %d", round+1, k, got[k], w)
			}
		}
		if n := countEntries(t, db); n != 9 {
			t.Errorf("round %d: %d entries, want 9", round+1, n)
		}
	}
	assertInvariants(t, db)
}

// TestPostSettlementsShort: a batch that would take the deposit below zero
// (a capture fully refunded before it settled, whose fee is then owed) is
// posted one by one, and only that settlement waits for funds; within a
// batch that nets above zero it posts with the rest.
func TestPostSettlementsShort(t *testing.T) {
	db := testDB(t)
	l := ledger.New(db)
	for _, tx := range []string{"1", "2"} {
		if _, err := l.CreditOrder(t.Context(), paid(tx, 10000)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.DebitRefund(t.Context(), refunded("1", "1-01", 10000)); err != nil {
		t.Fatal(err)
	}
	res, err := l.PostSettlements(t.Context(), []ledger.Settlement{capture("1", 10000, 9680, 320, 320)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || !errors.Is(res[0].Err, ledger.ErrInsufficientFunds) {
		t.Errorf("alone: %+v, want it waiting for funds", res)
	}
	res, err = l.PostSettlements(t.Context(), []ledger.Settlement{capture("1", 10000, 9680, 320, 320), capture("2", 10000, 9680, 320, 320)})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != nil || res[1].Err != nil {
		t.Errorf("with another: %+v, want both posted", res)
	}
	if got := balances(t, db)[models.LedgerDeposit]; got != 9680-320 {
		t.Errorf("deposit %d, want %d", got, 9680-320)
	}
	assertInvariants(t, db)
}

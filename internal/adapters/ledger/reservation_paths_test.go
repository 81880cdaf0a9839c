package ledger_test

import (
	"errors"
	"testing"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/models"
)

// TestReservationPaths: a payout's reservation, settlement and release are
// one statement each once the merchant's accounts are open (migrations
// 0031 and 0034: a release repays the merchant's debt first); the first of each, a repeat, a reservation closed the other way
// and one that does not exist take the general path, and every path
// leaves the same journal and balances.
func TestReservationPaths(t *testing.T) {
	type step struct {
		op  string // reserve, settle, release
		ref string
	}
	tests := []struct {
		name string
		// before runs first, uncounted, after a top-up of 100.00.
		before []step
		do     step
		// statements is how many the step sends, or 0 for the general
		// path's (more than one).
		statements int64
		wantErr    error
		// The balances after, in cents, and the journal's entries.
		wantDeposit, wantReserved, wantClearing, wantFees, wantDebt, wantEntries int64
		// wantStatus is the reservation's status after ("" for none).
		wantStatus string
	}{
		{name: "first reservation opens the reserved account", do: step{"reserve", "po/1"},
			wantDeposit: 10000 - 1025, wantReserved: 1025, wantEntries: 2, wantStatus: models.ReservationOpen},
		{name: "later reservation is one statement", before: []step{{"reserve", "po/1"}}, do: step{"reserve", "po/2"},
			statements: 1, wantDeposit: 10000 - 2050, wantReserved: 2050, wantEntries: 3, wantStatus: models.ReservationOpen},
		{name: "repeat changes nothing", before: []step{{"reserve", "po/1"}}, do: step{"reserve", "po/1"},
			wantDeposit: 10000 - 1025, wantReserved: 1025, wantEntries: 2, wantStatus: models.ReservationOpen},
		{name: "reservation over the deposit is refused in one statement", before: []step{{"reserve", "po/1"}}, do: step{"reserve", "po/big"},
			statements: 1, wantErr: ledger.ErrInsufficientFunds, wantDeposit: 10000 - 1025, wantReserved: 1025, wantEntries: 2},
		{name: "first settlement opens rail clearing and fee income", before: []step{{"reserve", "po/1"}}, do: step{"settle", "po/1"},
			wantDeposit: 10000 - 1025, wantClearing: 1000, wantFees: 25, wantEntries: 3, wantStatus: models.ReservationSettled},
		{name: "later settlement is one statement", before: []step{{"reserve", "po/1"}, {"settle", "po/1"}, {"reserve", "po/2"}},
			do: step{"settle", "po/2"}, statements: 1,
			wantDeposit: 10000 - 2050, wantClearing: 2000, wantFees: 50, wantEntries: 5, wantStatus: models.ReservationSettled},
		{name: "release is one statement", before: []step{{"reserve", "po/1"}}, do: step{"release", "po/1"}, statements: 1,
			wantDeposit: 10000, wantEntries: 3, wantStatus: models.ReservationReleased},
		{name: "a release repays the merchant's debt first, in one statement", before: []step{{"reserve", "po/all"}, {"refund", "refund/1"}},
			do: step{"release", "po/all"}, statements: 1, wantDeposit: 10000 - 300, wantEntries: 4, wantStatus: models.ReservationReleased},
		{name: "a release smaller than the debt repays part of it", before: []step{{"reserve", "po/all"}, {"refund", "refund/big"}},
			do: step{"release", "po/all"}, statements: 1, wantDebt: -2000, wantEntries: 4, wantStatus: models.ReservationReleased},
		{name: "settling twice changes nothing", before: []step{{"reserve", "po/1"}, {"settle", "po/1"}}, do: step{"settle", "po/1"},
			wantDeposit: 10000 - 1025, wantClearing: 1000, wantFees: 25, wantEntries: 3, wantStatus: models.ReservationSettled},
		{name: "settling a released reservation is refused", before: []step{{"reserve", "po/1"}, {"release", "po/1"}}, do: step{"settle", "po/1"},
			wantErr: ledger.ErrReservationClosed, wantDeposit: 10000, wantEntries: 3, wantStatus: models.ReservationReleased},
		{name: "releasing a settled reservation is refused", before: []step{{"reserve", "po/1"}, {"settle", "po/1"}}, do: step{"release", "po/1"},
			wantErr: ledger.ErrReservationClosed, wantDeposit: 10000 - 1025, wantClearing: 1000, wantFees: 25, wantEntries: 3,
			wantStatus: models.ReservationSettled},
		{name: "settling an unknown reservation is refused", before: []step{{"reserve", "po/1"}}, do: step{"settle", "po/9"},
			wantErr: ledger.ErrReservationNotFound, wantDeposit: 10000 - 1025, wantReserved: 1025, wantEntries: 2},
	}
	run := func(t *testing.T, l *ledger.Ledger, s step) error {
		switch s.op {
		case "reserve":
			amount := int64(1000)
			switch s.ref {
			case "po/big":
				amount = 9000 // 90.00 + 0.25 against 89.75 left
			case "po/all":
				amount = 9975 // the whole deposit with its fee
			}
			return l.Reserve(t.Context(), reservation(s.ref, amount, 25))
		case "refund":
			// A refund the emptied deposit cannot cover: owed.
			amount := int64(300)
			if s.ref == "refund/big" {
				amount = 12000
			}
			_, err := l.DebitRefund(t.Context(), order(s.ref, amount))
			return err
		case "settle":
			return l.Settle(t.Context(), s.ref)
		case "release":
			return l.Release(t.Context(), s.ref)
		}
		t.Fatalf("unknown step %q", s.op)
		return nil
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := testDB(t)
			l := ledger.New(db)
			topUp(t, l, "top/1", 10000)
			for _, s := range tt.before {
				if err := run(t, l, s); err != nil {
					t.Fatalf("%s %s: %v", s.op, s.ref, err)
				}
			}
			n := statementsOf(t, db)
			err := run(t, l, tt.do)
			sent := n.Load()
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("%s %s: error = %v, want %v", tt.do.op, tt.do.ref, err, tt.wantErr)
			}
			if tt.statements > 0 && sent != tt.statements {
				t.Errorf("sent %d statements, want %d", sent, tt.statements)
			}
			if tt.statements == 0 && sent < 2 {
				t.Errorf("sent %d statements, want the general path's", sent)
			}
			b := balances(t, db)
			if b[models.LedgerDeposit] != tt.wantDeposit || b[models.LedgerReserved] != tt.wantReserved ||
				b[models.LedgerRailClearing] != tt.wantClearing || b[models.LedgerFeeIncome] != tt.wantFees || b[models.LedgerDebt] != tt.wantDebt {
				t.Errorf("deposit %d, reserved %d, rail clearing %d, fees %d, debt %d; want %d, %d, %d, %d, %d",
					b[models.LedgerDeposit], b[models.LedgerReserved], b[models.LedgerRailClearing], b[models.LedgerFeeIncome], b[models.LedgerDebt],
					tt.wantDeposit, tt.wantReserved, tt.wantClearing, tt.wantFees, tt.wantDebt)
			}
			if got := countEntries(t, db); got != tt.wantEntries {
				t.Errorf("%d entries, want %d", got, tt.wantEntries)
			}
			var r models.LedgerReservation
			status := ""
			if err := db.Where("reference = ?", tt.do.ref).Take(&r).Error; err == nil {
				status = r.Status
			}
			if status != tt.wantStatus {
				t.Errorf("reservation %s is %q, want %q", tt.do.ref, status, tt.wantStatus)
			}
			assertInvariants(t, db)
		})
	}
}

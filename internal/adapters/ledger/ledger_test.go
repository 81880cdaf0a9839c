package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/dev/testdb"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/models"
)

// testDB returns a migrated database of its own, dropped when the test
// ends.
func testDB(t testing.TB) *gorm.DB { return testdb.Open(t, "paygate_ledger_") }

const (
	merchantID = "M1"
	accountID  = "A1"
	usd        = "USD"
)

// balances returns every ledger account's balance of merchantID/accountID
// in USD, by kind.
func balances(t *testing.T, db *gorm.DB) map[string]int64 {
	t.Helper()
	var rows []models.LedgerAccount
	if err := db.Where("merchant_id = ? AND account_id = ? AND currency = ?", merchantID, accountID, usd).Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, r := range rows {
		out[r.Kind] = r.Balance
	}
	return out
}

// assertInvariants checks the whole journal: every entry's lines sum to zero
// per currency, and every account's balance is the sum of its lines.
func assertInvariants(t *testing.T, db *gorm.DB) {
	t.Helper()
	var unbalanced []struct {
		EntryID  int64
		Currency string
		Sum      int64
	}
	if err := db.Raw(`SELECT entry_id, currency, SUM(amount) AS sum FROM journal_lines
		GROUP BY entry_id, currency HAVING SUM(amount) <> 0`).Scan(&unbalanced).Error; err != nil {
		t.Fatal(err)
	}
	if len(unbalanced) > 0 {
		t.Errorf("unbalanced entries: %+v", unbalanced)
	}
	var lonely int64
	if err := db.Raw(`SELECT count(*) FROM journal_entries e WHERE (SELECT count(*) FROM journal_lines l WHERE l.entry_id = e.id) < 2`).
		Scan(&lonely).Error; err != nil {
		t.Fatal(err)
	}
	if lonely > 0 {
		t.Errorf("%d entries have fewer than two lines", lonely)
	}
	var drift []struct {
		ID      int64
		Balance int64
		Sum     int64
	}
	if err := db.Raw(`SELECT a.id, a.balance, COALESCE(SUM(l.amount), 0) AS sum FROM ledger_accounts a
		LEFT JOIN journal_lines l ON l.ledger_account_id = a.id GROUP BY a.id, a.balance
		HAVING a.balance <> COALESCE(SUM(l.amount), 0)`).Scan(&drift).Error; err != nil {
		t.Fatal(err)
	}
	if len(drift) > 0 {
		t.Errorf("accounts whose balance is not the sum of their lines: %+v", drift)
	}
	var negative int64
	if err := db.Raw(`SELECT count(*) FROM ledger_accounts WHERE kind IN ('deposit', 'reserved') AND balance < 0`).Scan(&negative).Error; err != nil {
		t.Fatal(err)
	}
	if negative > 0 {
		t.Errorf("%d deposit or reserved accounts are negative", negative)
	}
	v, err := ledger.New(db).Check(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(v) > 0 {
		t.Errorf("Check() = %+v, want no violation", v)
	}
}

func countEntries(t *testing.T, db *gorm.DB) int64 {
	t.Helper()
	var n int64
	if err := db.Model(&models.JournalEntry{}).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func topUp(t *testing.T, l *ledger.Ledger, ref string, amount int64) {
	t.Helper()
	if _, err := l.TopUp(t.Context(), ledger.TopUp{Reference: ref, MerchantID: merchantID, AccountID: accountID, Currency: usd, Amount: amount}); err != nil {
		t.Fatalf("TopUp(%s): %v", ref, err)
	}
}

func order(ref string, amount int64) ledger.OrderPosting {
	return ledger.OrderPosting{Reference: ref, MerchantID: merchantID, AccountID: accountID, Currency: usd, Amount: amount}
}

func reservation(ref string, amount, fee int64) ledger.Reservation {
	return ledger.Reservation{Reference: ref, MerchantID: merchantID, AccountID: accountID, Currency: usd, Amount: amount, Fee: fee}
}

// TestOperations runs each operation, then the same again, from a deposit
// of 100.00, and checks every balance to the cent.
func TestOperations(t *testing.T) {
	type want struct {
		pending, deposit, reserved, acquirer, rail, fee, funding, debt int64
	}
	tests := []struct {
		name    string
		op      func(ctx context.Context, l *ledger.Ledger) error
		wantErr error
		want    want // balances after the operation, and after its repeat
		entries int64
	}{
		{
			name: "top up", op: func(ctx context.Context, l *ledger.Ledger) error {
				_, err := l.TopUp(ctx, ledger.TopUp{Reference: "t2", MerchantID: merchantID, AccountID: accountID, Currency: usd, Amount: 2550})
				return err
			},
			want: want{deposit: 12550, funding: -12550}, entries: 2,
		},
		{
			name: "credit a paid order", op: func(ctx context.Context, l *ledger.Ledger) error {
				_, err := l.CreditOrder(ctx, order("order/1/paid", 1999))
				return err
			},
			want: want{pending: 1999, deposit: 10000, acquirer: -1999, funding: -10000}, entries: 2,
		},
		{
			name: "debit a refund", op: func(ctx context.Context, l *ledger.Ledger) error {
				_, err := l.DebitRefund(ctx, order("refund/1-01", 2500))
				return err
			},
			want: want{deposit: 7500, acquirer: 2500, funding: -10000}, entries: 2,
		},
		{
			name: "refund beyond the balance: the rest owed", op: func(ctx context.Context, l *ledger.Ledger) error {
				_, err := l.DebitRefund(ctx, order("refund/1-02", 10001))
				return err
			},
			want: want{acquirer: 10001, funding: -10000, debt: -1}, entries: 2,
		},
		{
			name: "a refund's reference reused for another amount", op: func(ctx context.Context, l *ledger.Ledger) error {
				if _, err := l.DebitRefund(ctx, order("refund/1-03", 2500)); err != nil {
					return err
				}
				_, err := l.DebitRefund(ctx, order("refund/1-03", 2600))
				return err
			},
			wantErr: ledger.ErrReferenceConflict,
			want:    want{deposit: 7500, acquirer: 2500, funding: -10000}, entries: 2,
		},
		{
			name: "a top-up's reference reused for another amount", op: func(ctx context.Context, l *ledger.Ledger) error {
				_, err := l.TopUp(ctx, ledger.TopUp{Reference: "t1", MerchantID: merchantID, AccountID: accountID, Currency: usd, Amount: 10001})
				return err
			},
			wantErr: ledger.ErrReferenceConflict,
			want:    want{deposit: 10000, funding: -10000}, entries: 1,
		},
		{
			name: "reserve", op: func(ctx context.Context, l *ledger.Ledger) error {
				return l.Reserve(ctx, reservation("payout/1", 9000, 150))
			},
			want: want{deposit: 850, reserved: 9150, funding: -10000}, entries: 2,
		},
		{
			name: "reserve the whole deposit", op: func(ctx context.Context, l *ledger.Ledger) error {
				return l.Reserve(ctx, reservation("payout/1", 9900, 100))
			},
			want: want{reserved: 10000, funding: -10000}, entries: 2,
		},
		{
			name: "reserve beyond the balance", op: func(ctx context.Context, l *ledger.Ledger) error {
				return l.Reserve(ctx, reservation("payout/1", 9901, 100))
			},
			wantErr: ledger.ErrInsufficientFunds,
			want:    want{deposit: 10000, funding: -10000}, entries: 1,
		},
		{
			name: "reserve then settle", op: func(ctx context.Context, l *ledger.Ledger) error {
				if err := l.Reserve(ctx, reservation("payout/1", 9000, 150)); err != nil {
					return err
				}
				return l.Settle(ctx, "payout/1")
			},
			want: want{deposit: 850, rail: 9000, fee: 150, funding: -10000}, entries: 3,
		},
		{
			name: "reserve then settle without a fee", op: func(ctx context.Context, l *ledger.Ledger) error {
				if err := l.Reserve(ctx, reservation("payout/1", 9000, 0)); err != nil {
					return err
				}
				return l.Settle(ctx, "payout/1")
			},
			want: want{deposit: 1000, rail: 9000, funding: -10000}, entries: 3,
		},
		{
			name: "reserve then release", op: func(ctx context.Context, l *ledger.Ledger) error {
				if err := l.Reserve(ctx, reservation("payout/1", 9000, 150)); err != nil {
					return err
				}
				return l.Release(ctx, "payout/1")
			},
			want: want{deposit: 10000, funding: -10000}, entries: 3,
		},
		{
			name: "settle a released reservation", op: func(ctx context.Context, l *ledger.Ledger) error {
				if err := l.Reserve(ctx, reservation("payout/1", 9000, 150)); err != nil {
					return err
				}
				if err := l.Release(ctx, "payout/1"); err != nil {
					return err
				}
				return l.Settle(ctx, "payout/1")
			},
			wantErr: ledger.ErrReservationClosed,
			want:    want{deposit: 10000, funding: -10000}, entries: 3,
		},
		{
			name: "release a settled reservation", op: func(ctx context.Context, l *ledger.Ledger) error {
				if err := l.Reserve(ctx, reservation("payout/1", 9000, 150)); err != nil {
					return err
				}
				if err := l.Settle(ctx, "payout/1"); err != nil {
					return err
				}
				return l.Release(ctx, "payout/1")
			},
			wantErr: ledger.ErrReservationClosed,
			want:    want{deposit: 850, rail: 9000, fee: 150, funding: -10000}, entries: 3,
		},
		{
			name: "settle an unknown reservation", op: func(ctx context.Context, l *ledger.Ledger) error {
				return l.Settle(ctx, "payout/none")
			},
			wantErr: ledger.ErrReservationNotFound,
			want:    want{deposit: 10000, funding: -10000}, entries: 1,
		},
		{
			name: "a reference reused for another movement", op: func(ctx context.Context, l *ledger.Ledger) error {
				_, err := l.CreditOrder(ctx, order("t1", 10000))
				return err
			},
			wantErr: ledger.ErrReferenceConflict,
			want:    want{deposit: 10000, funding: -10000}, entries: 1,
		},
		{
			name: "a zero amount", op: func(ctx context.Context, l *ledger.Ledger) error {
				_, err := l.CreditOrder(ctx, order("order/2/paid", 0))
				return err
			},
			wantErr: ledger.ErrInvalid,
			want:    want{deposit: 10000, funding: -10000}, entries: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := testDB(t)
			l := ledger.New(db)
			topUp(t, l, "t1", 10000)
			for round := range 2 {
				err := tc.op(t.Context(), l)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("round %d: error = %v, want %v", round+1, err, tc.wantErr)
				}
				got := balances(t, db)
				w := tc.want
				for kind, amount := range map[string]int64{
					models.LedgerPending: w.pending, models.LedgerDeposit: w.deposit, models.LedgerReserved: w.reserved, models.LedgerAcquirerClearing: w.acquirer,
					models.LedgerRailClearing: w.rail, models.LedgerFeeIncome: w.fee, models.LedgerOperatorFunding: w.funding,
					models.LedgerDebt: w.debt,
				} {
					if got[kind] != amount {
						t.Errorf("round %d: %s balance = %d, want %d", round+1, kind, got[kind], amount)
					}
				}
				if n := countEntries(t, db); n != tc.entries {
					t.Errorf("round %d: %d entries, want %d", round+1, n, tc.entries)
				}
			}
			bal, err := l.Balance(t.Context(), merchantID, accountID, usd)
			if err != nil {
				t.Fatal(err)
			}
			if bal.Available != tc.want.deposit || bal.Reserved != tc.want.reserved || bal.Pending != tc.want.pending || bal.Owed != -tc.want.debt {
				t.Errorf("Balance() = %+v, want available %d, reserved %d, pending %d, owed %d", bal, tc.want.deposit, tc.want.reserved,
					tc.want.pending, -tc.want.debt)
			}
			assertInvariants(t, db)
		})
	}
}

// TestRepeatReturnsTheFirstEntry: a repeated reference answers the entry
// the first call posted.
func TestRepeatReturnsTheFirstEntry(t *testing.T) {
	l := ledger.New(testDB(t))
	first, err := l.CreditOrder(t.Context(), order("order/7/paid", 1234))
	if err != nil {
		t.Fatal(err)
	}
	again, err := l.CreditOrder(t.Context(), order("order/7/paid", 1234))
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || again.Reference != "order/7/paid" || len(again.Lines) != 2 {
		t.Errorf("repeat = %+v, want the first entry %+v", again, first)
	}
	entries, err := l.Entries(t.Context(), ledger.EntryFilter{MerchantID: merchantID, AccountID: accountID})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].ID != first.ID || entries[0].Kind != models.EntryOrderPaid {
		t.Fatalf("Entries() = %+v, want the one entry", entries)
	}
	for _, ln := range entries[0].Lines {
		want := map[string]int64{models.LedgerPending: 1234, models.LedgerAcquirerClearing: -1234}[ln.AccountKind]
		if ln.Amount != want || ln.Currency != usd {
			t.Errorf("line %+v, want %d %s", ln, want, usd)
		}
	}
}

// statementsOf counts the statements db sends from now on.
func statementsOf(t *testing.T, db *gorm.DB) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	count := func(*gorm.DB) { n.Add(1) }
	cb := db.Callback()
	for _, err := range []error{
		cb.Create().After("gorm:create").Register("test:count", count),
		cb.Query().After("gorm:query").Register("test:count", count),
		cb.Update().After("gorm:update").Register("test:count", count),
		cb.Delete().After("gorm:delete").Register("test:count", count),
		cb.Row().After("gorm:row").Register("test:count", count),
		cb.Raw().After("gorm:raw").Register("test:count", count),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return &n
}

// TestCreditOrderPaths: a paid order's credit is one statement once the
// merchant's accounts are open (ledger_post_two_lines); the first credit of
// an account, a repeat and a reference of another posting take the general
// path, and every path leaves the same journal.
func TestCreditOrderPaths(t *testing.T) {
	type credit struct {
		ref    string
		amount int64
	}
	tests := []struct {
		name string
		// before runs first, uncounted.
		before []credit
		topUp  string // a top-up's reference (1.00), posted before
		refund string // a refund's reference (0.40, from the deposit), posted after the top-up
		credit credit
		// statements is how many the credit sends, or 0 for more than one.
		statements   int64
		wantErr      error
		wantPending  int64
		wantClearing int64
		wantEntries  int64
	}{
		{name: "first credit opens the accounts", credit: credit{"order/1/paid", 1250},
			wantPending: 1250, wantClearing: -1250, wantEntries: 1},
		{name: "later credit is one statement", before: []credit{{"order/1/paid", 1250}}, credit: credit{"order/2/paid", 999},
			statements: 1, wantPending: 2249, wantClearing: -2249, wantEntries: 2},
		{name: "one of the two accounts open", topUp: "top/1", refund: "refund/1", credit: credit{"order/2/paid", 999},
			wantPending: 999, wantClearing: 40 - 999, wantEntries: 3},
		{name: "repeat returns the first entry", before: []credit{{"order/1/paid", 1250}}, credit: credit{"order/1/paid", 1250},
			wantPending: 1250, wantClearing: -1250, wantEntries: 1},
		{name: "repeat with another amount is refused", before: []credit{{"order/1/paid", 1250}}, credit: credit{"order/1/paid", 1300},
			wantErr: ledger.ErrReferenceConflict, wantPending: 1250, wantClearing: -1250, wantEntries: 1},
		{name: "reference of a top-up is refused", before: []credit{{"order/1/paid", 1250}}, topUp: "order/3/paid",
			credit: credit{"order/3/paid", 500}, wantErr: ledger.ErrReferenceConflict, wantPending: 1250, wantClearing: -1250, wantEntries: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := testDB(t)
			l := ledger.New(db)
			for _, c := range tt.before {
				if _, err := l.CreditOrder(t.Context(), order(c.ref, c.amount)); err != nil {
					t.Fatal(err)
				}
			}
			if tt.topUp != "" {
				topUp(t, l, tt.topUp, 100)
			}
			if tt.refund != "" {
				if _, err := l.DebitRefund(t.Context(), order(tt.refund, 40)); err != nil {
					t.Fatal(err)
				}
			}
			n := statementsOf(t, db)
			p := order(tt.credit.ref, tt.credit.amount)
			p.OrderKey = "TX" + tt.credit.ref
			got, err := l.CreditOrder(t.Context(), p)
			sent := n.Load()
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("CreditOrder() error = %v, want %v", err, tt.wantErr)
			}
			if tt.statements > 0 && sent != tt.statements {
				t.Errorf("CreditOrder() sent %d statements, want %d", sent, tt.statements)
			}
			if tt.statements == 0 && sent < 2 {
				t.Errorf("CreditOrder() sent %d statements, want the general path's", sent)
			}
			if b := balances(t, db); b[models.LedgerPending] != tt.wantPending || b[models.LedgerAcquirerClearing] != tt.wantClearing {
				t.Errorf("pending %d, acquirer clearing %d; want %d and %d", b[models.LedgerPending], b[models.LedgerAcquirerClearing],
					tt.wantPending, tt.wantClearing)
			}
			if n := countEntries(t, db); n != tt.wantEntries {
				t.Errorf("%d entries, want %d", n, tt.wantEntries)
			}
			assertInvariants(t, db)
			if tt.wantErr != nil {
				return
			}
			var row models.JournalEntry
			if err := db.Where("reference = ?", tt.credit.ref).Take(&row).Error; err != nil {
				t.Fatal(err)
			}
			if row.ID != got.ID || row.Kind != models.EntryOrderPaid || row.Description != "order paid" || row.MerchantID != merchantID ||
				row.AccountID != accountID || (len(tt.before) == 0 || tt.before[0].ref != tt.credit.ref) && row.OrderKey != p.OrderKey {
				t.Errorf("entry row %+v, answered %+v", row, got)
			}
			if at := got.CreatedAt.Truncate(time.Microsecond); !row.CreatedAt.Equal(at) {
				t.Errorf("entry row created_at %v, answered %v", row.CreatedAt, got.CreatedAt)
			}
			if len(tt.before) == 0 || tt.before[0].ref != tt.credit.ref {
				// The credit moved both accounts: each was stamped with it.
				var moved []models.LedgerAccount
				if err := db.Where("kind IN ?", []string{models.LedgerPending, models.LedgerAcquirerClearing}).Find(&moved).Error; err != nil {
					t.Fatal(err)
				}
				for _, a := range moved {
					if !a.UpdatedAt.Equal(got.CreatedAt.Truncate(time.Microsecond)) {
						t.Errorf("%s account updated_at %v, want the credit's %v", a.Kind, a.UpdatedAt, got.CreatedAt)
					}
				}
			}
			want := map[string]int64{models.LedgerPending: tt.credit.amount, models.LedgerAcquirerClearing: -tt.credit.amount}
			if len(got.Lines) != 2 {
				t.Fatalf("answered lines %+v, want two", got.Lines)
			}
			for _, ln := range got.Lines {
				if ln.Amount != want[ln.AccountKind] || ln.Currency != usd {
					t.Errorf("answered line %+v, want %d %s", ln, want[ln.AccountKind], usd)
				}
			}
		})
	}
}

// TestConcurrentReserves: 50 payouts race for a deposit that holds exactly
// enough for 37 of them.
func TestConcurrentReserves(t *testing.T) {
	db := testDB(t)
	l := ledger.New(db)
	const (
		calls  = 50
		fits   = 37
		amount = 1000 // 10.00
		fee    = 25   // 0.25
	)
	topUp(t, l, "funding", fits*(amount+fee))
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		ok, short int
		other     []error
	)
	start := make(chan struct{})
	for i := range calls {
		wg.Go(func() {
			<-start
			err := l.Reserve(t.Context(), reservation(fmt.Sprintf("payout/%02d", i), amount, fee))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, ledger.ErrInsufficientFunds):
				short++
			default:
				other = append(other, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if len(other) > 0 {
		t.Fatalf("unexpected errors: %v", errors.Join(other...))
	}
	if ok != fits || short != calls-fits {
		t.Errorf("%d reserved, %d refused; want %d and %d", ok, short, fits, calls-fits)
	}
	bal, err := l.Balance(t.Context(), merchantID, accountID, usd)
	if err != nil {
		t.Fatal(err)
	}
	if bal.Available != 0 || bal.Reserved != fits*(amount+fee) {
		t.Errorf("Balance() = %+v, want available 0, reserved %d", bal, fits*(amount+fee))
	}
	if n := countEntries(t, db); n != 1+fits {
		t.Errorf("%d entries, want %d", n, 1+fits)
	}
	assertInvariants(t, db)
}

// TestConcurrentSameReference: the same order credited by many callers at
// once is posted once.
func TestConcurrentSameReference(t *testing.T) {
	for _, open := range []bool{false, true} {
		t.Run(fmt.Sprintf("accounts open %v", open), func(t *testing.T) { concurrentSameReference(t, open) })
	}
}

// concurrentSameReference races 20 credits of one reference, with the
// merchant's accounts opened by an earlier credit (the one-statement path)
// or not (the general path).
func concurrentSameReference(t *testing.T, open bool) {
	db := testDB(t)
	l := ledger.New(db)
	var earlier int64
	if open {
		earlier = 100
		if _, err := l.CreditOrder(t.Context(), order("order/8/paid", earlier)); err != nil {
			t.Fatal(err)
		}
	}
	const calls = 20
	var wg sync.WaitGroup
	ids := make([]int64, calls)
	errs := make([]error, calls)
	start := make(chan struct{})
	for i := range calls {
		wg.Go(func() {
			<-start
			e, err := l.CreditOrder(t.Context(), order("order/9/paid", 4200))
			ids[i], errs[i] = e.ID, err
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if id != ids[0] {
			t.Errorf("entry ids %v, want one", ids)
			break
		}
	}
	if got := balances(t, db)[models.LedgerPending]; got != 4200+earlier {
		t.Errorf("pending = %d, want %d", got, 4200+earlier)
	}
	if n, want := countEntries(t, db), 1+earlier/100; n != want {
		t.Errorf("%d entries, want %d", n, want)
	}
	assertInvariants(t, db)
}

// TestConcurrentSettleAndRelease: a settle and a release racing on one
// reservation: exactly one goes through, the other is refused.
func TestConcurrentSettleAndRelease(t *testing.T) {
	db := testDB(t)
	l := ledger.New(db)
	topUp(t, l, "funding", 5000)
	for i := range 10 {
		ref := fmt.Sprintf("payout/%d", i)
		if err := l.Reserve(t.Context(), reservation(ref, 400, 50)); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var settleErr, releaseErr error
		wg.Go(func() { settleErr = l.Settle(t.Context(), ref) })
		wg.Go(func() { releaseErr = l.Release(t.Context(), ref) })
		wg.Wait()
		closed := errors.Is(settleErr, ledger.ErrReservationClosed) != errors.Is(releaseErr, ledger.ErrReservationClosed)
		if !closed || (settleErr != nil && releaseErr != nil) {
			t.Errorf("%s: settle %v, release %v; want one to pass and the other refused", ref, settleErr, releaseErr)
		}
	}
	b := balances(t, db)
	if b[models.LedgerDeposit]+b[models.LedgerRailClearing]+b[models.LedgerFeeIncome] != 5000 || b[models.LedgerReserved] != 0 {
		t.Errorf("balances %v do not add up to the 5000 funded", b)
	}
	assertInvariants(t, db)
}

func TestBalancesByCurrency(t *testing.T) {
	l := ledger.New(testDB(t))
	topUp(t, l, "usd", 100)
	if _, err := l.TopUp(t.Context(), ledger.TopUp{Reference: "eur", MerchantID: merchantID, AccountID: accountID, Currency: "EUR", Amount: 250}); err != nil {
		t.Fatal(err)
	}
	got, err := l.Balances(t.Context(), merchantID, accountID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != (ledger.Balance{Currency: "EUR", Available: 250}) || got[1] != (ledger.Balance{Currency: usd, Available: 100}) {
		t.Errorf("Balances() = %+v", got)
	}
	none, err := l.Balance(t.Context(), merchantID, accountID, "GBP")
	if err != nil || none != (ledger.Balance{Currency: "GBP"}) {
		t.Errorf("Balance(GBP) = %+v, %v; want zero", none, err)
	}
}

// TestConcurrentMixedPostings: paid orders, refunds, top-ups and payout
// reservations race on one merchant account whose ledger accounts do not
// exist yet. Every posting goes through, a reservation alone may be refused
// for funds (no deadlock, no other error; what a refund's deposit lacks is
// owed), and the balances are exactly the sum of those that went through.
func TestConcurrentMixedPostings(t *testing.T) {
	db := testDB(t)
	l := ledger.New(db)
	const (
		each    = 12
		credit  = 500 // 5.00 a paid order
		refund  = 700 // 7.00 a refund
		top     = 300 // 3.00 a top-up
		reserve = 900 // 9.00 a payout, fee 0.10
		fee     = 10
	)
	type result struct {
		kind string
		err  error
	}
	results := make(chan result, 4*each)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range each {
		ops := []struct {
			kind string
			do   func() error
		}{
			{"credit", func() error {
				_, err := l.CreditOrder(t.Context(), order(fmt.Sprintf("order/%02d/paid", i), credit))
				return err
			}},
			{"refund", func() error {
				_, err := l.DebitRefund(t.Context(), order(fmt.Sprintf("refund/%02d", i), refund))
				return err
			}},
			{"top-up", func() error {
				_, err := l.TopUp(t.Context(), ledger.TopUp{Reference: fmt.Sprintf("top/%02d", i), MerchantID: merchantID, AccountID: accountID, Currency: usd, Amount: top})
				return err
			}},
			{"reserve", func() error { return l.Reserve(t.Context(), reservation(fmt.Sprintf("payout/%02d", i), reserve, fee)) }},
		}
		for _, op := range ops {
			wg.Go(func() {
				<-start
				results <- result{op.kind, op.do()}
			})
		}
	}
	close(start)
	wg.Wait()
	close(results)
	done := map[string]int64{}
	for r := range results {
		switch {
		case r.err == nil:
			done[r.kind]++
		case errors.Is(r.err, ledger.ErrInsufficientFunds) && r.kind == "reserve":
		default:
			t.Errorf("%s: %v", r.kind, r.err)
		}
	}
	if done["credit"] != each || done["top-up"] != each {
		t.Errorf("%d credits and %d top-ups went through, want %d each", done["credit"], done["top-up"], each)
	}
	if done["refund"] != each {
		t.Errorf("%d refunds went through, want %d: what the deposit lacks is owed", done["refund"], each)
	}
	got := balances(t, db)
	if got[models.LedgerDeposit] > 0 && got[models.LedgerDebt] < 0 {
		t.Errorf("deposit %d beside a debt of %d: the debt is repaid first", got[models.LedgerDeposit], -got[models.LedgerDebt])
	}
	// The deposit less what is owed: the debt is the deposit's shortfall.
	got[models.LedgerDeposit] += got[models.LedgerDebt]
	want := map[string]int64{
		models.LedgerPending:          done["credit"] * credit,
		models.LedgerDeposit:          done["top-up"]*top - done["refund"]*refund - done["reserve"]*(reserve+fee),
		models.LedgerAcquirerClearing: -done["credit"]*credit + done["refund"]*refund,
		models.LedgerOperatorFunding:  -done["top-up"] * top,
		models.LedgerReserved:         done["reserve"] * (reserve + fee),
	}
	for kind, w := range want {
		if got[kind] != w {
			t.Errorf("%s balance %d, want %d (went through: %v)", kind, got[kind], w, done)
		}
	}
	if n, w := countEntries(t, db), done["credit"]+done["refund"]+done["top-up"]+done["reserve"]; n != w {
		t.Errorf("%d entries, want %d", n, w)
	}
	assertInvariants(t, db)
}

// BenchmarkCreditOrder credits paid orders from 32 parallel callers, all
// to one merchant account (hot: every posting takes the same deposit row's
// lock) or spread over 64 of them (the baseline: two callers seldom share a
// lock). hot/spread in ns/op is what one busy merchant account pays for its
// balance lock.
func BenchmarkCreditOrder(b *testing.B) {
	db := testDB(b)
	l := ledger.New(db)
	for _, mode := range []string{"spread", "hot"} {
		b.Run(mode, func(b *testing.B) {
			var n atomic.Int64
			b.SetParallelism(16) // 32 callers on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					acct := accountID
					if mode == "spread" {
						acct = fmt.Sprintf("S%d", i%64)
					}
					p := ledger.OrderPosting{Reference: fmt.Sprintf("%s/%d", mode, i), MerchantID: merchantID, AccountID: acct, Currency: usd, Amount: 100}
					if _, err := l.CreditOrder(context.Background(), p); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// Package ledger is the gateway's double-entry ledger in Postgres: a paid
// order credits the merchant's pending money (a receivable from the
// acquirer), the acquirer's settlement moves it, less fees, to the
// merchant's deposit (available), operator top-ups credit the deposit,
// refunds debit pending or deposit, and payouts are reserved, settled or
// released against the deposit.
//
// Sign convention: a journal line's amount is signed minor units; positive
// credits its account, negative debits it. Every entry's lines sum to zero
// in each currency, and an account's balance is the sum of its lines. The
// merchant's pending, deposit and reserved balances (what the gateway owes
// the merchant), rail clearing and fee income therefore sit at or above
// zero; acquirer clearing (owed to the gateway by the acquirer), settlement
// cash and operator funding (money brought in) and fee expense run below
// zero.
//
// Every operation is idempotent by its reference: the same reference posts
// once and a repeat returns the first result. Deposit and reserved balances
// never go below zero: the posting locks the accounts it touches (SELECT ...
// FOR UPDATE, in id order), checks the new balances, and writes the lines and
// the balances in one transaction; a CHECK constraint on the balance column
// backs the check up.
package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/models"
)

// Errors of the ledger's operations; match them with errors.Is.
var (
	// ErrInsufficientFunds: the posting would take a deposit (or reserved)
	// balance below zero. Nothing was posted: the same reference may be
	// tried again once funds arrive.
	ErrInsufficientFunds = errors.New("ledger: insufficient funds")
	// ErrReservationClosed: a released reservation cannot be settled, nor a
	// settled one released.
	ErrReservationClosed = errors.New("ledger: reservation already closed the other way")
	// ErrReservationNotFound: no reservation has this reference.
	ErrReservationNotFound = errors.New("ledger: no reservation with this reference")
	// ErrReferenceConflict: the reference already posted a different
	// movement (another kind, account or amount).
	ErrReferenceConflict = errors.New("ledger: reference already used for a different posting")
	// ErrInvalid: the request is malformed (empty ids, unknown currency, an
	// amount out of range); it can never be posted.
	ErrInvalid = errors.New("ledger: invalid posting")
)

// MaxReferenceLength bounds a caller's reference: the settle and release
// entries of a reservation add a suffix to it within the column's 255.
const MaxReferenceLength = 200

// OrderPosting is a paid order's credit or a refund's debit of the
// merchant's money, in minor units of Currency. OrderKey is the order's
// transaction id: a refund of an order whose capture the acquirer has not
// settled yet draws on the merchant's pending money, not the deposit.
type OrderPosting struct {
	Reference  string
	OrderKey   string
	MerchantID string
	AccountID  string
	Currency   string
	Amount     int64
}

// TopUp is operator funding of a merchant's deposit.
type TopUp struct {
	Reference  string
	MerchantID string
	AccountID  string
	Currency   string
	Amount     int64
}

// Reservation sets Amount (what the payout sends) and Fee (the gateway's
// fee) aside from the merchant's deposit, both in minor units of Currency,
// the deposit's (source) currency.
type Reservation struct {
	Reference  string
	MerchantID string
	AccountID  string
	Currency   string
	Amount     int64
	Fee        int64
}

// Balance is a merchant account's money in one currency: Pending captured
// and not yet settled by the acquirer, Available in the deposit account
// (what payouts draw on), Reserved for payouts in flight, and Owed what the
// merchant owes the gateway (disputes and refunds its deposit could not
// cover; zero or above).
type Balance struct {
	Currency  string
	Pending   int64
	Available int64
	Reserved  int64
	Owed      int64
}

// Payable is what a payout may take of the balance: the deposit less what
// the merchant owes.
func (b Balance) Payable() int64 { return max(b.Available-b.Owed, 0) }

// Line is one line of a journal entry: Amount (signed; positive credits)
// on the merchant account's ledger account of kind AccountKind.
type Line struct {
	AccountKind string `json:"account_kind"`
	Currency    string `json:"currency"`
	Amount      int64  `json:"amount"`
}

// Entry is a posted journal entry.
type Entry struct {
	ID          int64     `json:"id"`
	Kind        string    `json:"kind"`
	Reference   string    `json:"reference"`
	MerchantID  string    `json:"merchant_id"`
	AccountID   string    `json:"account_id"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
	Lines       []Line    `json:"lines"`
}

// EntryFilter selects entries for a listing. Empty fields do not filter;
// entries come in id order, after AfterID, at most Limit (100 when zero,
// 1000 at most).
type EntryFilter struct {
	MerchantID string
	AccountID  string
	Kind       string
	Reference  string
	From, To   time.Time
	AfterID    int64
	Limit      int
}

// Ledger posts and reads the journal.
type Ledger struct {
	db  *gorm.DB
	now func() time.Time
}

// New returns a ledger on db, whose schema has the ledger's tables
// (migration 0004).
func New(db *gorm.DB) *Ledger {
	return &Ledger{db: db, now: time.Now}
}

// CreditOrder credits a paid order's amount to the merchant's pending money,
// from acquirer clearing: the acquirer owes it until it settles.
func (l *Ledger) CreditOrder(ctx context.Context, p OrderPosting) (Entry, error) {
	if err := check(p.Reference, p.MerchantID, p.AccountID, p.Currency, p.Amount, 0); err != nil {
		return Entry{}, err
	}
	credit := posting{
		kind: models.EntryOrderPaid, reference: p.Reference, merchantID: p.MerchantID, accountID: p.AccountID,
		orderKey: p.OrderKey, currency: p.Currency, description: "order paid",
		lines: []line{{models.LedgerPending, p.Amount}, {models.LedgerAcquirerClearing, -p.Amount}},
	}
	// The credit's first attempts are a local activity of the payment's
	// workflow task, whose completion carries the answer
	// (workflows/ledger.go): one statement posts it when the merchant's
	// accounts are open.
	if e, posted, err := l.postTwoLines(ctx, credit); err != nil {
		return Entry{}, fmt.Errorf("credit order %s: %w", p.Reference, err)
	} else if posted {
		return e, nil
	}
	var out Entry
	err := l.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		e, _, err := l.post(ctx, tx, credit)
		out = e
		return err
	})
	if err != nil {
		return Entry{}, fmt.Errorf("credit order %s: %w", p.Reference, err)
	}
	return out, nil
}

// postTwoLines posts p, whose first line moves its account up and second
// the same amount down, in one statement (the function
// ledger_post_two_lines, migration 0028): the steps of post, in its order,
// in one round trip to Postgres. It reports posted false, and nothing
// written, when the reference was posted before or an account is not open
// yet: post then finds the first entry, or opens the accounts.
//
// Its debit has no funds check: p's second line must be of a kind that may
// go below zero. It runs outside any transaction, so that the call's
// failure undoes only the call.
func (l *Ledger) postTwoLines(ctx context.Context, p posting) (Entry, bool, error) {
	if err := balanced(p.lines); err != nil {
		return Entry{}, false, err
	}
	if len(p.lines) != 2 || p.lines[0].amount <= 0 || slices.Contains(nonNegative, p.lines[1].kind) {
		return Entry{}, false, fmt.Errorf("%w: a two-line posting moves one amount up on one account and down on one that may go below zero", ErrInvalid)
	}
	now := l.now().UTC()
	var id sql.NullInt64
	err := l.db.WithContext(ctx).Raw("SELECT ledger_post_two_lines(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		p.kind, p.reference, p.merchantID, p.accountID, p.orderKey, p.description, p.currency,
		p.lines[0].kind, p.lines[1].kind, p.lines[0].amount, now).Row().Scan(&id)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == pgAccountsNotOpen:
		return Entry{}, false, nil
	case err != nil:
		return Entry{}, false, fmt.Errorf("post %s: %w", p.kind, err)
	case !id.Valid:
		return Entry{}, false, nil
	}
	return p.entry(id.Int64, now), true, nil
}

// pgAccountsNotOpen is the SQLSTATE ledger_post_two_lines raises when an
// account is not open yet: a code of our own, so that no other error is
// taken for it.
const pgAccountsNotOpen = "L0001"

// DebitRefund debits a refund's amount from the merchant's money, back to
// acquirer clearing: from pending while the acquirer has not settled the
// order's capture (the refund then comes out of that settlement), from the
// deposit once it has. What the deposit lacks is taken as the merchant's
// debt, as a dispute's hold takes it: the refund has left the acquirer
// already, so it is on the ledger at once, and a capture's settlement, a
// top-up, a won dispute's release or a payout's release repays it before
// crediting the deposit. A repeat posts nothing more.
func (l *Ledger) DebitRefund(ctx context.Context, p OrderPosting) (Entry, error) {
	if err := check(p.Reference, p.MerchantID, p.AccountID, p.Currency, p.Amount, 0); err != nil {
		return Entry{}, err
	}
	var out Entry
	err := l.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The order's settlement locks the same accounts, so it waits for
		// the refund or the refund for it.
		kinds := refundKinds
		if p.OrderKey == "" {
			// A posting of no order draws on the deposit alone.
			kinds = refundKinds[1:]
		}
		accounts, err := l.lockAccounts(tx, p.MerchantID, p.AccountID, p.Currency, kinds)
		if err != nil {
			return err
		}
		// A repeat is the entry posted first, looked for under the lock:
		// its lines were read from balances that may have moved since.
		if prior, err := l.entryByReference(ctx, tx, p.Reference); err == nil {
			if !sameOrderPosting(prior, models.EntryRefund, p, models.LedgerAcquirerClearing) {
				return fmt.Errorf("%w: %s is a %s entry", ErrReferenceConflict, p.Reference, prior.Kind)
			}
			out = prior
			return nil
		} else if !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		from, err := l.refundSource(ctx, tx, p)
		if err != nil {
			return err
		}
		m := lineSet{}
		m.add(models.LedgerAcquirerClearing, p.Amount)
		if from == models.LedgerPending {
			m.add(models.LedgerPending, -p.Amount)
		} else {
			fromDeposit := min(max(accounts[models.LedgerDeposit].Balance, 0), p.Amount)
			m.add(models.LedgerDeposit, -fromDeposit)
			m.add(models.LedgerDebt, -(p.Amount - fromDeposit))
		}
		e, _, err := l.post(ctx, tx, posting{
			kind: models.EntryRefund, reference: p.Reference, merchantID: p.MerchantID, accountID: p.AccountID,
			orderKey: p.OrderKey, currency: p.Currency, description: "refund", lines: m.lines(),
		})
		out = e
		return err
	})
	if err != nil {
		return Entry{}, fmt.Errorf("debit refund %s: %w", p.Reference, err)
	}
	return out, nil
}

// refundKinds are the accounts a refund's debit may move, pending first.
var refundKinds = []string{models.LedgerPending, models.LedgerDeposit, models.LedgerDebt, models.LedgerAcquirerClearing}

// sameOrderPosting reports whether a posted entry is p: of kind, the same
// owner, and p's amount credited to counterpart in p's currency.
func sameOrderPosting(e Entry, kind string, p OrderPosting, counterpart string) bool {
	if e.Kind != kind || e.MerchantID != p.MerchantID || e.AccountID != p.AccountID {
		return false
	}
	return slices.ContainsFunc(e.Lines, func(ln Line) bool {
		return ln.AccountKind == counterpart && ln.Currency == p.Currency && ln.Amount == p.Amount
	})
}

// TopUp credits operator funding to the merchant's deposit, after repaying
// what the merchant owes (the debt disputes and refunds left): money the
// merchant sends comes first to what it owes, as its settlements do.
func (l *Ledger) TopUp(ctx context.Context, t TopUp) (Entry, error) {
	if err := check(t.Reference, t.MerchantID, t.AccountID, t.Currency, t.Amount, 0); err != nil {
		return Entry{}, err
	}
	var out Entry
	err := l.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		accounts, err := l.lockAccounts(tx, t.MerchantID, t.AccountID, t.Currency,
			[]string{models.LedgerDeposit, models.LedgerDebt, models.LedgerOperatorFunding})
		if err != nil {
			return err
		}
		if prior, err := l.entryByReference(ctx, tx, t.Reference); err == nil {
			if !sameOrderPosting(prior, models.EntryTopUp, OrderPosting{MerchantID: t.MerchantID, AccountID: t.AccountID,
				Currency: t.Currency, Amount: -t.Amount}, models.LedgerOperatorFunding) {
				return fmt.Errorf("%w: %s is a %s entry", ErrReferenceConflict, t.Reference, prior.Kind)
			}
			out = prior
			return nil
		} else if !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		repay := min(max(-accounts[models.LedgerDebt].Balance, 0), t.Amount)
		m := lineSet{}
		m.add(models.LedgerDeposit, t.Amount-repay)
		m.add(models.LedgerDebt, repay)
		m.add(models.LedgerOperatorFunding, -t.Amount)
		e, _, err := l.post(ctx, tx, posting{
			kind: models.EntryTopUp, reference: t.Reference, merchantID: t.MerchantID, accountID: t.AccountID,
			currency: t.Currency, description: "operator top-up", lines: m.lines(),
		})
		out = e
		return err
	})
	if err != nil {
		return Entry{}, fmt.Errorf("top up %s: %w", t.Reference, err)
	}
	return out, nil
}

// Reserve moves Amount+Fee from the merchant's deposit to reserved and opens
// the reservation. When the deposit holds less it returns
// ErrInsufficientFunds and posts nothing. A repeat of the same reservation
// is a no-op.
func (l *Ledger) Reserve(ctx context.Context, r Reservation) error {
	if err := check(r.Reference, r.MerchantID, r.AccountID, r.Currency, r.Amount, r.Fee); err != nil {
		return err
	}
	total := r.Amount + r.Fee
	description := fmt.Sprintf("payout reserved: amount %d, fee %d", r.Amount, r.Fee)
	// Every payout of an account locks its reserved balance: one statement
	// (ledger_reserve, migration 0031) holds that lock for its own work
	// only. A repeat, or accounts not open yet, take the general path.
	done, err := l.callReservation(ctx, "SELECT ledger_reserve(?, ?, ?, ?, ?, ?, ?, ?)",
		r.Reference, r.MerchantID, r.AccountID, r.Currency, r.Amount, r.Fee, description, l.now().UTC())
	if err != nil || done {
		if err != nil {
			return fmt.Errorf("reserve %s: %w", r.Reference, err)
		}
		return nil
	}
	err = l.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		_, posted, err := l.post(ctx, tx, posting{
			kind: models.EntryReserve, reference: r.Reference, merchantID: r.MerchantID, accountID: r.AccountID,
			currency: r.Currency, description: description,
			lines: []line{{models.LedgerDeposit, -total}, {models.LedgerReserved, total}},
		})
		if err != nil || !posted {
			return err
		}
		return tx.Create(&models.LedgerReservation{
			Reference: r.Reference, MerchantID: r.MerchantID, AccountID: r.AccountID, Currency: r.Currency,
			Amount: r.Amount, Fee: r.Fee, Status: models.ReservationOpen, CreatedAt: l.now(),
		}).Error
	})
	if err != nil {
		return fmt.Errorf("reserve %s: %w", r.Reference, err)
	}
	return nil
}

// Settle closes a reservation as paid: its Amount goes to rail clearing and
// its Fee to fee income. Settling a settled reservation is a no-op; settling
// a released one is refused with ErrReservationClosed.
func (l *Ledger) Settle(ctx context.Context, reference string) error {
	err := l.closeReservation(ctx, reference, models.ReservationSettled, nil, func(r models.LedgerReservation, _ map[string]*models.LedgerAccount) []line {
		lines := []line{{models.LedgerReserved, -(r.Amount + r.Fee)}, {models.LedgerRailClearing, r.Amount}}
		if r.Fee > 0 {
			lines = append(lines, line{models.LedgerFeeIncome, r.Fee})
		}
		return lines
	})
	if err != nil {
		return fmt.Errorf("settle %s: %w", reference, err)
	}
	return nil
}

// Release closes a reservation unpaid: Amount and Fee repay what the
// merchant owes (LedgerDebt), the rest goes back to the deposit, so no
// payout draws on a deposit beside a debt. Releasing a released
// reservation is a no-op; releasing a settled one is refused with
// ErrReservationClosed.
func (l *Ledger) Release(ctx context.Context, reference string) error {
	kinds := []string{models.LedgerReserved, models.LedgerDeposit, models.LedgerDebt}
	err := l.closeReservation(ctx, reference, models.ReservationReleased, kinds, func(r models.LedgerReservation, accounts map[string]*models.LedgerAccount) []line {
		total := r.Amount + r.Fee
		repay := min(max(-accounts[models.LedgerDebt].Balance, 0), total)
		// In ledger_close_reservation's order (migration 0034), no zero line.
		lines := []line{{models.LedgerReserved, -total}}
		if total > repay {
			lines = append(lines, line{models.LedgerDeposit, total - repay})
		}
		if repay > 0 {
			lines = append(lines, line{models.LedgerDebt, repay})
		}
		return lines
	})
	if err != nil {
		return fmt.Errorf("release %s: %w", reference, err)
	}
	return nil
}

// closeReservation settles or releases (to) an open reservation, under the
// lock of its row so that a settle and a release racing cannot both go
// through. The general path locks the accounts of kinds first, when lines
// reads their balances.
func (l *Ledger) closeReservation(ctx context.Context, reference, to string, kinds []string,
	lines func(models.LedgerReservation, map[string]*models.LedgerAccount) []line) error {
	if reference == "" {
		return fmt.Errorf("%w: empty reference", ErrInvalid)
	}
	kind := models.EntrySettle
	if to == models.ReservationReleased {
		kind = models.EntryRelease
	}
	// One statement first (ledger_close_reservation, migration 0031); a
	// reservation not open, or accounts not open yet, take the general
	// path, which judges them.
	done, err := l.callReservation(ctx, "SELECT ledger_close_reservation(?, ?, ?, ?)", reference, to, "payout "+to, l.now().UTC())
	if err != nil || done {
		return err
	}
	return l.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var r models.LedgerReservation
		err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("reference = ?", reference).Take(&r).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return ErrReservationNotFound
		}
		if err != nil {
			return err
		}
		switch r.Status {
		case to:
			return nil
		case models.ReservationSettled, models.ReservationReleased:
			return fmt.Errorf("%w: it is %s", ErrReservationClosed, r.Status)
		}
		var accounts map[string]*models.LedgerAccount
		if len(kinds) > 0 {
			if accounts, err = l.lockAccounts(tx, r.MerchantID, r.AccountID, r.Currency, kinds); err != nil {
				return err
			}
		}
		if _, _, err := l.post(ctx, tx, posting{
			kind: kind, reference: reference + "#" + kind, merchantID: r.MerchantID, accountID: r.AccountID,
			currency: r.Currency, description: "payout " + to, lines: lines(r, accounts),
		}); err != nil {
			return err
		}
		now := l.now()
		return tx.Model(&models.LedgerReservation{}).Where("reference = ?", reference).
			Updates(map[string]any{"status": to, "closed_at": now}).Error
	})
}

// pgInsufficientFunds is the SQLSTATE the reservation functions raise when
// a balance that must stay at or above zero would go below it.
const pgInsufficientFunds = "L0002"

// callReservation runs one of the reservation functions of migration 0031
// (query, returning the entry's id or NULL) outside any transaction, so
// that its failure undoes only the call. It reports done when the call
// posted; false, with nothing written, when the general path must take the
// case (NULL, or accounts not open).
func (l *Ledger) callReservation(ctx context.Context, query string, args ...any) (bool, error) {
	var id sql.NullInt64
	err := l.db.WithContext(ctx).Raw(query, args...).Row().Scan(&id)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == pgAccountsNotOpen:
		return false, nil
	case errors.As(err, &pgErr) && pgErr.Code == pgInsufficientFunds:
		return false, fmt.Errorf("%w: %s", ErrInsufficientFunds, pgErr.Message)
	case err != nil:
		return false, err
	}
	return id.Valid, nil
}

// check validates an operation's request.
func check(reference, merchantID, accountID, currency string, amount, fee int64) error {
	switch {
	case reference == "" || len(reference) > MaxReferenceLength || strings.Contains(reference, "#"):
		return fmt.Errorf("%w: reference must be 1 to %d characters without '#'", ErrInvalid, MaxReferenceLength)
	case merchantID == "" || len(merchantID) > 32 || accountID == "" || len(accountID) > 32:
		return fmt.Errorf("%w: merchant and account ids must be 1 to 32 characters", ErrInvalid)
	case !money.KnownExtendedCurrency(currency):
		return fmt.Errorf("%w: unknown currency %q", ErrInvalid, currency)
	case amount <= 0 || amount > money.MaxMinor:
		return fmt.Errorf("%w: amount %d out of range (1 to %d minor units)", ErrInvalid, amount, money.MaxMinor)
	case fee < 0 || fee > money.MaxMinor:
		return fmt.Errorf("%w: fee %d out of range (0 to %d minor units)", ErrInvalid, fee, money.MaxMinor)
	}
	return nil
}

// line is one line of a posting, on the merchant account's ledger account
// of kind.
type line struct {
	kind   string
	amount int64
}

// posting is one balanced movement within one merchant account and
// currency.
type posting struct {
	kind, reference, merchantID, accountID, currency, description string
	// orderKey is the transaction id of the order the posting is of, if any.
	orderKey string
	lines    []line
}

// entry is p as posted under id at the time at.
func (p posting) entry(id int64, at time.Time) Entry {
	out := Entry{ID: id, Kind: p.kind, Reference: p.reference, MerchantID: p.merchantID, AccountID: p.accountID,
		Description: p.description, CreatedAt: at}
	for _, ln := range p.lines {
		out.Lines = append(out.Lines, Line{AccountKind: ln.kind, Currency: p.currency, Amount: ln.amount})
	}
	return out
}

// nonNegative are the account kinds whose balance may not go below zero.
var nonNegative = []string{models.LedgerDeposit, models.LedgerReserved, models.LedgerPending}

// post is the general way to write the journal, inside the caller's
// transaction tx (postTwoLines is its one-statement form for a paid
// order's credit, the same steps in the same order). It checks that the lines balance, claims the reference,
// locks the ledger accounts it touches in id order, refuses a deposit or
// reserved balance below zero (ErrInsufficientFunds; the caller's
// transaction then rolls back the claim), and writes the lines and the new
// balances. When the reference was already posted it returns that entry and
// posted false, or ErrReferenceConflict when that entry moved something
// else.
func (l *Ledger) post(ctx context.Context, tx *gorm.DB, p posting) (e Entry, posted bool, err error) {
	if err := balanced(p.lines); err != nil {
		return Entry{}, false, err
	}
	now := l.now().UTC()
	entry := models.JournalEntry{Kind: p.kind, Reference: p.reference, MerchantID: p.merchantID, AccountID: p.accountID,
		OrderKey: p.orderKey, Description: p.description, CreatedAt: now}
	// The unique index on reference makes a concurrent post of the same
	// reference wait here for the first one's commit, then find it.
	res := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "reference"}}, DoNothing: true}).Create(&entry)
	if res.Error != nil {
		return Entry{}, false, fmt.Errorf("claim reference: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		prior, err := l.entryByReference(ctx, tx, p.reference)
		if err != nil {
			return Entry{}, false, err
		}
		if !same(prior, p) {
			return Entry{}, false, fmt.Errorf("%w: %s is a %s entry", ErrReferenceConflict, p.reference, prior.Kind)
		}
		return prior, false, nil
	}

	kinds := make([]string, 0, len(p.lines))
	for _, ln := range p.lines {
		kinds = append(kinds, ln.kind)
	}
	byKind, err := l.lockAccounts(tx, p.merchantID, p.accountID, p.currency, kinds)
	if err != nil {
		return Entry{}, false, err
	}
	lines := make([]models.JournalLine, 0, len(p.lines))
	for _, ln := range p.lines {
		acc, ok := byKind[ln.kind]
		if !ok {
			return Entry{}, false, fmt.Errorf("ledger account %s missing after it was opened", ln.kind)
		}
		if slices.Contains(nonNegative, ln.kind) && acc.Balance+ln.amount < 0 {
			return Entry{}, false, fmt.Errorf("%w: %s balance %d, %s needs %d", ErrInsufficientFunds, ln.kind, acc.Balance, p.kind, -ln.amount)
		}
		lines = append(lines, models.JournalLine{EntryID: entry.ID, LedgerAccountID: acc.ID, Currency: p.currency, Amount: ln.amount})
	}
	if err := tx.Omit(clause.Associations).Create(&lines).Error; err != nil {
		return Entry{}, false, fmt.Errorf("write journal lines: %w", err)
	}
	deltas := make(map[int64]int64, len(p.lines))
	for _, ln := range p.lines {
		deltas[byKind[ln.kind].ID] += ln.amount
	}
	if err := addToBalances(tx, deltas, now); err != nil {
		if checkViolation(err) {
			// Only reachable if a balance changed without its lock.
			return Entry{}, false, fmt.Errorf("%w: %s", ErrInsufficientFunds, p.kind)
		}
		return Entry{}, false, fmt.Errorf("update balances: %w", err)
	}
	return p.entry(entry.ID, now), true, nil
}

// lockAccounts opens (on first use) and locks the merchant account's ledger
// accounts of kinds in one currency, in id order, and returns them by kind.
// Accounts are made in a fixed order so that two postings creating the same
// accounts wait for each other rather than deadlock; a caller that must
// read before it posts locks every account it may touch first, in this
// same order.
func (l *Ledger) lockAccounts(tx *gorm.DB, merchantID, accountID, currency string, kinds []string) (map[string]*models.LedgerAccount, error) {
	kinds = slices.Clone(kinds)
	slices.Sort(kinds)
	kinds = slices.Compact(kinds)
	lock := func(onlyIfAll bool) (map[string]*models.LedgerAccount, error) {
		q := tx.Clauses(clause.Locking{Strength: "UPDATE"}).
			Where("merchant_id = ? AND account_id = ? AND currency = ? AND kind IN ?", merchantID, accountID, currency, kinds)
		if onlyIfAll {
			q = q.Where("(SELECT count(*) FROM ledger_accounts WHERE merchant_id = ? AND account_id = ? AND currency = ? AND kind IN ?) = ?",
				merchantID, accountID, currency, kinds, len(kinds))
		}
		var accounts []models.LedgerAccount
		if err := q.Order("id").Find(&accounts).Error; err != nil {
			return nil, fmt.Errorf("lock ledger accounts: %w", err)
		}
		byKind := make(map[string]*models.LedgerAccount, len(accounts))
		for i := range accounts {
			byKind[accounts[i].Kind] = &accounts[i]
		}
		return byKind, nil
	}
	// Accounts exist after their merchant's first posting: locking them
	// is then the only statement. It locks them only when all exist: one
	// that locked some and then made the others could deadlock with a
	// posting making the same accounts. Otherwise all are made first, in
	// kind order, and then locked.
	if byKind, err := lock(true); err != nil || len(byKind) == len(kinds) {
		return byKind, err
	}
	now := l.now().UTC()
	rows := make([]models.LedgerAccount, 0, len(kinds))
	for _, k := range kinds {
		rows = append(rows, models.LedgerAccount{MerchantID: merchantID, AccountID: accountID, Currency: currency,
			Kind: k, CreatedAt: now, UpdatedAt: now})
	}
	if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&rows).Error; err != nil {
		return nil, fmt.Errorf("open ledger accounts: %w", err)
	}
	return lock(false)
}

// addToBalances adds each account's delta to its balance in one statement.
func addToBalances(tx *gorm.DB, deltas map[int64]int64, now time.Time) error {
	ids := slices.Sorted(maps.Keys(deltas))
	var values strings.Builder
	args := make([]any, 0, 2*len(ids)+1)
	args = append(args, now)
	for _, id := range ids {
		if deltas[id] == 0 {
			continue
		}
		if values.Len() > 0 {
			values.WriteString(", ")
		}
		values.WriteString("(?::bigint, ?::bigint)")
		args = append(args, id, deltas[id])
	}
	if values.Len() == 0 {
		return nil
	}
	return tx.Exec(`UPDATE ledger_accounts AS a SET balance = a.balance + v.delta, updated_at = ?
FROM (VALUES `+values.String()+`) AS v(id, delta) WHERE a.id = v.id`, args...).Error
}

// balanced checks a posting's lines: at least two, none zero, each account
// kind once, summing to zero (all lines of a posting share its currency).
func balanced(lines []line) error {
	if len(lines) < 2 {
		return fmt.Errorf("%w: an entry needs at least two lines", ErrInvalid)
	}
	var sum int64
	seen := map[string]bool{}
	for _, ln := range lines {
		if ln.amount == 0 || seen[ln.kind] {
			return fmt.Errorf("%w: a zero line or an account twice (%s)", ErrInvalid, ln.kind)
		}
		seen[ln.kind] = true
		sum += ln.amount
	}
	if sum != 0 {
		return fmt.Errorf("%w: lines sum to %d, not zero", ErrInvalid, sum)
	}
	return nil
}

// same reports whether a posted entry is the movement p describes.
func same(e Entry, p posting) bool {
	if e.Kind != p.kind || e.MerchantID != p.merchantID || e.AccountID != p.accountID || len(e.Lines) != len(p.lines) {
		return false
	}
	for _, ln := range p.lines {
		if !slices.ContainsFunc(e.Lines, func(got Line) bool {
			return got.AccountKind == ln.kind && got.Amount == ln.amount && got.Currency == p.currency
		}) {
			return false
		}
	}
	return true
}

// checkViolation reports whether err is Postgres refusing a CHECK
// constraint (SQLSTATE 23514).
func checkViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.Is(err, gorm.ErrCheckConstraintViolated) || (errors.As(err, &pgErr) && pgErr.Code == "23514")
}

// entryByReference loads a posted entry with its lines.
func (l *Ledger) entryByReference(ctx context.Context, db *gorm.DB, reference string) (Entry, error) {
	var row models.JournalEntry
	if err := db.WithContext(ctx).Where("reference = ?", reference).Take(&row).Error; err != nil {
		return Entry{}, fmt.Errorf("load entry %s: %w", reference, err)
	}
	entries, err := withLines(ctx, db, []models.JournalEntry{row})
	if err != nil {
		return Entry{}, err
	}
	return entries[0], nil
}

// withLines loads the lines of entries.
func withLines(ctx context.Context, db *gorm.DB, rows []models.JournalEntry) ([]Entry, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	var lines []struct {
		EntryID  int64
		Kind     string
		Currency string
		Amount   int64
	}
	err := db.WithContext(ctx).Table("journal_lines AS l").
		Select("l.entry_id, a.kind, l.currency, l.amount").
		Joins("JOIN ledger_accounts a ON a.id = l.ledger_account_id").
		Where("l.entry_id IN ?", ids).Order("l.id").Scan(&lines).Error
	if err != nil {
		return nil, fmt.Errorf("load journal lines: %w", err)
	}
	out := make([]Entry, len(rows))
	at := make(map[int64]int, len(rows))
	for i, r := range rows {
		out[i] = Entry{ID: r.ID, Kind: r.Kind, Reference: r.Reference, MerchantID: r.MerchantID, AccountID: r.AccountID,
			Description: r.Description, CreatedAt: r.CreatedAt}
		at[r.ID] = i
	}
	for _, ln := range lines {
		i := at[ln.EntryID]
		out[i].Lines = append(out[i].Lines, Line{AccountKind: ln.Kind, Currency: ln.Currency, Amount: ln.Amount})
	}
	return out, nil
}

// Balance returns the merchant account's balance in currency; an account
// the ledger has never moved has zero.
func (l *Ledger) Balance(ctx context.Context, merchantID, accountID, currency string) (Balance, error) {
	all, err := l.balances(ctx, merchantID, accountID, currency)
	if err != nil {
		return Balance{}, err
	}
	if len(all) == 0 {
		return Balance{Currency: currency}, nil
	}
	return all[0], nil
}

// Balances returns the merchant account's balances in every currency the
// ledger has moved, by currency code.
func (l *Ledger) Balances(ctx context.Context, merchantID, accountID string) ([]Balance, error) {
	return l.balances(ctx, merchantID, accountID, "")
}

func (l *Ledger) balances(ctx context.Context, merchantID, accountID, currency string) ([]Balance, error) {
	q := l.db.WithContext(ctx).Where("merchant_id = ? AND account_id = ? AND kind IN ?", merchantID, accountID, balanceKinds)
	if currency != "" {
		q = q.Where("currency = ?", currency)
	}
	var rows []models.LedgerAccount
	if err := q.Order("currency").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("balance of %s/%s: %w", merchantID, accountID, err)
	}
	var out []Balance
	for _, r := range rows {
		if len(out) == 0 || out[len(out)-1].Currency != r.Currency {
			out = append(out, Balance{Currency: r.Currency})
		}
		b := &out[len(out)-1]
		switch r.Kind {
		case models.LedgerDeposit:
			b.Available = r.Balance
		case models.LedgerReserved:
			b.Reserved = r.Balance
		case models.LedgerPending:
			b.Pending = r.Balance
		case models.LedgerDebt:
			b.Owed = -r.Balance
		}
	}
	return out, nil
}

// balanceKinds are the accounts a Balance reads.
var balanceKinds = append(slices.Clone(nonNegative), models.LedgerDebt)

// Entries lists posted entries with their lines, for operators.
func (l *Ledger) Entries(ctx context.Context, f EntryFilter) ([]Entry, error) {
	q := l.db.WithContext(ctx).Model(&models.JournalEntry{})
	if f.MerchantID != "" {
		q = q.Where("merchant_id = ?", f.MerchantID)
	}
	if f.AccountID != "" {
		q = q.Where("account_id = ?", f.AccountID)
	}
	if f.Kind != "" {
		q = q.Where("kind = ?", f.Kind)
	}
	if f.Reference != "" {
		q = q.Where("reference = ?", f.Reference)
	}
	if !f.From.IsZero() {
		q = q.Where("created_at >= ?", f.From)
	}
	if !f.To.IsZero() {
		q = q.Where("created_at < ?", f.To)
	}
	if f.AfterID > 0 {
		q = q.Where("id > ?", f.AfterID)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	var rows []models.JournalEntry
	if err := q.Order("id").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list entries: %w", err)
	}
	return withLines(ctx, l.db, rows)
}

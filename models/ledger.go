package models

import "time"

// The ledger's records (internal/adapters/ledger writes them; migration
// 0004_ledger.sql makes their tables). Amounts are signed minor units of
// the account's currency: a positive amount credits an account, a negative
// one debits it, and an account's balance is the sum of its lines.
//
// Merchant money (deposit, reserved) and what the gateway owes or earns
// (rail clearing, fee income) therefore sit at or above zero; the accounts
// that stand for money owed to the gateway or brought into it (acquirer
// clearing, operator funding) run below zero.

// Kinds of ledger account, as the ledger_accounts.kind column holds them.
const (
	// LedgerDeposit is the merchant's available funds.
	LedgerDeposit = "deposit"
	// LedgerReserved holds the merchant's funds set aside for payouts in
	// flight.
	LedgerReserved = "reserved"
	// LedgerAcquirerClearing is what the acquirer owes for paid orders,
	// less refunds: the counterpart of order credits.
	LedgerAcquirerClearing = "acquirer_clearing"
	// LedgerRailClearing is what settled payouts sent through the payout
	// rail.
	LedgerRailClearing = "rail_clearing"
	// LedgerFeeIncome is the gateway's payout fees.
	LedgerFeeIncome = "fee_income"
	// LedgerOperatorFunding is the counterpart of the operator's top-ups.
	LedgerOperatorFunding = "operator_funding"
	// LedgerPending is the merchant's captured money the acquirer has not
	// settled yet: a capture credits it, the settlement moves it on to the
	// deposit (available).
	LedgerPending = "pending"
	// LedgerSettlementCash is what the acquirers paid into the gateway's
	// bank (or took from it): money brought in, so it runs below zero.
	LedgerSettlementCash = "settlement_cash"
	// LedgerFeeExpense is the acquirers' fees, a cost: it runs below zero.
	LedgerFeeExpense = "fee_expense"
	// LedgerWriteOff is what finance wrote off: a loss runs below zero, a
	// gain (money settled that nothing here owed) above.
	LedgerWriteOff = "write_off"
	// LedgerDisputeHold is the merchant's money a dispute holds (the
	// disputed amount and its fee) until its outcome releases or takes it.
	LedgerDisputeHold = "dispute_hold"
	// LedgerDebt is what the merchant owes the gateway: what a dispute's
	// hold or a refund's debit took beyond the merchant's deposit. It runs
	// below zero, and money coming to the deposit repays it first. It is
	// stored as dispute_debt, the name it had when only disputes made it.
	LedgerDebt = "dispute_debt"
	// LedgerDisputeClearing is the acquirer's side of disputes: below zero
	// by what it took back on chargebacks and still owes us until the
	// outcome (a lost dispute's hold pays it; a won one's reinstatement
	// comes in a later report).
	LedgerDisputeClearing = "dispute_clearing"
)

// Kinds of journal entry, as the journal_entries.kind column holds them.
const (
	EntryOrderPaid = "order_paid"
	EntryRefund    = "refund"
	EntryTopUp     = "topup"
	EntryReserve   = "reserve"
	EntrySettle    = "settle"
	EntryRelease   = "release"
	// EntrySettlement is an acquirer's settlement of a capture, a refund,
	// a chargeback or a fee adjustment.
	EntrySettlement = "settlement"
	// EntryWriteOff is finance writing off a settlement line nothing here
	// owed (a duplicate, an unknown transaction).
	EntryWriteOff = "write_off"
	// EntryDisputeHold, EntryDisputeRelease and EntryDisputeLost are a
	// dispute's hold, its release when won, and its loss.
	EntryDisputeHold    = "dispute_hold"
	EntryDisputeRelease = "dispute_release"
	EntryDisputeLost    = "dispute_lost"
)

// Statuses of a payout reservation.
const (
	ReservationOpen     = "open"
	ReservationSettled  = "settled"
	ReservationReleased = "released"
)

// LedgerAccount is one account of the ledger: a kind of money of one
// merchant account in one currency. Balance is the sum of the account's
// journal lines, kept in step in the transaction that posts them; the
// database refuses a deposit or reserved balance below zero.
type LedgerAccount struct {
	ID         int64  `gorm:"primaryKey"`
	MerchantID string `gorm:"size:32;not null;uniqueIndex:idx_ledger_accounts_key,priority:1"`
	AccountID  string `gorm:"size:32;not null;uniqueIndex:idx_ledger_accounts_key,priority:2"`
	Currency   string `gorm:"size:3;not null;uniqueIndex:idx_ledger_accounts_key,priority:3"`
	Kind       string `gorm:"size:32;not null;uniqueIndex:idx_ledger_accounts_key,priority:4;check:ledger_accounts_kind_check,kind IN ('deposit','reserved','acquirer_clearing','rail_clearing','fee_income','operator_funding','pending','settlement_cash','fee_expense','write_off','dispute_hold','dispute_debt','dispute_clearing')"`
	Balance    int64  `gorm:"not null;default:0;check:ledger_accounts_balance_check,kind NOT IN ('deposit','reserved','pending','dispute_hold') OR balance >= 0"`
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// JournalEntry is one balanced movement of money: its lines sum to zero in
// each currency. Reference is the idempotency key of the operation that
// posted it, so an operation repeated posts nothing more.
type JournalEntry struct {
	ID         int64  `gorm:"primaryKey"`
	Kind       string `gorm:"size:16;not null;check:journal_entries_kind_check,kind IN ('order_paid','refund','topup','reserve','settle','release','settlement','write_off','dispute_hold','dispute_release','dispute_lost')"`
	Reference  string `gorm:"size:255;not null;uniqueIndex"`
	MerchantID string `gorm:"size:32;not null;index:idx_journal_entries_owner,priority:1"`
	AccountID  string `gorm:"size:32;not null;index:idx_journal_entries_owner,priority:2"`
	// OrderKey is the transaction id of the order an entry is of (a paid
	// order, a refund, a settlement), empty for the others.
	OrderKey    string    `gorm:"size:64;not null;default:'';index"`
	Description string    `gorm:"size:500;not null;default:''"`
	CreatedAt   time.Time `gorm:"not null;index"`
}

// JournalLine moves Amount (signed, minor units of Currency, the ledger
// account's currency) on one ledger account.
type JournalLine struct {
	ID              int64          `gorm:"primaryKey"`
	EntryID         int64          `gorm:"not null;index"`
	Entry           *JournalEntry  `gorm:"foreignKey:EntryID"`
	LedgerAccountID int64          `gorm:"not null;index"`
	Account         *LedgerAccount `gorm:"foreignKey:LedgerAccountID"`
	Currency        string         `gorm:"size:3;not null"`
	Amount          int64          `gorm:"not null;check:journal_lines_amount_check,amount <> 0"`
}

// LedgerReservation is funds set aside for one payout: Amount (the transfer)
// and Fee moved from deposit to reserved by the entry with the
// reservation's reference, until a settle or a release closes it.
type LedgerReservation struct {
	Reference  string `gorm:"primaryKey;size:200"`
	MerchantID string `gorm:"size:32;not null;index:idx_ledger_reservations_owner,priority:1"`
	AccountID  string `gorm:"size:32;not null;index:idx_ledger_reservations_owner,priority:2"`
	Currency   string `gorm:"size:3;not null"`
	Amount     int64  `gorm:"not null"`
	Fee        int64  `gorm:"not null"`
	Status     string `gorm:"size:16;not null;check:ledger_reservations_status_check,status IN ('open','settled','released')"`
	CreatedAt  time.Time
	ClosedAt   *time.Time
}

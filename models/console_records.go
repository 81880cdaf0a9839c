package models

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/paygate/paygate/internal/domain/status"
	"gorm.io/gorm"
)

// ConsoleRecords is the back office's way to the record: its sessions and
// sign-ins, and the lists and pages it shows.
type ConsoleRecords struct{ DB *gorm.DB }

// LiveConsoleSession is the session whose token hashes to tokenHash, with
// its user, if the session has not expired and the user is not disabled;
// nil, nil otherwise.
func (r ConsoleRecords) LiveConsoleSession(ctx context.Context, tokenHash string, now time.Time) (*ConsoleSession, *ConsoleUser, error) {
	var row ConsoleSession
	err := r.DB.WithContext(ctx).Where("token_hash = ? AND expires_at > ?", tokenHash, now).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("console session: %w", err)
	}
	var u ConsoleUser
	err = r.DB.WithContext(ctx).Where("id = ? AND disabled_at IS NULL", row.UserID).Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("console user: %w", err)
	}
	return &row, &u, nil
}

// StartConsoleSession records a new session, ending the one the browser
// came with (endTokenHash; "" when none).
func (r ConsoleRecords) StartConsoleSession(ctx context.Context, row *ConsoleSession, endTokenHash string) error {
	if endTokenHash != "" {
		if err := r.EndConsoleSession(ctx, endTokenHash); err != nil {
			return err
		}
	}
	if err := r.DB.WithContext(ctx).Create(row).Error; err != nil {
		return fmt.Errorf("start console session: %w", err)
	}
	return nil
}

// EndConsoleSession ends the session whose token hashes to tokenHash.
func (r ConsoleRecords) EndConsoleSession(ctx context.Context, tokenHash string) error {
	if err := r.DB.WithContext(ctx).Where("token_hash = ?", tokenHash).Delete(&ConsoleSession{}).Error; err != nil {
		return fmt.Errorf("end console session: %w", err)
	}
	return nil
}

// ActiveConsoleUser is the user who signs in with email and is not
// disabled; nil when there is none.
func (r ConsoleRecords) ActiveConsoleUser(ctx context.Context, email string) (*ConsoleUser, error) {
	var u ConsoleUser
	err := r.DB.WithContext(ctx).Where("email = ? AND disabled_at IS NULL", email).Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("console user: %w", err)
	}
	return &u, nil
}

// RecordLoginFailure keeps a failed sign-in for the record of who tried.
func (r ConsoleRecords) RecordLoginFailure(ctx context.Context, f *ConsoleLoginFailure) error {
	if err := r.DB.WithContext(ctx).Create(f).Error; err != nil {
		return fmt.Errorf("record failed sign-in: %w", err)
	}
	return nil
}

// ClaimConsoleAction is ClaimConsoleAction over the records' database.
func (r ConsoleRecords) ClaimConsoleAction(ctx context.Context, a *ConsoleAction) (bool, *ConsoleAction, error) {
	return ClaimConsoleAction(ctx, r.DB, a)
}

// RecordConsoleOutcome records what a claimed form did, for a second
// submission of it to show.
func (r ConsoleRecords) RecordConsoleOutcome(ctx context.Context, a *ConsoleAction, outcome string) error {
	if err := r.DB.WithContext(ctx).Model(a).Update("outcome", outcome).Error; err != nil {
		return fmt.Errorf("record form outcome: %w", err)
	}
	return nil
}

// TakeLoginToken is TakeLoginToken over the records' database.
func (r ConsoleRecords) TakeLoginToken(ctx context.Context, key string, now time.Time, every time.Duration, burst int) (bool, error) {
	return TakeLoginToken(ctx, r.DB, key, now, every, burst)
}

// PruneLoginLimits is PruneLoginLimits over the records' database.
func (r ConsoleRecords) PruneLoginLimits(ctx context.Context, now time.Time) error {
	return PruneLoginLimits(ctx, r.DB, now)
}

// OrderSearch is the back office's search of orders. MerchantID limits it
// to one merchant's orders ("" searches all); the other fields left empty
// select everything.
type OrderSearch struct {
	MerchantID    string
	OrderNo       string
	TransactionID string
	Last4         string
	// Email is found through its keyed hash: exact, without regard to case.
	// EmailHash is that hash itself (ShopperEmailHash), which a page's
	// address carries in place of the email.
	Email     string
	EmailHash string
	Status    int
	From, To  time.Time
	// AfterAt and AfterTx are the keyset cursor: the last row of the
	// previous page.
	AfterAt time.Time
	AfterTx string
}

// SearchOrders returns a page of the orders f selects, newest first, and
// the cursor of the next page ("" on the last).
func (r ConsoleRecords) SearchOrders(ctx context.Context, f OrderSearch, limit int) ([]Order, string, error) {
	q := r.DB.WithContext(ctx).Model(&Order{})
	if f.MerchantID != "" {
		q = q.Where("merchant_id = ?", f.MerchantID)
	}
	if f.OrderNo != "" {
		q = q.Where("order_no = ?", f.OrderNo)
	}
	if f.TransactionID != "" {
		q = q.Where("transaction_id = ?", f.TransactionID)
	}
	if f.Status != 0 {
		q = q.Where("payment_status = ?", f.Status)
	}
	if !f.From.IsZero() {
		q = q.Where("created_at >= ?", f.From)
	}
	if !f.To.IsZero() {
		q = q.Where("created_at < ?", f.To)
	}
	if f.Last4 != "" {
		q = q.Where("card_masked LIKE ?", "%"+f.Last4)
	}
	if f.Email != "" {
		h, err := HashOf(r.DB, HashEmail, f.Email)
		if err != nil {
			return nil, "", err
		}
		q = q.Where("shopper_email_hash = ?", h)
	}
	if f.EmailHash != "" {
		q = q.Where("shopper_email_hash = ?", f.EmailHash)
	}
	if !f.AfterAt.IsZero() {
		q = q.Where("(created_at, transaction_id) < (?, ?)", f.AfterAt, f.AfterTx)
	}
	var rows []Order
	if err := q.Order("created_at DESC, transaction_id DESC").Limit(limit + 1).Find(&rows).Error; err != nil {
		return nil, "", fmt.Errorf("search orders: %w", err)
	}
	next := ""
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[len(rows)-1]
		next = strconv.FormatInt(last.CreatedAt.UnixNano(), 10) + "_" + last.TransactionID
	}
	return rows, next, nil
}

// MerchantOrder is the order by transaction id, of merchantID only unless
// merchantID is ""; nil when there is none.
func (r ConsoleRecords) MerchantOrder(ctx context.Context, merchantID, transactionID string) (*Order, error) {
	q := r.DB.WithContext(ctx).Where("transaction_id = ?", transactionID)
	if merchantID != "" {
		q = q.Where("merchant_id = ?", merchantID)
	}
	var o Order
	err := q.Take(&o).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find order %s: %w", transactionID, err)
	}
	return &o, nil
}

// OrderHistory is what befell an order, for its timeline: its status
// changes, its refunds and the attempts to deliver its notifications, each
// in the order they happened.
type OrderHistory struct {
	Changes  []OrderStatusChange
	Refunds  []Refund
	Attempts []NotificationAttempt
	// Charges are a routed order's charges, one per connector tried.
	Charges []PaymentAttempt
}

// HistoryOf is the history of the order transactionID.
func (r ConsoleRecords) HistoryOf(ctx context.Context, transactionID string) (OrderHistory, error) {
	var h OrderHistory
	db := r.DB.WithContext(ctx)
	if err := db.Where("transaction_id = ?", transactionID).Order("id").Find(&h.Changes).Error; err != nil {
		return h, fmt.Errorf("status changes: %w", err)
	}
	if err := db.Where("transaction_id = ?", transactionID).Order("created_at").Find(&h.Refunds).Error; err != nil {
		return h, fmt.Errorf("refunds: %w", err)
	}
	err := db.Where("notify_id IN (?)", r.DB.Model(&Notification{}).Select("notify_id").Where("transaction_id = ?", transactionID)).
		Order("at").Find(&h.Attempts).Error
	if err != nil {
		return h, fmt.Errorf("notification attempts: %w", err)
	}
	if err := db.Where("transaction_id = ?", transactionID).Order("attempt").Find(&h.Charges).Error; err != nil {
		return h, fmt.Errorf("payment attempts: %w", err)
	}
	return h, nil
}

// RecentRefunds is a page of refunds created before before (all when
// zero), newest first, of merchantID only unless it is "".
func (r ConsoleRecords) RecentRefunds(ctx context.Context, merchantID string, before time.Time, limit int) ([]Refund, error) {
	q := r.DB.WithContext(ctx).Model(&Refund{})
	if merchantID != "" {
		q = q.Where("merchant_id = ?", merchantID)
	}
	if !before.IsZero() {
		q = q.Where("created_at < ?", before)
	}
	var rows []Refund
	if err := q.Order("created_at DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list refunds: %w", err)
	}
	return rows, nil
}

// MerchantAccounts are a merchant's accounts, by id.
func (r ConsoleRecords) MerchantAccounts(ctx context.Context, merchantID string) ([]Account, error) {
	var accounts []Account
	if err := r.DB.WithContext(ctx).Where("merchant_id = ?", merchantID).Order("id").Find(&accounts).Error; err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	return accounts, nil
}

// Stuck is what has waited too long: orders pending since before
// ordersBefore, payouts new or submitted and untouched since before
// payoutsBefore, and the notifications still waiting to be delivered,
// oldest first.
type Stuck struct {
	Orders        []Order
	Payouts       []Payout
	Notifications []Notification
}

// FindStuck is what has waited too long (Stuck): at most limit orders and
// limit payouts, and backlog notifications.
func (r ConsoleRecords) FindStuck(ctx context.Context, ordersBefore, payoutsBefore time.Time, limit, backlog int) (Stuck, error) {
	var s Stuck
	db := r.DB.WithContext(ctx)
	if err := db.Where("payment_status = ? AND created_at < ?", status.Pending, ordersBefore).
		Order("created_at").Limit(limit).Find(&s.Orders).Error; err != nil {
		return s, fmt.Errorf("stuck orders: %w", err)
	}
	if err := db.Where("status IN ? AND updated_at < ?", []string{"NEW", "SUBMITTED"}, payoutsBefore).
		Order("updated_at").Limit(limit).Find(&s.Payouts).Error; err != nil {
		return s, fmt.Errorf("stuck payouts: %w", err)
	}
	if err := db.Where("status = ?", NotifyPending).Order("created_at").Limit(backlog).Find(&s.Notifications).Error; err != nil {
		return s, fmt.Errorf("notification backlog: %w", err)
	}
	return s, nil
}

// PayoutSearch is the back office's search of payouts; empty fields select
// everything.
type PayoutSearch struct {
	Status      string
	FailureType string
	MerchantID  string
	// Mode keeps the payouts asked for in that mode ("live" or "test"),
	// every payout when empty.
	Mode   string
	Before time.Time
}

// SearchPayouts is a page of the payouts f selects, newest first.
func (r ConsoleRecords) SearchPayouts(ctx context.Context, f PayoutSearch, limit int) ([]Payout, error) {
	q := r.DB.WithContext(ctx).Model(&Payout{})
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.FailureType != "" {
		q = q.Where("failure_type = ?", f.FailureType)
	}
	if f.MerchantID != "" {
		q = q.Where("merchant_id = ?", f.MerchantID)
	}
	if f.Mode != "" {
		q = q.Where("mode = ?", f.Mode)
	}
	if !f.Before.IsZero() {
		q = q.Where("created_at < ?", f.Before)
	}
	var rows []Payout
	if err := q.Order("created_at DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list payouts: %w", err)
	}
	return rows, nil
}

// PayoutsByID are the payouts of ids, in no order.
func (r ConsoleRecords) PayoutsByID(ctx context.Context, ids []string) ([]Payout, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []Payout
	if err := r.DB.WithContext(ctx).Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("find payouts: %w", err)
	}
	return rows, nil
}

// ShopperEmailHash is the keyed hash under which orders keep a shopper's
// email (exact, without regard to case): a page's address carries it in
// place of the email, so no shopper's email is in a URL.
func (r ConsoleRecords) ShopperEmailHash(email string) (string, error) {
	return HashOf(r.DB, HashEmail, email)
}

// MerchantBalances are the pending, deposit and reserved ledger accounts of
// every merchant account, by merchant, account and currency: of the
// accounts in mode (testmode), or of all of them when mode is empty.
func (r ConsoleRecords) MerchantBalances(ctx context.Context, mode string) ([]LedgerAccount, error) {
	var accounts []LedgerAccount
	q := r.DB.WithContext(ctx).Where("kind IN ?", []string{LedgerPending, LedgerDeposit, LedgerReserved, LedgerDebt})
	if mode != "" {
		q = q.Where(ofMode, map[string]any{"test": isTest(mode)})
	}
	if err := q.Order("merchant_id, account_id, currency").Find(&accounts).Error; err != nil {
		return nil, fmt.Errorf("list balances: %w", err)
	}
	return accounts, nil
}

// RefundBlockingDispute is models.RefundBlockingDispute over the records' database.
func (r ConsoleRecords) RefundBlockingDispute(ctx context.Context, transactionID string) (*Dispute, error) {
	return RefundBlockingDispute(ctx, r.DB, transactionID)
}

package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	gormlogger "gorm.io/gorm/logger"

	"github.com/paygate/paygate/internal/domain/status"
)

// ErrNotFound is returned when a looked-up record does not exist.
var ErrNotFound = errors.New("not found")

// ErrTransactionIDConflict is returned when a new order's transaction id is
// already the id of another order. Writing again cannot succeed: the order
// needs another id.
var ErrTransactionIDConflict = errors.New("transaction id already belongs to another order")

// IsDataError reports whether Postgres refused a statement for the values it
// carried: SQLSTATE class 22 (data exception: a NUL byte or invalid UTF-8 in
// text, a value too long for its column), 23 (integrity constraint
// violation) or 54 (program limit exceeded, such as an index row too large).
// The same statement with the same values can never succeed, so retrying it
// is pointless; connection and server faults are not data errors.
func IsDataError(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	for _, class := range []string{"22", "23", "54"} {
		if strings.HasPrefix(pgErr.Code, class) {
			return true
		}
	}
	return false
}

// DB is the database handle the models functions take. Other packages
// hold and hand it on without knowing the driver behind it (only models
// and the adapters that own a table import gorm).
type DB = gorm.DB

// Open connects to Postgres. SQL is logged without parameter values, so no
// customer data can reach the log through a slow-query line.
func Open(ctx context.Context, url string, logger *slog.Logger) (*gorm.DB, error) {
	gl := sparingLogger{Interface: gormlogger.NewSlogLogger(logger, gormlogger.Config{
		SlowThreshold:             slowStatement,
		LogLevel:                  gormlogger.Warn,
		IgnoreRecordNotFoundError: true,
		ParameterizedQueries:      true,
	})}
	// Every write is one statement or an explicit transaction (the ledger,
	// notifications): gorm's default transaction around each single
	// statement would only add a BEGIN and a COMMIT round trip to it.
	db, err := gorm.Open(postgres.Open(url), &gorm.Config{Logger: gl, TranslateError: true, SkipDefaultTransaction: true})
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	sqlDB.SetMaxOpenConns(40)
	sqlDB.SetMaxIdleConns(20)
	if err := sqlDB.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("ping postgres: %w", err)
	}
	return db, nil
}

// FindAccount loads an active account of a merchant.
func FindAccount(ctx context.Context, db *gorm.DB, merchantID, accountID string) (*Account, error) {
	var a Account
	err := db.WithContext(ctx).Where("id = ? AND merchant_id = ? AND active", accountID, merchantID).Take(&a).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find account %s: %w", accountID, err)
	}
	return &a, nil
}

// InsertOrder records a new order. A second insert of the same transaction is
// a no-op, so the activity that calls it may be retried. When the account
// already has another order with that order_no (its workflow is long gone
// from Temporal), it returns that order's transaction id and changes nothing.
// When the transaction id is another order's, it returns
// ErrTransactionIDConflict and changes nothing.
func InsertOrder(ctx context.Context, db *gorm.DB, o *Order) (existing string, err error) {
	res := db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(o)
	if res.Error != nil {
		return "", fmt.Errorf("insert order %s: %w", o.TransactionID, res.Error)
	}
	if res.RowsAffected == 1 {
		return "", nil
	}
	prior, err := FindOrderByNo(ctx, db, o.AccountID, o.OrderNo)
	if errors.Is(err, ErrNotFound) {
		// The insert met no order with this order_no, so it met another
		// order's transaction id.
		var n int64
		if err := db.WithContext(ctx).Model(&Order{}).Where("transaction_id = ?", o.TransactionID).Count(&n).Error; err != nil {
			return "", fmt.Errorf("insert order %s: %w", o.TransactionID, err)
		}
		if n > 0 {
			return "", fmt.Errorf("insert order %s: %w", o.TransactionID, ErrTransactionIDConflict)
		}
	}
	if err != nil {
		return "", fmt.Errorf("insert order %s: %w", o.TransactionID, err)
	}
	if prior.TransactionID == o.TransactionID {
		return "", nil
	}
	return prior.TransactionID, nil
}

// QueueInsertOrder queues the insert InsertOrder first makes on p. Once p
// is sent, inserted tells whether the row was written, and step.Err why the
// statement failed; a row not written (a repeat, another order's order_no or
// transaction id) is InsertOrder's to judge, which the caller then calls.
func QueueInsertOrder(ctx context.Context, p *Pipeline, o *Order) (inserted *bool, step *PipelineStep) {
	inserted = new(bool)
	step = p.Add(ctx, func(tx *gorm.DB) *gorm.DB { return tx.Clauses(clause.OnConflict{DoNothing: true}).Create(o) },
		func(r *PipelineResult) error {
			*inserted = r.RowsAffected == 1
			return nil
		})
	return inserted, step
}

// OrderResult is what a payment attempt changes on an order.
type OrderResult struct {
	PaymentStatus  status.Payment
	OrderStatus    status.Order
	ResultCode     string
	ResultMessage  string
	CapturedAmount int64
	RiskAction     string
	RiskScore      int
	RiskReasons    []RiskReason
	Connector      string
	ConnectorRef   string
	AuthCode       string
	Is3DS          bool
	ThreeDSResult  string
	Version        int64
	// Task is the workflow task making the write (Order.WrittenTask).
	Task int64
	// Reopen, when set, is saved with the outcome in the same statement:
	// what SaveOrderReopen saves, under the same condition.
	Reopen *ReopenSave
}

// ReopenSave is what an order's next run starts from (SaveOrderReopen):
// its input as JSON, saved by the run Run at At.
type ReopenSave struct {
	Run   string
	Input []byte
	At    time.Time
}

// UpdateOrderResult writes a payment attempt's outcome, unless the record
// already holds a newer write of the workflow. With r.Reopen it saves the
// order's reopen state in the same statement: one round trip and one commit
// where the outcome's write and SaveOrderReopen took two each; the state is
// saved only where SaveOrderReopen would save it (no other run holds the
// row).
func UpdateOrderResult(ctx context.Context, db *gorm.DB, transactionID string, r OrderResult) error {
	set, err := orderResultSet(transactionID, r)
	if err != nil {
		return err
	}
	// The reopen columns are not gorm's to write through models.Order, so
	// the statement goes to the table with its columns named.
	res := updateOrderResult(db.WithContext(ctx), transactionID, r, set)
	if res.Error != nil {
		return fmt.Errorf("update order %s: %w", transactionID, res.Error)
	}
	return staleOrMissing(ctx, db, transactionID, res.RowsAffected)
}

// QueueUpdateOrderResult queues UpdateOrderResult's statement on p; once p
// is sent, done says how it went (it asks Postgres again only when the
// statement changed no row, as UpdateOrderResult does).
func QueueUpdateOrderResult(ctx context.Context, p *Pipeline, transactionID string, r OrderResult) (done func() error) {
	set, err := orderResultSet(transactionID, r)
	if err != nil {
		return func() error { return err }
	}
	var affected int64
	step := p.Add(ctx, func(tx *gorm.DB) *gorm.DB { return updateOrderResult(tx, transactionID, r, set) },
		func(res *PipelineResult) error {
			affected = res.RowsAffected
			return nil
		})
	return func() error {
		if step.Err != nil {
			return fmt.Errorf("update order %s: %w", transactionID, step.Err)
		}
		return staleOrMissing(ctx, p.db, transactionID, affected)
	}
}

// updateOrderResult is UpdateOrderResult's statement on tx.
func updateOrderResult(tx *gorm.DB, transactionID string, r OrderResult, set map[string]any) *gorm.DB {
	return tx.Table("orders").Where("transaction_id = ? AND "+writtenBefore, transactionID, r.Task, r.Task, r.Version).Updates(set)
}

// orderResultSet is what UpdateOrderResult sets, column by column.
func orderResultSet(transactionID string, r OrderResult) (map[string]any, error) {
	var reasons any // SQL NULL for none, as gorm's serializer writes it
	if r.RiskReasons != nil {
		b, err := json.Marshal(r.RiskReasons)
		if err != nil {
			return nil, fmt.Errorf("update order %s: %w", transactionID, err)
		}
		reasons = gorm.Expr("CAST(? AS jsonb)", string(b))
	}
	set := map[string]any{
		"payment_status":  r.PaymentStatus,
		"order_status":    r.OrderStatus,
		"result_code":     r.ResultCode,
		"result_message":  r.ResultMessage,
		"captured_amount": r.CapturedAmount,
		"risk_action":     r.RiskAction,
		"risk_score":      r.RiskScore,
		"risk_reasons":    reasons,
		"connector":       r.Connector,
		"connector_ref":   r.ConnectorRef,
		"auth_code":       r.AuthCode,
		"is3ds":           r.Is3DS,
		"threeds_result":  r.ThreeDSResult,
		"state_version":   r.Version,
		"written_task":    r.Task,
		"updated_at":      time.Now(),
	}
	if save := r.Reopen; save != nil {
		free := "reopen_run IS NULL OR reopen_run = ?"
		set["reopen_input"] = gorm.Expr("CASE WHEN "+free+" THEN CAST(? AS jsonb) ELSE reopen_input END", save.Run, string(save.Input))
		set["reopen_saved_at"] = gorm.Expr("CASE WHEN "+free+" THEN CAST(? AS timestamptz) ELSE reopen_saved_at END", save.Run, save.At)
		set["reopen_run"] = gorm.Expr("CASE WHEN reopen_run = ? THEN NULL ELSE reopen_run END", save.Run)
	}
	return set, nil
}

// writtenBefore holds for an order row whose last write came before this
// one (laterWrite); its arguments are the task, the task again and the
// version.
var writtenBefore = laterWrite("written_task", "state_version", "?", "?")

// laterWrite is the condition under which a workflow's write (task, version)
// replaces the row's last (rowTask, rowVersion): a write of a later workflow
// task (a later run of the same task included: its worker died before the
// task completed, and the history keeps only the later run's results,
// whatever versions either wrote), or of the same task with a newer
// version. A retry within one task carries the same task and version, and
// writes nothing twice.
func laterWrite(rowTask, rowVersion, task, version string) string {
	return "(" + rowTask + " < " + task + " OR (" + rowTask + " = " + task + " AND " + rowVersion + " < " + version + "))"
}

// staleOrMissing explains an update that changed no row: the order is
// missing (an error) or already holds a newer write (fine).
func staleOrMissing(ctx context.Context, db *gorm.DB, transactionID string, affected int64) error {
	if affected > 0 {
		return nil
	}
	var n int64
	if err := db.WithContext(ctx).Model(&Order{}).Where("transaction_id = ?", transactionID).Count(&n).Error; err != nil {
		return fmt.Errorf("update order %s: %w", transactionID, err)
	}
	if n == 0 {
		return fmt.Errorf("update order %s: %w", transactionID, ErrNotFound)
	}
	return nil
}

// FindOrderByNo loads an account's order by the merchant's order number.
func FindOrderByNo(ctx context.Context, db *gorm.DB, accountID, orderNo string) (*Order, error) {
	var o Order
	err := db.WithContext(ctx).Where("account_id = ? AND order_no = ?", accountID, orderNo).Take(&o).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find order %s: %w", orderNo, err)
	}
	return &o, nil
}

// FindOrders loads an account's orders by order numbers and transaction ids.
func FindOrders(ctx context.Context, db *gorm.DB, merchantID, accountID string, orderNos, transactionIDs []string) ([]Order, error) {
	var orders []Order
	q := db.WithContext(ctx).Where("merchant_id = ? AND account_id = ?", merchantID, accountID)
	switch {
	case len(orderNos) > 0 && len(transactionIDs) > 0:
		q = q.Where("order_no IN ? OR transaction_id IN ?", orderNos, transactionIDs)
	case len(orderNos) > 0:
		q = q.Where("order_no IN ?", orderNos)
	case len(transactionIDs) > 0:
		q = q.Where("transaction_id IN ?", transactionIDs)
	default:
		return nil, nil
	}
	if err := q.Order("transaction_id").Find(&orders).Error; err != nil {
		return nil, fmt.Errorf("find orders: %w", err)
	}
	return orders, nil
}

// FindOrdersBetween pages through an account's orders created in [from, to),
// ordered by transaction id and starting after the cursor.
func FindOrdersBetween(ctx context.Context, db *gorm.DB, merchantID, accountID string, from, to time.Time, after string, limit int) ([]Order, error) {
	var orders []Order
	q := db.WithContext(ctx).Where("merchant_id = ? AND account_id = ? AND created_at >= ? AND created_at < ?",
		merchantID, accountID, from, to)
	if after != "" {
		q = q.Where("transaction_id > ?", after)
	}
	if err := q.Order("transaction_id").Limit(limit).Find(&orders).Error; err != nil {
		return nil, fmt.Errorf("find orders between: %w", err)
	}
	return orders, nil
}

// OrderCard is the card a shopper gave on the payment page: masked and
// tokenised.
type OrderCard struct {
	Masked      string
	Brand       string
	Token       string
	Fingerprint string
}

// AttachCard records the shopper's card on the order.
func AttachCard(ctx context.Context, db *gorm.DB, transactionID string, c OrderCard) error {
	err := db.WithContext(ctx).Model(&Order{}).Where("transaction_id = ?", transactionID).Updates(map[string]any{
		"card_masked": c.Masked, "card_brand": c.Brand, "card_token": c.Token, "card_fingerprint": c.Fingerprint,
	}).Error
	if err != nil {
		return fmt.Errorf("attach card to %s: %w", transactionID, err)
	}
	return nil
}

// AttachPaymentMethod records, on a hosted order, the alternative payment
// method the shopper chose on the payment page, where a direct APM order
// has it from its request (details.payment_method): the query shows it and
// the optimisation counts the order under it.
func AttachPaymentMethod(ctx context.Context, db *gorm.DB, transactionID, method string) error {
	err := db.WithContext(ctx).Model(&Order{}).Where("transaction_id = ?", transactionID).
		Update("details", gorm.Expr("jsonb_set(details, '{payment_method}', to_jsonb(?::text))", method)).Error
	if err != nil {
		return fmt.Errorf("attach payment method to %s: %w", transactionID, err)
	}
	return nil
}

// OrderChange is a place in an account's orders taken in the order they
// last changed: the change's time and, among orders changed at the same
// time, the transaction id.
type OrderChange struct {
	At            time.Time
	TransactionID string
}

// FindOrdersChanged lists an account's orders in the order they last
// changed: those changed after after, oldest change first, at most limit;
// with after nil, the limit most recently changed, still oldest first.
func FindOrdersChanged(ctx context.Context, db *gorm.DB, merchantID, accountID string, after *OrderChange, limit int) ([]Order, error) {
	var orders []Order
	q := db.WithContext(ctx).Where("merchant_id = ? AND account_id = ?", merchantID, accountID)
	if after != nil {
		q = q.Where("(updated_at, transaction_id) > (?, ?)", after.At, after.TransactionID).Order("updated_at, transaction_id")
	} else {
		q = q.Order("updated_at DESC, transaction_id DESC")
	}
	if err := q.Limit(limit).Find(&orders).Error; err != nil {
		return nil, fmt.Errorf("find changed orders: %w", err)
	}
	if after == nil {
		slices.Reverse(orders)
	}
	return orders, nil
}

// slowStatement is how long a statement runs before it is logged.
const slowStatement = time.Second

// sparingLogger hands gorm's logger only the statements it will log (an
// error other than not-found, or a slow one), unless it logs every one
// (Info, as db.Debug sets): gorm's slog logger renders every statement's
// SQL, through regular expressions, before it decides, which cost a payment
// about a twentieth of its allocations.
type sparingLogger struct {
	gormlogger.Interface
	all bool
}

func (l sparingLogger) LogMode(level gormlogger.LogLevel) gormlogger.Interface {
	return sparingLogger{Interface: l.Interface.LogMode(level), all: level >= gormlogger.Info}
}

func (l sparingLogger) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	if !l.all && (err == nil || errors.Is(err, gorm.ErrRecordNotFound)) && time.Since(begin) <= slowStatement {
		return
	}
	l.Interface.Trace(ctx, begin, fc, err)
}

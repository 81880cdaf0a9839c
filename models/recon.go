package models

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// The reconciliation's records (migration 0019): one run per connector and
// settlement day, one item per settlement line and per settlement owed,
// and the actions finance took on the exceptions.

// Statuses of a reconciliation item. An item that needs nobody (matched,
// pending) is none; an exception opens as open and finance closes it as
// resolved (with a note), written_off (the ledger takes the difference) or
// claimed (marked for the acquirer, whom finance asks to pay or explain).
const (
	ReconNone       = "none"
	ReconOpen       = "open"
	ReconResolved   = "resolved"
	ReconWrittenOff = "written_off"
	ReconClaimed    = "claimed"
)

// Sources of a reconciliation item.
const (
	ReconSourceLine = "line" // a line of the acquirer's report
	ReconSourceOwed = "owed" // a settlement the record says is owed
)

// ReconRun is one reconciliation of a connector's settlement day: how many
// lines the report had, how many settlements were owed, how many of
// either need a person, and when it last ran. A re-run of the day rewrites
// it.
type ReconRun struct {
	Connector  string    `gorm:"primaryKey;size:32"`
	Day        time.Time `gorm:"primaryKey;type:date"`
	Lines      int       `gorm:"not null"`
	Owed       int       `gorm:"not null"`
	Exceptions int       `gorm:"not null"`
	// Posted counts the items whose money the ledger holds; Unposted the
	// matched ones it could not post yet (PostError of the item says why).
	Posted   int       `gorm:"not null;default:0"`
	Unposted int       `gorm:"not null;default:0"`
	RanAt    time.Time `gorm:"not null"`
	// Error is why the acquirer's report of the day was refused on its
	// last run (migration 0035); the day's items are those of the last
	// run that could read it, and the day stays due.
	Error string `gorm:"size:500;not null;default:''"`
}

// ReconItem is one settlement line or one owed settlement of a run, with
// what reconciliation found it to be and what became of it.
type ReconItem struct {
	ID        int64     `gorm:"primaryKey"`
	Connector string    `gorm:"size:32;not null;uniqueIndex:idx_recon_items_key,priority:1"`
	Day       time.Time `gorm:"type:date;not null;uniqueIndex:idx_recon_items_key,priority:2;index:idx_recon_items_mode_day,priority:2"`
	// ItemKey names the item within its day, the same on every run: the
	// line's number for a line, the type and references for an owed one.
	ItemKey  string `gorm:"size:300;not null;uniqueIndex:idx_recon_items_key,priority:3"`
	Source   string `gorm:"size:8;not null;check:recon_items_source_check,source IN ('line','owed')"`
	LineNo   int    `gorm:"not null;default:0"`
	OrderKey string `gorm:"size:64;not null;default:'';index"`
	// OwedKey is ours of what the item settles: the transaction id of a
	// capture, the refund reference id of a refund (a line's, once matched).
	OwedKey   string `gorm:"size:64;not null;default:''"`
	Reference string `gorm:"size:255;not null;default:''"`
	Type      string `gorm:"size:16;not null"`
	Gross     int64  `gorm:"not null;default:0"`
	Fee       int64  `gorm:"not null;default:0"`
	Net       int64  `gorm:"not null;default:0"`
	Currency  string `gorm:"size:3;not null;default:''"`
	Class     string `gorm:"size:32;not null"`
	Detail    string `gorm:"size:500;not null;default:''"`
	// MerchantID and AccountID own the order the item is of; empty for a
	// line of nothing here.
	MerchantID string `gorm:"size:32;not null;default:''"`
	AccountID  string `gorm:"size:32;not null;default:''"`
	// Mode is the account's (testmode.Live or Test), live for a line of no
	// account here; SaveReconRun sets it from the account.
	Mode string `gorm:"size:8;not null;default:live;index:idx_recon_items_mode_day,priority:1"`
	// Posted is the reference of the journal entry that holds the item's
	// money; PostError why a matched line is not posted yet.
	Posted    string     `gorm:"size:255;not null;default:''"`
	PostError string     `gorm:"size:500;not null;default:''"`
	Status    string     `gorm:"size:16;not null;index;check:recon_items_status_check,status IN ('none','open','resolved','written_off','claimed')"`
	Note      string     `gorm:"size:1000;not null;default:''"`
	ActedBy   string     `gorm:"size:255;not null;default:''"`
	ActedAt   *time.Time `gorm:""`
}

// ReconAction is one action finance took on an exception, kept for the
// audit: who, when, what, with which note.
type ReconAction struct {
	ID     int64     `gorm:"primaryKey"`
	ItemID int64     `gorm:"not null;index"`
	Action string    `gorm:"size:16;not null"`
	Note   string    `gorm:"size:1000;not null;default:''"`
	Actor  string    `gorm:"size:255;not null"`
	At     time.Time `gorm:"not null"`
}

// ErrReconItemNotFound: no reconciliation item has that id.
var ErrReconItemNotFound = errors.New("no reconciliation item with that id")

// ErrReconItemClosed: the item needs no action, or finance already closed it.
var ErrReconItemClosed = errors.New("reconciliation item is not an open exception")

// reconItemBatch is how many items one statement writes.
const reconItemBatch = 1000

// SaveReconRun writes a run and its items in one transaction. Items already
// there (the day ran before) get the new findings, but keep what finance
// did with them: an exception finance closed stays closed; an open one that
// is now matched needs nobody any more.
func SaveReconRun(ctx context.Context, db *gorm.DB, run *ReconRun, items []ReconItem) error {
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// Posted and Unposted are the posting's to count (CountReconPosting),
		// not a new run's to reset.
		if err := tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "connector"}, {Name: "day"}},
			DoUpdates: clause.AssignmentColumns([]string{"lines", "owed", "exceptions", "ran_at", "error"}),
		}).Create(run).Error; err != nil {
			return err
		}
		for start := 0; start < len(items); start += reconItemBatch {
			batch := items[start:min(start+reconItemBatch, len(items))]
			err := tx.Clauses(clause.OnConflict{
				Columns: []clause.Column{{Name: "connector"}, {Name: "day"}, {Name: "item_key"}},
				DoUpdates: clause.Set{
					{Column: clause.Column{Name: "line_no"}, Value: gorm.Expr("excluded.line_no")},
					{Column: clause.Column{Name: "class"}, Value: gorm.Expr("excluded.class")},
					{Column: clause.Column{Name: "detail"}, Value: gorm.Expr("excluded.detail")},
					{Column: clause.Column{Name: "gross"}, Value: gorm.Expr("excluded.gross")},
					{Column: clause.Column{Name: "fee"}, Value: gorm.Expr("excluded.fee")},
					{Column: clause.Column{Name: "net"}, Value: gorm.Expr("excluded.net")},
					{Column: clause.Column{Name: "owed_key"}, Value: gorm.Expr("excluded.owed_key")},
					{Column: clause.Column{Name: "merchant_id"}, Value: gorm.Expr("excluded.merchant_id")},
					{Column: clause.Column{Name: "account_id"}, Value: gorm.Expr("excluded.account_id")},
					{Column: clause.Column{Name: "status"}, Value: gorm.Expr(
						"CASE WHEN recon_items.status IN ('none','open') THEN excluded.status ELSE recon_items.status END")},
				},
			}).Create(&batch).Error
			if err != nil {
				return err
			}
		}
		// The items' mode is their account's, so that finance sees a test
		// account's settlements apart from live money.
		return tx.Exec(`UPDATE recon_items AS r SET mode = a.mode FROM accounts AS a
WHERE r.connector = ? AND r.day = ? AND a.id = r.account_id AND r.mode <> a.mode`, run.Connector, run.Day).Error
	})
	if err != nil {
		return fmt.Errorf("save reconciliation of %s %s: %w", run.Connector, run.Day.Format(time.DateOnly), err)
	}
	return nil
}

// ReconOwedSettledElsewhere lists, as type/key, the owed settlements a
// line of another day's report (from from to to, inclusive, not day)
// settled: a neighbouring day's line took them.
func ReconOwedSettledElsewhere(ctx context.Context, db *gorm.DB, connector string, day, from, to time.Time) (map[string]bool, error) {
	var rows []struct{ Type, OwedKey string }
	err := db.WithContext(ctx).Model(&ReconItem{}).Distinct("type", "owed_key").
		Where("connector = ? AND day >= ? AND day <= ? AND day <> ? AND source = 'line' AND owed_key <> '' AND class <> 'duplicate'",
			connector, from, to, day).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("settled elsewhere by %s: %w", connector, err)
	}
	out := make(map[string]bool, len(rows))
	for _, r := range rows {
		out[r.Type+"/"+r.OwedKey] = true
	}
	return out, nil
}

// reconLockClass is the first key of the reconciliation's advisory locks;
// the second is the connector's name hashed.
const reconLockClass = 0x7265636f // "reco"

// ErrReconLockBusy: the connector's reconciliation lock was not let go
// within the wait asked for.
var ErrReconLockBusy = errors.New("a reconciliation of this connector is running")

// LockReconConnector takes connector's reconciliation lock and returns its
// release: one day of a connector is reconciled at a time, since a day
// reads what its neighbours matched and settled (a line settles a
// neighbouring day's capture, a chargeback is the first day's) and two at
// once would each take the same one. The lock is a session-level advisory
// lock on a connection of its own, so it goes with the session if the
// process dies; taking it waits for the holder, or until ctx ends.
func LockReconConnector(ctx context.Context, db *gorm.DB, connector string) (func(), error) {
	return lockReconConnector(ctx, db, connector, 0)
}

// LockReconConnectorWithin is LockReconConnector waiting at most wait for
// the holder to let go (ErrReconLockBusy). Postgres times the wait itself
// (lock_timeout), so a full pool or a slow server is not taken for a
// reconciliation.
func LockReconConnectorWithin(ctx context.Context, db *gorm.DB, connector string, wait time.Duration) (func(), error) {
	return lockReconConnector(ctx, db, connector, max(wait, time.Millisecond))
}

func lockReconConnector(ctx context.Context, db *gorm.DB, connector string, wait time.Duration) (func(), error) {
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("reconciliation lock of %s: %w", connector, err)
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("reconciliation lock of %s: %w", connector, err)
	}
	// A failed wait ends the session rather than handing it back to the
	// pool: one cut short by ctx may have been granted the lock as it
	// ended, and one timed by lock_timeout carries the setting.
	discard := func() {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = conn.Close()
	}
	if wait > 0 {
		if _, err := conn.ExecContext(ctx, `SELECT set_config('lock_timeout', $1, false)`, fmt.Sprintf("%dms", wait.Milliseconds())); err != nil {
			discard()
			return nil, fmt.Errorf("reconciliation lock of %s: %w", connector, err)
		}
	}
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1, hashtext($2))`, reconLockClass, connector); err != nil {
		discard()
		if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "55P03" { // lock_not_available
			return nil, fmt.Errorf("%w (%s, waited %s)", ErrReconLockBusy, connector, wait)
		}
		return nil, fmt.Errorf("reconciliation lock of %s: %w", connector, err)
	}
	if wait > 0 {
		if _, err := conn.ExecContext(ctx, `RESET lock_timeout`); err != nil {
			discard()
			return nil, fmt.Errorf("reconciliation lock of %s: %w", connector, err)
		}
	}
	return func() {
		// The connection goes back to the pool, which must not keep the
		// lock: when unlocking fails it is discarded, ending the session.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1, hashtext($2))`, reconLockClass, connector); err != nil {
			discard()
			return
		}
		_ = conn.Close()
	}, nil
}

// ReconChargebacksElsewhere lists the chargeback lines of orders orderKeys
// that the reports of other days than day matched: each settled its
// dispute's debit or reinstatement, and the same line on day's report is a
// duplicate. A line another day called a duplicate is not one of them, so
// the day reconciled first keeps the chargeback whichever day runs again.
func ReconChargebacksElsewhere(ctx context.Context, db *gorm.DB, connector string, day time.Time, orderKeys []string) ([]ReconItem, error) {
	var out []ReconItem
	for start := 0; start < len(orderKeys); start += reconItemBatch {
		var items []ReconItem
		err := db.WithContext(ctx).Where("connector = ? AND day <> ? AND source = 'line' AND type = 'chargeback' AND class = 'matched' AND order_key IN ?",
			connector, day, orderKeys[start:min(start+reconItemBatch, len(orderKeys))]).Order("day, line_no").Find(&items).Error
		if err != nil {
			return nil, fmt.Errorf("chargebacks elsewhere at %s: %w", connector, err)
		}
		out = append(out, items...)
	}
	return out, nil
}

// ReconOwedHeldElsewhere finds, by item key, the owed items of keys that
// another day than day, from from to to (inclusive), holds.
func ReconOwedHeldElsewhere(ctx context.Context, db *gorm.DB, connector string, day, from, to time.Time, keys []string) (map[string]*ReconItem, error) {
	out := map[string]*ReconItem{}
	for start := 0; start < len(keys); start += reconItemBatch {
		var items []ReconItem
		err := db.WithContext(ctx).Where("connector = ? AND day >= ? AND day <= ? AND day <> ? AND source = 'owed' AND item_key IN ?",
			connector, from, to, day, keys[start:min(start+reconItemBatch, len(keys))]).Find(&items).Error
		if err != nil {
			return nil, fmt.Errorf("owed elsewhere by %s: %w", connector, err)
		}
		for i := range items {
			out[items[i].ItemKey] = &items[i]
		}
	}
	return out, nil
}

// ReconOwedWrittenOff lists the owed items finance wrote off from from to
// to (inclusive), by type/key: their settlement is posted, and a line that
// comes for one later is the gateway's cash, not the order's.
func ReconOwedWrittenOff(ctx context.Context, db *gorm.DB, connector string, from, to time.Time) (map[string]ReconItem, error) {
	var items []ReconItem
	err := db.WithContext(ctx).Where("connector = ? AND day >= ? AND day <= ? AND source = 'owed' AND status = ?",
		connector, from, to, ReconWrittenOff).Find(&items).Error
	if err != nil {
		return nil, fmt.Errorf("owed written off by %s: %w", connector, err)
	}
	out := make(map[string]ReconItem, len(items))
	for _, it := range items {
		out[it.Type+"/"+it.OwedKey] = it
	}
	return out, nil
}

// ReconSettledElsewhere is an owed item (ID, of Day) that line Line of
// LineDay's report settled.
type ReconSettledElsewhere struct {
	ID      int64
	Day     time.Time
	Line    int
	LineDay time.Time
}

// SettleReconOwedElsewhere marks owed items settled by another day's line:
// matched, no longer an exception (one claimed of the acquirer is settled
// now; one finance resolved keeps that), and their days' exception counts
// again.
func SettleReconOwedElsewhere(ctx context.Context, db *gorm.DB, connector string, settled []ReconSettledElsewhere) error {
	if len(settled) == 0 {
		return nil
	}
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		days := map[time.Time]bool{}
		for _, s := range settled {
			err := tx.Model(&ReconItem{}).Where("id = ?", s.ID).Updates(map[string]any{
				"class":   "matched",
				"line_no": s.Line,
				"detail":  fmt.Sprintf("settled by line %d of %s", s.Line, s.LineDay.Format(time.DateOnly)),
				"status":  gorm.Expr("CASE WHEN status IN ('none','open','claimed') THEN 'none' ELSE status END"),
			}).Error
			if err != nil {
				return err
			}
			days[s.Day] = true
		}
		for d := range days {
			err := tx.Exec(`UPDATE recon_runs SET exceptions = (SELECT count(*) FROM recon_items WHERE connector = @c AND day = @d AND status = 'open')
WHERE connector = @c AND day = @d`, map[string]any{"c": connector, "d": d}).Error
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("settle owed elsewhere by %s: %w", connector, err)
	}
	return nil
}

// RefuseReconRun records that the acquirer's report of a day was refused
// (why): a day run before keeps its items and counts, one never run gets a
// run of nothing, so that finance sees the day and why.
func RefuseReconRun(ctx context.Context, db *gorm.DB, connector string, day time.Time, why string, at time.Time) error {
	run := &ReconRun{Connector: connector, Day: day, RanAt: at, Error: CutText(why, 500)}
	err := db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "connector"}, {Name: "day"}},
		DoUpdates: clause.AssignmentColumns([]string{"ran_at", "error"}),
	}).Create(run).Error
	if err != nil {
		return fmt.Errorf("refuse reconciliation of %s %s: %w", connector, day.Format(time.DateOnly), err)
	}
	return nil
}

// toPost is what makes an item's money the ledger's to hold: a matched
// line, or an exception finance wrote off.
const toPost = "(source = 'line' AND class IN ('matched','fee_outside_schedule')) OR status = 'written_off'"

// ReconDaysUnposted lists the days from from (inclusive) to to (exclusive)
// that have an item whose money the ledger should hold and does not yet:
// one it could not take (PostError), or one a posting that stopped never
// reached.
func ReconDaysUnposted(ctx context.Context, db *gorm.DB, connector string, from, to time.Time) ([]time.Time, error) {
	var days []time.Time
	err := db.WithContext(ctx).Model(&ReconItem{}).Distinct("day").
		Where("connector = ? AND day >= ? AND day < ? AND posted = ''", connector, from, to).
		Where(toPost).Order("day").Pluck("day", &days).Error
	if err != nil {
		return nil, fmt.Errorf("unposted days of %s: %w", connector, err)
	}
	return days, nil
}

// ReconItemsToPost lists a day's items whose money the ledger should hold
// and does not yet, after afterID, at most limit: matched lines, and
// exceptions finance wrote off.
func ReconItemsToPost(ctx context.Context, db *gorm.DB, connector string, day time.Time, afterID int64, limit int) ([]ReconItem, error) {
	var out []ReconItem
	err := db.WithContext(ctx).
		Where("connector = ? AND day = ? AND id > ? AND posted = ''", connector, day, afterID).
		Where(toPost).
		Order("id").Limit(limit).Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("items to post of %s %s: %w", connector, day.Format(time.DateOnly), err)
	}
	return out, nil
}

// ReconPosting is what became of one item's posting: the reference of the
// journal entry that holds its money, or Error why the ledger cannot take
// it yet.
type ReconPosting struct {
	ID     int64
	Posted string
	Error  string
}

// MarkReconPostedAll records many postings in one statement.
func MarkReconPostedAll(ctx context.Context, db *gorm.DB, ps []ReconPosting) error {
	if len(ps) == 0 {
		return nil
	}
	values := make([]string, 0, len(ps))
	args := make([]any, 0, 3*len(ps))
	for _, p := range ps {
		e := CutText(p.Error, 500)
		values = append(values, "(?::bigint, ?::text, ?::text)")
		args = append(args, p.ID, p.Posted, e)
	}
	err := db.WithContext(ctx).Exec(`UPDATE recon_items AS r SET posted = u.posted, post_error = u.err
FROM (VALUES `+strings.Join(values, ", ")+`) AS u(id, posted, err) WHERE r.id = u.id`, args...).Error
	if err != nil {
		return fmt.Errorf("mark %d items posted: %w", len(ps), err)
	}
	return nil
}

// CountReconPosting fills a run's Posted and Unposted from its items.
func CountReconPosting(ctx context.Context, db *gorm.DB, connector string, day time.Time) error {
	err := db.WithContext(ctx).Exec(`
UPDATE recon_runs SET
  posted = (SELECT count(*) FROM recon_items WHERE connector = @c AND day = @d AND posted <> ''),
  unposted = (SELECT count(*) FROM recon_items WHERE connector = @c AND day = @d AND posted = '' AND post_error <> '')
WHERE connector = @c AND day = @d`, map[string]any{"c": connector, "d": day}).Error
	if err != nil {
		return fmt.Errorf("count posting of %s %s: %w", connector, day.Format(time.DateOnly), err)
	}
	return nil
}

// ReconClassTotal is, for one run, how many items of a source fell in a
// class and what they came to (gross and fees, minor units of Currency).
type ReconClassTotal struct {
	Connector string
	Day       time.Time
	Source    string
	Class     string
	Currency  string
	Count     int64
	Gross     int64
	Fee       int64
	Net       int64
}

// ReconTotals sums a window's items of one mode's accounts (mode empty for
// both) per connector, day, class and currency (connector empty for all),
// newest day first.
func ReconTotals(ctx context.Context, db *gorm.DB, connector, mode string, from, to time.Time) ([]ReconClassTotal, error) {
	q := db.WithContext(ctx).Model(&ReconItem{}).
		Select("connector, day, source, class, currency, count(*) AS count, sum(gross) AS gross, sum(fee) AS fee, sum(net) AS net").
		Where("day >= ? AND day < ?", from, to)
	if connector != "" {
		q = q.Where("connector = ?", connector)
	}
	if mode != "" {
		q = q.Where("mode = ?", mode)
	}
	var out []ReconClassTotal
	if err := q.Group("connector, day, source, class, currency").
		Order("day DESC, connector, source, class, currency").Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("reconciliation totals: %w", err)
	}
	return out, nil
}

// ReconModes says whether a window's items (connector empty for all;
// either bound zero for none) include live accounts' and test accounts'.
func ReconModes(ctx context.Context, db *gorm.DB, connector string, from, to time.Time) (live, test bool, err error) {
	// Two EXISTS, each stopping at its first item (idx_recon_items_mode_day),
	// where an aggregate would read every item of an open window.
	where, args := "mode = ?", []any{}
	if connector != "" {
		where += " AND connector = ?"
		args = append(args, connector)
	}
	if !from.IsZero() {
		where += " AND day >= ?"
		args = append(args, from)
	}
	if !to.IsZero() {
		where += " AND day < ?"
		args = append(args, to)
	}
	var row struct{ Live, Test bool }
	all := append(append([]any{"live"}, args...), append([]any{"test"}, args...)...)
	if err := db.WithContext(ctx).Raw("SELECT EXISTS (SELECT 1 FROM recon_items WHERE "+where+") AS live, "+
		"EXISTS (SELECT 1 FROM recon_items WHERE "+where+") AS test", all...).Scan(&row).Error; err != nil {
		return false, false, fmt.Errorf("reconciliation modes: %w", err)
	}
	return row.Live, row.Test, nil
}

// ReconRuns lists the runs of a window (connector empty for all), newest
// day first.
func ReconRuns(ctx context.Context, db *gorm.DB, connector string, from, to time.Time) ([]ReconRun, error) {
	q := db.WithContext(ctx).Where("day >= ? AND day < ?", from, to)
	if connector != "" {
		q = q.Where("connector = ?", connector)
	}
	var out []ReconRun
	if err := q.Order("day DESC, connector").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("reconciliation runs: %w", err)
	}
	return out, nil
}

// ReconExceptionFilter selects exceptions: by connector, mode of the
// account and day window (any empty for all), by status (open when empty; "all" for every
// status but none), after AfterID, at most Limit (100 when zero, 10000 at
// most).
type ReconExceptionFilter struct {
	Connector string
	Mode      string
	From, To  time.Time
	Status    string
	AfterID   int64
	Limit     int
}

// ReconExceptions lists the exceptions a filter selects, in id order.
func ReconExceptions(ctx context.Context, db *gorm.DB, f ReconExceptionFilter) ([]ReconItem, error) {
	q := db.WithContext(ctx).Where("id > ?", f.AfterID)
	switch f.Status {
	case "":
		q = q.Where("status = ?", ReconOpen)
	case "all":
		q = q.Where("status <> ?", ReconNone)
	default:
		q = q.Where("status = ?", f.Status)
	}
	if f.Connector != "" {
		q = q.Where("connector = ?", f.Connector)
	}
	if f.Mode != "" {
		q = q.Where("mode = ?", f.Mode)
	}
	if !f.From.IsZero() {
		q = q.Where("day >= ?", f.From)
	}
	if !f.To.IsZero() {
		q = q.Where("day < ?", f.To)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	var out []ReconItem
	if err := q.Order("id").Limit(min(limit, ReconExceptionPage)).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("reconciliation exceptions: %w", err)
	}
	return out, nil
}

// ReconExceptionPage is the most exceptions one read returns.
var ReconExceptionPage = 10000

// EachReconException reads every exception a filter selects, from its
// AfterID on, a page at a time, and gives each page to fn; it stops at fn's
// first error. An export writes page by page, so a queue of any size is
// never held whole.
func EachReconException(ctx context.Context, db *gorm.DB, f ReconExceptionFilter, fn func([]ReconItem) error) error {
	f.Limit = ReconExceptionPage
	for {
		page, err := ReconExceptions(ctx, db, f)
		if err != nil {
			return err
		}
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return err
			}
		}
		if len(page) < f.Limit {
			return nil
		}
		f.AfterID = page[len(page)-1].ID
	}
}

// ReconItemByID loads one item.
func ReconItemByID(ctx context.Context, db *gorm.DB, id int64) (ReconItem, error) {
	var it ReconItem
	err := db.WithContext(ctx).Where("id = ?", id).Take(&it).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return ReconItem{}, ErrReconItemNotFound
	}
	if err != nil {
		return ReconItem{}, fmt.Errorf("load reconciliation item %d: %w", id, err)
	}
	return it, nil
}

// ActOnReconItem closes an open exception as to (resolved, written_off or
// claimed; a claimed one may still be resolved or written off once the
// acquirer answers) and records the action for the audit, in one
// transaction under the item's lock.
func ActOnReconItem(ctx context.Context, db *gorm.DB, id int64, to, note, actor string, at time.Time) (ReconItem, error) {
	var out ReconItem
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&out).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return ErrReconItemNotFound
		}
		if err != nil {
			return err
		}
		if out.Status != ReconOpen && out.Status != ReconClaimed || out.Status == to {
			return fmt.Errorf("%w: it is %s", ErrReconItemClosed, out.Status)
		}
		out.Status, out.Note, out.ActedBy, out.ActedAt = to, note, actor, &at
		if err := tx.Model(&ReconItem{}).Where("id = ?", id).
			Updates(map[string]any{"status": to, "note": note, "acted_by": actor, "acted_at": at}).Error; err != nil {
			return err
		}
		return tx.Create(&ReconAction{ItemID: id, Action: to, Note: note, Actor: actor, At: at}).Error
	})
	if err != nil {
		return ReconItem{}, fmt.Errorf("act on reconciliation item %d: %w", id, err)
	}
	return out, nil
}

// ReconActions lists the actions taken on an item, oldest first.
func ReconActions(ctx context.Context, db *gorm.DB, itemID int64) ([]ReconAction, error) {
	var out []ReconAction
	if err := db.WithContext(ctx).Where("item_id = ?", itemID).Order("id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("actions of item %d: %w", itemID, err)
	}
	return out, nil
}

// StatementLine is one line of a merchant account's settlement statement:
// what the acquirers settled (and finance wrote off) on a day, per
// connector, type and currency, with the merchant's net.
type StatementLine struct {
	Day       time.Time
	Connector string
	Type      string
	Currency  string
	Count     int64
	Gross     int64
	Fee       int64
	Net       int64
}

// MerchantsOwn keeps, of the items the ledger holds, those whose money is a
// merchant's settlement: not a duplicate line or one of nothing owed here,
// which a write-off booked to the gateway, nor the acquirer's fee
// adjustments, the gateway's own cost. Counted in a merchant's totals they
// told of captures and fees the merchant never had.
const MerchantsOwn = "NOT (i.class IN ('duplicate','missing_here') AND i.source = 'line') AND i.type <> 'fee_adjustment'"

// MerchantLedgerJoin joins, as mf, what item i's ledger entry moved for
// the merchant: mf.fee the fee income it booked (a capture's settlement's
// merchant fee, the acquirer's passed through or the account's blended
// fee; none for a refund's, whose acquirer fee the gateway bears), and
// mf.owed its acquirer clearing line, the record's amount it settled (in
// for a capture, out for a refund; NULL where the entry has none). An
// amount mismatch written off settles what the record owed, not what the
// line says came.
const MerchantLedgerJoin = `LEFT JOIN LATERAL (SELECT coalesce(sum(l.amount) FILTER (WHERE la.kind = 'fee_income'), 0) AS fee,
       sum(l.amount) FILTER (WHERE la.kind = 'acquirer_clearing') AS owed
FROM journal_entries e
JOIN journal_lines l ON l.entry_id = e.id
JOIN ledger_accounts la ON la.id = l.ledger_account_id
WHERE e.reference = i.posted) mf ON true`

// MerchantAmount is item i's amount as the merchant's settlement counts
// it: a capture's or refund's as the ledger settled it, a chargeback's as
// the acquirer's line says.
const MerchantAmount = "CASE WHEN i.type = 'capture' THEN coalesce(mf.owed, i.gross) WHEN i.type = 'refund' THEN coalesce(-mf.owed, i.gross) ELSE i.gross END"

// MerchantFee is what the merchant was charged for item i: its capture's
// fee as the ledger booked it, or a chargeback's fee, which the dispute's
// hold took from the merchant.
const MerchantFee = "CASE WHEN i.type = 'chargeback' THEN i.fee ELSE mf.fee END"

// MerchantNet is what item i came to for the merchant: a capture's amount
// in, a refund's out, less the fee; a chargeback's line as the acquirer
// took it (the dispute's hold moved that money).
const MerchantNet = "CASE WHEN i.type = 'chargeback' THEN i.net WHEN i.type = 'capture' THEN " + MerchantAmount + " - mf.fee ELSE -(" + MerchantAmount + ") - mf.fee END"

// SettlementStatement lists what settled to a merchant account in a window
// of settlement days (to exclusive): every item the ledger holds, by day,
// connector, type and currency, with its amount, the fees the merchant was
// charged and what it came to for the merchant (MerchantAmount,
// MerchantFee, MerchantNet). A settlement finance wrote off counts as
// settled: the ledger paid the merchant all the same.
func SettlementStatement(ctx context.Context, db *gorm.DB, merchantID, accountID string, from, to time.Time) ([]StatementLine, error) {
	var out []StatementLine
	err := db.WithContext(ctx).Table("recon_items AS i").Joins(MerchantLedgerJoin).
		Select("i.day, i.connector, CASE WHEN i.status = 'written_off' THEN i.type || ' written off' ELSE i.type END AS type, i.currency, "+
			"count(*) AS count, sum("+MerchantAmount+") AS gross, sum("+MerchantFee+") AS fee, sum("+MerchantNet+") AS net").
		Where("i.merchant_id = ? AND i.account_id = ? AND i.day >= ? AND i.day < ? AND i.posted <> ''", merchantID, accountID, from, to).
		Where(MerchantsOwn).
		Group("i.day, i.connector, 3, i.currency").Order("i.day, i.connector, 3, i.currency").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("settlement statement of %s/%s: %w", merchantID, accountID, err)
	}
	return out, nil
}

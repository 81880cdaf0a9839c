package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Console roles: who a console user is to the gateway.
const (
	// RoleMerchant sees and acts on one merchant's accounts only.
	RoleMerchant = "merchant"
	// RoleFinance works on payouts, the ledger and re-runs.
	RoleFinance = "finance"
	// RoleOps reads everything and resends notifications.
	RoleOps = "ops"
)

// ConsoleUser is a person who signs in to the web console. The password is
// kept as an argon2id hash only.
type ConsoleUser struct {
	ID           int64     `gorm:"primaryKey"`
	Email        string    `gorm:"size:254;not null;uniqueIndex:idx_console_users_email"`
	Name         string    `gorm:"size:100;not null;default:''"`
	PasswordHash string    `gorm:"size:200;not null"`
	Role         string    `gorm:"size:16;not null"`
	MerchantID   string    `gorm:"size:32;not null;default:''"`
	CreatedAt    time.Time `gorm:"not null"`
	DisabledAt   *time.Time
}

// ConsoleSession is a signed-in browser. The cookie holds a random token;
// the table holds only its SHA-256, so a copy of the table signs nobody in.
type ConsoleSession struct {
	TokenHash string    `gorm:"primaryKey;size:64"`
	UserID    int64     `gorm:"not null;index:idx_console_sessions_user"`
	CSRFToken string    `gorm:"size:64;not null"`
	CreatedAt time.Time `gorm:"not null"`
	ExpiresAt time.Time `gorm:"not null"`
}

// ConsoleLoginFailure is one failed sign-in, counted to slow guessing.
type ConsoleLoginFailure struct {
	ID        int64     `gorm:"primaryKey"`
	Email     string    `gorm:"size:254;not null;index:idx_console_login_failures_email,priority:1"`
	ClientIP  string    `gorm:"size:64;not null;index:idx_console_login_failures_ip,priority:1"`
	CreatedAt time.Time `gorm:"not null;index:idx_console_login_failures_email,priority:2;index:idx_console_login_failures_ip,priority:2"`
}

// ConsoleAction is one state-changing form a console user sent, by the
// form's one-time id: a second submission of the same form (a double
// click, a reload) gets the first one's outcome and does nothing again.
type ConsoleAction struct {
	FormID    string    `gorm:"primaryKey;size:64"`
	UserID    int64     `gorm:"not null"`
	Action    string    `gorm:"size:32;not null"`
	Subject   string    `gorm:"size:64;not null"`
	Outcome   string    `gorm:"size:500;not null;default:''"`
	CreatedAt time.Time `gorm:"not null"`
}

// ErrConsoleUserExists: a user with that email is already there.
var ErrConsoleUserExists = errors.New("a console user with that email exists")

// MerchantExists reports whether a merchant of that id exists.
func MerchantExists(ctx context.Context, db *gorm.DB, id string) (bool, error) {
	var n int64
	if err := db.WithContext(ctx).Model(&Merchant{}).Where("id = ?", id).Count(&n).Error; err != nil {
		return false, fmt.Errorf("find merchant %s: %w", id, err)
	}
	return n > 0, nil
}

// CreateConsoleUser stores u; the email must be new.
func CreateConsoleUser(ctx context.Context, db *gorm.DB, u *ConsoleUser) error {
	res := db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(u)
	if res.Error != nil {
		return fmt.Errorf("create console user: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrConsoleUserExists
	}
	return nil
}

// ClaimConsoleAction records a form's first submission. It reports false,
// with the first submission's record, when the form was sent before.
func ClaimConsoleAction(ctx context.Context, db *gorm.DB, a *ConsoleAction) (bool, *ConsoleAction, error) {
	res := db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(a)
	if res.Error != nil {
		return false, nil, fmt.Errorf("claim console action: %w", res.Error)
	}
	if res.RowsAffected == 1 {
		return true, a, nil
	}
	var first ConsoleAction
	if err := db.WithContext(ctx).Where("form_id = ?", a.FormID).Take(&first).Error; err != nil {
		return false, nil, fmt.Errorf("find console action: %w", err)
	}
	return false, &first, nil
}

// ConsoleLoginLimit is one token bucket of sign-in attempts (GCRA): Key
// names what is limited (an address, an email's hash, a trusted browser),
// TAT is the time at which the bucket is full again.
type ConsoleLoginLimit struct {
	Key string    `gorm:"primaryKey;size:100"`
	TAT time.Time `gorm:"column:tat;not null;index"`
}

// TakeLoginToken takes one attempt from key's bucket, which holds burst
// attempts and gains one every every. It reports whether there was one.
// One statement does it, so parallel attempts are counted one by one.
func TakeLoginToken(ctx context.Context, db *gorm.DB, key string, now time.Time, every time.Duration, burst int) (bool, error) {
	secs := every.Seconds()
	var tat []time.Time
	err := db.WithContext(ctx).Raw(`INSERT INTO console_login_limits AS l (key, tat)
		VALUES (?, ?::timestamptz + make_interval(secs => ?))
		ON CONFLICT (key) DO UPDATE SET tat = greatest(l.tat, ?::timestamptz) + make_interval(secs => ?)
		WHERE greatest(l.tat, ?::timestamptz) - ?::timestamptz <= make_interval(secs => ?)
		RETURNING tat`,
		key, now, secs, now, secs, now, now, secs*float64(burst-1)).Scan(&tat).Error
	if err != nil {
		return false, fmt.Errorf("take sign-in attempt: %w", err)
	}
	return len(tat) == 1, nil
}

// PruneLoginLimits deletes the full buckets: forgetting them loses nothing.
func PruneLoginLimits(ctx context.Context, db *gorm.DB, now time.Time) error {
	if err := db.WithContext(ctx).Where("tat < ?", now).Delete(&ConsoleLoginLimit{}).Error; err != nil {
		return fmt.Errorf("prune sign-in limits: %w", err)
	}
	return nil
}

package models

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// VelocityWindow asks how many orders used one value since a time.
type VelocityWindow struct {
	Value string // "" asks nothing: the count is 0
	Since time.Time
}

// VelocityQuery asks how many other orders of an account used the same
// card, shopper email and shopper IP, each within its own window.
type VelocityQuery struct {
	AccountID string
	// ExcludeTransactionID is the payment being checked: it is already
	// recorded and must not count against itself.
	ExcludeTransactionID string
	Card                 VelocityWindow // by card fingerprint
	Email                VelocityWindow // by shopper email, exactly as sent
	IP                   VelocityWindow // by shopper IP
	Device               VelocityWindow // by device fingerprint
}

// VelocityCounts are the answers to a VelocityQuery.
type VelocityCounts struct {
	Card, Email, IP, Device int
}

// CountVelocity counts, in one query, the account's other orders created
// since each window's start with the window's value. Every order counts,
// whatever its outcome: velocity limits attempts, not successes.
func CountVelocity(ctx context.Context, db *gorm.DB, q VelocityQuery) (VelocityCounts, error) {
	var out VelocityCounts
	pd, err := personalDataOf(db)
	if err != nil {
		return out, err
	}
	// Emails and addresses are stored as keyed hashes only.
	email, ip, device := q.Email, q.IP, q.Device
	email.Value, ip.Value = pd.Hash(HashEmail, email.Value), pd.Hash(HashIP, ip.Value)
	device.Value = pd.Hash(HashDevice, device.Value)
	parts := []struct {
		column string
		w      VelocityWindow
		dst    *int
	}{
		{"card_fingerprint", q.Card, &out.Card},
		{"shopper_email_hash", email, &out.Email},
		{"shopper_ip_hash", ip, &out.IP},
		{"device_fingerprint_hash", device, &out.Device},
	}
	var (
		selects, conds []string
		selArgs, args  []any
		dsts           []any
	)
	for _, p := range parts {
		if p.w.Value == "" {
			continue
		}
		cond := p.column + " = ? AND created_at >= ?"
		selects = append(selects, "count(*) FILTER (WHERE "+cond+")")
		conds = append(conds, "("+cond+")")
		selArgs = append(selArgs, p.w.Value, p.w.Since)
		args = append(args, p.w.Value, p.w.Since)
		dsts = append(dsts, p.dst)
	}
	if len(selects) == 0 {
		return out, nil
	}
	err = db.WithContext(ctx).Model(&Order{}).
		Select(strings.Join(selects, ", "), selArgs...).
		Where("account_id = ? AND transaction_id <> ?", q.AccountID, q.ExcludeTransactionID).
		Where("("+strings.Join(conds, " OR ")+")", args...).
		Row().Scan(dsts...)
	if err != nil {
		return VelocityCounts{}, fmt.Errorf("count velocity of account %s: %w", q.AccountID, err)
	}
	return out, nil
}

// CardBlocked reports whether a card fingerprint is on the blocked-card
// list. An empty fingerprint is never blocked.
func CardBlocked(ctx context.Context, db *gorm.DB, fingerprint string) (bool, error) {
	if fingerprint == "" {
		return false, nil
	}
	var n int64
	err := db.WithContext(ctx).Model(&BlockedCard{}).Where("fingerprint = ?", fingerprint).Count(&n).Error
	if err != nil {
		return false, fmt.Errorf("look up blocked card: %w", err)
	}
	return n > 0, nil
}

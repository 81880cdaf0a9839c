package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// The replay store (replays do not move money twice): the first
// answer of a signed request, kept for a day, and the nonces of strong
// signatures, kept while their timestamp is acceptable. Times are
// Postgres's own clock (now()), so the API processes' clocks never decide
// whether an entry has expired.

// Replay entry states.
const (
	ReplayInProgress = "in_progress" // claimed by a request still being answered
	ReplayDone       = "done"        // holds the first answer
)

// ReplayEntry is one claimed request: its operation, the account and a key
// (the body's hash, or the merchant's Idempotency-Key), and once answered,
// the answer.
type ReplayEntry struct {
	// Scope is "merchant_id/account_id".
	Scope string `gorm:"primaryKey"`
	// Operation is the route, such as /v1/refund.
	Operation string `gorm:"primaryKey"`
	// Key is "body:<fingerprint of the body>" or "idem:<Idempotency-Key>".
	Key string `gorm:"primaryKey"`
	// Fingerprint names the body that claimed the key: a keyed hash
	// (api.Server.bodyFingerprint), never the body itself.
	Fingerprint string `gorm:"not null"`
	State       string `gorm:"not null"`
	// Claim is the random token of the request that holds an in-progress
	// entry; only that request completes or releases it.
	Claim        string    `gorm:"not null"`
	ClaimedUntil time.Time `gorm:"not null"`
	// The first answer, once State is done.
	Status      int    `gorm:"not null;default:0"`
	ContentType string `gorm:"not null;default:''"`
	Body        []byte
	ResultCode  string `gorm:"not null;default:''"`
	// Strong is set when the first request proved the key with a strong
	// signature: a replay must then prove it the same way.
	Strong    bool      `gorm:"not null;default:false"`
	CreatedAt time.Time `gorm:"not null"`
	ExpiresAt time.Time `gorm:"not null;index"`
}

// TableName is the replay table's name.
func (ReplayEntry) TableName() string { return "replay_entries" }

// SignatureNonce is a nonce of a strong signature, refused again until it
// expires.
type SignatureNonce struct {
	AccountID string    `gorm:"primaryKey"`
	Nonce     string    `gorm:"primaryKey"`
	ExpiresAt time.Time `gorm:"not null;index"`
}

// TableName is the nonce table's name.
func (SignatureNonce) TableName() string { return "signature_nonces" }

// ReplayKey names one entry.
type ReplayKey struct {
	Scope     string
	Operation string
	Key       string
}

// claimReplaySQL inserts an in-progress entry, or takes over one that has
// expired or whose claim lapsed (its request died). Two requests racing
// for the same key both reach the insert or the ON CONFLICT branch;
// Postgres locks the row and re-checks the WHERE on the committed version,
// so exactly one of them gets the row back.
const claimReplaySQL = `
WITH prior AS (SELECT state FROM replay_entries WHERE scope = @scope AND operation = @operation AND key = @key)
INSERT INTO replay_entries AS e (scope, operation, key, fingerprint, state, claim, claimed_until,
	status, content_type, body, result_code, strong, created_at, expires_at)
VALUES (@scope, @operation, @key, @fingerprint, 'in_progress', @claim, now() + make_interval(secs => @lease),
	0, '', NULL, '', false, now(), now() + make_interval(secs => @ttl))
ON CONFLICT (scope, operation, key) DO UPDATE SET
	fingerprint = EXCLUDED.fingerprint, state = 'in_progress', claim = EXCLUDED.claim,
	claimed_until = EXCLUDED.claimed_until, status = 0, content_type = '', body = NULL,
	result_code = '', strong = false, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
WHERE e.expires_at <= now() OR (e.state = 'in_progress' AND e.claimed_until <= now())
RETURNING claim, COALESCE((SELECT state FROM prior), '') AS prior_state`

// ReplayClaim is what ClaimReplay did.
type ReplayClaim struct {
	// Taken: the key is the caller's now.
	Taken bool
	// Abandoned: it was taken from a request that claimed it and never
	// answered (its process died, or its claim lapsed): what that request
	// did is not known.
	Abandoned bool
	// Existing is the entry that holds the key when it was not taken (nil
	// when it vanished in between: try again).
	Existing *ReplayEntry
}

// ClaimReplay claims k for the request holding the token claim.
func ClaimReplay(ctx context.Context, db *gorm.DB, k ReplayKey, fingerprint, claim string, lease, ttl time.Duration) (ReplayClaim, error) {
	var got []struct {
		Claim      string
		PriorState string
	}
	err := db.WithContext(ctx).Raw(claimReplaySQL, map[string]any{
		"scope": k.Scope, "operation": k.Operation, "key": k.Key, "fingerprint": fingerprint, "claim": claim,
		"lease": lease.Seconds(), "ttl": ttl.Seconds(),
	}).Scan(&got).Error
	if err != nil {
		return ReplayClaim{}, fmt.Errorf("claim replay key: %w", err)
	}
	if len(got) == 1 && got[0].Claim == claim {
		return ReplayClaim{Taken: true, Abandoned: got[0].PriorState == ReplayInProgress}, nil
	}
	var e ReplayEntry
	err = db.WithContext(ctx).Where("scope = ? AND operation = ? AND key = ? AND expires_at > now()", k.Scope, k.Operation, k.Key).Take(&e).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return ReplayClaim{}, nil
	}
	if err != nil {
		return ReplayClaim{}, fmt.Errorf("read replay entry: %w", err)
	}
	return ReplayClaim{Existing: &e}, nil
}

// FindReplay reads the live entry of k; ErrNotFound when there is none.
func FindReplay(ctx context.Context, db *gorm.DB, k ReplayKey) (*ReplayEntry, error) {
	var e ReplayEntry
	err := db.WithContext(ctx).Where("scope = ? AND operation = ? AND key = ? AND expires_at > now()", k.Scope, k.Operation, k.Key).Take(&e).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read replay entry: %w", err)
	}
	return &e, nil
}

// ReplayAnswer is the answer kept for a key.
type ReplayAnswer struct {
	Status      int
	ContentType string
	Body        []byte
	ResultCode  string
	Strong      bool
}

// CompleteReplay stores the answer of the request holding claim; an entry
// another request has taken over meanwhile is left alone.
func CompleteReplay(ctx context.Context, db *gorm.DB, k ReplayKey, claim string, a ReplayAnswer) error {
	err := db.WithContext(ctx).Model(&ReplayEntry{}).
		Where("scope = ? AND operation = ? AND key = ? AND claim = ? AND state = ?", k.Scope, k.Operation, k.Key, claim, ReplayInProgress).
		Updates(map[string]any{
			"state": ReplayDone, "status": a.Status, "content_type": a.ContentType, "body": a.Body,
			"result_code": a.ResultCode, "strong": a.Strong,
		}).Error
	if err != nil {
		return fmt.Errorf("store replay answer: %w", err)
	}
	return nil
}

// ErrReplayClaimLost: the request's claim is no longer in progress under
// its token (taken over, or released).
var ErrReplayClaimLost = errors.New("the replay claim is no longer this request's")

// ExtendReplay renews the lease of the in-progress entry of the request
// holding claim to lease from now; ErrReplayClaimLost when that entry is
// gone or another request's.
func ExtendReplay(ctx context.Context, db *gorm.DB, k ReplayKey, claim string, lease time.Duration) error {
	res := db.WithContext(ctx).Exec(`UPDATE replay_entries SET claimed_until = now() + make_interval(secs => ?)
		WHERE scope = ? AND operation = ? AND key = ? AND claim = ? AND state = ?`,
		lease.Seconds(), k.Scope, k.Operation, k.Key, claim, ReplayInProgress)
	if res.Error != nil {
		return fmt.Errorf("renew replay claim: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrReplayClaimLost
	}
	return nil
}

// ReleaseReplay drops the in-progress entry of the request holding claim,
// so the same request may be sent again and executed.
func ReleaseReplay(ctx context.Context, db *gorm.DB, k ReplayKey, claim string) error {
	err := db.WithContext(ctx).
		Where("scope = ? AND operation = ? AND key = ? AND claim = ? AND state = ?", k.Scope, k.Operation, k.Key, claim, ReplayInProgress).
		Delete(&ReplayEntry{}).Error
	if err != nil {
		return fmt.Errorf("release replay key: %w", err)
	}
	return nil
}

// UseNonce records a strong signature's nonce for the account until ttl
// from now. It reports false when the nonce is already recorded and has
// not expired: the request is a replay.
func UseNonce(ctx context.Context, db *gorm.DB, accountID, nonce string, ttl time.Duration) (bool, error) {
	res := db.WithContext(ctx).Exec(`
INSERT INTO signature_nonces AS s (account_id, nonce, expires_at)
VALUES (?, ?, now() + make_interval(secs => ?))
ON CONFLICT (account_id, nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at
WHERE s.expires_at <= now()`, accountID, nonce, ttl.Seconds())
	if res.Error != nil {
		return false, fmt.Errorf("record nonce: %w", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// SignatureUseTTL is how long a compatible signature is remembered after
// its last use, for the report of its reuse; UsageTTL how long a day's
// compatible refund total is kept after the day.
const (
	SignatureUseTTL = 90 * 24 * time.Hour
	UsageTTL        = 7 * 24 * time.Hour
)

// PruneReplays deletes expired replay entries and nonces, signatures not
// used for SignatureUseTTL and refund totals of days older than UsageTTL,
// and reports how many rows went.
// now is the clock those were recorded by.
func PruneReplays(ctx context.Context, db *gorm.DB, now time.Time) (int64, error) {
	entries := db.WithContext(ctx).Where("expires_at <= now()").Delete(&ReplayEntry{})
	if entries.Error != nil {
		return 0, fmt.Errorf("prune replay entries: %w", entries.Error)
	}
	nonces := db.WithContext(ctx).Where("expires_at <= now()").Delete(&SignatureNonce{})
	if nonces.Error != nil {
		return entries.RowsAffected, fmt.Errorf("prune nonces: %w", nonces.Error)
	}
	n := entries.RowsAffected + nonces.RowsAffected
	uses := db.WithContext(ctx).Where("last_seen < ?", now.Add(-SignatureUseTTL)).Delete(&SignatureUse{})
	if uses.Error != nil {
		return n, fmt.Errorf("prune signature uses: %w", uses.Error)
	}
	usage := db.WithContext(ctx).Where("day < ?", now.Add(-UsageTTL).UTC().Format(time.DateOnly)).Delete(&CompatibleRefundUsage{})
	if usage.Error != nil {
		return n + uses.RowsAffected, fmt.Errorf("prune refund totals: %w", usage.Error)
	}
	return n + uses.RowsAffected + usage.RowsAffected, nil
}

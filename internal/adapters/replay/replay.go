// Package replay keeps the first answer of merchant requests so that a
// request sent again is answered, not executed again (replays do not move
// money twice), and the nonces of strong signatures.
//
// A request claims its key in Postgres before it is executed: one row per
// (account, operation, key), inserted "in progress". A second request with
// the same key finds the row: it waits a little for the first answer, and
// gets it, or is told the request is still in progress. The request that
// holds the claim stores its answer when it proved the account's key and
// was answered 200, and releases the claim otherwise, so a refused request
// can be corrected and sent again.
//
// Answers are kept sealed with the gateway's keyring (Keys): a query's or
// a payout's answer names shoppers and beneficiaries, and personal data is
// never kept in clear.
//
// Entries live for TTL (24 h), nonces for NonceTTL. Expired rows are never
// used (claims take them over) and are deleted by Prune, which the API
// runs in the background at most once every PruneEvery.
package replay

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
)

// Defaults of a Store.
const (
	// DefaultTTL is how long a first answer is kept.
	DefaultTTL = 24 * time.Hour
	// DefaultLease is how long a claim holds before another request may
	// take it over, unless renewed (Hold): it frees the keys of requests
	// whose process died.
	DefaultLease = 5 * time.Minute
	// DefaultNonceTTL covers every timestamp a strong signature may carry:
	// one StrongTolerance ahead of the clock stays acceptable for two
	// tolerances.
	DefaultNonceTTL = 2*signing.StrongTolerance + time.Minute
	// DefaultPruneEvery is the least time between two background prunes.
	DefaultPruneEvery = 10 * time.Minute
)

// Outcome is what a claim found.
type Outcome int

const (
	// Claimed: the key is this request's; execute it, then Complete or Release.
	Claimed Outcome = iota
	// Answered: the key holds the first answer of the same content.
	Answered
	// Conflict: the key was claimed with other content (Idempotency-Key reuse).
	Conflict
	// Busy: the same request is still being answered elsewhere.
	Busy
)

// Result is the outcome of Claim.
type Result struct {
	Outcome Outcome
	// Claim is the token to Complete or Release with (Claimed).
	Claim string
	// Abandoned (Claimed): the key was taken from a request that claimed
	// it and never answered; it may have done its work.
	Abandoned bool
	// Answer is the first answer (Answered).
	Answer models.ReplayAnswer
}

// Store is the replay store over Postgres.
type Store struct {
	db    *gorm.DB
	TTL   time.Duration
	Lease time.Duration
	// RenewEvery is how often Hold renews its claims (a third of Lease
	// when zero).
	RenewEvery time.Duration
	NonceTTL   time.Duration
	PruneEvery time.Duration
	// Keys seal the answers kept; without them answers are kept in clear
	// (only tests that look at no personal data leave it unset).
	Keys   models.Sealer
	Logger *slog.Logger
	// Now is the clock the API records signature uses and refund totals
	// by, against which they age (time.Now; tests set the API's).
	Now func() time.Time

	lastPrune atomic.Int64 // unix nanoseconds of the last prune started
	pruning   atomic.Bool
}

// New returns a Store with the default durations. Its tables are part of
// the schema `paygate migrate` makes (models/migrations).
func New(db *gorm.DB) *Store {
	return &Store{db: db, TTL: DefaultTTL, Lease: DefaultLease, NonceTTL: DefaultNonceTTL,
		PruneEvery: DefaultPruneEvery, Logger: slog.New(slog.DiscardHandler), Now: time.Now}
}

// Claim claims k for a request whose body has the given fingerprint. When
// the same content is in progress elsewhere it waits up to wait for that
// answer before it reports Busy.
func (s *Store) Claim(ctx context.Context, k models.ReplayKey, fingerprint string, wait time.Duration) (Result, error) {
	token, err := newToken()
	if err != nil {
		return Result{}, err
	}
	deadline := time.Now().Add(wait)
	pause := 20 * time.Millisecond
	for vanished := 0; ; {
		got, err := models.ClaimReplay(ctx, s.db, k, fingerprint, token, s.Lease, s.TTL)
		if err != nil {
			return Result{}, err
		}
		e := got.Existing
		switch {
		case got.Taken:
			return Result{Outcome: Claimed, Claim: token, Abandoned: got.Abandoned}, nil
		case e == nil && vanished < 10:
			vanished++
			continue // released or expired between the two statements
		case e == nil:
			return Result{Outcome: Busy}, nil
		case e.Fingerprint != fingerprint:
			return Result{Outcome: Conflict}, nil
		case e.State == models.ReplayDone:
			body, err := s.open(k, e.Body)
			if err != nil {
				return Result{}, err
			}
			return Result{Outcome: Answered, Answer: models.ReplayAnswer{Status: e.Status, ContentType: e.ContentType,
				Body: body, ResultCode: e.ResultCode, Strong: e.Strong}}, nil
		}
		if time.Now().Add(pause).After(deadline) {
			return Result{Outcome: Busy}, nil
		}
		select {
		case <-ctx.Done():
			return Result{}, ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 250*time.Millisecond)
	}
}

// Held is a claim a request holds: its key and token.
type Held struct {
	Key   models.ReplayKey
	Claim string
}

// Hold renews the leases of claims while their request runs, until the
// stop it returns is called; stop waits for a renewal under way. A request
// may run longer than a lease: a batch works the entries of one order one
// after another, each waiting up to a minute for its workflow. A claim
// that lapsed meanwhile would be taken over by the merchant's retry as
// abandoned, and the first answer, when it came, could not be kept.
func (s *Store) Hold(ctx context.Context, claims []Held) (stop func()) {
	every := s.RenewEvery
	if every <= 0 {
		every = s.Lease / 3
	}
	if every <= 0 || len(claims) == 0 {
		return func() {}
	}
	// The request's own context ends when its caller goes away, while its
	// handler may still be at work.
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for _, h := range claims {
				// A lost claim means its answer will not be kept: worth
				// an operator's look, though the request goes on.
				if err := models.ExtendReplay(ctx, s.db, h.Key, h.Claim, s.Lease); err != nil && ctx.Err() == nil {
					s.Logger.Warn("renew replay claim", "operation", h.Key.Operation, "error", err)
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// Pin binds k to fingerprint for ttl: the first call pins it (Claimed), a
// later one with the same fingerprint finds it (Answered), one with
// another fingerprint is refused (Conflict). Busy when another request
// pins it at the same moment.
func (s *Store) Pin(ctx context.Context, k models.ReplayKey, fingerprint string, ttl time.Duration) (Outcome, error) {
	token, err := newToken()
	if err != nil {
		return 0, err
	}
	got, err := models.ClaimReplay(ctx, s.db, k, fingerprint, token, s.Lease, ttl)
	switch {
	case err != nil:
		return 0, err
	case got.Taken:
		if err := models.CompleteReplay(ctx, s.db, k, token, models.ReplayAnswer{}); err != nil {
			return 0, err
		}
		return Claimed, nil
	case got.Existing == nil || got.Existing.State != models.ReplayDone:
		return Busy, nil
	case got.Existing.Fingerprint != fingerprint:
		return Conflict, nil
	}
	return Answered, nil
}

// Complete stores the answer of the claim, sealed.
func (s *Store) Complete(ctx context.Context, k models.ReplayKey, claim string, a models.ReplayAnswer) error {
	if s.Keys != nil {
		keyID, sealed, err := s.Keys.Seal(a.Body, sealedAAD(k))
		if err != nil {
			return fmt.Errorf("seal replay answer: %w", err)
		}
		a.Body = append([]byte(sealedPrefix+keyID+":"), sealed...)
	}
	return models.CompleteReplay(ctx, s.db, k, claim, a)
}

// sealedPrefix starts a sealed answer: "pgsealed1:<key id>:<ciphertext>".
// No answer in clear (XML, JSON, HTML) starts so, and key ids hold no ':'.
const sealedPrefix = "pgsealed1:"

// sealedAAD binds a sealed answer to its entry, so it cannot be moved to
// another account's key and opened there.
func sealedAAD(k models.ReplayKey) []byte {
	return []byte(k.Scope + "\x00" + k.Operation + "\x00" + k.Key)
}

// open returns a kept answer in clear.
func (s *Store) open(k models.ReplayKey, body []byte) ([]byte, error) {
	rest, sealed := bytes.CutPrefix(body, []byte(sealedPrefix))
	if !sealed {
		return body, nil
	}
	keyID, ciphertext, ok := bytes.Cut(rest, []byte(":"))
	if !ok || s.Keys == nil {
		return nil, errors.New("replay: a sealed answer and no key to open it")
	}
	plain, err := s.Keys.Open(string(keyID), ciphertext, sealedAAD(k))
	if err != nil {
		return nil, fmt.Errorf("open replay answer: %w", err)
	}
	return plain, nil
}

// Release gives the key up so the request may be sent again.
func (s *Store) Release(ctx context.Context, k models.ReplayKey, claim string) error {
	return models.ReleaseReplay(ctx, s.db, k, claim)
}

// ErrNonceSeen is returned by UseNonce for a nonce the account already used.
var ErrNonceSeen = errors.New("nonce already used")

// UseNonce records a strong signature's nonce for the account; ErrNonceSeen
// when it was used within NonceTTL.
func (s *Store) UseNonce(ctx context.Context, accountID, nonce string) error {
	fresh, err := models.UseNonce(ctx, s.db, accountID, nonce, s.NonceTTL)
	if err != nil {
		return err
	}
	if !fresh {
		return ErrNonceSeen
	}
	return nil
}

// Prune deletes expired entries and nonces.
func (s *Store) Prune(ctx context.Context) (int64, error) {
	return models.PruneReplays(ctx, s.db, s.Now())
}

// PruneSoon starts a Prune in the background unless one ran within
// PruneEvery or is running. Every API process calls it as requests come,
// so expired rows go without a scheduler of their own.
func (s *Store) PruneSoon() {
	now := time.Now()
	last := s.lastPrune.Load()
	if now.UnixNano()-last < int64(s.PruneEvery) || !s.lastPrune.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	if !s.pruning.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.pruning.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		n, err := s.Prune(ctx)
		if err != nil {
			s.Logger.Warn("prune replay store", "error", err)
			return
		}
		s.Logger.Debug("pruned replay store", "rows", n)
	}()
}

func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("claim token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

package replay_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/adapters/replay"
	"github.com/paygate/paygate/internal/dev/devenv"
	"github.com/paygate/paygate/internal/domain/keyring"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/models/migrations"
)

// testDB returns an empty database of its own on a real Postgres server
// (DATABASE_URL, 127.0.0.1:5432 or the dev cluster under .data/), dropped
// when the test ends, with the schema the migrations make.
func testDB(t *testing.T) *gorm.DB {
	t.Helper()
	ctx := t.Context()
	logger := slog.New(slog.DiscardHandler)
	pg, err := devenv.EnsurePostgres(ctx, devenv.PostgresOptions{DataDir: filepath.Join("..", "..", ".data", "postgres")}, logger)
	if err != nil {
		t.Skipf("no postgres server: %v", err)
	}
	t.Cleanup(func() { _ = pg.Stop() })
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "paygate_replay_" + hex.EncodeToString(b)
	if err := devenv.CreateDatabase(ctx, pg.AdminURL, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := devenv.DropDatabase(context.Background(), pg.AdminURL, name); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	db, err := models.Open(ctx, pg.DatabaseURL(name), logger)
	if err != nil {
		t.Fatal(err)
	}
	if err := models.ProtectForTest(db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			_ = sqlDB.Close()
		}
	})
	if sqlDB, err := db.DB(); err != nil {
		t.Fatal(err)
	} else if _, err := migrations.Up(ctx, sqlDB, nil); err != nil {
		t.Fatal(err)
	}
	return db
}

var key = models.ReplayKey{Scope: "10086/10086001", Operation: "/v1/refund", Key: "body:abc"}

func answer(body string) models.ReplayAnswer {
	return models.ReplayAnswer{Status: 200, ContentType: "application/json; charset=utf-8", Body: []byte(body), ResultCode: "0000"}
}

func TestClaimCompleteAndReplay(t *testing.T) {
	db := testDB(t)
	s := replay.New(db)
	ctx := t.Context()

	first, err := s.Claim(ctx, key, "fp1", 0)
	if err != nil || first.Outcome != replay.Claimed || first.Claim == "" {
		t.Fatalf("first claim = %+v, %v", first, err)
	}
	busy, err := s.Claim(ctx, key, "fp1", 0)
	if err != nil || busy.Outcome != replay.Busy {
		t.Fatalf("claim while in progress = %+v, %v; want Busy", busy, err)
	}
	conflict, err := s.Claim(ctx, key, "fp2", time.Second)
	if err != nil || conflict.Outcome != replay.Conflict {
		t.Fatalf("claim with other content = %+v, %v; want Conflict at once", conflict, err)
	}
	if err := s.Complete(ctx, key, first.Claim, answer(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	again, err := s.Claim(ctx, key, "fp1", 0)
	if err != nil || again.Outcome != replay.Answered {
		t.Fatalf("claim after the answer = %+v, %v; want Answered", again, err)
	}
	if got := again.Answer; got.Status != 200 || string(got.Body) != `{"a":1}` || got.ContentType != "application/json; charset=utf-8" || got.ResultCode != "0000" {
		t.Errorf("answer = %+v", got)
	}
	if c, _ := s.Claim(ctx, key, "fp2", 0); c.Outcome != replay.Conflict {
		t.Errorf("other content after the answer = %v, want Conflict", c.Outcome)
	}
	// Another operation or account is another key.
	for _, k := range []models.ReplayKey{
		{Scope: key.Scope, Operation: "/v1/capture", Key: key.Key},
		{Scope: "10086/10086002", Operation: key.Operation, Key: key.Key},
	} {
		if c, err := s.Claim(ctx, k, "fp1", 0); err != nil || c.Outcome != replay.Claimed {
			t.Errorf("claim of %+v = %+v, %v; want Claimed", k, c, err)
		}
	}
}

func TestReleaseLetsTheRequestRunAgain(t *testing.T) {
	db := testDB(t)
	s := replay.New(db)
	ctx := t.Context()
	first, _ := s.Claim(ctx, key, "fp1", 0)
	if err := s.Release(ctx, key, "not-the-claim"); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.Claim(ctx, key, "fp1", 0); c.Outcome != replay.Busy {
		t.Fatalf("another request's release freed the key: %v", c.Outcome)
	}
	if err := s.Release(ctx, key, first.Claim); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.Claim(ctx, key, "fp2", 0); c.Outcome != replay.Claimed {
		t.Errorf("claim after release = %v, want Claimed", c.Outcome)
	}
}

func TestWaitingClaimGetsTheAnswer(t *testing.T) {
	db := testDB(t)
	s := replay.New(db)
	ctx := t.Context()
	first, _ := s.Claim(ctx, key, "fp1", 0)
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = s.Complete(context.Background(), key, first.Claim, answer("late"))
	}()
	start := time.Now()
	got, err := s.Claim(ctx, key, "fp1", 5*time.Second)
	if err != nil || got.Outcome != replay.Answered || string(got.Answer.Body) != "late" {
		t.Fatalf("waiting claim = %+v, %v", got, err)
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 3*time.Second {
		t.Errorf("waited %s", d)
	}
}

func TestConcurrentClaimsOneWinner(t *testing.T) {
	db := testDB(t)
	s := replay.New(db)
	const n = 20
	outcomes := make([]replay.Outcome, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, err := s.Claim(context.Background(), key, "fp1", 0)
			if err != nil {
				t.Error(err)
			}
			outcomes[i] = r.Outcome
		})
	}
	wg.Wait()
	claimed := 0
	for _, o := range outcomes {
		if o == replay.Claimed {
			claimed++
		} else if o != replay.Busy {
			t.Errorf("outcome %v, want Claimed or Busy", o)
		}
	}
	if claimed != 1 {
		t.Errorf("%d requests claimed the key, want 1", claimed)
	}
}

func TestExpiredEntriesAndLapsedClaims(t *testing.T) {
	db := testDB(t)
	s := replay.New(db)
	ctx := t.Context()
	first, _ := s.Claim(ctx, key, "fp1", 0)
	if err := s.Complete(ctx, key, first.Claim, answer("old")); err != nil {
		t.Fatal(err)
	}
	// A day later the answer is gone: the same request runs again.
	if err := db.Exec(`UPDATE replay_entries SET expires_at = now() - interval '1 second'`).Error; err != nil {
		t.Fatal(err)
	}
	c, err := s.Claim(ctx, key, "fp2", 0)
	if err != nil || c.Outcome != replay.Claimed || c.Abandoned {
		t.Fatalf("claim over an expired answer = %+v, %v; want claimed, not abandoned", c, err)
	}
	// A claim whose request died (its lease lapsed) is taken over.
	if err := db.Exec(`UPDATE replay_entries SET claimed_until = now() - interval '1 second'`).Error; err != nil {
		t.Fatal(err)
	}
	d, err := s.Claim(ctx, key, "fp2", 0)
	if err != nil || d.Outcome != replay.Claimed || d.Claim == c.Claim || !d.Abandoned {
		t.Fatalf("claim over a lapsed claim = %+v, %v; want claimed from an abandoned request", d, err)
	}
	// The overtaken request can no longer store its answer.
	if err := s.Complete(ctx, key, c.Claim, answer("overtaken")); err != nil {
		t.Fatal(err)
	}
	if e, err := models.FindReplay(ctx, db, key); err != nil || e.State != models.ReplayInProgress || e.Claim != d.Claim {
		t.Errorf("entry = %+v, %v; want the new claim in progress", e, err)
	}
}

// TestPin: a pinned key takes only its first content, for its own time to
// live, whatever the store's.
func TestPin(t *testing.T) {
	db := testDB(t)
	s := replay.New(db)
	ctx := t.Context()
	pin := models.ReplayKey{Scope: "10086", Operation: "/v1/payout", Key: "pin:request_id:r1"}
	tests := []struct {
		name        string
		fingerprint string
		want        replay.Outcome
	}{
		{"first content: pinned", "fp1", replay.Claimed},
		{"the same content again", "fp1", replay.Answered},
		{"other content: refused", "fp2", replay.Conflict},
	}
	for _, tc := range tests {
		got, err := s.Pin(ctx, pin, tc.fingerprint, 48*time.Hour)
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	e, err := models.FindReplay(ctx, db, pin)
	if err != nil || e.State != models.ReplayDone || time.Until(e.ExpiresAt) < 47*time.Hour {
		t.Errorf("pin = %+v, %v; want done for 48 hours", e, err)
	}
}

func TestUseNonce(t *testing.T) {
	db := testDB(t)
	s := replay.New(db)
	ctx := t.Context()
	if err := s.UseNonce(ctx, "10086001", "nonce-0123456789ab"); err != nil {
		t.Fatalf("first use: %v", err)
	}
	if err := s.UseNonce(ctx, "10086001", "nonce-0123456789ab"); !errors.Is(err, replay.ErrNonceSeen) {
		t.Fatalf("second use: %v, want ErrNonceSeen", err)
	}
	if err := s.UseNonce(ctx, "10086002", "nonce-0123456789ab"); err != nil {
		t.Errorf("another account's nonce: %v", err)
	}
	if err := db.Exec(`UPDATE signature_nonces SET expires_at = now() - interval '1 second'`).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.UseNonce(ctx, "10086001", "nonce-0123456789ab"); err != nil {
		t.Errorf("use after expiry: %v", err)
	}
}

func TestPrune(t *testing.T) {
	db := testDB(t)
	s := replay.New(db)
	ctx := t.Context()
	for _, k := range []string{"body:1", "body:2", "idem:x"} {
		r, _ := s.Claim(ctx, models.ReplayKey{Scope: key.Scope, Operation: key.Operation, Key: k}, "fp", 0)
		_ = s.Complete(ctx, models.ReplayKey{Scope: key.Scope, Operation: key.Operation, Key: k}, r.Claim, answer(k))
	}
	_ = s.UseNonce(ctx, "10086001", "nonce-aaaaaaaaaaaaaaaa")
	_ = s.UseNonce(ctx, "10086001", "nonce-bbbbbbbbbbbbbbbb")
	if err := db.Exec(`UPDATE replay_entries SET expires_at = now() - interval '1 second' WHERE key <> 'idem:x'`).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(`UPDATE signature_nonces SET expires_at = now() - interval '1 second' WHERE nonce = 'nonce-aaaaaaaaaaaaaaaa'`).Error; err != nil {
		t.Fatal(err)
	}
	// A signature last used 91 days ago and one used now; a day's refund
	// total of 8 days ago and one of today.
	now := time.Now()
	for i, seen := range []time.Time{now.Add(-91 * 24 * time.Hour), now} {
		if _, err := models.SignatureSeen(ctx, db, "10086001", fmt.Sprint("sig-", i), "/v1/refund", "fp", seen); err != nil {
			t.Fatal(err)
		}
	}
	for _, day := range []time.Time{now.Add(-8 * 24 * time.Hour), now} {
		if _, err := models.ReserveCompatibleRefund(ctx, db, "10086001", day, "USD", 100, 1000); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.Prune(ctx)
	if err != nil || n != 5 {
		t.Fatalf("Prune = %d, %v; want 5 rows", n, err)
	}
	var uses, totals int64
	db.Model(&models.SignatureUse{}).Count(&uses)
	db.Model(&models.CompatibleRefundUsage{}).Count(&totals)
	if uses != 1 || totals != 1 {
		t.Errorf("left %d signature uses and %d refund totals, want 1 and 1", uses, totals)
	}
	var entries, nonces int64
	db.Model(&models.ReplayEntry{}).Count(&entries)
	db.Model(&models.SignatureNonce{}).Count(&nonces)
	if entries != 1 || nonces != 1 {
		t.Errorf("left %d entries and %d nonces, want 1 and 1", entries, nonces)
	}

	// PruneSoon runs at most once per PruneEvery.
	_ = db.Exec(`UPDATE replay_entries SET expires_at = now() - interval '1 second'`)
	s.PruneEvery = time.Hour
	s.PruneSoon()
	deadline := time.Now().Add(5 * time.Second)
	for {
		db.Model(&models.ReplayEntry{}).Count(&entries)
		if entries == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if entries != 0 {
		t.Fatalf("PruneSoon left %d expired entries", entries)
	}
	r, _ := s.Claim(ctx, models.ReplayKey{Scope: key.Scope, Operation: key.Operation, Key: "body:3"}, "fp", 0)
	_ = s.Complete(ctx, models.ReplayKey{Scope: key.Scope, Operation: key.Operation, Key: "body:3"}, r.Claim, answer("3"))
	_ = db.Exec(`UPDATE replay_entries SET expires_at = now() - interval '1 second'`)
	s.PruneSoon()
	time.Sleep(200 * time.Millisecond)
	db.Model(&models.ReplayEntry{}).Count(&entries)
	if entries != 1 {
		t.Errorf("a second PruneSoon within PruneEvery pruned (%d entries left)", entries)
	}
}

// TestAnswersAreKeptSealed: with Keys, the row holds no byte of the
// answer in clear, the answer comes back whole, and a sealed answer moved
// to another entry does not open.
func TestAnswersAreKeptSealed(t *testing.T) {
	db := testDB(t)
	spec, err := keyring.GenerateSpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := keyring.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	s := replay.New(db)
	s.Keys = keys
	ctx := t.Context()
	const body = `{"orders_list":[{"shopper_email":"ada@example.com"}]}`
	first, err := s.Claim(ctx, key, "fp1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Complete(ctx, key, first.Claim, answer(body)); err != nil {
		t.Fatal(err)
	}
	var stored []byte
	if err := db.Raw(`SELECT body FROM replay_entries WHERE scope = ? AND operation = ? AND key = ?`, key.Scope, key.Operation, key.Key).
		Row().Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(stored, []byte("ada@example.com")) || bytes.Contains(stored, []byte("orders_list")) || !bytes.HasPrefix(stored, []byte("pgsealed1:k1:")) {
		t.Errorf("stored body %q", stored)
	}
	again, err := s.Claim(ctx, key, "fp1", 0)
	if err != nil || again.Outcome != replay.Answered || string(again.Answer.Body) != body {
		t.Fatalf("replayed %+v, %v", again, err)
	}
	// The same sealed bytes under another entry's key: refused, not opened.
	other := models.ReplayKey{Scope: "10086/10086002", Operation: key.Operation, Key: key.Key}
	if _, err := s.Claim(ctx, other, "fp1", 0); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(`UPDATE replay_entries SET state = 'done', status = 200, body = ? WHERE scope = ?`, stored, other.Scope).Error; err != nil {
		t.Fatal(err)
	}
	if got, err := s.Claim(ctx, other, "fp1", 0); err == nil {
		t.Errorf("a sealed answer moved to another entry opened: %+v", got)
	}
}

// TestHoldRenewsTheLease: a claim held by a request still at work is
// renewed before it lapses, so a retry waits (Busy) instead of taking it
// over as abandoned, and the first answer is kept when it comes; once the
// request lets go, a lapsed claim is taken over as before.
func TestHoldRenewsTheLease(t *testing.T) {
	db := testDB(t)
	s := replay.New(db)
	s.Lease, s.RenewEvery = time.Minute, 20*time.Millisecond
	ctx := t.Context()
	first, err := s.Claim(ctx, key, "fp1", 0)
	if err != nil || first.Outcome != replay.Claimed {
		t.Fatalf("claim = %+v, %v", first, err)
	}
	// The request has run almost as long as its lease.
	if err := db.Exec(`UPDATE replay_entries SET claimed_until = now() + interval '2 seconds'`).Error; err != nil {
		t.Fatal(err)
	}
	stop := s.Hold(ctx, []replay.Held{{Key: key, Claim: first.Claim}})
	for give := time.Now().Add(10 * time.Second); ; {
		e, err := models.FindReplay(ctx, db, key)
		if err != nil {
			stop()
			t.Fatal(err)
		}
		if time.Until(e.ClaimedUntil) > 30*time.Second {
			break // renewed to a lease from now
		}
		if time.Now().After(give) {
			stop()
			t.Fatal("the lease was not renewed")
		}
		time.Sleep(10 * time.Millisecond) // polling the row, not standing in for it
	}
	if retry, err := s.Claim(ctx, key, "fp1", 0); err != nil || retry.Outcome != replay.Busy {
		stop()
		t.Fatalf("a retry while the request is held = %+v, %v; want busy", retry, err)
	}
	stop()
	if err := s.Complete(ctx, key, first.Claim, answer("first")); err != nil {
		t.Fatal(err)
	}
	if again, err := s.Claim(ctx, key, "fp1", 0); err != nil || again.Outcome != replay.Answered || string(again.Answer.Body) != "first" {
		t.Fatalf("a retry after the answer = %+v, %v; want the first answer", again, err)
	}

	// Let go of and lapsed, a claim is another request's to take.
	other := models.ReplayKey{Scope: key.Scope, Operation: key.Operation, Key: key.Key + "-2"}
	second, err := s.Claim(ctx, other, "fp2", 0)
	if err != nil || second.Outcome != replay.Claimed {
		t.Fatalf("claim = %+v, %v", second, err)
	}
	s.Hold(ctx, []replay.Held{{Key: other, Claim: second.Claim}})()
	if err := db.Exec(`UPDATE replay_entries SET claimed_until = now() - interval '1 second' WHERE key = ?`, other.Key).Error; err != nil {
		t.Fatal(err)
	}
	taken, err := s.Claim(ctx, other, "fp2", 0)
	if err != nil || taken.Outcome != replay.Claimed || !taken.Abandoned {
		t.Fatalf("a lapsed claim let go = %+v, %v; want claimed from an abandoned request", taken, err)
	}
	// The overtaken request's claim is no longer its own to renew.
	if err := models.ExtendReplay(ctx, db, other, second.Claim, time.Minute); !errors.Is(err, models.ErrReplayClaimLost) {
		t.Errorf("renew an overtaken claim: %v, want ErrReplayClaimLost", err)
	}
	if err := models.ExtendReplay(ctx, db, other, taken.Claim, time.Minute); err != nil {
		t.Errorf("renew the claim that took over: %v", err)
	}
	// A store with no lease to renew holds nothing, and says so at once.
	s.Lease, s.RenewEvery = 0, 0
	s.Hold(ctx, []replay.Held{{Key: other, Claim: taken.Claim}})()
}

package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/dev/devenv"
	"github.com/paygate/paygate/internal/domain/txid"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/models/migrations"
)

// leaseDB returns a database of its own with the node lease table, on a real
// Postgres server (DATABASE_URL, 127.0.0.1:5432 or the dev cluster under
// .data/), dropped when the test ends.
func leaseDB(t *testing.T) *gorm.DB {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Postgres")
	}
	ctx := t.Context()
	logger := slog.New(slog.DiscardHandler)
	pg, err := devenv.EnsurePostgres(ctx, devenv.PostgresOptions{DataDir: filepath.Join("..", "..", ".data", "postgres")}, logger)
	if err != nil {
		t.Skipf("no postgres server: %v", err)
	}
	t.Cleanup(func() { _ = pg.Stop() })
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "paygate_nodes_" + hex.EncodeToString(b)
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

func leases(db *gorm.DB, holder string, lo, hi int, grace time.Duration) *models.NodeLeases {
	return &models.NodeLeases{DB: db, Holder: holder, Min: lo, Max: hi, Grace: grace}
}

func TestNodeLeasesPostgres(t *testing.T) {
	db := leaseDB(t)
	ctx := t.Context()

	t.Run("live leases never share a node", func(t *testing.T) {
		// 64 processes start at once, each leasing from the same 64 nodes:
		// all get one, all different, and a 65th finds none free.
		const n = 64
		got := make([]int, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				node, err := leases(db, fmt.Sprintf("p%d", i), 100, 100+n-1, 0).Acquire(ctx, time.Minute)
				got[i], errs[i] = int(node), err
			})
		}
		wg.Wait()
		seen := map[int]int{}
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("process %d: %v", i, errs[i])
			}
			if other, dup := seen[got[i]]; dup {
				t.Fatalf("processes %d and %d both hold node %d", other, i, got[i])
			}
			seen[got[i]] = i
		}
		if _, err := leases(db, "late", 100, 100+n-1, 0).Acquire(ctx, time.Minute); !errors.Is(err, models.ErrNoFreeNode) {
			t.Fatalf("a 65th lease: %v, want ErrNoFreeNode", err)
		}
	})

	t.Run("racing for one expired node: one winner", func(t *testing.T) {
		if _, err := leases(db, "old", 200, 200, 0).Acquire(ctx, time.Second); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1100 * time.Millisecond)
		const n = 16
		var wins, full int
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				_, err := leases(db, fmt.Sprintf("racer%d", i), 200, 200, 0).Acquire(ctx, time.Minute)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case errors.Is(err, models.ErrNoFreeNode):
					full++
				default:
					t.Errorf("racer %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		if wins != 1 || full != n-1 {
			t.Fatalf("%d won and %d found it taken, want 1 and %d", wins, full, n-1)
		}
	})

	t.Run("an expired lease is reusable, and lost to its old holder", func(t *testing.T) {
		a, b := leases(db, "a", 300, 300, 0), leases(db, "b", 300, 300, 0)
		if node, err := a.Acquire(ctx, time.Second); err != nil || node != 300 {
			t.Fatalf("a: %d, %v", node, err)
		}
		_, err := b.Acquire(ctx, time.Minute)
		if !errors.Is(err, models.ErrNoFreeNode) {
			t.Fatalf("b while a's lease lives: %v, want ErrNoFreeNode", err)
		}
		if !strings.Contains(err.Error(), "leased by a") {
			t.Errorf("the error %q does not name the holder", err)
		}
		time.Sleep(1100 * time.Millisecond)
		if node, err := b.Acquire(ctx, time.Minute); err != nil || node != 300 {
			t.Fatalf("b after a's lease expired: %d, %v", node, err)
		}
		if ok, err := a.Renew(ctx, 300, time.Minute); err != nil || ok {
			t.Fatalf("a renews a lease b took: %v, %v; want false", ok, err)
		}
		if ok, err := b.Renew(ctx, 300, time.Minute); err != nil || !ok {
			t.Fatalf("b renews its lease: %v, %v; want true", ok, err)
		}
	})

	t.Run("a renewed lease is not taken", func(t *testing.T) {
		a, b := leases(db, "a", 400, 400, 0), leases(db, "b", 400, 400, 0)
		if _, err := a.Acquire(ctx, time.Second); err != nil {
			t.Fatal(err)
		}
		if ok, err := a.Renew(ctx, 400, time.Minute); err != nil || !ok {
			t.Fatalf("renew: %v, %v", ok, err)
		}
		time.Sleep(1100 * time.Millisecond)
		if _, err := b.Acquire(ctx, time.Minute); !errors.Is(err, models.ErrNoFreeNode) {
			t.Fatalf("b took a renewed lease: %v", err)
		}
	})

	t.Run("grace keeps an expired node unused", func(t *testing.T) {
		a, b := leases(db, "a", 500, 500, 0), leases(db, "b", 500, 500, 2*time.Second)
		if _, err := a.Acquire(ctx, time.Second); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1100 * time.Millisecond)
		if _, err := b.Acquire(ctx, time.Minute); !errors.Is(err, models.ErrNoFreeNode) {
			t.Fatalf("b within the grace: %v, want ErrNoFreeNode", err)
		}
		time.Sleep(2 * time.Second)
		if _, err := b.Acquire(ctx, time.Minute); err != nil {
			t.Fatalf("b after the grace: %v", err)
		}
	})

	t.Run("a released node is free again", func(t *testing.T) {
		a, b := leases(db, "a", 600, 600, 0), leases(db, "b", 600, 600, 0)
		if _, err := a.Acquire(ctx, time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := a.Release(ctx, 600); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Acquire(ctx, time.Minute); err != nil {
			t.Fatalf("b after a released: %v", err)
		}
		if err := a.Release(ctx, 600); err != nil {
			t.Fatalf("releasing a lease no longer held: %v", err)
		}
		if ok, err := b.Renew(ctx, 600, time.Minute); err != nil || !ok {
			t.Fatalf("a's second release touched b's lease: %v, %v", ok, err)
		}
	})

	t.Run("range outside the node space", func(t *testing.T) {
		if _, err := leases(db, "x", 1000, 1024, 0).Acquire(ctx, time.Minute); err == nil {
			t.Fatal("leased from 1000..1024")
		}
	})
}

// TestGatewayNode runs the gateway's own node handling on real Postgres: a
// leased generator makes ids on the node it holds, a second process
// configured with the same node is refused with the holder named, and
// Close gives the node back.
func TestGatewayNode(t *testing.T) {
	db := leaseDB(t)
	ctx := t.Context()
	logger := slog.New(slog.DiscardHandler)
	seven := uint16(7)
	cfg := Config{NodeID: &seven, NodeName: "api-1", NodeLeaseTTL: minNodeLeaseTTL}

	first := &Gateway{Config: cfg, Logger: logger, DB: db}
	if err := first.takeNode(ctx); err != nil {
		t.Fatal(err)
	}
	id := first.ids.Next()
	if len(id) != txid.Length {
		t.Fatalf("id %q", id)
	}
	var n int64
	if _, err := fmt.Sscan(id, &n); err != nil || n>>12&1023 != 7 {
		t.Fatalf("id %s is not on node 7", id)
	}

	cfg.NodeName = "api-2"
	second := &Gateway{Config: cfg, Logger: logger, DB: db}
	start := time.Now()
	err := second.takeNode(ctx)
	if !errors.Is(err, models.ErrNoFreeNode) || !strings.Contains(err.Error(), "PAYGATE_NODE_ID=7") || !strings.Contains(err.Error(), "api-1/") {
		t.Fatalf("second process on node 7: %v, want ErrNoFreeNode naming PAYGATE_NODE_ID=7 and api-1", err)
	}
	// It waited for as long as the first lease could have run out, while
	// the first process kept renewing.
	if waited := time.Since(start); waited < minNodeLeaseTTL {
		t.Errorf("gave up after %s", waited)
	}

	// A leased (not configured) process gets another node.
	leased := &Gateway{Config: Config{NodeName: "api-3", NodeLeaseTTL: minNodeLeaseTTL}, Logger: logger, DB: db}
	if err := leased.takeNode(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscan(leased.ids.Next(), &n); err != nil || n>>12&1023 == 7 {
		t.Fatalf("a leased process got the configured node 7")
	}
	leased.stopLease()
	<-leased.leaseDone

	first.stopLease()
	<-first.leaseDone
	// Closed, the first process gave node 7 back: a new process configured
	// with it (a restart) waits out the grace, then starts.
	third := &Gateway{Config: cfg, Logger: logger, DB: db}
	if err := third.takeNode(ctx); err != nil {
		t.Fatalf("after the first process closed: %v", err)
	}
	third.stopLease()
	<-third.leaseDone
}

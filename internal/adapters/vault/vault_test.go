package vault_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/adapters/vault"
	"github.com/paygate/paygate/internal/dev/devenv"
	"github.com/paygate/paygate/internal/domain/keyring"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/models/migrations"
)

// testDB returns a migrated database of its own on a real Postgres server
// (DATABASE_URL, 127.0.0.1:5432 or the dev cluster under .data/), dropped
// when the test ends.
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
	name := "paygate_vault_" + hex.EncodeToString(b)
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

func newVault(t *testing.T, db *gorm.DB) *vault.Vault {
	t.Helper()
	spec, err := keyring.GenerateSpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := keyring.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return vault.New(db, keys, make([]byte, 32))
}

// seal puts a card into the vault as the API does, sealed age ago.
func seal(t *testing.T, db *gorm.DB, v *vault.Vault, scope string, age time.Duration) string {
	t.Helper()
	token, _, err := v.Tokenize(t.Context(), scope, vault.Card{Number: "4242424242424242", ExpiryMonth: "12", ExpiryYear: "2030", CVV: "123"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Model(&models.VaultCard{}).Where("token = ?", token).Update("created_at", time.Now().Add(-age)).Error; err != nil {
		t.Fatal(err)
	}
	return token
}

// record inserts an order that uses the token, in the given status.
func record(t *testing.T, db *gorm.DB, n int, token string, st status.Payment) {
	t.Helper()
	txID := fmt.Sprintf("%019d", 7_000_000_000_000_000_000+n)
	_, err := models.InsertOrder(t.Context(), db, &models.Order{
		TransactionID: txID, WorkflowID: "order/M/A/" + txID, MerchantID: "M", AccountID: "A", OrderNo: txID,
		Currency: "USD", Amount: 100, PaymentStatus: st, OrderStatus: status.OrderStatusOf(st),
		CaptureMode: models.CaptureAuto, CardToken: token, RequestFingerprint: "fp",
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSweepCVV(t *testing.T) {
	db := testDB(t)
	v := newVault(t, db)
	const grace = time.Hour
	old := 2 * grace
	tests := []struct {
		name    string
		age     time.Duration
		orders  []status.Payment // the orders that use the token
		dropped bool
	}{
		{name: "no order, older than the grace", age: old, dropped: true},
		{name: "no order, within the grace (the order may be on its way)", age: grace / 2},
		{name: "waiting for the shopper", age: old, orders: []status.Payment{status.Pending}},
		{name: "held for review", age: old, orders: []status.Payment{status.HeldForReview}},
		{name: "authorised", age: old, orders: []status.Payment{status.Authorised}, dropped: true},
		{name: "paid", age: old, orders: []status.Payment{status.Paid}, dropped: true},
		{name: "refunded", age: old, orders: []status.Payment{status.Refunded}, dropped: true},
		{name: "cancelled", age: old, orders: []status.Payment{status.Cancelled}, dropped: true},
		{name: "failed", age: old, orders: []status.Payment{status.Failed}, dropped: true},
		{name: "expired", age: old, orders: []status.Payment{status.Expired}, dropped: true},
		{name: "failed, just now", age: time.Second, orders: []status.Payment{status.Failed}, dropped: true},
		{name: "one order final, another still waiting", age: old, orders: []status.Payment{status.Failed, status.Pending}},
	}
	tokens := make([]string, len(tests))
	var wantStray []string
	n := 0
	for i, tc := range tests {
		tokens[i] = seal(t, db, v, "case/"+tc.name, tc.age)
		for _, st := range tc.orders {
			n++
			record(t, db, n, tokens[i], st)
		}
		if tc.dropped {
			wantStray = append(wantStray, tokens[i])
		}
	}
	// An entry whose CVV is already gone is left as it is.
	gone := seal(t, db, v, "case/gone", old)
	if err := v.DropCVV(t.Context(), gone); err != nil {
		t.Fatal(err)
	}
	var goneBefore models.VaultCard
	if err := db.Where("token = ?", gone).Take(&goneBefore).Error; err != nil {
		t.Fatal(err)
	}

	stray, err := v.StrayCVVs(t.Context(), grace)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(wantStray)
	if !slices.Equal(stray, wantStray) {
		t.Errorf("StrayCVVs = %v, want %v", stray, wantStray)
	}
	dropped, err := v.SweepCVV(t.Context(), grace)
	if err != nil {
		t.Fatal(err)
	}
	if dropped != int64(len(wantStray)) {
		t.Errorf("SweepCVV dropped %d, want %d", dropped, len(wantStray))
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := v.Detokenize(t.Context(), tokens[i])
			if err != nil {
				t.Fatalf("the card itself must stay: %v", err)
			}
			if c.Number != "4242424242424242" {
				t.Error("card number lost")
			}
			if got := c.CVV == ""; got != tc.dropped {
				t.Errorf("CVV dropped = %v, want %v", got, tc.dropped)
			}
		})
	}
	var goneAfter models.VaultCard
	if err := db.Where("token = ?", gone).Take(&goneAfter).Error; err != nil {
		t.Fatal(err)
	}
	if !goneAfter.CVVDroppedAt.Equal(*goneBefore.CVVDroppedAt) {
		t.Errorf("an entry without CVV was swept again: dropped at %v, then %v", goneBefore.CVVDroppedAt, goneAfter.CVVDroppedAt)
	}
	if again, err := v.SweepCVV(t.Context(), grace); err != nil || again != 0 {
		t.Errorf("second sweep dropped %d (%v), want 0", again, err)
	}
	if stray, err := v.StrayCVVs(t.Context(), grace); err != nil || len(stray) != 0 {
		t.Errorf("after the sweep StrayCVVs = %v (%v), want none", stray, err)
	}
}

// TestSweepCVVInBatches: more stray entries than one statement changes are
// all swept in one call.
func TestSweepCVVInBatches(t *testing.T) {
	db := testDB(t)
	v := newVault(t, db)
	const count = 1203
	rows := make([]models.VaultCard, count)
	for i := range rows {
		rows[i] = models.VaultCard{Token: fmt.Sprintf("tok_batch_%04d", i), KeyID: "k1", CardSealed: []byte{1},
			CVVSealed: []byte{2}, Fingerprint: "fp", CreatedAt: time.Now().Add(-48 * time.Hour)}
	}
	if err := db.CreateInBatches(rows, 400).Error; err != nil {
		t.Fatal(err)
	}
	dropped, err := v.SweepCVV(t.Context(), time.Hour)
	if err != nil || dropped != count {
		t.Fatalf("SweepCVV = %d, %v; want %d", dropped, err, count)
	}
	var left int64
	if err := db.Model(&models.VaultCard{}).Where("cvv_sealed IS NOT NULL").Count(&left).Error; err != nil || left != 0 {
		t.Errorf("CVVs left = %d (%v)", left, err)
	}
}

// TestTokenLeavesOutTheSecurityCode: a token outlives the CVV in clear
// columns and histories, so it must not be a function of it; everything
// else that names the card and the order still changes it.
func TestTokenLeavesOutTheSecurityCode(t *testing.T) {
	v := newVault(t, nil)
	base := vault.Card{Number: "4242424242424242", ExpiryMonth: "12", ExpiryYear: "2030", CVV: "123"}
	want := v.TokenFor("order/M/A/1", base)
	tests := []struct {
		name  string
		scope string
		edit  func(c *vault.Card)
		same  bool
	}{
		{"another security code", "order/M/A/1", func(c *vault.Card) { c.CVV = "999" }, true},
		{"no security code", "order/M/A/1", func(c *vault.Card) { c.CVV = "" }, true},
		{"another number", "order/M/A/1", func(c *vault.Card) { c.Number = "4000000000000002" }, false},
		{"another month", "order/M/A/1", func(c *vault.Card) { c.ExpiryMonth = "11" }, false},
		{"another year", "order/M/A/1", func(c *vault.Card) { c.ExpiryYear = "2031" }, false},
		{"another order", "order/M/A/2", func(*vault.Card) {}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.edit(&c)
			if got := v.TokenFor(tc.scope, c); (got == want) != tc.same {
				t.Errorf("token %s against %s: same = %v, want %v", got, want, got == want, tc.same)
			}
		})
	}
}

// TestRepeatWithAnotherSecurityCode: the second request of one order with
// the same card and another CVV gets the first's entry, which keeps the
// first CVV until it is dropped.
func TestRepeatWithAnotherSecurityCode(t *testing.T) {
	db := testDB(t)
	v := newVault(t, db)
	c := vault.Card{Number: "4242424242424242", ExpiryMonth: "12", ExpiryYear: "2030", CVV: "123"}
	first, created, err := v.Tokenize(t.Context(), "order/M/A/1", c)
	if err != nil || !created {
		t.Fatalf("first tokenize: created %v, %v", created, err)
	}
	c.CVV = "456"
	second, created, err := v.Tokenize(t.Context(), "order/M/A/1", c)
	if err != nil || created || second != first {
		t.Fatalf("second tokenize = %s created %v (%v), want %s not created", second, created, err, first)
	}
	got, err := v.Detokenize(t.Context(), first)
	if err != nil || got.CVV != "123" {
		t.Errorf("detokenize: cvv kept %q (%v), want the first request's", got.CVV, err)
	}
}

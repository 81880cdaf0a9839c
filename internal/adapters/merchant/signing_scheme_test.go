package merchant_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/dev/devenv"
	"github.com/paygate/paygate/internal/domain/keyring"
	"github.com/paygate/paygate/internal/domain/testmode"
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
	name := "paygate_merchant_" + hex.EncodeToString(b)
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

func TestSigningScheme(t *testing.T) {
	db := testDB(t)
	spec, err := keyring.GenerateSpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := keyring.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	svc := merchant.NewService(db, keys, time.Hour) // a long cache: SetSigningScheme must clear it
	ctx := t.Context()
	create := func(accountID, mode, scheme string) error {
		_, err := svc.Create(ctx, merchant.NewAccount{MerchantID: "10086", AccountID: accountID,
			Currencies: []string{"USD"}, SigningScheme: scheme, Mode: mode})
		return err
	}
	tests := []struct {
		name, account, mode, scheme string
		want                        string // "" when refused
		// moneyStrong and otherStrong: whether an operation that moves
		// money, and one that does not, must be signed strongly.
		moneyStrong, otherStrong bool
		// limit is the daily limit of refunds signed with encryption_data.
		limit int64
	}{
		{"a live account's default is strong for money", "10086001", "", "", merchant.SigningStrongForMoney, true, false, 0},
		{"a test account's default is compatible", "10086005", testmode.Test, "", merchant.SigningCompatible, false, false, 0},
		{"compatible chosen on a live account, limited", "10086002", testmode.Live, merchant.SigningCompatible, merchant.SigningCompatible, false, false,
			merchant.DefaultCompatibleRefundDailyLimit},
		{"strong", "10086003", "", merchant.SigningStrong, merchant.SigningStrong, true, true, 0},
		{"strong for money on a test account", "10086006", testmode.Test, merchant.SigningStrongForMoney, merchant.SigningStrongForMoney, true, false, 0},
		{"unknown scheme refused", "10086004", "", "hmac", "", false, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := create(tc.account, tc.mode, tc.scheme)
			if tc.want == "" {
				if !errors.Is(err, merchant.ErrInvalidSettings) {
					t.Fatalf("Create = %v, want ErrInvalidSettings", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a, err := svc.Load(ctx, "10086", tc.account)
			if err != nil {
				t.Fatal(err)
			}
			if a.SigningScheme != tc.want || a.StrongOnly() != (tc.want == merchant.SigningStrong) ||
				a.RequiresStrong(true) != tc.moneyStrong || a.RequiresStrong(false) != tc.otherStrong || a.CompatibleRefundDailyLimit != tc.limit {
				t.Errorf("scheme %q, strong only %v, strong for money %v, for the rest %v, limit %d", a.SigningScheme, a.StrongOnly(),
					a.RequiresStrong(true), a.RequiresStrong(false), a.CompatibleRefundDailyLimit)
			}
		})
	}

	t.Run("set-signing", func(t *testing.T) {
		if err := svc.SetSigningScheme(ctx, "10086", "10086001", merchant.SigningStrong); err != nil {
			t.Fatal(err)
		}
		if a, _ := svc.Load(ctx, "10086", "10086001"); !a.StrongOnly() {
			t.Errorf("after set-signing strong: %q", a.SigningScheme)
		}
		if err := svc.SetSigningScheme(ctx, "10086", "10086001", merchant.SigningCompatible); err != nil {
			t.Fatal(err)
		}
		if a, _ := svc.Load(ctx, "10086", "10086001"); a.StrongOnly() || a.CompatibleRefundDailyLimit != merchant.DefaultCompatibleRefundDailyLimit {
			t.Errorf("a live account set to compatible: %q, limit %d", a.SigningScheme, a.CompatibleRefundDailyLimit)
		}
		for _, bad := range []string{"", "STRONG", "none"} {
			if err := svc.SetSigningScheme(ctx, "10086", "10086001", bad); !errors.Is(err, merchant.ErrInvalidSettings) {
				t.Errorf("SetSigningScheme(%q) = %v, want ErrInvalidSettings", bad, err)
			}
		}
		if err := svc.SetSigningScheme(ctx, "10086", "99999999", merchant.SigningStrong); !errors.Is(err, merchant.ErrUnknownAccount) {
			t.Errorf("unknown account: %v", err)
		}
	})
}

func TestProveWith(t *testing.T) {
	now := time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)
	is := func(want string) func(string) bool { return func(k string) bool { return k == want } }
	tests := []struct {
		name    string
		account *merchant.Account
		check   func(string) bool
		key     string
		ok      bool
	}{
		{"current key", merchant.NewTestAccount(models.Account{}, "new"), is("new"), "new", true},
		{"neither", merchant.NewTestAccount(models.Account{}, "new"), is("old"), "", false},
		{"previous key in its grace period", merchant.NewTestAccountRotating(models.Account{}, "new", "old", now.Add(time.Minute)), is("old"), "old", true},
		{"previous key after its grace period", merchant.NewTestAccountRotating(models.Account{}, "new", "old", now), is("old"), "", false},
		{"current key first during rotation", merchant.NewTestAccountRotating(models.Account{}, "new", "old", now.Add(time.Minute)), func(string) bool { return true }, "new", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key, ok := tc.account.ProveWith(now, tc.check)
			if key != tc.key || ok != tc.ok {
				t.Errorf("ProveWith = %q, %v; want %q, %v", key, ok, tc.key, tc.ok)
			}
		})
	}
}

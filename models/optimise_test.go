package models_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/paygate/paygate/internal/dev/devenv"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/optimise"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/models/migrations"
)

// migratedDB makes a database of its own on a real Postgres server
// (DATABASE_URL, 127.0.0.1:5432 or the dev cluster under .data/), applies
// the migrations and opens it as the gateway does; dropped when the test
// ends. Without a server the test is skipped.
func migratedDB(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	logger := slog.New(slog.DiscardHandler)
	pg, err := devenv.EnsurePostgres(ctx, devenv.PostgresOptions{DataDir: filepath.Join("..", ".data", "postgres")}, logger)
	if err != nil {
		t.Skipf("no postgres server: %v", err)
	}
	t.Cleanup(func() { _ = pg.Stop() })
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "paygate_models_" + hex.EncodeToString(b)
	if err := devenv.CreateDatabase(ctx, pg.AdminURL, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := devenv.DropDatabase(context.Background(), pg.AdminURL, name); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	url := pg.DatabaseURL(name)
	sqlDB, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer sqlDB.Close()
	if _, err := migrations.Up(ctx, sqlDB, logger); err != nil {
		t.Fatal(err)
	}
	return url
}

// TestMethodTallies runs the optimise query over orders written straight
// into a migrated database: every kind of order, outcome, account, currency
// and age, and checks each method's counts exactly.
func TestMethodTallies(t *testing.T) {
	url := migratedDB(t)
	db, err := models.Open(t.Context(), url, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := models.ProtectForTest(db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s, err := db.DB(); err == nil {
			_ = s.Close()
		}
	})
	now := time.Now().UTC().Truncate(time.Second)
	since := now.Add(-optimise.Window)
	const account, other = "acct-opt-01", "acct-opt-02"

	type ord struct {
		account, currency string
		brand, method     string // card_brand, details.payment_method
		ps                status.Payment
		code              codes.Code
		age               time.Duration
		connector         string // "" leaves it NULL, as orders before connectors
	}
	recent := time.Hour
	orders := []ord{
		// visa: 2 successes (a sale, and an authorisation later captured
		// and refunded), 1 decline, 1 timeout: 2 of 4.
		{account, "EUR", "visa", "", status.Paid, codes.OK, recent, ""},
		{account, "EUR", "visa", "", status.Refunded, codes.OK, recent, ""},
		{account, "EUR", "visa", "", status.Failed, codes.Declined, recent, ""},
		{account, "EUR", "visa", "", status.Failed, codes.AcquirerTimeout, recent, ""},
		// visa, left out: risk reject, system refusal, pending 3-D Secure,
		// held for review, too old, another currency, another account.
		{account, "EUR", "visa", "", status.Failed, codes.RiskRejected, recent, ""},
		{account, "EUR", "visa", "", status.Failed, codes.RecordRejected, recent, ""},
		{account, "EUR", "visa", "", status.Pending, codes.AwaitingShopper, recent, ""},
		{account, "EUR", "visa", "", status.HeldForReview, codes.RiskReview, recent, ""},
		{account, "EUR", "visa", "", status.Failed, codes.Declined, optimise.Window + time.Hour, ""},
		{account, "USD", "visa", "", status.Failed, codes.Declined, recent, ""},
		{other, "EUR", "visa", "", status.Failed, codes.Declined, recent, ""},
		// mastercard: authorised then cancelled, authorisation lapsed
		// (A0006, a success), wrong CVV: 2 of 3.
		{account, "EUR", "mastercard", "", status.Cancelled, codes.OK, recent, ""},
		{account, "EUR", "mastercard", "", status.Expired, codes.AuthorisationExpired, recent, ""},
		{account, "EUR", "mastercard", "", status.Failed, codes.WrongCVV, recent, ""},
		// iDEAL, sent in lower case: paid, shopper cancelled, session
		// expired: 1 of 3.
		{account, "EUR", "", "ideal", status.Paid, codes.OK, recent, ""},
		{account, "EUR", "", "IDEAL", status.Failed, codes.ShopperCancelled, recent, ""},
		{account, "EUR", "", "IDEAL", status.Expired, codes.SessionExpired, recent, ""},
		// A hosted order the shopper never paid: no method, left out.
		{account, "EUR", "", "", status.Expired, codes.SessionExpired, recent, ""},
		// A routed account's visa orders charged at sim-bank are counted
		// apart: 1 of 2 there.
		{account, "EUR", "visa", "", status.Paid, codes.OK, recent, "sim-bank"},
		{account, "EUR", "visa", "", status.Failed, codes.Declined, recent, "sim-bank"},
	}
	for i, o := range orders {
		tx := fmt.Sprintf("9%018d", i)
		rec := models.Order{
			TransactionID: tx, WorkflowID: "order/test/" + tx, MerchantID: "m-opt", AccountID: o.account,
			OrderNo: "ORD-" + tx, Currency: o.currency, Amount: 1000, PaymentStatus: o.ps,
			OrderStatus: status.OrderStatusOf(o.ps), ResultCode: o.code.ID, ResultMessage: o.code.Message,
			CaptureMode: models.CaptureAuto, CardBrand: o.brand, RequestFingerprint: "fp",
			Details: order.Details{PaymentMethod: o.method}, Connector: o.connector,
			CreatedAt: now.Add(-o.age), UpdatedAt: now.Add(-o.age),
		}
		if err := db.WithContext(t.Context()).Create(&rec).Error; err != nil {
			t.Fatalf("order %d: %v", i, err)
		}
	}

	got, err := models.MethodTallies(t.Context(), db, models.MethodTallyQuery{AccountID: account, Currency: "EUR", Since: since})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b optimise.Tally) int {
		return strings.Compare(a.Option.String()+" "+a.Connector, b.Option.String()+" "+b.Connector)
	})
	want := []optimise.Tally{
		{Option: optimise.Option{Method: "CARD", Brand: "mastercard"}, Succeeded: 2, Failed: 1},
		{Option: optimise.Option{Method: "CARD", Brand: "visa"}, Succeeded: 2, Failed: 2},
		{Option: optimise.Option{Method: "CARD", Brand: "visa"}, Connector: "sim-bank", Succeeded: 1, Failed: 1},
		{Option: optimise.Option{Method: "IDEAL"}, Succeeded: 1, Failed: 2},
	}
	if !slices.Equal(got, want) {
		t.Errorf("MethodTallies = %+v\nwant %+v", got, want)
	}

	none, err := models.MethodTallies(t.Context(), db, models.MethodTallyQuery{AccountID: "acct-none", Currency: "EUR", Since: since})
	if err != nil || len(none) != 0 {
		t.Errorf("an account without orders: %+v, %v", none, err)
	}
}

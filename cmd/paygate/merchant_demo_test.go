package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/domain/keyring"
)

// TestMerchantDemoIsIdempotent: the compose seed runs `paygate merchant
// demo` on every start; the second run finds the accounts the first made
// and prints the same credentials.
func TestMerchantDemoIsIdempotent(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Postgres")
	}
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	migratedDatabase(t, "paygate_demo_")

	var runs [2]demoFile
	for i := range runs {
		var out bytes.Buffer
		if err := runMerchantDemo(ctx, &out, quiet); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		if err := json.Unmarshal(out.Bytes(), &runs[i]); err != nil {
			t.Fatalf("run %d printed %s: %v", i+1, out.String(), err)
		}
	}
	want := demoFile{MerchantID: demoMerchantID, AccountID: demoAccountID, ManualAccountID: demoManualAccountID}
	for i, r := range runs {
		if r.MerchantID != want.MerchantID || r.AccountID != want.AccountID || r.ManualAccountID != want.ManualAccountID || r.SignKey == "" {
			t.Errorf("run %d: %+v, want the demo accounts", i+1, r)
		}
	}
	if runs[0].SignKey != runs[1].SignKey || runs[0].ManualSignKey != runs[1].ManualSignKey {
		t.Error("the second run printed other sign keys: it made new accounts")
	}
}

// migratedDatabase makes a database of the test's, brings its schema up to
// date, and points the commands at it with a keyring and fingerprint key
// of their own.
func migratedDatabase(t *testing.T, prefix string) {
	t.Helper()
	dbURL := testDatabase(t, repoRoot(t), prefix)
	if _, err := app.Migrate(context.Background(), dbURL, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	spec, _ := keyring.GenerateSpec("k1")
	fp := make([]byte, 32)
	_, _ = rand.Read(fp)
	t.Setenv("DATABASE_URL", dbURL)
	t.Setenv("PAYGATE_KEYRING", spec)
	t.Setenv("PAYGATE_FINGERPRINT_KEY", base64.StdEncoding.EncodeToString(fp))
}

package merchant_test

import (
	"errors"
	"testing"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/keyring"
	"github.com/paygate/paygate/internal/domain/testmode"
)

// TestAccountMode: accounts are live unless made test; a test account takes
// simulated connectors only; a mode can be changed, and a bad one refused.
func TestAccountMode(t *testing.T) {
	db := testDB(t)
	svc := newService(t, db)
	// Stripe here runs on a test-mode key: a test account may reach it.
	svc.TestConnector = func(name string) bool { return testmode.Simulated(name) || name == "stripe" }
	ctx := t.Context()
	tests := []struct {
		name, account, mode, connector string
		want                           string // "" when refused
	}{
		{"live by default", "30086001", "", "", testmode.Live},
		{"a test account", "30086002", testmode.Test, "", testmode.Test},
		{"a test account on the second simulator", "30086003", testmode.Test, "sim-bank", testmode.Test},
		{"a test account on a real acquirer", "30086004", testmode.Test, "adyen", ""},
		{"a live account on a real acquirer name", "30086005", testmode.Live, "adyen", testmode.Live},
		{"a test account on stripe's test key", "30086007", testmode.Test, "stripe", testmode.Test},
		{"no such mode", "30086006", "sandbox", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.Create(ctx, merchant.NewAccount{MerchantID: "30086", AccountID: tc.account,
				Currencies: []string{"USD"}, Mode: tc.mode, Connector: tc.connector})
			if tc.want == "" {
				if !errors.Is(err, merchant.ErrInvalidSettings) {
					t.Fatalf("Create = %v, want ErrInvalidSettings", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a, err := svc.Load(ctx, "30086", tc.account)
			if err != nil || a.Mode != tc.want {
				t.Fatalf("mode %q (%v), want %q", a.Mode, err, tc.want)
			}
		})
	}
	if err := svc.SetMode(ctx, "30086", "30086001", testmode.Test); err != nil {
		t.Fatal(err)
	}
	if a, _ := svc.Load(ctx, "30086", "30086001"); a.Mode != testmode.Test {
		t.Errorf("after SetMode the account is %q", a.Mode)
	}
	if err := svc.SetMode(ctx, "30086", "30086001", "sandbox"); !errors.Is(err, merchant.ErrInvalidSettings) {
		t.Errorf("SetMode sandbox = %v", err)
	}
	if err := svc.SetMode(ctx, "30086", "99999999", testmode.Live); !errors.Is(err, merchant.ErrUnknownAccount) {
		t.Errorf("SetMode of no account = %v", err)
	}

	// Test money stays test; a test account keeps to the simulators.
	if err := svc.SetMode(ctx, "30086", "30086005", testmode.Test); !errors.Is(err, merchant.ErrInvalidSettings) {
		t.Errorf("a live account on a real acquirer made test: %v, want ErrInvalidSettings", err)
	}
	if err := svc.SetMode(ctx, "30086", "30086002", testmode.Live); err != nil {
		t.Errorf("a test account with no history made live: %v", err)
	}
	// It signed compatibly as a test account: as a live one it gets the
	// limit on what a seen signature can refund.
	if a, _ := svc.Load(ctx, "30086", "30086002"); a.Mode != testmode.Live || a.SigningScheme != merchant.SigningCompatible ||
		a.CompatibleRefundDailyLimit != merchant.DefaultCompatibleRefundDailyLimit {
		t.Errorf("made live: mode %q, scheme %q, refund limit %d", a.Mode, a.SigningScheme, a.CompatibleRefundDailyLimit)
	}
	if _, err := ledger.New(db).TopUp(ctx, ledger.TopUp{Reference: "topup/30086003", MerchantID: "30086", AccountID: "30086003",
		Currency: "USD", Amount: 5000}); err != nil {
		t.Fatal(err)
	}
	if err := svc.SetMode(ctx, "30086", "30086003", testmode.Live); !errors.Is(err, merchant.ErrInvalidSettings) {
		t.Errorf("a test account with a balance made live: %v, want ErrInvalidSettings", err)
	}
	if a, _ := svc.Load(ctx, "30086", "30086003"); a.Mode != testmode.Test {
		t.Errorf("the refused account is %q", a.Mode)
	}
}

// newService is the account service over db, with a keyring of one
// generated key.
func newService(t *testing.T, db *gorm.DB) *merchant.Service {
	t.Helper()
	spec, _ := keyring.GenerateSpec("k1")
	keys, err := keyring.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return merchant.NewService(db, keys, 0)
}

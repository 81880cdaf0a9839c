package merchant_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/keyring"
	"github.com/paygate/paygate/models"
)

// TestAccountConnector checks the connector an account names: the default
// when none is given, the one given, a name that cannot be one refused, and
// the column's default for rows written without it (accounts made before
// accounts chose a connector).
func TestAccountConnector(t *testing.T) {
	db := testDB(t)
	spec, err := keyring.GenerateSpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := keyring.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	svc := merchant.NewService(db, keys, 0)
	ctx := t.Context()
	tests := []struct {
		name, account, connector string
		want                     string // "" when refused
	}{
		{"none given is the simulated acquirer", "20086001", "", "sim-acquirer"},
		{"the second simulated acquirer", "20086002", "sim-bank", "sim-bank"},
		{"upper case refused", "20086003", "SIM-BANK", ""},
		{"a space refused", "20086004", "sim bank", ""},
		{"longer than the column refused", "20086005", "a-connector-name-longer-than-32-chars", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.Create(ctx, merchant.NewAccount{MerchantID: "20086", AccountID: tc.account,
				Currencies: []string{"USD"}, Connector: tc.connector})
			if tc.want == "" {
				if !errors.Is(err, merchant.ErrInvalidSettings) {
					t.Fatalf("Create = %v, want ErrInvalidSettings", err)
				}
				if _, err := svc.Load(ctx, "20086", tc.account); !errors.Is(err, merchant.ErrUnknownAccount) {
					t.Errorf("a refused account was stored: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a, err := svc.Load(ctx, "20086", tc.account)
			if err != nil {
				t.Fatal(err)
			}
			if a.Connector != tc.want {
				t.Errorf("connector %q, want %q", a.Connector, tc.want)
			}
		})
	}

	t.Run("a row written without the column", func(t *testing.T) {
		err := db.WithContext(ctx).Exec(`INSERT INTO accounts (id, merchant_id, name, sign_key_id, sign_key_sealed,
			allowed_query_ips, currencies, amount_limits, created_at, updated_at)
			VALUES ('20086009', '20086', 'old', 'k1', '\x00', '[]', '["USD"]', '{}', ?, ?)`, time.Now(), time.Now()).Error
		if err != nil {
			t.Fatal(err)
		}
		var a models.Account
		if err := db.WithContext(ctx).Take(&a, "id = ?", "20086009").Error; err != nil {
			t.Fatal(err)
		}
		if a.Connector != "sim-acquirer" {
			t.Errorf("connector %q, want the column default sim-acquirer", a.Connector)
		}
	})
}

// TestCreateAccountsOfANewMerchantAtOnce: accounts of a merchant that does
// not exist yet, created together, all land under one merchant row.
func TestCreateAccountsOfANewMerchantAtOnce(t *testing.T) {
	db := testDB(t)
	spec, err := keyring.GenerateSpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := keyring.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	svc := merchant.NewService(db, keys, 0)
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := svc.Create(t.Context(), merchant.NewAccount{MerchantID: "30086",
				AccountID: fmt.Sprintf("3008600%d", i), Currencies: []string{"USD"}})
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("Create: %v", err)
		}
	}
	var merchants, accounts int64
	db.Model(&models.Merchant{}).Where("id = ?", "30086").Count(&merchants)
	db.Model(&models.Account{}).Where("merchant_id = ?", "30086").Count(&accounts)
	if merchants != 1 || accounts != n {
		t.Errorf("%d merchant rows and %d accounts, want 1 and %d", merchants, accounts, n)
	}
}

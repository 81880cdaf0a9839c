package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/adapters/merchant"
)

// TestMerchantSettlement: settings set from a file are stored and shown as
// set; a schedule the API would refuse, a notify URL that is not http(s) or
// a misspelt field are refused and leave the stored ones alone; {} clears
// them.
func TestMerchantSettlement(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Postgres")
	}
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	migratedDatabase(t, "paygate_settlement_")
	var out bytes.Buffer
	if err := runMerchantCreate(ctx, []string{"-name", "Settled", "-mode", "test"}, &out, quiet); err != nil {
		t.Fatal(err)
	}
	var creds merchant.Credentials
	if err := json.Unmarshal(out.Bytes(), &creds); err != nil {
		t.Fatal(err)
	}
	ids := []string{"-merchant-id", creds.MerchantID, "-account-id", creds.AccountID}
	dir := t.TempDir()
	run := func(verb, body string) (string, error) {
		args := append([]string{}, ids...)
		if body != "" {
			p := filepath.Join(dir, "s.json")
			if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			args = append(args, "-file", p)
		}
		var out bytes.Buffer
		err := runMerchantSettlement(ctx, verb, args, &out, quiet)
		return out.String(), err
	}
	good := `{"pricing":{"blended":{"fixed":25,"basis_points":180}},"notify_url":"https://shop.example/settlements",
"payout_schedule":{"interval":"weekly","weekday":5,"currency":"USD","minimum":10000,"reserve_basis_points":500,
"template":{"payment_method":"SWIFT","swift_charge_option":"SHARED","fund_source":"DepositAccount",
"beneficiary":{"entity_type":"COMPANY","company_name":"Muller GmbH","address":{"city":"Berlin","country_code":"DE"},
"bank_details":{"account_name":"Muller GmbH","bank_country_code":"DE","iban":"DE89370400440532013000","swift_code":"COBADEFFXXX","account_currency":"USD"}},
"payer":{"entity_type":"COMPANY","company_name":"Demo Ltd","address":{"country_code":"US"}}}}}`
	if _, err := run("set", good); err != nil {
		t.Fatal(err)
	}
	shown, err := run("show", "")
	for _, want := range []string{`"basis_points": 180`, `"notify_url": "https://shop.example/settlements"`, `"interval": "weekly"`, `"reserve_basis_points": 500`} {
		if err != nil || !strings.Contains(shown, want) {
			t.Errorf("show = %s, %v; want %s", shown, err, want)
		}
	}
	refused := []struct{ name, body, want string }{
		{"an unknown interval", strings.Replace(good, `"weekly"`, `"hourly"`, 1), "interval must be daily, weekly or monthly"},
		{"a notify URL that is not http", strings.Replace(good, "https://shop.example", "ftp://shop.example", 1), "notify_url must be"},
		{"a misspelt field", strings.Replace(good, `"notify_url"`, `"notify_ur1"`, 1), "unknown field"},
		{"a template without a beneficiary", strings.Replace(good, `"beneficiary":`, `"x_beneficiary":`, 1), "unknown field"},
		{"a negative blended fee", strings.Replace(good, `"fixed":25`, `"fixed":-1`, 1), "blended fee"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := run("set", tc.body); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("set = %v, want %q", err, tc.want)
			}
			if now, _ := run("show", ""); now != shown {
				t.Errorf("stored settings changed to %s", now)
			}
		})
	}
	if _, err := run("set", "{}"); err != nil {
		t.Fatal(err)
	}
	if cleared, _ := run("show", ""); strings.Contains(cleared, "payout_schedule") || strings.Contains(cleared, "notify_url") {
		t.Errorf("after {}: %s", cleared)
	}
}

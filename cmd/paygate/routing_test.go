package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/routing"
)

// TestMerchantRouting: rules set from a file are stored and shown as set;
// rules over a connector the deployment does not run, or with a field the
// rules do not have, are refused and leave the stored ones alone; {}
// clears them.
func TestMerchantRouting(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Postgres")
	}
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	migratedDatabase(t, "paygate_routing_")
	t.Setenv("PAYGATE_CONNECTORS", "sim-acquirer,sim-bank,stripe")
	t.Setenv("STRIPE_SECRET_KEY", "sk_live_routing") // live: no test account may reach it

	// A test account: routed over simulators only.
	var out bytes.Buffer
	if err := runMerchantCreate(ctx, []string{"-name", "Routed", "-mode", "test"}, &out, quiet); err != nil {
		t.Fatal(err)
	}
	var creds merchant.Credentials
	if err := json.Unmarshal(out.Bytes(), &creds); err != nil {
		t.Fatal(err)
	}
	ids := []string{"-merchant-id", creds.MerchantID, "-account-id", creds.AccountID}
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	shown := func(verb string, args ...string) (routingShown, error) {
		var out bytes.Buffer
		err := runMerchantRouting(ctx, verb, append(append([]string{}, ids...), args...), &out, quiet)
		var got routingShown
		if err == nil {
			if jerr := json.Unmarshal(out.Bytes(), &got); jerr != nil {
				t.Fatalf("printed %s: %v", out.String(), jerr)
			}
		}
		return got, err
	}

	split := routing.Rules{
		Routes: []routing.Route{{Name: "euro", When: routing.Condition{Currencies: []string{"EUR"}},
			Targets: []routing.Target{{Connector: "sim-bank", Weight: 80}, {Connector: "sim-acquirer", Weight: 20}}}},
		Fallback: []string{"sim-acquirer"}, MaxAttempts: 2,
	}
	raw, _ := json.Marshal(split)
	tests := []struct {
		name    string
		verb    string
		args    []string
		wantErr string // a part of the refusal; "" succeeds
		want    routing.Rules
	}{
		{"a new account has none", "show", nil, "", routing.Rules{}},
		{"set", "set", []string{"-file", file("split.json", string(raw))}, "", split},
		{"shown as set", "show", nil, "", split},
		{"a connector not run here", "set", []string{"-file", file("acme.json", `{"fallback":["acme"]}`)}, `connector "acme" is not run here`, split},
		{"a live connector for a test account", "set", []string{"-file", file("live.json", `{"fallback":["sim-bank","stripe"]}`)},
			`test account reaches simulated connectors only, not "stripe"`, split},
		{"a misspelt field", "set", []string{"-file", file("typo.json", `{"fallbak":["sim-bank"]}`)}, `unknown field "fallbak"`, split},
		{"no file", "set", nil, "-file is required", split},
		{"cleared", "set", []string{"-file", file("empty.json", `{}`)}, "", routing.Rules{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := shown(tc.verb, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, tc.wantErr)
				}
				if tc.verb == "set" && strings.Contains(tc.wantErr, "not run") && !errors.Is(err, merchant.ErrInvalidSettings) {
					t.Errorf("err = %v, want ErrInvalidSettings", err)
				}
				if got, err = shown("show"); err != nil {
					t.Fatal(err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got.Connector != "sim-acquirer" || !reflect.DeepEqual(got.Rules, tc.want) {
				t.Errorf("shown %+v, want connector sim-acquirer and %+v", got, tc.want)
			}
		})
	}
}

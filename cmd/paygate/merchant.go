package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/app"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/signing"
)

func runMerchantCreate(ctx context.Context, args []string, stdout io.Writer, logger *slog.Logger) error {
	fs := flag.NewFlagSet("merchant create", flag.ContinueOnError)
	merchantID := fs.String("merchant-id", "", "merchant id (generated when empty)")
	accountID := fs.String("account-id", "", "account id (generated when empty)")
	name := fs.String("name", "", "merchant name")
	capture := fs.String("capture-mode", "auto", "auto (sale) or manual (authorise, merchant captures)")
	currencies := fs.String("currencies", "USD,EUR,GBP", "comma-separated enabled currencies")
	ips := fs.String("query-ips", "127.0.0.1", "comma-separated IPs allowed to query orders")
	limits := fs.String("limits", "", "per-currency amount limits, e.g. USD=10000.00,EUR=5000.00")
	if err := fs.Parse(args); err != nil {
		return err
	}
	in := merchant.NewAccount{
		MerchantID: *merchantID, AccountID: *accountID, MerchantName: *name, CaptureMode: *capture,
		Currencies: splitComma(*currencies), AllowedQueryIPs: splitComma(*ips), AmountLimits: map[string]int64{},
	}
	for _, c := range in.Currencies {
		if !money.KnownCurrency(c) {
			return fmt.Errorf("unknown currency %q", c)
		}
	}
	for _, l := range splitComma(*limits) {
		cur, amt, ok := strings.Cut(l, "=")
		if !ok {
			return fmt.Errorf("limit %q: want CUR=amount", l)
		}
		a, err := money.Parse(amt, cur)
		if err != nil {
			return fmt.Errorf("limit %q: %w", l, err)
		}
		in.AmountLimits[cur] = a.Minor
	}
	g, err := app.Open(ctx, app.FromEnv(), logger, false)
	if err != nil {
		return err
	}
	defer g.Close()
	creds, err := g.Accounts.Create(ctx, in)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(creds)
}

func runMerchantRotateKey(ctx context.Context, args []string, stdout io.Writer, logger *slog.Logger) error {
	fs := flag.NewFlagSet("merchant rotate-key", flag.ContinueOnError)
	merchantID := fs.String("merchant-id", "", "merchant id")
	accountID := fs.String("account-id", "", "account id")
	grace := fs.Duration("grace", 24*time.Hour, "how long the old key stays valid")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *merchantID == "" || *accountID == "" {
		return errors.New("-merchant-id and -account-id are required")
	}
	g, err := app.Open(ctx, app.FromEnv(), logger, false)
	if err != nil {
		return err
	}
	defer g.Close()
	key, err := g.Accounts.RotateKey(ctx, *merchantID, *accountID, *grace)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(merchant.Credentials{MerchantID: *merchantID, AccountID: *accountID, SignKey: key})
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// runSign prints the signature of the values, in the order given, with a key.
func runSign(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("sign", flag.ContinueOnError)
	key := fs.String("key", "", "the account's sign_key")
	keyFile := fs.String("key-file", "", "a JSON file with a sign_key field, such as .data/demo-merchant.json")
	upper := fs.Bool("upper", false, "print upper-case hex, as the gateway signs its answers")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: paygate sign (-key KEY | -key-file FILE) [-upper] value...\n\n"+
			"Values are signed in the order given; name=value is accepted and only the value is signed.\n"+
			"Recipes (DESIGN §3), e.g. authorise card: merchant_id account_id order_no currency amount\n"+
			"first_name last_name card expiration_year expiration_month security_code shopper_email")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	k := *key
	if *keyFile != "" {
		var err error
		if k, err = readSignKey(*keyFile); err != nil {
			return err
		}
	}
	if k == "" || fs.NArg() == 0 {
		fs.Usage()
		return errors.New("a key and at least one value are needed")
	}
	values := make([]string, fs.NArg())
	for i, a := range fs.Args() {
		if name, v, ok := strings.Cut(a, "="); ok && isFieldName(name) {
			a = v
		}
		values[i] = a
	}
	sig := signing.Sign(k, values...)
	if *upper {
		sig = signing.SignUpper(k, values...)
	}
	_, err := fmt.Fprintln(stdout, sig)
	return err
}

// readSignKey reads the sign_key field of a JSON file such as
// .data/demo-merchant.json.
func readSignKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var f struct {
		SignKey string `json:"sign_key"`
	}
	if err := json.Unmarshal(b, &f); err != nil || f.SignKey == "" {
		return "", fmt.Errorf("%s holds no sign_key", path)
	}
	return f.SignKey, nil
}

func isFieldName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/internal/domain/testmode"
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
	scheme := fs.String("signing", "", "how requests prove the key: strong-for-money (Paygate-Signature where money moves; the default of live accounts), compatible (encryption_data or Paygate-Signature everywhere; the default of test accounts; weaker, see docs/decisions.md) or strong (Paygate-Signature only)")
	refundLimit := fs.Int64("compatible-refund-limit", 0, "per currency and UTC day, in minor units, the refunds a compatible live account may request with encryption_data (0: the default, 100000; strong signatures have no limit)")
	conn := fs.String("connector", connector.DefaultName, "the acquirer connector of the account's orders: one of PAYGATE_CONNECTORS (sim-acquirer, sim-bank, stripe)")
	mode := fs.String("mode", testmode.Live, "live (refuses the simulators' test cards) or test (test data never trips velocity; simulated connectors only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	// Only a connector this deployment runs: an order of an account whose
	// connector is not configured could never be paid.
	cfg, err := app.FromEnv()
	if err != nil {
		return fmt.Errorf("configuration:\n%w", err)
	}
	if err := cfg.CheckConnector(*conn); err != nil {
		return err
	}
	in := merchant.NewAccount{
		MerchantID: *merchantID, AccountID: *accountID, MerchantName: *name, CaptureMode: *capture,
		Currencies: splitComma(*currencies), AllowedQueryIPs: splitComma(*ips), AmountLimits: map[string]int64{},
		SigningScheme: *scheme, CompatibleRefundDailyLimit: *refundLimit, Connector: *conn, Mode: *mode,
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
	g, err := app.Open(ctx, cfg, logger, false)
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
	return enc.Encode(struct {
		merchant.Credentials
		SigningScheme string `json:"signing_scheme"`
		Connector     string `json:"connector"`
		Mode          string `json:"mode"`
	}{creds, cmp.Or(in.SigningScheme, merchant.DefaultSigningScheme(in.Mode)), in.Connector, in.Mode})
}

// runMerchantSetSigning sets how an account's requests prove its key.
func runMerchantSetSigning(ctx context.Context, args []string, stdout io.Writer, logger *slog.Logger) error {
	fs := flag.NewFlagSet("merchant set-signing", flag.ContinueOnError)
	merchantID := fs.String("merchant-id", "", "merchant id")
	accountID := fs.String("account-id", "", "account id")
	scheme := fs.String("scheme", "", "strong-for-money (Paygate-Signature where money moves), compatible (encryption_data or Paygate-Signature everywhere; weaker) or strong (Paygate-Signature only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *merchantID == "" || *accountID == "" || *scheme == "" {
		return errors.New("-merchant-id, -account-id and -scheme are required")
	}
	g, err := app.OpenFromEnv(ctx, logger, false)
	if err != nil {
		return err
	}
	defer g.Close()
	if err := g.Accounts.SetSigningScheme(ctx, *merchantID, *accountID, *scheme); err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]string{"merchant_id": *merchantID, "account_id": *accountID, "signing_scheme": *scheme})
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
	g, err := app.OpenFromEnv(ctx, logger, false)
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

// runSign prints the signature of the values, in the order given, with a
// key; with -strong, the Paygate-Signature header value of a request body.
func runSign(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("sign", flag.ContinueOnError)
	key := fs.String("key", "", "the account's sign_key")
	keyFile := fs.String("key-file", "", "a JSON file with a sign_key field, such as .data/demo-merchant.json")
	upper := fs.Bool("upper", false, "print upper-case hex, as the gateway signs its answers")
	strong := fs.Bool("strong", false, "print a Paygate-Signature header value for -path and -body or -body-file")
	path := fs.String("path", "", "with -strong: the operation's path, such as /v1/refund")
	method := fs.String("method", http.MethodPost, "with -strong: the HTTP method")
	body := fs.String("body", "", "with -strong: the request body (JSON or form), as sent")
	bodyFile := fs.String("body-file", "", "with -strong: a file holding the request body")
	nonce := fs.String("nonce", "", "with -strong: the nonce (default: 32 random hex digits)")
	at := fs.Int64("time", 0, "with -strong: the timestamp in unix seconds (default: now)")
	account := fs.String("account", "", "with -key-file: the account whose key to use, e.g. 10086002 (default: the file's account_id)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: paygate sign (-key KEY | -key-file FILE [-account ID]) [-upper] value...\n"+
			"       paygate sign (-key KEY | -key-file FILE) -strong -path /v1/... (-body TEXT | -body-file FILE) [-nonce N] [-time UNIX]\n\n"+
			"Values are signed in the order given; name=value is accepted and only the value is signed.\n"+
			"Recipes (docs/design.md §3), e.g. authorise card: merchant_id account_id order_no currency amount\n"+
			"first_name last_name card expiration_year expiration_month security_code shopper_email\n"+
			"With -strong it prints t=<unix>,n=<nonce>,v1=<hex> for the Paygate-Signature header: it covers\n"+
			"the method, the path, the time, the nonce and every field of the body (docs/decisions.md).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	k := *key
	switch {
	case *keyFile != "" && *account != "":
		var err error
		if k, err = readAccountKey(*keyFile, *account); err != nil {
			return err
		}
	case *keyFile != "":
		var err error
		if k, err = readSignKey(*keyFile); err != nil {
			return err
		}
	case *account != "":
		return errors.New("-account picks a key from -key-file")
	}
	if *strong {
		return signStrong(stdout, k, *method, *path, *body, *bodyFile, *nonce, *at, fs.NArg())
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

// signStrong prints the Paygate-Signature header value of a request.
func signStrong(stdout io.Writer, key, method, path, body, bodyFile, nonce string, at int64, extraArgs int) error {
	if key == "" {
		return errors.New("-strong needs a key (-key or -key-file)")
	}
	if extraArgs > 0 {
		return errors.New("-strong signs the body: give it with -body or -body-file, not as values")
	}
	if !strings.HasPrefix(path, "/") {
		return errors.New("-strong needs -path, such as /v1/refund")
	}
	if (body == "") == (bodyFile == "") {
		return errors.New("-strong needs one of -body and -body-file")
	}
	raw := []byte(body)
	if bodyFile != "" {
		var err error
		if raw, err = os.ReadFile(bodyFile); err != nil {
			return err
		}
	}
	if nonce == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return fmt.Errorf("nonce: %w", err)
		}
		nonce = hex.EncodeToString(b)
	}
	if !signing.ValidNonce(nonce) {
		return fmt.Errorf("-nonce must be %d to %d characters of A-Z a-z 0-9 _ -", signing.MinNonceLen, signing.MaxNonceLen)
	}
	if at == 0 {
		at = time.Now().Unix()
	}
	sig, err := signing.SignStrong(key, method, path, at, nonce, raw)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, sig.String())
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

// readAccountKey reads the key of account from a credentials file such as
// .data/demo-merchant.json, which holds the automatic-capture account's key
// (account_id, sign_key) and the manual-capture one's (manual_account_id,
// manual_sign_key).
func readAccountKey(path, account string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var f struct {
		AccountID       string `json:"account_id"`
		SignKey         string `json:"sign_key"`
		ManualAccountID string `json:"manual_account_id"`
		ManualSignKey   string `json:"manual_sign_key"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	switch account {
	case f.AccountID:
		if f.SignKey != "" {
			return f.SignKey, nil
		}
	case f.ManualAccountID:
		if f.ManualSignKey != "" {
			return f.ManualSignKey, nil
		}
	}
	return "", fmt.Errorf("%s holds no key of account %s (it has %s and %s)", path, account, f.AccountID, f.ManualAccountID)
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

// runMerchantDemo makes sure the demo merchant's accounts exist, as `paygate
// dev` does, and prints their credentials as JSON: the seed of a compose
// setup, safe to run on every start.
func runMerchantDemo(ctx context.Context, stdout io.Writer, logger *slog.Logger) error {
	g, err := app.OpenFromEnv(ctx, logger, false)
	if err != nil {
		return err
	}
	defer g.Close()
	demo, err := ensureDemoMerchant(ctx, g.Accounts)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(demo)
}

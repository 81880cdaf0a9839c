package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/models"
)

const ledgerUsage = `usage:
  paygate ledger topup -merchant-id M -account-id A -currency USD -amount 100.00 -reference R
      credits the account's deposit with operator funding; the same -reference twice tops up once
  paygate ledger balance -merchant-id M -account-id A [-currency USD]
      prints the pending (captured, not yet settled), available and reserved balance,
      in every currency without -currency
  paygate ledger check
      checks the whole ledger's invariants (entries balance, balances are their lines,
      no merchant money below zero, the receivable and pending money are what the
      unsettled captures and refunds say); exits non-zero listing any it breaks
  paygate ledger entries -merchant-id M -account-id A [-limit 100] [-after ID]
      lists the account's journal entries with their lines`

// topUpOptions are the parsed flags of paygate ledger topup.
type topUpOptions struct {
	MerchantID, AccountID, Reference string
	Amount                           money.Amount
}

// parseTopUpFlags reads and checks the flags of paygate ledger topup.
func parseTopUpFlags(args []string, output io.Writer) (topUpOptions, error) {
	fs := flag.NewFlagSet("ledger topup", flag.ContinueOnError)
	fs.SetOutput(output)
	merchantID := fs.String("merchant-id", "", "merchant id")
	accountID := fs.String("account-id", "", "account id")
	currency := fs.String("currency", "", "ISO 4217 currency code of the deposit")
	amount := fs.String("amount", "", "amount as a decimal string, such as 100.00")
	reference := fs.String("reference", "", "idempotency reference of the top-up (a bank transfer's id, say)")
	if err := fs.Parse(args); err != nil {
		return topUpOptions{}, err
	}
	if fs.NArg() > 0 {
		return topUpOptions{}, fmt.Errorf("unexpected argument %q\n%s", fs.Arg(0), ledgerUsage)
	}
	if *merchantID == "" || *accountID == "" || *currency == "" || *amount == "" || *reference == "" {
		return topUpOptions{}, fmt.Errorf("-merchant-id, -account-id, -currency, -amount and -reference are required\n%s", ledgerUsage)
	}
	a, err := money.ParseExtended(*amount, strings.ToUpper(*currency))
	if err != nil {
		return topUpOptions{}, fmt.Errorf("-amount: %w", err)
	}
	if a.Minor <= 0 {
		return topUpOptions{}, errors.New("-amount must be more than zero")
	}
	return topUpOptions{MerchantID: *merchantID, AccountID: *accountID, Reference: *reference, Amount: a}, nil
}

// runLedger runs paygate ledger's subcommands.
func runLedger(ctx context.Context, args []string, stdout io.Writer, logger *slog.Logger) error {
	if len(args) == 0 {
		return errors.New(ledgerUsage)
	}
	switch args[0] {
	case "topup":
		opts, err := parseTopUpFlags(args[1:], stdout)
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		if err != nil {
			return err
		}
		return withLedger(ctx, logger, func(g *app.Gateway, l *ledger.Ledger) error {
			return ledgerTopUp(ctx, g, l, opts, stdout)
		})
	case "balance":
		fs := flag.NewFlagSet("ledger balance", flag.ContinueOnError)
		fs.SetOutput(stdout)
		merchantID := fs.String("merchant-id", "", "merchant id")
		accountID := fs.String("account-id", "", "account id")
		currency := fs.String("currency", "", "ISO 4217 currency code (all currencies when empty)")
		if err := fs.Parse(args[1:]); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
		if *merchantID == "" || *accountID == "" {
			return fmt.Errorf("-merchant-id and -account-id are required\n%s", ledgerUsage)
		}
		return withLedger(ctx, logger, func(_ *app.Gateway, l *ledger.Ledger) error {
			return ledgerBalance(ctx, l, *merchantID, *accountID, strings.ToUpper(*currency), stdout)
		})
	case "check":
		if len(args) > 1 {
			return fmt.Errorf("unexpected argument %q\n%s", args[1], ledgerUsage)
		}
		return withLedger(ctx, logger, func(_ *app.Gateway, l *ledger.Ledger) error {
			return ledgerCheck(ctx, l, stdout)
		})
	case "entries":
		fs := flag.NewFlagSet("ledger entries", flag.ContinueOnError)
		fs.SetOutput(stdout)
		var f ledger.EntryFilter
		fs.StringVar(&f.MerchantID, "merchant-id", "", "merchant id")
		fs.StringVar(&f.AccountID, "account-id", "", "account id")
		fs.StringVar(&f.Kind, "kind", "", "entry kind: order_paid, refund, topup, reserve, settle, release, settlement or write_off")
		fs.IntVar(&f.Limit, "limit", 100, "at most this many entries (1000 at most)")
		fs.Int64Var(&f.AfterID, "after", 0, "list the entries after this entry id")
		if err := fs.Parse(args[1:]); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
		return withLedger(ctx, logger, func(_ *app.Gateway, l *ledger.Ledger) error {
			entries, err := l.Entries(ctx, f)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(stdout)
			for _, e := range entries {
				if err := enc.Encode(e); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return errors.New(ledgerUsage)
}

// withLedger opens the gateway's database and runs fn with the ledger on it.
func withLedger(ctx context.Context, logger *slog.Logger, fn func(*app.Gateway, *ledger.Ledger) error) error {
	g, err := app.OpenFromEnv(ctx, logger, false)
	if err != nil {
		return err
	}
	defer g.Close()
	return fn(g, ledger.New(g.DB))
}

// ledgerTopUp tops up an existing, active merchant account and prints the
// entry and the new balance.
func ledgerTopUp(ctx context.Context, g *app.Gateway, l *ledger.Ledger, opts topUpOptions, stdout io.Writer) error {
	if _, err := models.FindAccount(ctx, g.DB, opts.MerchantID, opts.AccountID); err != nil {
		return fmt.Errorf("account %s of merchant %s: %w", opts.AccountID, opts.MerchantID, err)
	}
	e, err := l.TopUp(ctx, ledger.TopUp{Reference: opts.Reference, MerchantID: opts.MerchantID, AccountID: opts.AccountID,
		Currency: opts.Amount.Currency, Amount: opts.Amount.Minor})
	if err != nil {
		return err
	}
	b, err := l.Balance(ctx, opts.MerchantID, opts.AccountID, opts.Amount.Currency)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{
		"entry_id": e.ID, "reference": e.Reference, "created_at": e.CreatedAt,
		"amount": opts.Amount.ExtendedString(), "currency": opts.Amount.Currency,
		"balance": balanceView(b),
	})
}

// ledgerBalance prints an account's balances.
func ledgerBalance(ctx context.Context, l *ledger.Ledger, merchantID, accountID, currency string, stdout io.Writer) error {
	var all []ledger.Balance
	if currency != "" {
		b, err := l.Balance(ctx, merchantID, accountID, currency)
		if err != nil {
			return err
		}
		all = []ledger.Balance{b}
	} else {
		var err error
		if all, err = l.Balances(ctx, merchantID, accountID); err != nil {
			return err
		}
	}
	views := make([]map[string]string, 0, len(all))
	for _, b := range all {
		views = append(views, balanceView(b))
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"merchant_id": merchantID, "account_id": accountID, "balances": views})
}

// errLedgerBroken: paygate ledger check found violations (it printed them).
var errLedgerBroken = errors.New("the ledger breaks its invariants")

// ledgerCheck prints every invariant the ledger breaks, one JSON object a
// line, and fails when there is any.
func ledgerCheck(ctx context.Context, l *ledger.Ledger, stdout io.Writer) error {
	v, err := l.Check(ctx)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	for _, x := range v {
		if err := enc.Encode(x); err != nil {
			return err
		}
	}
	if len(v) > 0 {
		return fmt.Errorf("%w: %d violations", errLedgerBroken, len(v))
	}
	fmt.Fprintln(stdout, `{"ok":true}`)
	return nil
}

// balanceView shows a balance as decimal strings.
func balanceView(b ledger.Balance) map[string]string {
	return map[string]string{
		"currency":  b.Currency,
		"pending":   money.FromMinor(b.Pending, b.Currency).ExtendedString(),
		"available": money.FromMinor(b.Available, b.Currency).ExtendedString(),
		"reserved":  money.FromMinor(b.Reserved, b.Currency).ExtendedString(),
		"owed":      money.FromMinor(b.Owed, b.Currency).ExtendedString(),
	}
}

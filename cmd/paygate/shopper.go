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
	"github.com/paygate/paygate/internal/adapters/erasure"
	"github.com/paygate/paygate/models"
)

const shopperEraseUsage = "usage: paygate shopper erase (-email E | -transaction-id T) [-merchant-id M] -by NAME [-reason R]\n" +
	"erases the personal data of a shopper's orders and payouts (by email), or of one order or payout;\n" +
	"amounts and statuses stay for the books, and the erasure is recorded"

// parseShopperErase reads and checks the flags of paygate shopper erase.
func parseShopperErase(args []string, output io.Writer) (models.ErasureRequest, error) {
	fs := flag.NewFlagSet("shopper erase", flag.ContinueOnError)
	fs.SetOutput(output)
	email := fs.String("email", "", "erase every order and payout of this email")
	tx := fs.String("transaction-id", "", "erase one order or payout")
	merchant := fs.String("merchant-id", "", "only within this merchant")
	by := fs.String("by", "", "who asks for the erasure (recorded)")
	reason := fs.String("reason", "", "why (recorded)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), shopperEraseUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return models.ErasureRequest{}, err
	}
	if fs.NArg() > 0 {
		return models.ErasureRequest{}, fmt.Errorf("unexpected argument %q\n%s", fs.Arg(0), shopperEraseUsage)
	}
	req := models.ErasureRequest{MerchantID: strings.TrimSpace(*merchant), Email: strings.TrimSpace(*email),
		TransactionID: strings.TrimSpace(*tx), RequestedBy: "cli:" + strings.TrimSpace(*by), Reason: strings.TrimSpace(*reason)}
	if err := erasure.Check(req, strings.TrimSpace(*by)); err != nil {
		return req, fmt.Errorf("%w\n%s", err, shopperEraseUsage)
	}
	return req, nil
}

// runShopper runs paygate shopper's subcommands.
func runShopper(ctx context.Context, args []string, stdout io.Writer, logger *slog.Logger) error {
	if len(args) == 0 || args[0] != "erase" {
		return errors.New(shopperEraseUsage)
	}
	req, err := parseShopperErase(args[1:], stdout)
	if err != nil {
		return err
	}
	g, err := app.OpenFromEnv(ctx, logger, false)
	if err != nil {
		return err
	}
	defer g.Close()
	rec, err := erasure.New(g.DB).Erase(ctx, req)
	if err != nil {
		return err
	}
	logger.Info("personal data erased", "erasure", rec.ID, "by", req.RequestedBy, "merchant_id", req.MerchantID,
		"transaction_id", req.TransactionID, "orders", rec.Orders, "payouts", rec.Payouts, "open", rec.Open)
	out, err := json.MarshalIndent(map[string]any{"erasure_id": rec.ID, "orders": rec.Orders, "payouts": rec.Payouts,
		"stored_cards": rec.StoredCards, "vault_cards": rec.VaultCards, "open": rec.Open}, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, string(out))
	return nil
}

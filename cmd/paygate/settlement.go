package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/adapters/merchant"
)

// settlementShown is what paygate merchant settlement prints.
type settlementShown struct {
	MerchantID string `json:"merchant_id"`
	AccountID  string `json:"account_id"`
	merchant.SettlementSettings
}

// runMerchantSettlement shows an account's settlement settings (show) or
// sets them from a JSON file (set -file settings.json; "-" reads standard
// input), then prints them as stored.
func runMerchantSettlement(ctx context.Context, verb string, args []string, stdout io.Writer, logger *slog.Logger) error {
	fs := flag.NewFlagSet("merchant settlement "+verb, flag.ContinueOnError)
	merchantID := fs.String("merchant-id", "", "merchant id")
	accountID := fs.String("account-id", "", "account id")
	file := fs.String("file", "", "set: the settings as JSON (docs/operations.md, \"Settlement settings\"); {} clears them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *merchantID == "" || *accountID == "" {
		return errors.New("-merchant-id and -account-id are required")
	}
	var set merchant.SettlementSettings
	if verb == "set" {
		if *file == "" {
			return errors.New("-file is required: the settings as JSON")
		}
		// A misspelt field would otherwise leave a setting silently unset.
		if err := readStrictJSON(*file, &set); err != nil {
			return fmt.Errorf("read %s: %w", *file, err)
		}
	}
	g, err := app.OpenFromEnv(ctx, logger, false)
	if err != nil {
		return err
	}
	defer g.Close()
	if verb == "set" {
		if err := g.Accounts.SetSettlement(ctx, *merchantID, *accountID, set); err != nil {
			return err
		}
	}
	a, err := g.Accounts.Load(ctx, *merchantID, *accountID)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(settlementShown{MerchantID: a.MerchantID, AccountID: a.ID, SettlementSettings: merchant.SettlementSettings{
		Pricing: a.Pricing, NotifyURL: a.SettlementNotifyURL, PayoutSchedule: a.PayoutSchedule}})
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/domain/routing"
)

// routingShown is what paygate merchant routing prints: the account's
// connector, which takes every order while the rules are empty, and the
// rules.
type routingShown struct {
	MerchantID string        `json:"merchant_id"`
	AccountID  string        `json:"account_id"`
	Connector  string        `json:"connector"`
	Rules      routing.Rules `json:"rules"`
}

// runMerchantRouting shows an account's routing rules (show) or sets them
// from a JSON file (set -file rules.json; "-" reads standard input), then
// prints them as stored.
func runMerchantRouting(ctx context.Context, verb string, args []string, stdout io.Writer, logger *slog.Logger) error {
	fs := flag.NewFlagSet("merchant routing "+verb, flag.ContinueOnError)
	merchantID := fs.String("merchant-id", "", "merchant id")
	accountID := fs.String("account-id", "", "account id")
	file := fs.String("file", "", "set: the rules as JSON (docs/connectors.md, \"Routing\"); {} clears them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *merchantID == "" || *accountID == "" {
		return errors.New("-merchant-id and -account-id are required")
	}
	var rules routing.Rules
	if verb == "set" {
		if *file == "" {
			return errors.New("-file is required: the rules as JSON")
		}
		var err error
		if rules, err = readRules(*file); err != nil {
			return err
		}
	}
	g, err := app.OpenFromEnv(ctx, logger, false)
	if err != nil {
		return err
	}
	defer g.Close()
	if verb == "set" {
		if err := g.Accounts.SetRouting(ctx, *merchantID, *accountID, rules, g.Config.RunsConnectors()); err != nil {
			return err
		}
	}
	a, err := g.Accounts.Load(ctx, *merchantID, *accountID)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(routingShown{MerchantID: a.MerchantID, AccountID: a.ID, Connector: a.Connector, Rules: a.Routing})
}

// readRules reads rules from a JSON file, refusing fields it does not know
// (a misspelt condition would otherwise hold for every payment).
func readRules(path string) (routing.Rules, error) {
	var rules routing.Rules
	if err := readStrictJSON(path, &rules); err != nil {
		return routing.Rules{}, fmt.Errorf("rules in %s: %w", path, err)
	}
	return rules, nil
}

// readStrictJSON decodes a JSON file ("-": standard input) into v, refusing
// fields v does not have.
func readStrictJSON(path string, v any) error {
	var raw []byte
	var err error
	if path == "-" {
		raw, err = io.ReadAll(os.Stdin)
	} else {
		raw, err = os.ReadFile(path)
	}
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// Command paygate runs the gateway's processes and its tools:
//
//	paygate dev                 the whole gateway locally (Postgres, Temporal + UI, api, worker, simulator)
//	paygate serve               the merchant API
//	paygate worker              the Temporal worker
//	paygate simulator           the acquirer simulators (sim-acquirer, sim-bank) and the payout rail simulator
//	paygate migrate             brings the database schema up to date
//	paygate merchant create     creates a merchant account and prints its credentials
//	paygate merchant rotate-key gives an account a new sign key; the old one stays valid for a grace period
//	paygate merchant set-signing sets an account's signing scheme (compatible or strong)
//	paygate merchant routing    shows or sets an account's routing rules over several connectors
//	paygate sign                prints encryption_data for values and a key, or a Paygate-Signature (-strong)
//	paygate bench               drives signed authorisations through a running gateway
//	paygate verify-notification checks a received notification as a merchant would
//	paygate notify resend       delivers notifications again with their notify_id
//	paygate vault sweep         drops the CVVs no order needs any more
//	paygate ledger topup        credits a merchant's deposit with operator funding
//	paygate ledger balance      prints a merchant account's available and reserved balance
//	paygate payout rerun       re-runs failed payouts (by id or filter) as new runs of their workflow
//	paygate payout reruns      lists the recorded payout re-run batches, or one batch's payouts (-id N)
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/paygate/paygate/internal/adapters/telemetry"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "paygate:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New(`usage: paygate <command> [flags]

commands:
  dev                run the whole gateway locally until Ctrl-C
  serve              run the merchant API
  worker             run the Temporal worker
  simulator          run the acquirer (sim-acquirer, sim-bank) and payout rail simulators
  migrate            bring the database schema up to date
  merchant create    create a merchant account and print its credentials
  merchant demo      make sure the demo merchant's two accounts exist and print their credentials
  merchant rotate-key  give an account a new sign key (the old one stays valid for -grace)
  merchant set-signing  set an account's signing scheme: compatible or strong (-scheme)
  merchant routing show|set  show an account's routing rules, or set them from a JSON file (-file)
  merchant settlement show|set  show an account's pricing, settlement notify URL and payout schedule, or set them (-file)
  sign               print encryption_data for values and a sign key (-strong: a Paygate-Signature header)
  bench              drive signed authorisations through a running gateway
  verify-notification  check a received notification's encryption_data and webhook signature
  notify resend      deliver notifications again (by order, notify id or time range) with their notify_id
  vault sweep        drop the CVVs no order needs any more (-dry-run, -every D to repeat)
  ledger topup       credit a merchant's deposit with operator funding (-reference makes it idempotent)
  ledger balance     print a merchant account's pending, available and reserved balance
  ledger entries     list a merchant account's journal entries
  ledger check       check the ledger's invariants; exits non-zero listing any broken
  recon run          reconcile connectors' settlement days (-connector, -day or -from/-to) through Temporal
  recon show         per day, connector and class: counts and amounts (-format csv)
  recon exceptions   list the reconciliation's exceptions (-status, -format csv)
  recon statement    a merchant account's settlement statement (-merchant-id, -account-id, -from, -to, -format csv)
  recon act          resolve, write off or claim an exception (-item, -action, -note, -actor; audited)
  payout rerun       re-run failed payouts by id or filter (-dry-run, -yes, -resume N)
  shopper erase      erase a shopper's personal data by email or transaction id (-by, -reason; recorded)
  user create        make a console user (-email, -role merchant|finance|ops, -merchant-id); prints its password once
  healthcheck URL    exit 0 when URL answers 2xx within 3 s (for container health checks)
  payout reruns      list the recorded payout re-runs, or one re-run's payouts and outcomes (-id N)`)

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cmd, rest := args[0], args[1:]
	// `paygate dev` hands PAYGATE_DEBUG_ADDR on to the process where the
	// payments' work is (debugAddrTo).
	if cmd != "dev" {
		if _, err := startDebugListener(ctx, os.Getenv("PAYGATE_DEBUG_ADDR"), logger); err != nil {
			return err
		}
	}
	switch cmd {
	case "serve", "worker":
		// The gateway's processes export their spans when an OTLP endpoint
		// is configured (docs/observability.md).
		service := map[string]string{"serve": "paygate-api", "worker": "paygate-worker"}[cmd]
		shutdown, err := telemetry.SetupTracing(ctx, service)
		if err != nil {
			return err
		}
		defer func() {
			flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := shutdown(flushCtx); err != nil {
				logger.Warn("trace exporter shutdown", "error", err)
			}
		}()
	}
	switch cmd {
	case "dev":
		return runDev(ctx, rest, stdout, logger)
	case "serve":
		return runServe(ctx, logger)
	case "worker":
		return runWorker(ctx, logger)
	case "simulator":
		return runSimulator(ctx, logger)
	case "migrate":
		return runMigrate(ctx, logger)
	case "merchant":
		switch {
		case len(rest) > 0 && rest[0] == "create":
			return runMerchantCreate(ctx, rest[1:], stdout, logger)
		case len(rest) > 0 && rest[0] == "rotate-key":
			return runMerchantRotateKey(ctx, rest[1:], stdout, logger)
		case len(rest) > 0 && rest[0] == "set-signing":
			return runMerchantSetSigning(ctx, rest[1:], stdout, logger)
		case len(rest) > 0 && rest[0] == "demo":
			return runMerchantDemo(ctx, stdout, logger)
		case len(rest) > 1 && rest[0] == "routing" && (rest[1] == "show" || rest[1] == "set"):
			return runMerchantRouting(ctx, rest[1], rest[2:], stdout, logger)
		case len(rest) > 1 && rest[0] == "settlement" && (rest[1] == "show" || rest[1] == "set"):
			return runMerchantSettlement(ctx, rest[1], rest[2:], stdout, logger)
		}
		return errors.New("usage: paygate merchant create|demo|rotate-key|set-signing|routing show|routing set|settlement show|settlement set [flags]")
	case "sign":
		return runSign(rest, stdout)
	case "bench":
		return runBench(ctx, rest, stdout)
	case "verify-notification":
		return runVerifyNotification(rest, os.Stdin, stdout)
	case "notify":
		return runNotify(ctx, rest, stdout, logger)
	case "vault":
		return runVault(ctx, rest, stdout, logger)
	case "recon":
		return runRecon(ctx, rest, stdout, logger)
	case "ledger":
		return runLedger(ctx, rest, stdout, logger)
	case "payout":
		return runPayout(ctx, rest, os.Stdin, stdout, logger)
	case "shopper":
		return runShopper(ctx, rest, stdout, logger)
	case "user":
		if len(rest) > 0 && rest[0] == "create" {
			return runUserCreate(ctx, rest[1:], os.Stdin, stdout, logger)
		}
		return errors.New("usage: paygate user create -email E -role merchant|finance|ops [-merchant-id M] [-password-stdin]")
	case "healthcheck":
		return runHealthcheck(ctx, rest)
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, errUsage.Error())
		return nil
	}
	return fmt.Errorf("unknown command %q\n%w", cmd, errUsage)
}

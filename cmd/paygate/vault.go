package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/adapters/vault"
)

const vaultSweepUsage = "usage: paygate vault sweep [-grace 1h] [-every 15m] [-dry-run]\n" +
	"drops the sealed security codes no order may still need: those of orders past their authorisation,\n" +
	"and those of cards no order uses once they are older than -grace"

// sweepOptions are the parsed flags of paygate vault sweep.
type sweepOptions struct {
	Grace  time.Duration
	Every  time.Duration // 0: sweep once and exit
	DryRun bool
}

// parseSweepFlags reads and checks the flags of paygate vault sweep.
func parseSweepFlags(args []string, output io.Writer) (sweepOptions, error) {
	fs := flag.NewFlagSet("vault sweep", flag.ContinueOnError)
	fs.SetOutput(output)
	grace := fs.Duration("grace", vault.DefaultSweepGrace, "keep the security code of a card no order uses until it is this old")
	every := fs.Duration("every", 0, "sweep again at this interval until interrupted (0: once)")
	dryRun := fs.Bool("dry-run", false, "list the tokens whose security code would be dropped and change nothing")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), vaultSweepUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return sweepOptions{}, err
	}
	usage := func(msg string) (sweepOptions, error) {
		return sweepOptions{}, fmt.Errorf("%s\n%s", msg, vaultSweepUsage)
	}
	switch {
	case fs.NArg() > 0:
		return usage(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	case *grace < time.Minute:
		// The API seals a card a moment before its order is recorded.
		return usage("-grace must be at least 1m")
	case *every < 0:
		return usage("-every must not be negative")
	case *dryRun && *every > 0:
		return usage("-dry-run runs once; leave out -every")
	}
	return sweepOptions{Grace: *grace, Every: *every, DryRun: *dryRun}, nil
}

// runVault runs paygate vault's subcommands.
func runVault(ctx context.Context, args []string, stdout io.Writer, logger *slog.Logger) error {
	if len(args) == 0 || args[0] != "sweep" {
		return errors.New(vaultSweepUsage)
	}
	opts, err := parseSweepFlags(args[1:], stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	g, err := app.OpenFromEnv(ctx, logger, false)
	if err != nil {
		return err
	}
	defer g.Close()
	return sweepVault(ctx, g.Vault, opts, stdout, logger)
}

// sweepVault sweeps once (or lists what it would drop), or every interval
// until ctx ends.
func sweepVault(ctx context.Context, v *vault.Vault, opts sweepOptions, stdout io.Writer, logger *slog.Logger) error {
	switch {
	case opts.DryRun:
		tokens, err := v.StrayCVVs(ctx, opts.Grace)
		if err != nil {
			return err
		}
		for _, t := range tokens {
			fmt.Fprintln(stdout, t)
		}
		fmt.Fprintf(stdout, "%d security codes would be dropped\n", len(tokens))
		return nil
	case opts.Every > 0:
		logger.Info("vault sweep started", "every", opts.Every.String(), "grace", opts.Grace.String())
		v.SweepEvery(ctx, opts.Every, opts.Grace, logger.With("component", "vault-sweep"))
		return nil
	}
	n, err := v.SweepCVV(ctx, opts.Grace)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "dropped %d security codes\n", n)
	return nil
}

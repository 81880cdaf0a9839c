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
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/reconcile"
	"github.com/paygate/paygate/internal/domain/recon"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

const reconUsage = `usage:
  paygate recon run -connector C [-day YYYY-MM-DD | -from YYYY-MM-DD -to YYYY-MM-DD]
      reconciles each settlement day (today by default) through its ReconcileSettlementDay
      workflow, waits, and prints what each found and posted; a day run again gives the same
  paygate recon show [-connector C] [-mode live|test|all] [-from D] [-to D] [-format json|csv]
      per day, connector and class: how many lines and settlements owed, and their amounts
      (the last 7 days, the live accounts' by default)
  paygate recon exceptions [-connector C] [-mode live|test|all] [-from D] [-to D] [-status open|claimed|resolved|written_off|all] [-format json|csv]
      lists the exceptions (open ones, the live accounts', by default)
  paygate recon statement -merchant-id M -account-id A [-from D] [-to D] [-format json|csv]
      a merchant account's settlement statement: what was settled to it per day, connector,
      type and currency (the last 7 days by default)
  paygate recon act -item ID -action resolve|write-off|claim -note TEXT -actor WHO
      closes an exception: resolve with a note, write off (the ledger takes the difference),
      or mark it for the acquirer; audited with the actor`

// runRecon runs paygate recon's subcommands.
func runRecon(ctx context.Context, args []string, stdout io.Writer, logger *slog.Logger) error {
	if len(args) == 0 {
		return errors.New(reconUsage)
	}
	fs := flag.NewFlagSet("recon "+args[0], flag.ContinueOnError)
	fs.SetOutput(stdout)
	connector := fs.String("connector", "", "connector name (sim-acquirer, sim-bank)")
	day := fs.String("day", "", "settlement day, YYYY-MM-DD")
	from := fs.String("from", "", "first settlement day, YYYY-MM-DD")
	to := fs.String("to", "", "last settlement day, YYYY-MM-DD")
	format := fs.String("format", "json", "json or csv")
	mode := fs.String("mode", testmode.Live, "whose items: the live accounts', the test accounts' or all")
	status := fs.String("status", "", "open (default), claimed, resolved, written_off or all")
	item := fs.Int64("item", 0, "exception id")
	action := fs.String("action", "", "resolve, write-off or claim")
	note := fs.String("note", "", "why")
	actor := fs.String("actor", "", "who acts (an email)")
	merchantID := fs.String("merchant-id", "", "statement: merchant id")
	accountID := fs.String("account-id", "", "statement: account id")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q\n%s", fs.Arg(0), reconUsage)
	}
	if *format != "json" && *format != "csv" {
		return fmt.Errorf("-format must be json or csv\n%s", reconUsage)
	}
	switch {
	case *mode == "all":
		*mode = ""
	case !testmode.Valid(*mode):
		return fmt.Errorf("-mode must be live, test or all\n%s", reconUsage)
	}
	today := reconcile.Day(time.Now())
	switch args[0] {
	case "run":
		if *connector == "" {
			return fmt.Errorf("-connector is required\n%s", reconUsage)
		}
		if *day != "" {
			*from, *to = *day, *day
		}
		first, last, err := dayWindow(*from, *to, today, today)
		if err != nil {
			return err
		}
		if last.Sub(first) > 400*24*time.Hour {
			return errors.New("at most 400 days at once")
		}
		return reconRun(ctx, logger, *connector, first, last, stdout)
	case "show":
		first, last, err := dayWindow(*from, *to, today.AddDate(0, 0, -6), today)
		if err != nil {
			return err
		}
		return withLedger(ctx, logger, func(g *app.Gateway, _ *ledger.Ledger) error {
			totals, err := models.ReconTotals(ctx, g.DB, *connector, *mode, first, last.AddDate(0, 0, 1))
			if err != nil {
				return err
			}
			if *format == "csv" {
				return reconcile.WriteTotalsCSV(stdout, totals)
			}
			return encodeLines(stdout, totals)
		})
	case "exceptions":
		var f, l time.Time
		if *from != "" || *to != "" {
			var err error
			if f, l, err = dayWindow(*from, *to, time.Time{}, today); err != nil {
				return err
			}
			l = l.AddDate(0, 0, 1)
		}
		return withLedger(ctx, logger, func(g *app.Gateway, _ *ledger.Ledger) error {
			filter := models.ReconExceptionFilter{Connector: *connector, Mode: *mode, From: f, To: l, Status: *status}
			if *format == "csv" {
				out := reconcile.NewItemsCSV(stdout)
				if err := out.Write(nil); err != nil {
					return err
				}
				return models.EachReconException(ctx, g.DB, filter, out.Write)
			}
			return models.EachReconException(ctx, g.DB, filter, func(page []models.ReconItem) error { return encodeLines(stdout, page) })
		})
	case "statement":
		if *merchantID == "" || *accountID == "" {
			return fmt.Errorf("-merchant-id and -account-id are required\n%s", reconUsage)
		}
		first, last, err := dayWindow(*from, *to, today.AddDate(0, 0, -6), today)
		if err != nil {
			return err
		}
		return withLedger(ctx, logger, func(g *app.Gateway, _ *ledger.Ledger) error {
			lines, err := models.SettlementStatement(ctx, g.DB, *merchantID, *accountID, first, last.AddDate(0, 0, 1))
			if err != nil {
				return err
			}
			if *format == "csv" {
				return reconcile.WriteStatementCSV(stdout, lines)
			}
			return encodeLines(stdout, lines)
		})
	case "act":
		a, ok := map[string]recon.Action{"resolve": recon.Resolve, "write-off": recon.WriteOff, "claim": recon.Claim}[*action]
		switch {
		case *item <= 0:
			return fmt.Errorf("-item is required\n%s", reconUsage)
		case !ok:
			return fmt.Errorf("-action must be resolve, write-off or claim\n%s", reconUsage)
		case strings.TrimSpace(*note) == "" || strings.TrimSpace(*actor) == "":
			return fmt.Errorf("-note and -actor are required: every action is audited\n%s", reconUsage)
		case len(*note) > 1000 || len(*actor) > 255:
			return errors.New("-note is at most 1000 characters, -actor 255")
		}
		g, err := app.OpenFromEnv(ctx, logger, false)
		if err != nil {
			return err
		}
		defer g.Close()
		r, err := g.Reconciler()
		if err != nil {
			return err
		}
		it, err := r.Act(ctx, *item, a, *note, *actor)
		if err != nil {
			return err
		}
		return encodeLines(stdout, []models.ReconItem{it})
	}
	return errors.New(reconUsage)
}

// dayWindow reads -from and -to (inclusive), each defaulting as given.
func dayWindow(from, to string, defFrom, defTo time.Time) (time.Time, time.Time, error) {
	parse := func(name, v string, def time.Time) (time.Time, error) {
		if v == "" {
			return def, nil
		}
		d, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return time.Time{}, fmt.Errorf("-%s must be YYYY-MM-DD", name)
		}
		return d, nil
	}
	f, err := parse("from", from, defFrom)
	if err != nil {
		return f, f, err
	}
	t, err := parse("to", to, defTo)
	if err != nil {
		return f, t, err
	}
	if !f.IsZero() && t.Before(f) {
		return f, t, errors.New("-to is before -from")
	}
	return f, t, nil
}

// reconRun reconciles each day from first to last through its workflow, one
// after the other, and prints each result as it comes.
func reconRun(ctx context.Context, logger *slog.Logger, connector string, first, last time.Time, stdout io.Writer) error {
	g, err := app.OpenFromEnv(ctx, logger, true)
	if err != nil {
		return err
	}
	defer g.Close()
	r, err := g.Reconciler()
	if err != nil {
		return err
	}
	if _, ok := r.Connectors[connector]; !ok {
		return fmt.Errorf("%w: %q", reconcile.ErrUnknownConnector, connector)
	}
	enc := json.NewEncoder(stdout)
	for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
		day := d.Format(time.DateOnly)
		run, err := g.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: workflows.ReconDayWorkflowID(connector, day), TaskQueue: workflows.TaskQueue,
			WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		}, workflows.ReconcileDayWorkflowType, activities.ReconDayInput{Connector: connector, Day: day, NotifySchedule: g.Config.NotifySchedule})
		if err != nil {
			return fmt.Errorf("start reconciliation of %s %s: %w", connector, day, err)
		}
		var res workflows.ReconDayResult
		if err := run.Get(ctx, &res); err != nil {
			return fmt.Errorf("reconciliation of %s %s: %w", connector, day, err)
		}
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	return nil
}

// encodeLines prints each value as a JSON line.
func encodeLines[T any](w io.Writer, vs []T) error {
	enc := json.NewEncoder(w)
	for _, v := range vs {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	return nil
}

package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/adapters/payoutrerun"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/models"
)

const payoutRerunUsage = "usage: paygate payout rerun (-ids ID[,ID...] | [-from T] [-to T] [-failure-type X] [-merchant-id M] | -resume N)\n" +
	"  [-dry-run] [-yes] [-by NAME] [-concurrency 8] [-every 50]\n" +
	"ids are workflow ids (payout/{merchant_id}/{request_id}) or request ids; times are RFC 3339 or yyyyMMddHHmmss UTC\n" +
	"       " + payoutRerunsForms

// payoutRerunsForms are the two forms of paygate payout reruns: the
// batches, or one batch's payouts. The second line is indented to sit
// under the first after "usage: ".
const payoutRerunsForms = "paygate payout reruns [-limit N]   the newest re-run batches with their totals\n" +
	"       paygate payout reruns -id N        one batch: each payout and what happened to it"

// payoutRerunsUsage is the usage of paygate payout reruns.
const payoutRerunsUsage = "usage: " + payoutRerunsForms

// errPayoutUsage is the usage of paygate payout.
var errPayoutUsage = errors.New(payoutRerunUsage)

// errNotConfirmed: the operator did not confirm, or could not be asked.
var errNotConfirmed = errors.New("payout re-run not confirmed; nothing was started")

// rerunOptions are the parsed flags of paygate payout rerun.
type rerunOptions struct {
	Selection   models.PayoutSelection
	Resume      int64
	DryRun      bool
	Yes         bool
	By          string
	Concurrency int
	Every       int
}

// parseRerunFlags reads and checks the flags of paygate payout rerun.
func parseRerunFlags(args []string, output io.Writer) (rerunOptions, error) {
	fs := flag.NewFlagSet("payout rerun", flag.ContinueOnError)
	fs.SetOutput(output)
	ids := fs.String("ids", "", "comma-separated payout workflow ids or request ids")
	from := fs.String("from", "", "failed payouts last updated at or after this time")
	to := fs.String("to", "", "failed payouts last updated before this time")
	failureType := fs.String("failure-type", "", "only failed payouts of this failure type (e.g. RAIL_UNAVAILABLE)")
	merchantID := fs.String("merchant-id", "", "only this merchant's failed payouts")
	resume := fs.Int64("resume", 0, "continue re-run batch N (its own selection), doing only what is left")
	dryRun := fs.Bool("dry-run", false, "print and record the plan, start nothing")
	yes := fs.Bool("yes", false, "do not ask for confirmation")
	by := fs.String("by", os.Getenv("USER"), "who asks, recorded with the batch")
	concurrency := fs.Int("concurrency", payoutrerun.DefaultConcurrency, "re-runs started at once")
	every := fs.Int("every", 50, "print progress every N payouts")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), payoutRerunUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return rerunOptions{}, err
	}
	usage := func(msg string) (rerunOptions, error) {
		return rerunOptions{}, fmt.Errorf("%s\n%s", msg, payoutRerunUsage)
	}
	if fs.NArg() > 0 {
		return usage(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	o := rerunOptions{Resume: *resume, DryRun: *dryRun, Yes: *yes, By: strings.TrimSpace(*by),
		Concurrency: *concurrency, Every: *every, Selection: models.PayoutSelection{
			IDs: splitComma(*ids), FailureType: strings.TrimSpace(*failureType), MerchantID: strings.TrimSpace(*merchantID),
		}}
	var msg string
	if o.Selection.From, o.Selection.To, msg = parseTimeRange(*from, *to); msg != "" {
		return usage(msg)
	}
	switch {
	case o.By == "":
		return usage("-by is required (no $USER)")
	case o.Concurrency < 1 || o.Concurrency > 64:
		return usage("-concurrency: want 1 to 64")
	case o.Every < 1:
		return usage("-every: want at least 1")
	case o.Resume < 0:
		return usage("-resume: want a re-run id")
	case o.Resume != 0 && !payoutrerun.Empty(o.Selection):
		return usage("-resume takes no selection: the batch keeps its own")
	case o.Resume != 0 && o.DryRun:
		return usage("-resume and -dry-run do not go together")
	case o.Resume != 0:
		return o, nil
	}
	if err := payoutrerun.Check(o.Selection); err != nil {
		return usage(err.Error())
	}
	return o, nil
}

func runPayout(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer, logger *slog.Logger) error {
	switch {
	case len(args) > 0 && args[0] == "rerun":
		o, err := parseRerunFlags(args[1:], os.Stderr)
		if err != nil {
			return err
		}
		return runPayoutRerun(ctx, o, stdin, stdout, logger)
	case len(args) > 0 && args[0] == "reruns":
		return runPayoutReruns(ctx, args[1:], stdout, logger)
	}
	return errPayoutUsage
}

// runPayoutRerun plans the selected payouts, prints the plan, asks, and
// re-runs the failed ones with progress and a summary.
func runPayoutRerun(ctx context.Context, o rerunOptions, stdin io.Reader, stdout io.Writer, logger *slog.Logger) error {
	g, err := app.OpenFromEnv(ctx, logger, !o.DryRun)
	if err != nil {
		return err
	}
	defer g.Close()
	svc := g.PayoutReruns()
	svc.Concurrency = o.Concurrency
	var items []payoutrerun.Item
	if o.Resume != 0 {
		_, items, err = svc.Resume(ctx, o.Resume)
	} else {
		items, err = svc.Plan(ctx, o.Selection)
	}
	if err != nil {
		return err
	}
	n := printRerunPlan(stdout, items)
	if o.DryRun {
		fmt.Fprintf(stdout, "dry-run: %d of %d would be re-run; nothing started\n", n, len(items))
	} else if n > 0 && !o.Yes {
		if err := confirmRerun(stdin, stdout, n, os.Getenv("CI") == "true"); err != nil {
			return err
		}
	}
	req := payoutrerun.Request{Selection: o.Selection, DryRun: o.DryRun, By: o.By, Source: "cli", Resume: o.Resume}
	progress := func(done, total int) {
		if done%o.Every == 0 || done == total {
			fmt.Fprintf(stdout, "re-run %d/%d\n", done, total)
		}
	}
	res, err := svc.Run(ctx, req, items, progress)
	printRerunSummary(stdout, res.Rerun)
	return err
}

// confirmRerun asks on stdin. In CI, or when stdin ends, it refuses rather
// than wait for an answer that will not come.
func confirmRerun(stdin io.Reader, stdout io.Writer, n int, ci bool) error {
	if ci {
		return fmt.Errorf("%w: CI=true and no -yes", errNotConfirmed)
	}
	fmt.Fprintf(stdout, "re-run %d payouts? [y/N] ", n)
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && line == "" {
		return fmt.Errorf("%w: no answer on stdin (use -yes)", errNotConfirmed)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return errNotConfirmed
}

// printRerunPlan prints the plan as a table and returns how many payouts
// will be re-run.
func printRerunPlan(w io.Writer, items []payoutrerun.Item) int {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PAYOUT\tMERCHANT\tAMOUNT\tFAILURE\tACTION")
	n := 0
	for _, it := range items {
		merchant, amount, failure := "-", "-", "-"
		if p := it.Payout; p != nil {
			merchant = p.MerchantID
			amount = payoutAmount(p.PaymentAmount, p.PaymentCurrency)
			if p.FailureType != "" {
				failure = p.FailureType
			}
		}
		action := "skip: " + it.Reason
		if it.Rerun {
			action = fmt.Sprintf("re-run (run %d)", it.Payout.Run+1)
			n++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", it.PayoutID, merchant, amount, failure, action)
	}
	tw.Flush()
	fmt.Fprintf(w, "%d payouts: %d to re-run, %d skipped\n", len(items), n, len(items)-n)
	return n
}

func printRerunSummary(w io.Writer, r models.PayoutRerun) {
	if r.ID == 0 {
		return
	}
	kind := ""
	if r.DryRun {
		kind = " (dry-run)"
	}
	fmt.Fprintf(w, "re-run %d%s %s: %d payouts, %d started, %d skipped, %d errors, %d not reached\n",
		r.ID, kind, r.Status, r.Total, r.Started, r.Skipped, r.Errors, notReached(r))
	if r.Status != models.RerunFinished {
		fmt.Fprintf(w, "resume with: paygate payout rerun -resume %d\n", r.ID)
	}
}

func notReached(r models.PayoutRerun) int {
	if r.DryRun {
		return 0
	}
	return r.Total - r.Started - r.Skipped - r.Errors
}

// rerunsOptions are the parsed flags of paygate payout reruns: Limit
// batches, or with ID one batch's items.
type rerunsOptions struct {
	Limit int
	ID    int64
}

// parseRerunsFlags reads and checks the flags of paygate payout reruns.
func parseRerunsFlags(args []string, output io.Writer) (rerunsOptions, error) {
	fs := flag.NewFlagSet("payout reruns", flag.ContinueOnError)
	fs.SetOutput(output)
	limit := fs.Int("limit", 20, "how many batches, newest first")
	id := fs.Int64("id", 0, "show this batch's payouts and what happened to each")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), payoutRerunsUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return rerunsOptions{}, err
	}
	usage := func(msg string) (rerunsOptions, error) {
		return rerunsOptions{}, fmt.Errorf("%s\n%s", msg, payoutRerunsUsage)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case fs.NArg() > 0:
		return usage(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	case set["id"] && set["limit"]:
		return usage("-id shows one batch; -limit is for the list")
	case set["id"] && *id < 1:
		return usage("-id: want a re-run id")
	case *limit < 1 || *limit > 1000:
		return usage("-limit: want 1 to 1000")
	}
	return rerunsOptions{Limit: *limit, ID: *id}, nil
}

// runPayoutReruns lists the recorded re-run batches, newest first, or with
// -id one batch's payouts.
func runPayoutReruns(ctx context.Context, args []string, stdout io.Writer, logger *slog.Logger) error {
	o, err := parseRerunsFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	g, err := app.OpenFromEnv(ctx, logger, false)
	if err != nil {
		return err
	}
	defer g.Close()
	if o.ID != 0 {
		res, err := g.PayoutReruns().Show(ctx, o.ID)
		if err != nil {
			return err
		}
		printRerunItems(stdout, res.Rerun, res.Items)
		return nil
	}
	rs, err := g.PayoutReruns().List(ctx, o.Limit)
	if err != nil {
		return err
	}
	printReruns(stdout, rs)
	return nil
}

// printRerunItems prints one batch: who asked it, when and for what, a
// table of its payouts (amount and failure as they were when the batch
// planned them, and what the batch did), and its totals.
func printRerunItems(w io.Writer, r models.PayoutRerun, items []models.PayoutRerunItem) {
	kind := ""
	if r.DryRun {
		kind = " (dry-run)"
	}
	fmt.Fprintf(w, "re-run %d%s by %s (%s) at %s; selection: %s\n", r.ID, kind, r.RequestedBy, r.Source,
		r.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"), describeSelection(r.Selection))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PAYOUT\tMERCHANT\tAMOUNT\tFAILURE BEFORE\tOUTCOME\tRUN ID")
	for _, it := range items {
		merchant, amount, failure, runID := dash(it.MerchantID), "-", dash(it.FailureType), dash(it.RunID)
		if it.PaymentCurrency != "" {
			amount = payoutAmount(it.PaymentAmount, it.PaymentCurrency)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", it.PayoutID, merchant, amount, failure, itemOutcome(r, it), runID)
	}
	tw.Flush()
	printRerunSummary(w, r)
}

// itemOutcome words what a batch did with one payout. A "planned" row
// means "would be re-run" in a dry-run and "not reached yet" in a real
// batch, which a resume finishes; a "starting" row is a start whose answer
// was never recorded (the command died), which a resume settles.
func itemOutcome(r models.PayoutRerun, it models.PayoutRerunItem) string {
	switch it.Outcome {
	case models.ItemStarted:
		return fmt.Sprintf("started (run %d)", it.Run)
	case models.ItemSkipped:
		return "skipped: " + it.Reason
	case models.ItemError:
		return "failed to start: " + it.Reason
	case models.ItemStarting:
		return fmt.Sprintf("starting (run %d), not confirmed: resume settles it", it.Run)
	case models.ItemPlanned:
		if r.DryRun {
			return fmt.Sprintf("would re-run (run %d)", it.Run)
		}
		return fmt.Sprintf("not reached (run %d): resume starts it", it.Run)
	}
	return it.Outcome
}

// payoutAmount renders minor units with their currency's digits, three
// for the three-digit currencies payouts take (12.345 KWD).
func payoutAmount(minor int64, currency string) string {
	return money.FromMinor(minor, currency).ExtendedString() + " " + currency
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func printReruns(w io.Writer, rs []models.PayoutRerun) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCREATED\tBY\tSOURCE\tDRY-RUN\tSTATUS\tTOTAL\tSTARTED\tSKIPPED\tERRORS\tSELECTION")
	for _, r := range rs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%t\t%s\t%d\t%d\t%d\t%d\t%s\n", r.ID, r.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"),
			r.RequestedBy, r.Source, r.DryRun, r.Status, r.Total, r.Started, r.Skipped, r.Errors, describeSelection(r.Selection))
	}
	tw.Flush()
}

func describeSelection(s models.PayoutSelection) string {
	var parts []string
	if len(s.IDs) > 0 {
		parts = append(parts, fmt.Sprintf("%d ids", len(s.IDs)))
	}
	if !s.From.IsZero() {
		parts = append(parts, "from="+s.From.UTC().Format("2006-01-02T15:04:05Z"))
	}
	if !s.To.IsZero() {
		parts = append(parts, "to="+s.To.UTC().Format("2006-01-02T15:04:05Z"))
	}
	if s.FailureType != "" {
		parts = append(parts, "failure_type="+s.FailureType)
	}
	if s.MerchantID != "" {
		parts = append(parts, "merchant_id="+s.MerchantID)
	}
	return strings.Join(parts, " ")
}

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

	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/adapters/redeliver"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

const notifyResendUsage = "usage: paygate notify resend [-merchant-id M] [-account-id A] " +
	"(-order NO[,NO...] | -id NOTIFY_ID[,...] | -from T -to T) [-wait]\n" +
	"times are RFC 3339 or 14-digit UTC (yyyyMMddHHmmss)"

// errNotifyUsage is the usage of paygate notify.
var errNotifyUsage = errors.New("usage: paygate notify resend [flags]")

// resendOptions are the parsed flags of paygate notify resend.
type resendOptions struct {
	Selection models.NotificationSelection
	Wait      bool
}

// parseResendFlags reads and checks the flags of paygate notify resend.
func parseResendFlags(args []string, output io.Writer) (resendOptions, error) {
	fs := flag.NewFlagSet("notify resend", flag.ContinueOnError)
	fs.SetOutput(output)
	merchantID := fs.String("merchant-id", "", "only this merchant's notifications")
	accountID := fs.String("account-id", "", "only this account's notifications (needed with -order)")
	orders := fs.String("order", "", "comma-separated order numbers")
	ids := fs.String("id", "", "comma-separated notify ids")
	from := fs.String("from", "", "notifications made at or after this time (RFC 3339 or yyyyMMddHHmmss UTC)")
	to := fs.String("to", "", "notifications made before this time (RFC 3339 or yyyyMMddHHmmss UTC)")
	wait := fs.Bool("wait", false, "wait for the redelivery to finish and print what was delivered and what failed")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), notifyResendUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return resendOptions{}, err
	}
	usage := func(msg string) (resendOptions, error) {
		return resendOptions{}, fmt.Errorf("%s\n%s", msg, notifyResendUsage)
	}
	if fs.NArg() > 0 {
		return usage(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	o := resendOptions{Wait: *wait, Selection: models.NotificationSelection{
		MerchantID: strings.TrimSpace(*merchantID),
		AccountID:  strings.TrimSpace(*accountID),
		OrderNos:   splitComma(*orders),
		NotifyIDs:  splitComma(*ids),
	}}
	var msg string
	if o.Selection.From, o.Selection.To, msg = parseTimeRange(*from, *to); msg != "" {
		return usage(msg)
	}
	s := o.Selection
	switch {
	case redeliver.Empty(s):
		return usage("one of -order, -id, -from/-to is required")
	case len(s.OrderNos) > 0 && s.AccountID == "":
		return usage("-order requires -account-id")
	case !s.From.IsZero() && !s.To.IsZero() && !s.From.Before(s.To):
		return usage("-from must be before -to")
	}
	return o, nil
}

// parseTimeRange reads the -from and -to flags of a selection; the message
// says which is wrong, "" when both are good.
func parseTimeRange(from, to string) (time.Time, time.Time, string) {
	f, err := parseFlagTime(from)
	if err != nil {
		return f, time.Time{}, "-from: " + err.Error()
	}
	t, err := parseFlagTime(to)
	if err != nil {
		return f, t, "-to: " + err.Error()
	}
	return f, t, ""
}

// parseFlagTime reads an RFC 3339 time or a 14-digit UTC time; "" is zero.
func parseFlagTime(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if len(v) == 14 {
		if t, err := time.Parse("20060102150405", v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither RFC 3339 nor yyyyMMddHHmmss", v)
}

// resendOutput is what paygate notify resend prints.
type resendOutput struct {
	WorkflowID string   `json:"workflow_id"`
	NotifyIDs  []string `json:"notify_ids"`
	Delivered  []string `json:"delivered,omitzero"` // with -wait, [] when none
	Failed     []string `json:"failed,omitzero"`
}

func runNotify(ctx context.Context, args []string, stdout io.Writer, logger *slog.Logger) error {
	if len(args) == 0 || args[0] != "resend" {
		return errNotifyUsage
	}
	return runNotifyResend(ctx, args[1:], stdout, logger)
}

// runNotifyResend delivers the selected notifications again, with their
// original notify_id, through a Redeliver workflow.
func runNotifyResend(ctx context.Context, args []string, stdout io.Writer, logger *slog.Logger) error {
	o, err := parseResendFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	g, err := app.OpenFromEnv(ctx, logger, true)
	if err != nil {
		return err
	}
	defer g.Close()
	res, err := redeliver.Start(ctx, g.Temporal, g.DB, o.Selection, g.Config.NotifySchedule)
	if err != nil {
		return err
	}
	out := resendOutput{WorkflowID: res.WorkflowID, NotifyIDs: res.NotifyIDs}
	if o.Wait {
		var r workflows.RedeliverResult
		if err := g.Temporal.GetWorkflow(ctx, res.WorkflowID, "").Get(ctx, &r); err != nil {
			return fmt.Errorf("redelivery %s: %w", res.WorkflowID, err)
		}
		out.Delivered, out.Failed = nonNil(r.Delivered), nonNil(r.Failed)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

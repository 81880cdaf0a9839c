package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/payoutrerun"
	"github.com/paygate/paygate/models"
)

func TestParseRerunFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		ok   bool
	}{
		{name: "ids", args: []string{"-ids", "a,b", "-by", "alice"}, ok: true},
		{name: "filter", args: []string{"-from", "20261101000000", "-to", "2026-11-02T00:00:00Z", "-failure-type", "RAIL_UNAVAILABLE", "-by", "a"}, ok: true},
		{name: "nothing", args: []string{"-by", "a"}},
		{name: "ids and filter", args: []string{"-ids", "a", "-merchant-id", "M1", "-by", "a"}},
		{name: "bad time", args: []string{"-from", "yesterday", "-by", "a"}},
		{name: "unknown failure", args: []string{"-failure-type", "OOPS", "-by", "a"}},
		{name: "resume", args: []string{"-resume", "3", "-by", "a"}, ok: true},
		{name: "resume with selection", args: []string{"-resume", "3", "-ids", "a", "-by", "a"}},
		{name: "no one", args: []string{"-ids", "a", "-by", ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseRerunFlags(tc.args, io.Discard); (err == nil) != tc.ok {
				t.Errorf("parse = %v, want ok=%t", err, tc.ok)
			}
		})
	}
}

func TestConfirmRerun(t *testing.T) {
	tests := []struct {
		name  string
		stdin string
		ci    bool
		ok    bool
	}{
		{name: "yes", stdin: "y\n", ok: true},
		{name: "YES", stdin: "YES\n", ok: true},
		{name: "no", stdin: "n\n"},
		{name: "empty stdin refuses", stdin: ""},
		{name: "CI refuses without asking", stdin: "y\n", ci: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := confirmRerun(strings.NewReader(tc.stdin), io.Discard, 3, tc.ci)
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, errNotConfirmed)) {
				t.Errorf("confirm = %v, want ok=%t", err, tc.ok)
			}
		})
	}
}

func TestPrintRerunPlan(t *testing.T) {
	var b bytes.Buffer
	n := printRerunPlan(&b, []payoutrerun.Item{
		{PayoutID: "payout/M1/r1", Rerun: true, Payout: &models.Payout{MerchantID: "M1", PaymentAmount: 12345, PaymentCurrency: "EUR", FailureType: "RAIL_UNAVAILABLE", Run: 1}},
		{PayoutID: "payout/M1/r2", Reason: "completed", Payout: &models.Payout{MerchantID: "M1", PaymentAmount: 100, PaymentCurrency: "EUR"}},
		{PayoutID: "nope", Reason: "not found"},
	})
	out := b.String()
	for _, want := range []string{"123.45 EUR", "RAIL_UNAVAILABLE", "re-run (run 2)", "skip: completed", "skip: not found", "3 payouts: 1 to re-run, 2 skipped"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	if n != 1 {
		t.Errorf("n = %d, want 1", n)
	}
}

func TestParseRerunsFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want rerunsOptions
		ok   bool
	}{
		{name: "list by default", args: nil, want: rerunsOptions{Limit: 20}, ok: true},
		{name: "list with a limit", args: []string{"-limit", "5"}, want: rerunsOptions{Limit: 5}, ok: true},
		{name: "one batch", args: []string{"-id", "42"}, want: rerunsOptions{Limit: 20, ID: 42}, ok: true},
		{name: "id zero", args: []string{"-id", "0"}},
		{name: "negative id", args: []string{"-id", "-3"}},
		{name: "id not a number", args: []string{"-id", "x"}},
		{name: "id and limit", args: []string{"-id", "4", "-limit", "5"}},
		{name: "limit too high", args: []string{"-limit", "1001"}},
		{name: "limit zero", args: []string{"-limit", "0"}},
		{name: "stray argument", args: []string{"42"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseRerunsFlags(tc.args, io.Discard)
			if (err == nil) != tc.ok {
				t.Fatalf("parse = %+v, %v; want ok=%t", got, err, tc.ok)
			}
			if tc.ok && got != tc.want {
				t.Errorf("parse = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestPrintRerunItems(t *testing.T) {
	at := time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)
	batch := models.PayoutRerun{ID: 42, RequestedBy: "alice", Source: "cli", Status: models.RerunRunning, CreatedAt: at,
		Selection: models.PayoutSelection{MerchantID: "M1", FailureType: "RAIL_UNAVAILABLE"}, Total: 6, Started: 1, Skipped: 2, Errors: 1}
	started := models.PayoutRerunItem{PayoutID: "payout/M1/r1", MerchantID: "M1", PaymentCurrency: "EUR", PaymentAmount: 12345,
		FailureType: "RAIL_UNAVAILABLE", Outcome: models.ItemStarted, Run: 2, RunID: "0193a1b2-run"}
	tests := []struct {
		name  string
		batch models.PayoutRerun
		items []models.PayoutRerunItem
		want  string
	}{
		{
			name:  "every outcome of a batch cut short",
			batch: batch,
			items: []models.PayoutRerunItem{
				started,
				{PayoutID: "payout/M1/r2", MerchantID: "M1", PaymentCurrency: "KWD", PaymentAmount: 12345, Outcome: models.ItemSkipped, Reason: "completed"},
				{PayoutID: "nope", Outcome: models.ItemSkipped, Reason: "not found"},
				{PayoutID: "payout/M1/r3", MerchantID: "M1", PaymentCurrency: "USD", PaymentAmount: 500, FailureType: "INSUFFICIENT_FUNDS",
					Outcome: models.ItemError, Reason: "temporal unavailable", Run: 2},
				{PayoutID: "payout/M1/r4", MerchantID: "M1", PaymentCurrency: "JPY", PaymentAmount: 700, FailureType: "RAIL_UNAVAILABLE",
					Outcome: models.ItemStarting, Run: 3},
				{PayoutID: "payout/M1/r5", MerchantID: "M1", PaymentCurrency: "EUR", PaymentAmount: 1, FailureType: "RAIL_UNAVAILABLE",
					Outcome: models.ItemPlanned, Run: 2},
			},
			want: "re-run 42 by alice (cli) at 2026-11-23T09:30:00Z; selection: failure_type=RAIL_UNAVAILABLE merchant_id=M1\n" +
				"PAYOUT        MERCHANT  AMOUNT      FAILURE BEFORE      OUTCOME                                             RUN ID\n" +
				"payout/M1/r1  M1        123.45 EUR  RAIL_UNAVAILABLE    started (run 2)                                     0193a1b2-run\n" +
				"payout/M1/r2  M1        12.345 KWD  -                   skipped: completed                                  -\n" +
				"nope          -         -           -                   skipped: not found                                  -\n" +
				"payout/M1/r3  M1        5.00 USD    INSUFFICIENT_FUNDS  failed to start: temporal unavailable               -\n" +
				"payout/M1/r4  M1        700 JPY     RAIL_UNAVAILABLE    starting (run 3), not confirmed: resume settles it  -\n" +
				"payout/M1/r5  M1        0.01 EUR    RAIL_UNAVAILABLE    not reached (run 2): resume starts it               -\n" +
				"re-run 42 running: 6 payouts, 1 started, 2 skipped, 1 errors, 2 not reached\n" +
				"resume with: paygate payout rerun -resume 42\n",
		},
		{
			name: "a finished dry-run",
			batch: models.PayoutRerun{ID: 7, RequestedBy: "bob", Source: "api", DryRun: true, Status: models.RerunFinished, CreatedAt: at,
				Selection: models.PayoutSelection{IDs: []string{"a", "b"}}, Total: 1, Planned: 1},
			items: []models.PayoutRerunItem{{PayoutID: "payout/M1/r1", MerchantID: "M1", PaymentCurrency: "EUR", PaymentAmount: 12345,
				FailureType: "RAIL_UNAVAILABLE", Outcome: models.ItemPlanned, Run: 2}},
			want: "re-run 7 (dry-run) by bob (api) at 2026-11-23T09:30:00Z; selection: 2 ids\n" +
				"PAYOUT        MERCHANT  AMOUNT      FAILURE BEFORE    OUTCOME               RUN ID\n" +
				"payout/M1/r1  M1        123.45 EUR  RAIL_UNAVAILABLE  would re-run (run 2)  -\n" +
				"re-run 7 (dry-run) finished: 1 payouts, 0 started, 0 skipped, 0 errors, 0 not reached\n",
		},
		{
			name: "a batch that selected nothing",
			batch: models.PayoutRerun{ID: 8, RequestedBy: "carol", Source: "cli", Status: models.RerunFinished, CreatedAt: at,
				Selection: models.PayoutSelection{MerchantID: "M9"}},
			want: "re-run 8 by carol (cli) at 2026-11-23T09:30:00Z; selection: merchant_id=M9\n" +
				"PAYOUT  MERCHANT  AMOUNT  FAILURE BEFORE  OUTCOME  RUN ID\n" +
				"re-run 8 finished: 0 payouts, 0 started, 0 skipped, 0 errors, 0 not reached\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			printRerunItems(&b, tc.batch, tc.items)
			if got := b.String(); got != tc.want {
				t.Errorf("output:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestPayoutUsage(t *testing.T) {
	const rerunsWant = "usage: paygate payout reruns [-limit N]   the newest re-run batches with their totals\n" +
		"       paygate payout reruns -id N        one batch: each payout and what happened to it"
	if payoutRerunsUsage != rerunsWant {
		t.Errorf("reruns usage:\n%s\nwant:\n%s", payoutRerunsUsage, rerunsWant)
	}
	const payoutWant = "usage: paygate payout rerun (-ids ID[,ID...] | [-from T] [-to T] [-failure-type X] [-merchant-id M] | -resume N)\n" +
		"  [-dry-run] [-yes] [-by NAME] [-concurrency 8] [-every 50]\n" +
		"ids are workflow ids (payout/{merchant_id}/{request_id}) or request ids; times are RFC 3339 or yyyyMMddHHmmss UTC\n" +
		"       paygate payout reruns [-limit N]   the newest re-run batches with their totals\n" +
		"       paygate payout reruns -id N        one batch: each payout and what happened to it"
	if err := runPayout(t.Context(), []string{"nonsense"}, strings.NewReader(""), io.Discard, nil); err == nil || err.Error() != payoutWant {
		t.Errorf("paygate payout nonsense = %v, want the usage:\n%s", err, payoutWant)
	}
	// A bad flag of reruns answers its own usage after the reason.
	_, err := parseRerunsFlags([]string{"-id", "4", "-limit", "5"}, io.Discard)
	if err == nil || !strings.HasSuffix(err.Error(), "\n"+rerunsWant) {
		t.Errorf("parse error = %v, want it to end with the usage", err)
	}
	var help bytes.Buffer
	if _, err := parseRerunsFlags([]string{"-h"}, &help); !errors.Is(err, flag.ErrHelp) || !strings.HasPrefix(help.String(), rerunsWant+"\n") {
		t.Errorf("-h = %v, printed:\n%s\nwant it to start with the usage", err, help.String())
	}
}

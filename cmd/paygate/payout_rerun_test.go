package main

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

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

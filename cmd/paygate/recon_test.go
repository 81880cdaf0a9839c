package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/models"
)

// TestReconFlags: paygate recon refuses what it cannot do before it opens
// anything, each with a message that says what to change.
func TestReconFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", nil, "usage:"},
		{"unknown subcommand", []string{"rerun"}, "usage:"},
		{"run without a connector", []string{"run"}, "-connector is required"},
		{"a malformed day", []string{"run", "-connector", "sim-acquirer", "-day", "26/11/2026"}, "-from must be YYYY-MM-DD"},
		{"a window backwards", []string{"show", "-from", "2026-11-20", "-to", "2026-11-10"}, "-to is before -from"},
		{"an unknown format", []string{"show", "-format", "xml"}, "-format must be json or csv"},
		{"an unknown mode", []string{"exceptions", "-mode", "both"}, "-mode must be live, test or all"},
		{"too long a window", []string{"run", "-connector", "sim-acquirer", "-from", "2024-01-01", "-to", "2026-01-01"}, "at most 400 days"},
		{"act without an item", []string{"act", "-action", "resolve", "-note", "n", "-actor", "a"}, "-item is required"},
		{"act with an unknown action", []string{"act", "-item", "7", "-action", "delete", "-note", "n", "-actor", "a"}, "-action must be"},
		{"act without a note", []string{"act", "-item", "7", "-action", "resolve", "-actor", "a"}, "every action is audited"},
		{"a stray argument", []string{"show", "extra"}, `unexpected argument "extra"`},
		{"a statement of nobody", []string{"statement", "-merchant-id", "M"}, "-merchant-id and -account-id are required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := runRecon(t.Context(), tc.args, io.Discard, slog.New(slog.DiscardHandler))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("runRecon(%q) = %v, want an error with %q", tc.args, err, tc.want)
			}
		})
	}
}

// TestReconExceptionsPrintsEveryPage: paygate recon exceptions prints the
// queue a page at a time, as CSV with its header once or as JSON lines,
// every exception of the filter and only those.
func TestReconExceptionsPrintsEveryPage(t *testing.T) {
	migratedDatabase(t, "paygate_cli_recon_")
	ctx := t.Context()
	db, err := models.Open(ctx, os.Getenv("DATABASE_URL"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	var items []models.ReconItem
	for i := 1; i <= 5; i++ {
		items = append(items, models.ReconItem{Connector: "sim-bank", Day: day, ItemKey: fmt.Sprintf("line/%d", i), Source: models.ReconSourceLine,
			LineNo: i, Reference: fmt.Sprintf("ref_%d", i), Type: "capture", Currency: "EUR", Class: "missing_here", Status: models.ReconOpen})
	}
	// A matched line is no exception.
	items = append(items, models.ReconItem{Connector: "sim-bank", Day: day, ItemKey: "line/6", Source: models.ReconSourceLine, LineNo: 6,
		Reference: "ref_6", Type: "capture", Currency: "EUR", Class: "matched", Status: models.ReconNone})
	if err := models.SaveReconRun(ctx, db, &models.ReconRun{Connector: "sim-bank", Day: day, RanAt: time.Now()}, items); err != nil {
		t.Fatal(err)
	}
	page := models.ReconExceptionPage
	models.ReconExceptionPage = 2
	t.Cleanup(func() { models.ReconExceptionPage = page })
	window := []string{"-connector", "sim-bank", "-from", "2026-11-20", "-to", "2026-11-20"}
	for _, format := range []string{"csv", "json"} {
		t.Run(format, func(t *testing.T) {
			var out strings.Builder
			if err := runRecon(ctx, append([]string{"exceptions", "-format", format}, window...), &out, slog.New(slog.DiscardHandler)); err != nil {
				t.Fatal(err)
			}
			text := out.String()
			wantLines := 5
			if format == "csv" {
				wantLines = 6
				if strings.Count(text, "id,day,connector") != 1 {
					t.Errorf("header not once:\n%s", text)
				}
			}
			if n := strings.Count(text, "\n"); n != wantLines {
				t.Errorf("%d lines, want %d:\n%s", n, wantLines, text)
			}
			for i := 1; i <= 5; i++ {
				if !strings.Contains(text, fmt.Sprintf("ref_%d", i)) {
					t.Errorf("exception ref_%d missing:\n%s", i, text)
				}
			}
			if strings.Contains(text, "ref_6") {
				t.Errorf("the matched line is printed:\n%s", text)
			}
		})
	}
}

package main

import (
	"io"
	"log/slog"
	"strings"
	"testing"
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

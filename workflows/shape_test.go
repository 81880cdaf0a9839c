package workflows

import (
	"testing"

	"go.temporal.io/sdk/workflow"
)

// TestSettledVersion: a change settled from a shape is taken without a
// marker by runs of that shape and later ones, and asked for by runs of
// earlier shapes and by every run when no shape settles it.
func TestSettledVersion(t *testing.T) {
	changes := map[string]settled{"c": {fromShape: 2, version: 3}}
	tests := []struct {
		name    string
		shape   int
		change  string
		want    workflow.Version
		settles bool
	}{
		{"a shape before the change's", 1, "c", 0, false},
		{"the change's shape", 2, "c", 3, true},
		{"a later shape", 5, "c", 3, true},
		{"a change no shape settles", 5, "other", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, ok := settledVersion(changes, tc.shape, tc.change)
			if v != tc.want || ok != tc.settles {
				t.Errorf("settledVersion = %d, %v; want %d, %v", v, ok, tc.want, tc.settles)
			}
		})
	}
}

package models

import (
	"testing"

	"github.com/paygate/paygate/internal/domain/capture"
)

// TestVocabularyIsTheDomains: the capture modes kept here as untyped text
// are the domain's, so a string setting compared with them means what the
// stored capture.Mode means.
func TestVocabularyIsTheDomains(t *testing.T) {
	tests := []struct {
		name string
		text string
		mode capture.Mode
	}{
		{"auto", CaptureAuto, capture.Auto},
		{"manual", CaptureManual, capture.Manual},
	}
	for _, tc := range tests {
		if capture.Mode(tc.text) != tc.mode {
			t.Errorf("%s: models says %q, the domain %q", tc.name, tc.text, tc.mode)
		}
	}
}

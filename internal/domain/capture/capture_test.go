package capture

import "testing"

// TestStoredText pins the text the accounts and orders tables hold.
func TestStoredText(t *testing.T) {
	tests := []struct {
		mode Mode
		want string
	}{
		{Auto, "auto"},
		{Manual, "manual"},
	}
	for _, tc := range tests {
		if got := string(tc.mode); got != tc.want {
			t.Errorf("mode %q, want %q", got, tc.want)
		}
	}
}

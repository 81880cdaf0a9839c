package refund

import "testing"

// TestStoredText pins the text the refunds table holds: changing it would
// change the meaning of every stored row.
func TestStoredText(t *testing.T) {
	tests := []struct {
		status Status
		want   string
	}{
		{Pending, "pending"},
		{Succeeded, "succeeded"},
		{Failed, "failed"},
	}
	for _, tc := range tests {
		if got := string(tc.status); got != tc.want {
			t.Errorf("status %q, want %q", got, tc.want)
		}
	}
}

package notify

import "testing"

// TestStatusStoredText pins the text the notifications table holds.
func TestStatusStoredText(t *testing.T) {
	tests := []struct {
		status Status
		want   string
	}{
		{Pending, "pending"},
		{Delivered, "delivered"},
		{Failed, "failed"},
	}
	for _, tc := range tests {
		if got := string(tc.status); got != tc.want {
			t.Errorf("status %q, want %q", got, tc.want)
		}
	}
}

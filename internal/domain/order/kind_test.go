package order

import "testing"

// TestKindText pins the text of each kind in the workflow's input: running
// orders' histories hold it.
func TestKindText(t *testing.T) {
	tests := []struct {
		kind Kind
		want string
	}{
		{KindCard, ""},
		{KindCheckout, "checkout"},
		{KindAPM, "apm"},
	}
	for _, tc := range tests {
		if got := string(tc.kind); got != tc.want {
			t.Errorf("kind %q, want %q", got, tc.want)
		}
	}
}

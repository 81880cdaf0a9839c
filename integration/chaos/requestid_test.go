package chaos

import (
	"regexp"
	"testing"
)

func TestRequestIDIsAUUID(t *testing.T) {
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$`)
	tests := []struct {
		name string
		run  string
		i    int
	}{
		{"short run id", "abc1", 1},
		{"long run id and number", "zzzzzz", 999999},
		{"one-letter run, payout zero", "x", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if id := requestID(tc.run, tc.i); !uuid.MatchString(id) {
				t.Errorf("requestID(%q, %d) = %s, not a version 4 UUID", tc.run, tc.i, id)
			}
		})
	}
	if requestID("ab", 1) == requestID("ab", 2) || requestID("ab", 1) == requestID("ac", 1) {
		t.Error("two payouts share a request id")
	}
}

package outbound

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// TestStampDeadline: a request carries the end of the client's timeout, or
// its context's deadline when that is sooner.
func TestStampDeadline(t *testing.T) {
	cases := []struct {
		name    string
		ctxLeft time.Duration // 0: no context deadline
		timeout time.Duration
		want    time.Duration
	}{
		{name: "the client's timeout", timeout: 2 * time.Second, want: 2 * time.Second},
		{name: "a sooner context deadline", ctxLeft: 500 * time.Millisecond, timeout: 2 * time.Second, want: 500 * time.Millisecond},
		{name: "a later context deadline", ctxLeft: time.Minute, timeout: 2 * time.Second, want: 2 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.ctxLeft > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctxLeft)
				defer cancel()
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/v1/charges", nil)
			if err != nil {
				t.Fatal(err)
			}
			before := time.Now()
			StampDeadline(req, tc.timeout)
			got, err := time.Parse(time.RFC3339Nano, req.Header.Get(DeadlineHeader))
			if err != nil {
				t.Fatalf("header %q: %v", req.Header.Get(DeadlineHeader), err)
			}
			if left := got.Sub(before); left > tc.want+time.Since(before) || left < tc.want-time.Second {
				t.Errorf("deadline %s after the call, want about %s", left, tc.want)
			}
		})
	}
}

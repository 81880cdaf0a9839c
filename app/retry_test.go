package app

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"
)

func TestRetryFor(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	refused := errors.New("refused")
	tests := []struct {
		name      string
		wait      time.Duration
		failFirst int
		wantTries int
		wantErr   bool
	}{
		{"answers at once", time.Minute, 0, 1, false},
		{"answers on the third try", time.Minute, 2, 3, false},
		{"no wait: one try", 0, 5, 1, true},
		{"gives up when the wait has passed", 300 * time.Millisecond, 100, 2, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tries := 0
			v, err := retryFor(context.Background(), tc.wait, "thing", quiet, func() (int, error) {
				tries++
				if tries <= tc.failFirst {
					return 0, refused
				}
				return 42, nil
			})
			if tries != tc.wantTries || (err != nil) != tc.wantErr || (err == nil && v != 42) {
				t.Errorf("tries %d, value %d, err %v; want %d tries, error %v", tries, v, err, tc.wantTries, tc.wantErr)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := retryFor(ctx, time.Minute, "thing", quiet, func() (int, error) { return 0, refused }); err == nil {
		t.Error("a cancelled context kept trying")
	}
}

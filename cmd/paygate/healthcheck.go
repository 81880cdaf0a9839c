package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// healthcheckTimeout bounds a health check: an orchestrator's probe has its
// own, and a hung service is an unhealthy one.
const healthcheckTimeout = 3 * time.Second

// runHealthcheck GETs url and succeeds on a 2xx answer. The container image
// has no shell and no curl, so compose's health checks run this.
func runHealthcheck(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return errors.New("usage: paygate healthcheck URL (e.g. http://127.0.0.1:8080/healthz)")
	}
	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args[0], nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("healthcheck: %s answered %d", args[0], resp.StatusCode)
	}
	return nil
}

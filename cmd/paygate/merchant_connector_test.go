package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/paygate/paygate/app"
)

// TestMerchantCreateRefusesUnknownConnector: an account may name only a
// connector the deployment runs; the refusal comes before anything is
// opened or written.
func TestMerchantCreateRefusesUnknownConnector(t *testing.T) {
	tests := []struct {
		name       string
		connectors string // PAYGATE_CONNECTORS
		connector  string
	}{
		{"a connector no build knows", "", "acme-bank"},
		{"a known connector this deployment does not run", "sim-acquirer", "sim-bank"},
		{"the right name in the wrong case", "", "SIM-BANK"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PAYGATE_CONNECTORS", tc.connectors)
			t.Setenv("SIMBANK_URL", "")
			t.Setenv("DATABASE_URL", "postgres://nobody@127.0.0.1:1/none")
			err := runMerchantCreate(context.Background(), []string{"-connector", tc.connector}, io.Discard, slog.New(slog.DiscardHandler))
			if !errors.Is(err, app.ErrUnknownConnector) {
				t.Errorf("merchant create -connector %s = %v, want ErrUnknownConnector", tc.connector, err)
			}
		})
	}
}

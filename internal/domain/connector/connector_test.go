package connector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestCardDataHidden checks every way a request holding a card can be
// printed, logged or marshalled: none shows the number or the security code.
func TestCardDataHidden(t *testing.T) {
	card := Card{Number: "4242424242424242", ExpiryMonth: "09", ExpiryYear: "2031", CVV: "987"}
	charge := ChargeRequest{IdempotencyKey: "k1", Reference: "r1", Card: card, Amount: 1234, Currency: "USD"}
	auth := AuthenticationRequest{IdempotencyKey: "k2", Reference: "r2", Card: card, Amount: 1234, Currency: "USD"}

	// Without the time, whose digits could hold the security code's.
	noTime := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	var logged bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logged, noTime))
	logger.Info("charge", "req", charge, "auth", auth, "card", card)
	var textLogged bytes.Buffer
	slog.New(slog.NewTextHandler(&textLogged, noTime)).Info("charge", "req", charge, "card", card)
	chargeJSON, err := json.Marshal(charge)
	if err != nil {
		t.Fatal(err)
	}
	authJSON, err := json.Marshal(auth)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		text string
	}{
		{"%v charge", fmt.Sprintf("%v", charge)},
		{"%+v charge", fmt.Sprintf("%+v", charge)},
		{"%#v charge", fmt.Sprintf("%#v", charge)},
		{"%v authentication", fmt.Sprintf("%v", auth)},
		{"%#v authentication", fmt.Sprintf("%#v", auth)},
		{"%v card", fmt.Sprintf("%v", card)},
		{"%+v card", fmt.Sprintf("%+v", card)},
		{"%#v card", fmt.Sprintf("%#v", card)},
		{"%v pointer to charge", fmt.Sprintf("%v", &charge)},
		{"slog JSON", logged.String()},
		{"slog text", textLogged.String()},
		{"JSON charge", string(chargeJSON)},
		{"JSON authentication", string(authJSON)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(tc.text, "424242424242") || strings.Contains(tc.text, "987") {
				t.Errorf("card data shown: %s", tc.text)
			}
			if !strings.Contains(tc.text, "4242") {
				t.Errorf("the last four digits are missing: %s", tc.text)
			}
		})
	}
}

func TestChargeApproved(t *testing.T) {
	tests := []struct {
		status ChargeStatus
		want   bool
	}{
		{Approved, true},
		{Declined, false},
		{"", false},
	}
	for _, tc := range tests {
		if got := (Charge{Status: tc.status}).Approved(); got != tc.want {
			t.Errorf("Charge{Status: %q}.Approved() = %t, want %t", tc.status, got, tc.want)
		}
	}
}

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/domain/card"
)

func TestSignCommand(t *testing.T) {
	const key = "k3y-for-tests-0123456789abcdef"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"query recipe", []string{"-key", key, "10086", "10086001"}, "46d5224b05c84a006b32e00a3254269a09562023846c554ebc94230ff911f7a8"},
		{"name=value pairs sign the values", []string{"-key", key, "merchant_id=10086", "account_id=10086001"}, "46d5224b05c84a006b32e00a3254269a09562023846c554ebc94230ff911f7a8"},
		{"authorise card", []string{"-key", key, "10086", "10086001", "ORD-2026-0002", "USD", "12.34", "Ada", "Lovelace",
			"4242424242424242", "2031", "12", "739", "ada@example.com"}, "aa3b32c61629fbb1ade394b58846636066583f9cff5b3a942dee426ff3d836a0"},
		{"optimise, as name=value pairs", []string{"-key", key, "merchant_id=10086", "account_id=10086001",
			"request_id=OPT-2026-0001", "currency=EUR", "amount=25.00", "shopper_email=ada@example.com"},
			"72a6d625b802ae27be74ad69ab8669bf799dab17b0aec5bac93d8c0a0a75a0a7"},
		{"payment result, upper case", []string{"-key", key, "-upper", "10086", "10086001", "1379868670095785984",
			"ORD-2026-0002", "USD", "12.34", "1", "0000:Success"}, "6036B8D34D939F79412A6B733CC41CD788E73E76760725ACD5D829DDB62B15ED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(append([]string{"sign"}, tc.args...), &out); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(out.String()); got != tc.want {
				t.Errorf("sign = %s, want %s", got, tc.want)
			}
		})
	}
	var out bytes.Buffer
	if err := run([]string{"sign", "10086"}, &out); err == nil {
		t.Error("sign without a key succeeded")
	}
}

func TestBenchCardsAreValidAndDistinct(t *testing.T) {
	seen := map[string]bool{}
	for i := range 1000 {
		c := benchCard(i)
		if err := card.ValidateNumber(c); err != nil || card.Brand(c) != "visa" {
			t.Fatalf("benchCard(%d) = %s: %v, brand %s", i, c, err, card.Brand(c))
		}
		if seen[c] {
			t.Fatalf("benchCard(%d) = %s repeats", i, c)
		}
		seen[c] = true
	}
}

func TestUnknownCommand(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"nope"}, &out); err == nil {
		t.Error("unknown command succeeded")
	}
}

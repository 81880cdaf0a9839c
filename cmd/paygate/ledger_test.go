package main

import (
	"io"
	"testing"

	"github.com/paygate/paygate/internal/domain/money"
)

func TestParseTopUpFlags(t *testing.T) {
	base := []string{"-merchant-id", "M1", "-account-id", "A1", "-reference", "wire-1"}
	tests := []struct {
		name    string
		args    []string
		want    money.Amount
		wantErr bool
	}{
		{name: "dollars and cents", args: append(base, "-currency", "USD", "-amount", "100.00"), want: money.Amount{Minor: 10000, Currency: "USD"}},
		{name: "lower-case currency", args: append(base, "-currency", "eur", "-amount", "0.05"), want: money.Amount{Minor: 5, Currency: "EUR"}},
		{name: "no minor units", args: append(base, "-currency", "JPY", "-amount", "1500"), want: money.Amount{Minor: 1500, Currency: "JPY"}},
		{name: "three-digit currency", args: append(base, "-currency", "BHD", "-amount", "12.5"), want: money.Amount{Minor: 12500, Currency: "BHD"}},
		{name: "zero", args: append(base, "-currency", "USD", "-amount", "0.00"), wantErr: true},
		{name: "negative", args: append(base, "-currency", "USD", "-amount", "-1.00"), wantErr: true},
		{name: "three decimals", args: append(base, "-currency", "USD", "-amount", "1.001"), wantErr: true},
		{name: "unknown currency", args: append(base, "-currency", "XXX", "-amount", "1.00"), wantErr: true},
		{name: "no reference", args: []string{"-merchant-id", "M1", "-account-id", "A1", "-currency", "USD", "-amount", "1.00"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseTopUpFlags(tc.args, io.Discard)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("parseTopUpFlags() = %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Amount != tc.want || got.MerchantID != "M1" || got.AccountID != "A1" || got.Reference != "wire-1" {
				t.Errorf("parseTopUpFlags() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

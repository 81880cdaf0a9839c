package main

import (
	"slices"
	"testing"
)

func TestParseRates(t *testing.T) {
	tests := []struct {
		name    string
		spec    string
		want    []float64
		wantErr bool
	}{
		{"none", "", nil, false},
		{"one", "40", []float64{40}, false},
		{"several with spaces", "10, 20,30.5", []float64{10, 20, 30.5}, false},
		{"zero", "0,10", nil, true},
		{"negative", "-5", nil, true},
		{"not a number", "ten", nil, true},
		{"not increasing", "20,10", nil, true},
		{"repeated", "10,10", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseRates(tc.spec)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("rates = %v, want %v", got, tc.want)
			}
		})
	}
}

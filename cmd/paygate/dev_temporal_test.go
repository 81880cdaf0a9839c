package main

import "testing"

func TestTemporalDatabase(t *testing.T) {
	tests := []struct{ name, url, want string }{
		{"the dev database", "postgres://postgres@127.0.0.1:5432/paygate?sslmode=disable", "paygate_temporal"},
		{"a data dir's own database", "postgres://postgres@127.0.0.1:5432/paygate_4b7bbc2f", "paygate_4b7bbc2f_temporal"},
		{"no database named", "postgres://postgres@127.0.0.1:5432", "paygate_temporal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := temporalDatabase(tt.url); got != tt.want {
				t.Errorf("temporalDatabase(%q) = %q, want %q", tt.url, got, tt.want)
			}
		})
	}
}

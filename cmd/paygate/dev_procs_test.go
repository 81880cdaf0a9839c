package main

import (
	"slices"
	"testing"
)

func TestGatewayProcs(t *testing.T) {
	for _, tc := range []struct {
		name string
		cpus int
		want int
	}{
		{"one CPU", 1, 1},
		{"two CPUs, this machine kind", 2, 1},
		{"three CPUs", 3, 1},
		{"four CPUs", 4, 2},
		{"sixteen CPUs", 16, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := gatewayProcs(tc.cpus); got != tc.want {
				t.Fatalf("gatewayProcs(%d) = %d, want %d", tc.cpus, got, tc.want)
			}
		})
	}
}

func TestWithGatewayProcs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		caller string // the GOMAXPROCS `paygate dev` was started with
		cpus   int
		want   []string
	}{
		{"unset: half the CPUs", "", 4, []string{"A=1", "GOMAXPROCS=2"}},
		{"unset on two CPUs: one", "", 2, []string{"A=1", "GOMAXPROCS=1"}},
		{"the caller's own stands", "3", 4, []string{"A=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == "GOMAXPROCS" {
					return tc.caller
				}
				return ""
			}
			got := withGatewayProcs([]string{"A=1"}, getenv, tc.cpus)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("env = %q, want %q", got, tc.want)
			}
		})
	}
}

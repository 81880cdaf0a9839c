package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/paygate/paygate/app"
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

// TestDevChildEnvEagerStart: paygate dev's API starts payments eagerly on
// its own worker unless the caller said otherwise.
func TestDevChildEnvEagerStart(t *testing.T) {
	for _, tc := range []struct {
		name   string
		caller string // PAYGATE_EAGER_START in paygate dev's environment
		want   []string
	}{
		{"unset: on", "", []string{"PAYGATE_EAGER_START=true"}},
		{"the caller's false is kept", "false", nil},
		{"the caller's true is kept", "true", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PAYGATE_EAGER_START", tc.caller)
			var got []string
			for _, kv := range devChildEnv(app.Config{}, "") {
				if strings.HasPrefix(kv, "PAYGATE_EAGER_START=") {
					got = append(got, kv)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("PAYGATE_EAGER_START in the children's environment %v, want %v (the caller's own is inherited)", got, tc.want)
			}
		})
	}
}

// TestDebugAddrTo: paygate dev hands the caller's PAYGATE_DEBUG_ADDR to the
// process where payments run: the API when it starts them eagerly (the
// default), the worker when the caller turned eager starts off.
func TestDebugAddrTo(t *testing.T) {
	for _, tc := range []struct {
		name  string
		eager string // PAYGATE_EAGER_START in paygate dev's environment
		want  string
	}{
		{"unset: eager, the api", "", "api"},
		{"eager: the api", "true", "api"},
		{"not eager: the worker", "false", "worker"},
		{"not eager, spelt 0: the worker", "0", "worker"},
		{"unreadable: the api, whose config refuses it", "maybe", "api"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == "PAYGATE_EAGER_START" {
					return tc.eager
				}
				return ""
			}
			if got := debugAddrTo(getenv); got != tc.want {
				t.Fatalf("debugAddrTo = %q, want %q", got, tc.want)
			}
		})
	}
}

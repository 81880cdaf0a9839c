package connectors

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// fake stands for a connector: the registry only keeps and returns it.
type fake struct{ name string }

func filled(t *testing.T, def string, names ...string) *Registry[*fake] {
	t.Helper()
	r := New[*fake](def)
	for _, n := range names {
		if err := r.Register(n, &fake{n}); err != nil {
			t.Fatalf("Register(%q): %v", n, err)
		}
	}
	return r
}

func TestRegistryGet(t *testing.T) {
	r := filled(t, "sim-acquirer", "sim-acquirer", "sim-bank")
	tests := []struct {
		name     string
		ask      string
		want     string
		wantErr  error
		errNames bool // the error lists the registered names
	}{
		{"a registered name", "sim-bank", "sim-bank", nil, false},
		{"the default by name", "sim-acquirer", "sim-acquirer", nil, false},
		{"an empty name asks for the default", "", "sim-acquirer", nil, false},
		{"an unknown name", "acme-bank", "", ErrUnknown, true},
		{"names are case-sensitive", "SIM-BANK", "", ErrUnknown, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := r.Get(tc.ask)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Get(%q) error = %v, want %v", tc.ask, err, tc.wantErr)
			}
			if tc.wantErr != nil {
				if c != nil {
					t.Errorf("Get(%q) = %v with an error", tc.ask, c)
				}
				if tc.errNames && !strings.Contains(err.Error(), "sim-acquirer, sim-bank") {
					t.Errorf("error %q does not list the registered connectors", err)
				}
				return
			}
			if c.name != tc.want {
				t.Errorf("Get(%q) = %q, want %q", tc.ask, c.name, tc.want)
			}
		})
	}
}

func TestRegistryDefaultNotRegistered(t *testing.T) {
	r := filled(t, "sim-acquirer", "sim-bank")
	if r.Default() != "sim-acquirer" {
		t.Errorf("Default() = %q", r.Default())
	}
	if _, err := r.Get(""); !errors.Is(err, ErrUnknown) {
		t.Errorf("Get(\"\") without the default registered: %v, want ErrUnknown", err)
	}
}

func TestRegistryRegister(t *testing.T) {
	tests := []struct {
		name    string
		add     string
		wantErr error
	}{
		{"a new name", "sim-bank", nil},
		{"the same name again", "sim-acquirer", ErrDuplicate},
		{"empty", "", ErrInvalidName},
		{"upper case", "Sim-Bank", ErrInvalidName},
		{"a space", "sim bank", ErrInvalidName},
		{"longer than the column", strings.Repeat("a", MaxNameLen+1), ErrInvalidName},
		{"exactly the column", strings.Repeat("a", MaxNameLen), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := filled(t, "sim-acquirer", "sim-acquirer")
			first, _ := r.Get("sim-acquirer")
			err := r.Register(tc.add, &fake{"second"})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Register(%q) = %v, want %v", tc.add, err, tc.wantErr)
			}
			// A refused registration changes nothing.
			if got, _ := r.Get("sim-acquirer"); got != first {
				t.Error("a refused registration replaced the first connector")
			}
			wantNames := []string{"sim-acquirer"}
			if tc.wantErr == nil {
				wantNames = append(wantNames, tc.add)
				slices.Sort(wantNames)
			}
			if got := r.Names(); !slices.Equal(got, wantNames) {
				t.Errorf("Names() = %v, want %v", got, wantNames)
			}
		})
	}
}

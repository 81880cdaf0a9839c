package risk

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// TestSettingsJSON: the settings an order carries keep every value through
// its input's JSON, and an account on the defaults adds nothing but its
// limit and mode.
func TestSettingsJSON(t *testing.T) {
	tests := []struct {
		name     string
		settings Settings
		want     string
	}{
		{"the defaults, no limit, live", Settings{}, `{}`},
		{"the defaults with a limit, test", Settings{AmountLimit: 5000, Test: true}, `{"AmountLimit":5000,"Test":true}`},
		{"rules of its own", Settings{Config: Config{BlockedBINs: []string{"411111"},
			CardVelocity: Velocity{Max: 2, Window: Duration(10 * time.Minute), Score: 100}}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.settings)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" && string(b) != tc.want {
				t.Errorf("JSON = %s, want %s", b, tc.want)
			}
			var back Settings
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tc.settings) {
				t.Errorf("read back %+v, want %+v", back, tc.settings)
			}
		})
	}
}

// TestSettingsCarried: an order carries settings whose blocked BINs and
// countries together number at most MaxCarriedListEntries.
func TestSettingsCarried(t *testing.T) {
	list := func(n int) []string { return make([]string, n) }
	tests := []struct {
		name string
		cfg  Config
		want bool
	}{
		{"no lists", Config{}, true},
		{"BINs at the bound", Config{BlockedBINs: list(MaxCarriedListEntries)}, true},
		{"BINs and countries at the bound", Config{BlockedBINs: list(MaxCarriedListEntries - 2), BlockedCountries: list(2)}, true},
		{"BINs and countries past it", Config{BlockedBINs: list(MaxCarriedListEntries - 1), BlockedCountries: list(2)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := (Settings{Config: tc.cfg}).Carried(); got != tc.want {
				t.Errorf("Carried = %v, want %v", got, tc.want)
			}
		})
	}
}

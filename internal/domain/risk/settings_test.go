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

package risk

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestDefaultConfig(t *testing.T) {
	want := Config{
		CardVelocity:         Velocity{Max: 5, Window: Duration(10 * time.Minute), Score: 50},
		EmailVelocity:        Velocity{Max: 10, Window: Duration(time.Hour), Score: 40},
		IPVelocity:           Velocity{Max: 20, Window: Duration(time.Hour), Score: 30},
		DeviceVelocity:       Velocity{Max: 10, Window: Duration(time.Hour), Score: 40},
		CountryMismatchScore: 30,
		ReviewScore:          50,
		RejectScore:          100,
	}
	if got := DefaultConfig(); !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultConfig() = %+v, want %+v", got, want)
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("DefaultConfig().Validate() = %v", err)
	}
}

func TestWithDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   Config
		want Config
	}{
		{
			name: "zero is the default",
			in:   Config{},
			want: DefaultConfig(),
		},
		{
			name: "set values stay, zero ones are filled one by one",
			in: Config{
				CardVelocity:     Velocity{Max: 2},
				EmailVelocity:    Velocity{Window: Duration(time.Minute)},
				IPVelocity:       Velocity{Score: 70},
				BlockedBINs:      []string{"4000"},
				BlockedCountries: []string{"KP"},
				RejectScore:      150,
			},
			want: Config{
				CardVelocity:         Velocity{Max: 2, Window: Duration(10 * time.Minute), Score: 50},
				EmailVelocity:        Velocity{Max: 10, Window: Duration(time.Minute), Score: 40},
				IPVelocity:           Velocity{Max: 20, Window: Duration(time.Hour), Score: 70},
				DeviceVelocity:       DefaultDeviceVelocity,
				BlockedBINs:          []string{"4000"},
				BlockedCountries:     []string{"KP"},
				CountryMismatchScore: 30,
				ReviewScore:          50,
				RejectScore:          150,
			},
		},
		{
			name: "Off stays off",
			in:   Config{CardVelocity: Velocity{Score: Off}, CountryMismatchScore: Off},
			want: Config{
				CardVelocity:         Velocity{Max: 5, Window: Duration(10 * time.Minute), Score: Off},
				EmailVelocity:        DefaultEmailVelocity,
				IPVelocity:           DefaultIPVelocity,
				DeviceVelocity:       DefaultDeviceVelocity,
				CountryMismatchScore: Off,
				ReviewScore:          50,
				RejectScore:          100,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.WithDefaults()
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("WithDefaults() = %+v, want %+v", got, tc.want)
			}
			if again := got.WithDefaults(); !reflect.DeepEqual(again, got) {
				t.Errorf("WithDefaults is not idempotent: %+v, then %+v", got, again)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		valid bool
	}{
		{"zero", Config{}, true},
		{"rules off", Config{CardVelocity: Velocity{Score: Off}, EmailVelocity: Velocity{Score: Off}, IPVelocity: Velocity{Score: Off}, CountryMismatchScore: Off}, true},
		{"lists", Config{BlockedBINs: []string{"4", "424242"}, BlockedCountries: []string{"KP", "GB"}}, true},
		{"review equal to reject", Config{ReviewScore: 80, RejectScore: 80}, true},
		{"negative max", Config{CardVelocity: Velocity{Max: -1}}, false},
		{"negative window", Config{IPVelocity: Velocity{Window: Duration(-time.Minute)}}, false},
		{"negative score other than Off", Config{EmailVelocity: Velocity{Score: -5}}, false},
		{"mismatch score other than Off", Config{CountryMismatchScore: -2}, false},
		{"BIN with a letter", Config{BlockedBINs: []string{"42424x"}}, false},
		{"BIN longer than six digits", Config{BlockedBINs: []string{"4242424"}}, false},
		{"empty BIN", Config{BlockedBINs: []string{""}}, false},
		{"unknown country", Config{BlockedCountries: []string{"XX"}}, false},
		{"lower-case country", Config{BlockedCountries: []string{"gb"}}, false},
		{"review above reject", Config{ReviewScore: 120}, false},
		{"negative reject", Config{RejectScore: -100}, false},
		{"scores at the cap", Config{CardVelocity: Velocity{Score: MaxScore}, CountryMismatchScore: MaxScore, ReviewScore: MaxScore, RejectScore: MaxScore}, true},
		{"velocity score over the cap", Config{CardVelocity: Velocity{Score: MaxScore + 1}}, false},
		{"mismatch score over the cap", Config{CountryMismatchScore: MaxScore + 1}, false},
		{"reject over the cap", Config{RejectScore: MaxScore + 1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.valid && err != nil {
				t.Errorf("Validate() = %v, want nil", err)
			}
			if !tc.valid && !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("Validate() = %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestConfigJSON(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		json string
	}{
		{
			name: "zero",
			cfg:  Config{},
			json: `{"card_velocity":{},"email_velocity":{},"ip_velocity":{}}`,
		},
		{
			name: "settings",
			cfg: Config{
				CardVelocity:         Velocity{Max: 2, Window: Duration(10 * time.Minute), Score: 100},
				IPVelocity:           Velocity{Score: Off},
				BlockedBINs:          []string{"400000"},
				BlockedCountries:     []string{"KP"},
				CountryMismatchScore: 60,
				ReviewScore:          40,
			},
			json: `{"card_velocity":{"max":2,"window":"10m0s","score":100},"email_velocity":{},` +
				`"ip_velocity":{"score":-1},"blocked_bins":["400000"],"blocked_countries":["KP"],` +
				`"country_mismatch_score":60,"review_score":40}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.json {
				t.Errorf("Marshal = %s\nwant      %s", b, tc.json)
			}
			var back Config
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tc.cfg) {
				t.Errorf("round trip = %+v, want %+v", back, tc.cfg)
			}
		})
	}
}

func TestDurationJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Duration
		ok   bool
	}{
		{"minutes", `"10m"`, Duration(10 * time.Minute), true},
		{"hours and minutes", `"1h30m"`, Duration(90 * time.Minute), true},
		{"number", `600`, 0, false},
		{"not a duration", `"ten minutes"`, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var d Duration
			err := json.Unmarshal([]byte(tc.in), &d)
			if (err == nil) != tc.ok {
				t.Fatalf("Unmarshal(%s) error = %v, want ok %v", tc.in, err, tc.ok)
			}
			if d != tc.want {
				t.Errorf("Unmarshal(%s) = %v, want %v", tc.in, d, tc.want)
			}
		})
	}
}

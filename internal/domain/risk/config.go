package risk

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/paygate/paygate/internal/domain/country"
)

// Off, as a rule's score, turns the rule off: it never hits. A zero score
// means the default score instead.
const Off = -1

// MaxScore is the largest score or threshold a Config may set, so that the
// sum of every rule's score cannot overflow.
const MaxScore = 1_000_000

// Defaults of a Config's zero values.
const (
	DefaultReviewScore          = 50
	DefaultRejectScore          = 100
	DefaultCountryMismatchScore = 30
)

// DefaultCardVelocity, DefaultEmailVelocity and DefaultIPVelocity are the
// velocity limits of a Config that sets none.
var (
	DefaultCardVelocity  = Velocity{Max: 5, Window: Duration(10 * time.Minute), Score: 50}
	DefaultEmailVelocity = Velocity{Max: 10, Window: Duration(time.Hour), Score: 40}
	DefaultIPVelocity    = Velocity{Max: 20, Window: Duration(time.Hour), Score: 30}
	// DefaultDeviceVelocity: a device is one shopper's more surely than
	// an address (shared behind a carrier's NAT), less than a card.
	DefaultDeviceVelocity = Velocity{Max: 10, Window: Duration(time.Hour), Score: 40}
)

// Settings are what the rules take from an account for one order: its
// Config, its amount limit in the order's currency (0: none) and whether it
// is a test account, whose test cards, addresses and emails count for no
// velocity (activities.CheckRisk).
type Settings struct {
	// An account on the defaults (the zero Config) adds nothing to the
	// order's input, which ops read in the Temporal UI.
	Config      Config `json:",omitzero"`
	AmountLimit int64  `json:",omitempty"`
	Test        bool   `json:",omitempty"`
}

// MaxCarriedListEntries bounds the blocked BINs and countries an order
// carries in its input (Settings.Carried): an account with longer lists has
// its orders read them from the account at the check, so no order's input,
// kept in its workflow history, grows with a list an operator may make long.
const MaxCarriedListEntries = 64

// Carried reports whether an order carries these settings in its input.
func (s Settings) Carried() bool {
	return len(s.Config.BlockedBINs)+len(s.Config.BlockedCountries) <= MaxCarriedListEntries
}

// Config is an account's risk settings. It is stored as JSON with the
// account; any zero value means the default, so the zero Config is the
// default one and later changes of the defaults reach accounts that never
// set a value. Amount limits are not here: they are the account's
// AmountLimits, which the caller passes in Facts.
type Config struct {
	// CardVelocity, EmailVelocity and IPVelocity limit how many orders of
	// the account may use the same card, shopper email or shopper IP within
	// a sliding window.
	CardVelocity  Velocity `json:"card_velocity"`
	EmailVelocity Velocity `json:"email_velocity"`
	IPVelocity    Velocity `json:"ip_velocity"`
	// DeviceVelocity limits the orders of one device (device_fingerprint).
	DeviceVelocity Velocity `json:"device_velocity,omitzero"`

	// BlockedBINs are card number prefixes (the first one to six digits)
	// whose cards are rejected.
	BlockedBINs []string `json:"blocked_bins,omitempty"`
	// BlockedCountries are ISO 3166 alpha-2 codes; a payment whose billing
	// country or card country is one of them is rejected.
	BlockedCountries []string `json:"blocked_countries,omitempty"`
	// CountryMismatchScore is added when the billing country and the card's
	// country are both known and differ. Off turns the rule off.
	CountryMismatchScore int `json:"country_mismatch_score,omitempty"`

	// ReviewScore and RejectScore are the thresholds: a payment whose
	// score reaches ReviewScore is held for review, one that reaches
	// RejectScore is rejected.
	ReviewScore int `json:"review_score,omitempty"`
	RejectScore int `json:"reject_score,omitempty"`
}

// Velocity limits the orders that share one value (card, email, IP) within
// a sliding window: the rule hits when Max other orders already used the
// value within Window, so the (Max+1)th order is the first to score.
type Velocity struct {
	Max    int      `json:"max,omitempty"`
	Window Duration `json:"window,omitempty"`
	// Score is what a hit adds; Off turns the rule off.
	Score int `json:"score,omitempty"`
}

// On reports whether the rule runs.
func (v Velocity) On() bool { return v.Score != Off }

// DefaultConfig returns the settings of an account that sets none.
func DefaultConfig() Config { return Config{}.WithDefaults() }

// WithDefaults returns c with every zero value replaced by its default.
func (c Config) WithDefaults() Config {
	c.CardVelocity = c.CardVelocity.withDefaults(DefaultCardVelocity)
	c.EmailVelocity = c.EmailVelocity.withDefaults(DefaultEmailVelocity)
	c.IPVelocity = c.IPVelocity.withDefaults(DefaultIPVelocity)
	c.DeviceVelocity = c.DeviceVelocity.withDefaults(DefaultDeviceVelocity)
	if c.CountryMismatchScore == 0 {
		c.CountryMismatchScore = DefaultCountryMismatchScore
	}
	if c.ReviewScore == 0 {
		c.ReviewScore = DefaultReviewScore
	}
	if c.RejectScore == 0 {
		c.RejectScore = DefaultRejectScore
	}
	return c
}

func (v Velocity) withDefaults(d Velocity) Velocity {
	if v.Max == 0 {
		v.Max = d.Max
	}
	if v.Window == 0 {
		v.Window = d.Window
	}
	if v.Score == 0 {
		v.Score = d.Score
	}
	return v
}

// ErrInvalidConfig is returned for risk settings that cannot be used.
var ErrInvalidConfig = errors.New("invalid risk settings")

// Validate checks the settings once their defaults are filled in.
func (c Config) Validate() error {
	c = c.WithDefaults()
	for _, v := range []struct {
		name string
		v    Velocity
	}{{"card_velocity", c.CardVelocity}, {"email_velocity", c.EmailVelocity}, {"ip_velocity", c.IPVelocity},
		{"device_velocity", c.DeviceVelocity}} {
		if v.v.Max < 0 || v.v.Window < 0 || (v.v.Score < 0 && v.v.Score != Off) {
			return fmt.Errorf("%w: %s: max, window and score must not be negative (score %d turns the rule off)", ErrInvalidConfig, v.name, Off)
		}
		if v.v.Score > MaxScore {
			return fmt.Errorf("%w: %s: score %d is over %d", ErrInvalidConfig, v.name, v.v.Score, MaxScore)
		}
	}
	for _, bin := range c.BlockedBINs {
		if len(bin) < 1 || len(bin) > binLen || !digits(bin) {
			return fmt.Errorf("%w: blocked BIN %q must be 1 to %d digits", ErrInvalidConfig, bin, binLen)
		}
	}
	for _, cc := range c.BlockedCountries {
		if !country.Known(cc) {
			return fmt.Errorf("%w: blocked country %q is not an ISO 3166 two-letter code", ErrInvalidConfig, cc)
		}
	}
	if c.CountryMismatchScore < 0 && c.CountryMismatchScore != Off {
		return fmt.Errorf("%w: country_mismatch_score must not be negative (%d turns the rule off)", ErrInvalidConfig, Off)
	}
	if c.ReviewScore < 0 || c.RejectScore < 0 || c.ReviewScore > c.RejectScore {
		return fmt.Errorf("%w: need 0 < review_score (%d) <= reject_score (%d)", ErrInvalidConfig, c.ReviewScore, c.RejectScore)
	}
	if c.CountryMismatchScore > MaxScore || c.RejectScore > MaxScore {
		return fmt.Errorf("%w: country_mismatch_score, review_score and reject_score must be at most %d", ErrInvalidConfig, MaxScore)
	}
	return nil
}

// Duration is a time.Duration that JSON carries as text such as "10m".
type Duration time.Duration

// String renders the duration as time.Duration does.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON renders the duration as a string such as "10m0s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string such as "10m" or "1h30m".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"10m\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	*d = Duration(v)
	return nil
}

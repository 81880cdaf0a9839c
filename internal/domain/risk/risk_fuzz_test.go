package risk

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"
)

// Fuzz targets: go test -run='^$' -fuzz='^FuzzConfigJSON$' ./internal/domain/risk
// (or make fuzz). Plain go test runs the seeds.

// FuzzConfigJSON checks an account's risk settings read from any JSON: the
// defaults fill in once and for all; Validate answers nil or
// ErrInvalidConfig; settings that validate have one canonical JSON form that
// reads back to settings judging every payment alike; and Evaluate under
// them reports every rule once, in order, with an action that matches the
// score and the thresholds.
func FuzzConfigJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `null`, `{"card_velocity":{},"email_velocity":{},"ip_velocity":{}}`,
		`{"card_velocity":{"max":2,"window":"10m0s","score":100},"ip_velocity":{"score":-1},"blocked_bins":["400000"],"blocked_countries":["KP"],"country_mismatch_score":60,"review_score":40}`,
		`{"card_velocity":{"window":"-1s"}}`, `{"card_velocity":{"window":600}}`, `{"card_velocity":{"window":"1e3s"}}`,
		`{"card_velocity":{"window":"2562047h47m16.854775807s"}}`, `{"card_velocity":{"window":"-2562047h47m16.854775808s"}}`,
		`{"blocked_bins":["","4000000","4a","٤"]}`, `{"blocked_bins":[]}`, `{"blocked_countries":["us","UK","US\u0000"]}`,
		`{"review_score":100,"reject_score":50}`, `{"review_score":-1}`, `{"country_mismatch_score":-2}`,
		`{"card_velocity":{"score":9223372036854775807},"email_velocity":{"score":9223372036854775807},"reject_score":9223372036854775807,"review_score":9223372036854775807}`,
		`{"card_velocity":{"max":1e400}}`, `{"card_velocity":{"max":1.5}}`, `{"review_score":"50"}`,
	} {
		f.Add([]byte(s), int64(0), 1, 0, 0, "400000", "US", "BR")
	}
	f.Add([]byte(`{"ip_velocity":{"score":-1}}`), int64(1000), 9, 99, 100, "4242", "KP", "")
	f.Add([]byte(`{"blocked_bins":["4"]}`), int64(math.MaxInt64), math.MaxInt, math.MinInt, -1, "\xff", "", "\x00")
	f.Fuzz(func(t *testing.T, data []byte, amount int64, cardOrders, emailOrders, ipOrders int, bin, card, billing string) {
		var c Config
		if err := json.Unmarshal(data, &c); err != nil {
			return
		}
		d := c.WithDefaults()
		if !reflect.DeepEqual(d.WithDefaults(), d) {
			t.Fatalf("WithDefaults is not idempotent: %+v then %+v", d, d.WithDefaults())
		}
		if err := c.Validate(); err != nil {
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate(%s) = %v, want ErrInvalidConfig", data, err)
			}
			return
		}
		first, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("Marshal of valid settings from %s: %v", data, err)
		}
		var back Config
		if err := json.Unmarshal(first, &back); err != nil {
			t.Fatalf("settings marshal to %s, which does not read back: %v", first, err)
		}
		second, _ := json.Marshal(back)
		if !bytes.Equal(first, second) {
			t.Fatalf("settings from %s marshal to %s, then to %s", data, first, second)
		}
		if err := back.Validate(); err != nil {
			t.Fatalf("settings %s validate, read back they do not: %v", first, err)
		}
		facts := Facts{Amount: amount, Currency: "USD", AmountLimit: 500, CardBIN: bin, CardCountry: card,
			BillingCountry: billing, CardOrders: cardOrders, EmailOrders: emailOrders, IPOrders: ipOrders}
		r := Evaluate(c, facts)
		if r2 := Evaluate(back, facts); !reflect.DeepEqual(r, r2) {
			t.Fatalf("settings read back judge otherwise: %+v, then %+v", r, r2)
		}
		names := make([]string, len(r.Reasons))
		hits := 0
		for i, reason := range r.Reasons {
			names[i] = reason.Name
			switch reason.Status {
			case Accept:
			case Review, Reject:
				hits++
			default:
				t.Fatalf("rule %s has status %q", reason.Name, reason.Status)
			}
		}
		if !slices.Equal(names, Rules()) {
			t.Fatalf("reasons %q, want every rule in order %q", names, Rules())
		}
		if (hits == 0) != (r.Rule == "") || (hits == 0 && r.Score != 0) {
			t.Fatalf("%d rules hit but Rule = %q, Score = %d", hits, r.Rule, r.Score)
		}
		if hits > 0 && r.Score <= 0 {
			t.Fatalf("%d rules hit with positive scores but Score = %d (overflow?) under %s", hits, r.Score, first)
		}
		want := Accept
		switch {
		case r.Score >= d.RejectScore:
			want = Reject
		case r.Score >= d.ReviewScore:
			want = Review
		}
		if r.Action != want {
			t.Fatalf("score %d with thresholds %d/%d gives %s, want %s", r.Score, d.ReviewScore, d.RejectScore, r.Action, want)
		}
	})
}

// FuzzDuration checks that every duration survives JSON: what MarshalJSON
// writes, UnmarshalJSON reads back to the same duration.
func FuzzDuration(f *testing.F) {
	for _, d := range []int64{0, 1, -1, int64(time.Minute), int64(90 * time.Minute), math.MaxInt64, math.MinInt64, 999_999_999} {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, n int64) {
		b, err := json.Marshal(Duration(n))
		if err != nil {
			t.Fatal(err)
		}
		var back Duration
		if err := json.Unmarshal(b, &back); err != nil || back != Duration(n) {
			t.Fatalf("Duration(%d) marshals to %s, which reads back as %d, %v", n, b, back, err)
		}
	})
}

// FuzzBIN checks that BIN returns the first six characters when they are
// ASCII digits and "" otherwise.
func FuzzBIN(f *testing.F) {
	for _, s := range []string{"424242******4242", "424242", "42424", "", "٤٢٤٢٤٢", "42424\x00", "\xff424242", "4242424242424242"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, masked string) {
		got := BIN(masked)
		want := ""
		if len(masked) >= 6 {
			want = masked[:6]
			for i := range 6 {
				if masked[i] < '0' || masked[i] > '9' {
					want = ""
				}
			}
		}
		if got != want {
			t.Fatalf("BIN(%q) = %q, want %q", masked, got, want)
		}
	})
}

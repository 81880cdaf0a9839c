package optimise

import (
	"fmt"
	"slices"
	"testing"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/connector"
)

// simAcquirer and simBank are offers like the simulated connectors': every
// brand and APM, and cards alone.
var (
	simAcquirer = connector.Offer{CardBrands: []string{"visa", "mastercard", "amex"}, APMs: []string{"PIX", "OXXO", "IDEAL"}}
	simBank     = connector.Offer{CardBrands: []string{"visa", "mastercard", "amex"}}
)

func cardOpt(brand string) Option { return Option{Method: CardMethod, Brand: brand} }
func apmOpt(name string) Option   { return Option{Method: name} }

func TestCandidates(t *testing.T) {
	cards := []Option{cardOpt("visa"), cardOpt("mastercard"), cardOpt("amex")}
	tests := []struct {
		name              string
		offer             connector.Offer
		currency, country string
		want              []Option
	}{
		{"USD: cards only, no APM takes USD", simAcquirer, "USD", "", cards},
		{"EUR without a country: cards and iDEAL", simAcquirer, "EUR", "", append(slices.Clone(cards), apmOpt("IDEAL"))},
		{"EUR in NL: cards and iDEAL", simAcquirer, "EUR", "NL", append(slices.Clone(cards), apmOpt("IDEAL"))},
		{"EUR in DE: iDEAL serves NL only", simAcquirer, "EUR", "DE", cards},
		{"BRL in BR: PIX", simAcquirer, "BRL", "BR", append(slices.Clone(cards), apmOpt("PIX"))},
		{"MXN in MX: OXXO", simAcquirer, "MXN", "MX", append(slices.Clone(cards), apmOpt("OXXO"))},
		{"MXN in BR: OXXO serves MX only", simAcquirer, "MXN", "BR", cards},
		{"card-only connector: no APM even where one fits", simBank, "BRL", "BR", cards},
		{"APM names are looked up case-insensitively", connector.Offer{APMs: []string{"pix"}}, "BRL", "BR", []Option{apmOpt("PIX")}},
		{"unknown APMs, empty and repeated brands are dropped",
			connector.Offer{CardBrands: []string{"visa", "", "visa"}, APMs: []string{"BOLETO"}}, "BRL", "BR", []Option{cardOpt("visa")}},
		{"nothing offered", connector.Offer{}, "USD", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Candidates(tc.offer, tc.currency, tc.country); !slices.Equal(got, tc.want) {
				t.Errorf("Candidates = %v, want %v", got, tc.want)
			}
		})
	}
}

// row is a Ranked as the tests write it: option, succeeded, sample, rate.
type row struct {
	opt       Option
	succeeded int64
	sample    int64
	rate      string
}

func TestRank(t *testing.T) {
	visa, mc, amex, ideal, pix := cardOpt("visa"), cardOpt("mastercard"), cardOpt("amex"), apmOpt("IDEAL"), apmOpt("PIX")
	tally := func(o Option, ok, failed int64) Tally { return Tally{Option: o, Succeeded: ok, Failed: failed} }
	tests := []struct {
		name       string
		candidates []Option
		tallies    []Tally
		want       []row
	}{
		{
			name:       "no orders: every candidate unobserved, by name",
			candidates: []Option{visa, ideal, mc, amex},
			want:       []row{{amex, 0, 0, ""}, {mc, 0, 0, ""}, {visa, 0, 0, ""}, {ideal, 0, 0, ""}},
		},
		{
			name:       "higher rate first",
			candidates: []Option{visa, mc, ideal},
			tallies:    []Tally{tally(visa, 2, 1), tally(mc, 1, 1), tally(ideal, 1, 0)},
			want:       []row{{ideal, 1, 1, "1.0000"}, {visa, 2, 3, "0.6667"}, {mc, 1, 2, "0.5000"}},
		},
		{
			name:       "observed before unobserved, even at a rate of zero",
			candidates: []Option{visa, mc},
			tallies:    []Tally{tally(mc, 0, 4)},
			want:       []row{{mc, 0, 4, "0.0000"}, {visa, 0, 0, ""}},
		},
		{
			name:       "equal rates: the larger sample first",
			candidates: []Option{visa, mc},
			tallies:    []Tally{tally(visa, 1, 1), tally(mc, 3, 3)},
			want:       []row{{mc, 3, 6, "0.5000"}, {visa, 1, 2, "0.5000"}},
		},
		{
			name:       "equal rates and samples: by name",
			candidates: []Option{visa, pix, amex},
			tallies:    []Tally{tally(visa, 1, 1), tally(pix, 1, 1), tally(amex, 1, 1)},
			want:       []row{{amex, 1, 2, "0.5000"}, {visa, 1, 2, "0.5000"}, {pix, 1, 2, "0.5000"}},
		},
		{
			name:       "rates compared exactly, not as rounded: 6666/10000 below 2/3",
			candidates: []Option{visa, mc},
			tallies:    []Tally{tally(visa, 6666, 3334), tally(mc, 2, 1)},
			want:       []row{{mc, 2, 3, "0.6667"}, {visa, 6666, 10000, "0.6666"}},
		},
		{
			name:       "tallies of methods that are not candidates are ignored",
			candidates: []Option{visa},
			tallies:    []Tally{tally(pix, 5, 0), tally(cardOpt("unknown"), 1, 0), tally(visa, 0, 1)},
			want:       []row{{visa, 0, 1, "0.0000"}},
		},
		{
			name:       "one option's tallies are added up",
			candidates: []Option{visa},
			tallies:    []Tally{tally(visa, 1, 0), tally(visa, 0, 1)},
			want:       []row{{visa, 1, 2, "0.5000"}},
		},
		{
			name:       "a repeated candidate is ranked once",
			candidates: []Option{visa, visa},
			want:       []row{{visa, 0, 0, ""}},
		},
		{
			name: "nothing to rank",
			want: []row{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Rank(tc.candidates, tc.tallies)
			if len(got) != len(tc.want) {
				t.Fatalf("Rank = %v, want %d entries", got, len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Rank != i+1 || g.Option != w.opt || g.Succeeded != w.succeeded || g.Sample != w.sample || g.Rate() != w.rate {
					t.Errorf("entry %d = #%d %s %d/%d rate %q, want #%d %s %d/%d rate %q",
						i, g.Rank, g.Option, g.Succeeded, g.Sample, g.Rate(), i+1, w.opt, w.succeeded, w.sample, w.rate)
				}
			}
		})
	}
}

// TestRankIgnoresTallyOrder: the same counts in any order rank the same.
func TestRankIgnoresTallyOrder(t *testing.T) {
	cands := Candidates(simAcquirer, "EUR", "NL")
	tallies := []Tally{
		{Option: cardOpt("visa"), Succeeded: 3, Failed: 1}, {Option: cardOpt("mastercard"), Succeeded: 3, Failed: 1},
		{Option: apmOpt("IDEAL"), Succeeded: 1, Failed: 2}, {Option: cardOpt("amex"), Succeeded: 0, Failed: 0},
	}
	want := Rank(cands, tallies)
	for i := range len(tallies) {
		rotated := append(slices.Clone(tallies[i:]), tallies[:i]...)
		reversedCands := slices.Clone(cands)
		slices.Reverse(reversedCands)
		if got := Rank(reversedCands, rotated); !slices.Equal(got, want) {
			t.Errorf("rotation %d: %v, want %v", i, got, want)
		}
	}
}

func TestRate(t *testing.T) {
	tests := []struct {
		succeeded, sample int64
		bp                int64
		rate              string
	}{
		{0, 0, -1, ""},
		{0, 1, 0, "0.0000"},
		{1, 1, 10000, "1.0000"},
		{1, 3, 3333, "0.3333"},
		{2, 3, 6667, "0.6667"},
		{1, 8, 1250, "0.1250"},
		{1, 20000, 1, "0.0001"},        // half a basis point rounds up
		{3, 40000, 1, "0.0001"},        // 0.75 rounds up
		{1, 30000, 1, "0.0001"},        // 0.33 would be 0: a success is never a rate of zero
		{19999, 20000, 9999, "0.9999"}, // 9999.5 would be 10000: a failure is never a rate of one
		{20000, 20000, 10000, "1.0000"},
		{14999, 20000, 7500, "0.7500"}, // 7499.5 rounds half up
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d of %d", tc.succeeded, tc.sample), func(t *testing.T) {
			r := Ranked{Succeeded: tc.succeeded, Sample: tc.sample}
			if r.RateBasisPoints() != tc.bp || r.Rate() != tc.rate {
				t.Errorf("rate = %d bp %q, want %d bp %q", r.RateBasisPoints(), r.Rate(), tc.bp, tc.rate)
			}
		})
	}
}

// TestClassify: every code of the table is deliberately counted as a
// success, as a failure, or not at all.
func TestClassify(t *testing.T) {
	success := map[string]bool{codes.OK.ID: true, codes.AuthorisationExpired.ID: true}
	for _, c := range codes.All() {
		t.Run(c.ID, func(t *testing.T) {
			counted, succeeded := Classify(c.ID)
			var wantCounted, wantSucceeded bool
			switch {
			case success[c.ID]:
				wantCounted, wantSucceeded = true, true
			case c.ID[0] == 'A' || c.ID[0] == 'C' || c.ID[0] == 'E':
				wantCounted = true
			}
			if counted != wantCounted || succeeded != wantSucceeded {
				t.Errorf("Classify(%s) = %t, %t; want %t, %t", c, counted, succeeded, wantCounted, wantSucceeded)
			}
		})
	}
	for _, tc := range []struct {
		code              string
		counted, succeded bool
	}{
		{"0000", true, true}, {"A0006", true, true}, {"A0001", true, false}, {"C0001", true, false},
		{"E0001", true, false}, {"R0003", false, false}, {"S0001", false, false}, {"0002", false, false},
		{"I0013", false, false}, {"", false, false},
	} {
		if counted, succeeded := Classify(tc.code); counted != tc.counted || succeeded != tc.succeded {
			t.Errorf("Classify(%q) = %t, %t; want %t, %t", tc.code, counted, succeeded, tc.counted, tc.succeded)
		}
	}
}

func TestWindowDays(t *testing.T) {
	if WindowDays != 30 {
		t.Errorf("WindowDays = %d, want 30", WindowDays)
	}
}

// TestRankConnectors: connectors with a sample first, the higher rate, the
// larger sample, then the name; tallies of other connectors ignored, a
// connector named twice ranked once.
func TestRankConnectors(t *testing.T) {
	tallies := []Tally{
		{Option: Option{Method: CardMethod, Brand: "visa"}, Connector: "a", Succeeded: 3, Failed: 1},
		{Option: Option{Method: "PIX"}, Connector: "a", Succeeded: 0, Failed: 0},
		{Option: Option{Method: CardMethod, Brand: "visa"}, Connector: "b", Succeeded: 6, Failed: 2},
		{Option: Option{Method: CardMethod, Brand: "visa"}, Connector: "c", Succeeded: 1, Failed: 1},
		{Option: Option{Method: CardMethod, Brand: "visa"}, Connector: "gone", Succeeded: 9, Failed: 0},
	}
	got := RankConnectors([]string{"d", "c", "a", "b", "a"}, tallies)
	want := []RankedConnector{
		{Connector: "b", Rank: 1, Succeeded: 6, Sample: 8},
		{Connector: "a", Rank: 2, Succeeded: 3, Sample: 4},
		{Connector: "c", Rank: 3, Succeeded: 1, Sample: 2},
		{Connector: "d", Rank: 4},
	}
	if !slices.Equal(got, want) {
		t.Errorf("RankConnectors = %+v\nwant %+v", got, want)
	}
}

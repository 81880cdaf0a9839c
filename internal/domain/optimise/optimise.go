// Package optimise decides which payment methods an account can offer for a
// payment and in what order (POST /v1/optimise): every card brand and every
// alternative payment method that the account's connector takes and that
// fits the currency and country, ranked by the success rate the account's
// own orders of the last Window observed with each.
//
// The package is pure: the caller counts the orders (models.MethodTallies)
// and hands the counts in, so the ranking is table-tested without a
// database and a workflow could call it too.
package optimise

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/domain/apm"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/connector"
)

// Window is how far back the account's orders count. Thirty days is long
// enough for a few dozen orders on a small account and short enough that
// an acquirer's or provider's change of behaviour shows within a month.
const Window = 30 * 24 * time.Hour

// WindowDays is Window in days, as the answer states it.
const WindowDays = int(Window / (24 * time.Hour))

// CardMethod is the payment_method of every card option; the option's
// Brand tells the cards apart.
const CardMethod = "CARD"

// Option is one method a shopper could pay with: a card brand (Method
// CardMethod, Brand "visa") or an alternative payment method (Method
// "PIX", no Brand).
type Option struct {
	Method string
	Brand  string
}

// String names the option: "CARD:visa" or "PIX".
func (o Option) String() string {
	if o.Brand == "" {
		return o.Method
	}
	return o.Method + ":" + o.Brand
}

// compare orders options by name: Method, then Brand.
func (o Option) compare(other Option) int {
	return cmp.Or(strings.Compare(o.Method, other.Method), strings.Compare(o.Brand, other.Brand))
}

// Candidates are the options an account whose connector offers offer can
// propose for a payment in currency to a shopper in country ("" when the
// caller did not say): every card brand the connector charges (cards take
// any currency the account takes, in any country), then every APM it takes
// whose currencies include currency and, when country is given, whose
// countries include country. Unknown APM names in offer are left out.
func Candidates(offer connector.Offer, currency, country string) []Option {
	var out []Option
	seen := map[Option]bool{}
	add := func(o Option) {
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	for _, b := range offer.CardBrands {
		if b != "" {
			add(Option{Method: CardMethod, Brand: b})
		}
	}
	for _, name := range offer.APMs {
		m, ok := apm.Lookup(name)
		if !ok || !slices.Contains(m.Currencies, currency) {
			continue
		}
		if country != "" && !slices.Contains(m.Countries, country) {
			continue
		}
		add(Option{Method: m.Name})
	}
	return out
}

// successCodes are the final result codes that count as a success of the
// order's method: the payment was authorised (0000, whatever the merchant
// did next: capture, refund, cancel), or it was authorised and the merchant
// let the authorisation lapse (A0006), which says nothing against the
// method.
var successCodes = []string{codes.OK.ID, codes.AuthorisationExpired.ID}

// failureFamilies are the families of result codes that count as a failure
// of the order's method: A declines (issuer, 3-D Secure, the shopper giving
// up at the provider or on the page), C connector errors and E acquirer
// timeouts. Risk decisions (R) are the account's own rules, which would
// have stopped any method; system errors (S) are ours; request errors (I)
// never make an order. Those orders are not counted at all.
var failureFamilies = []string{"A", "C", "E"}

// SuccessCodes lists the result codes that count as a success (for the
// query that counts orders).
func SuccessCodes() []string { return slices.Clone(successCodes) }

// FailureFamilies lists the first letters of the result codes that count as
// a failure unless SuccessCodes holds the code (for the query that counts
// orders).
func FailureFamilies() []string { return slices.Clone(failureFamilies) }

// Classify says whether an order that ended with resultCode counts towards
// its method's rate, and whether as a success. It is the rule the query
// that counts orders applies in SQL.
func Classify(resultCode string) (counted, succeeded bool) {
	if slices.Contains(successCodes, resultCode) {
		return true, true
	}
	if resultCode != "" && slices.Contains(failureFamilies, resultCode[:1]) {
		return true, false
	}
	return false, false
}

// Tally is how one option fared at one connector in the account's orders
// of the window: how many of them counted (Classify) and how many of those
// succeeded.
type Tally struct {
	Option
	Connector string
	Succeeded int64
	Failed    int64
}

// Ranked is one option of the answer with its place and its record.
type Ranked struct {
	Option
	// Rank is the option's place, from 1.
	Rank int
	// Succeeded of Sample counted orders succeeded; Sample 0 means the
	// account has no order with the option in the window.
	Succeeded int64
	Sample    int64
}

// Observed reports whether the option has a sample.
func (r Ranked) Observed() bool { return r.Sample > 0 }

// RateBasisPoints is the success rate in hundredths of a percent, rounded
// half up (2 of 3 is 6667), except that it is 10000 only when every order
// succeeded and 0 only when none did: 19999 of 20000 is 9999, not a rate
// that claims no failure. -1 without a sample.
func (r Ranked) RateBasisPoints() int64 {
	if r.Sample <= 0 {
		return -1
	}
	bp := (r.Succeeded*10000*2 + r.Sample) / (2 * r.Sample)
	switch {
	case bp == 10000 && r.Succeeded < r.Sample:
		return 9999
	case bp == 0 && r.Succeeded > 0:
		return 1
	}
	return bp
}

// Rate is the success rate as a decimal fraction with four digits ("0.6667",
// "1.0000"), or "" without a sample. It is text, like the interface's
// amounts, so no float stands between the count and the answer.
func (r Ranked) Rate() string {
	bp := r.RateBasisPoints()
	if bp < 0 {
		return ""
	}
	frac := strconv.FormatInt(bp%10000, 10)
	return strconv.FormatInt(bp/10000, 10) + "." + strings.Repeat("0", 4-len(frac)) + frac
}

// Rank orders candidates by their tallies:
//
//  1. options with a sample before options without one;
//  2. among those with a sample, the higher success rate first, compared
//     exactly (a/b against c/d as a·d against c·b), not as the rounded
//     rate the answer shows;
//  3. on equal rates, the larger sample first: the same rate over more
//     orders is the better evidence;
//  4. then by name (Method, then Brand), so the order never depends on the
//     order the counts arrived in.
//
// Tallies of options that are not candidates (a method the connector no
// longer takes, another currency's APM) are ignored; tallies of one option
// given twice are added up.
func Rank(candidates []Option, tallies []Tally) []Ranked {
	byOption := map[Option]Tally{}
	for _, t := range tallies {
		sum := byOption[t.Option]
		sum.Succeeded += max(t.Succeeded, 0)
		sum.Failed += max(t.Failed, 0)
		byOption[t.Option] = sum
	}
	out := make([]Ranked, 0, len(candidates))
	seen := map[Option]bool{}
	for _, o := range candidates {
		if seen[o] {
			continue
		}
		seen[o] = true
		t := byOption[o]
		out = append(out, Ranked{Option: o, Succeeded: t.Succeeded, Sample: t.Succeeded + t.Failed})
	}
	slices.SortFunc(out, compareRanked)
	for i := range out {
		out[i].Rank = i + 1
	}
	return out
}

// RankedConnector is one connector of a routed account's answer with its
// place and its record over every method.
type RankedConnector struct {
	Connector string
	Rank      int
	Succeeded int64
	Sample    int64
}

// Rated is the connector's record as a Ranked, for its rate.
func (r RankedConnector) Rated() Ranked { return Ranked{Succeeded: r.Succeeded, Sample: r.Sample} }

// RankConnectors orders the connectors a routed account's payments may go
// to by how its orders of the window fared at each, over every method, by
// Rank's rules (a sample first, the higher rate, the larger sample, then
// the name). Tallies of other connectors are ignored.
func RankConnectors(connectors []string, tallies []Tally) []RankedConnector {
	sums := map[string]Tally{}
	for _, t := range tallies {
		s := sums[t.Connector]
		s.Succeeded += max(t.Succeeded, 0)
		s.Failed += max(t.Failed, 0)
		sums[t.Connector] = s
	}
	out := make([]RankedConnector, 0, len(connectors))
	for _, name := range connectors {
		if slices.ContainsFunc(out, func(r RankedConnector) bool { return r.Connector == name }) {
			continue
		}
		s := sums[name]
		out = append(out, RankedConnector{Connector: name, Succeeded: s.Succeeded, Sample: s.Succeeded + s.Failed})
	}
	slices.SortFunc(out, func(a, b RankedConnector) int {
		if c := compareRates(a.Rated(), b.Rated()); c != 0 {
			return c
		}
		return strings.Compare(a.Connector, b.Connector)
	})
	for i := range out {
		out[i].Rank = i + 1
	}
	return out
}

// compareRanked is Rank's order: negative when a goes first.
func compareRanked(a, b Ranked) int {
	if c := compareRates(a, b); c != 0 {
		return c
	}
	return a.Option.compare(b.Option)
}

// compareRates orders records: a sample first, then the higher rate, then
// the larger sample; 0 when they tie.
func compareRates(a, b Ranked) int {
	if a.Observed() != b.Observed() {
		if a.Observed() {
			return -1
		}
		return 1
	}
	if a.Observed() {
		// a.Succeeded/a.Sample against b.Succeeded/b.Sample. Counts of one
		// account's orders in a month stay far below 2^31, so the products
		// cannot overflow int64.
		if c := cmp.Compare(b.Succeeded*a.Sample, a.Succeeded*b.Sample); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Sample, a.Sample); c != 0 {
			return c
		}
	}
	return 0
}

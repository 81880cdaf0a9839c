// Package testmode says what a test account may do and what counts as test
// data: the simulators' documented cards, the reserved example domains and
// the addresses that never belong to a shopper. A test account's payments
// with test data never trip the velocity rules, and dedicated test emails
// reach each risk outcome on purpose, the way the test cards reach each
// card outcome; a live account refuses the test cards.
package testmode

import (
	"net/netip"
	"strings"
)

// Account modes.
const (
	Test = "test"
	Live = "live"
)

// Valid reports whether mode is an account mode.
func Valid(mode string) bool { return mode == Test || mode == Live }

// Cards are the simulators' documented test cards (docs/decisions.md).
var Cards = []string{
	"4242424242424242", "5555555555554444", "4000000000000002", "4000000000009995", "4000000000000069",
	"4000000000000127", "4000000000003220", "4000000000000119", "4000000000000341", "4000000000000267",
	"4000000000000259",
}

// IsTestCard reports whether pan is one of Cards.
func IsTestCard(pan string) bool {
	for _, c := range Cards {
		if c == pan {
			return true
		}
	}
	return false
}

// IsTestCardMasked reports whether a card known by its first six and last
// four digits (the worker never sees more) is one of Cards.
func IsTestCardMasked(bin, last4 string) bool {
	for _, c := range Cards {
		if len(bin) == 6 && len(last4) == 4 && c[:6] == bin && c[len(c)-4:] == last4 {
			return true
		}
	}
	return false
}

// The risk test emails of a test account: each reaches its outcome on every
// payment (the velocity one from its second payment on).
const (
	EmailReview   = "review@paygate.test"
	EmailReject   = "reject@paygate.test"
	EmailVelocity = "velocity@paygate.test"
)

// testDomains are reserved for documentation and tests (RFC 2606, RFC
// 6761): no shopper has an address there.
var testDomains = []string{"example.com", "example.org", "example.net"}
var testTLDs = []string{".test", ".example", ".invalid", ".localhost"}

// IsTestEmail reports whether email is at a reserved example or test
// domain.
func IsTestEmail(email string) bool {
	_, domain, ok := strings.Cut(strings.ToLower(strings.TrimSpace(email)), "@")
	if !ok || domain == "" {
		return false
	}
	for _, d := range testDomains {
		if domain == d || strings.HasSuffix(domain, "."+d) {
			return true
		}
	}
	for _, tld := range testTLDs {
		if strings.HasSuffix(domain, tld) {
			return true
		}
	}
	return false
}

// testNets are loopback, private and documentation ranges: a developer's
// machine or network, or an example.
var testNets = func() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range []string{"127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7",
		"192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32"} {
		out = append(out, netip.MustParsePrefix(p))
	}
	return out
}()

// IsTestIP reports whether ip is a loopback, private or documentation
// address.
func IsTestIP(ip string) bool {
	a, err := netip.ParseAddr(strings.TrimSpace(ip))
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range testNets {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// SimulatedConnectors are the connectors that reach a simulator; a test
// account may use only these.
var SimulatedConnectors = []string{"sim-acquirer", "sim-bank"}

// Simulated reports whether connector is one of SimulatedConnectors.
func Simulated(connector string) bool {
	for _, c := range SimulatedConnectors {
		if c == connector {
			return true
		}
	}
	return false
}

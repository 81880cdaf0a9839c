package testmode

import "testing"

func TestTestData(t *testing.T) {
	tests := []struct {
		name string
		got  bool
		want bool
	}{
		{"the README's card", IsTestCard("4242424242424242"), true},
		{"the slow card", IsTestCard("4000000000000267"), true},
		{"the dispute card", IsTestCard("4000000000000259"), true},
		{"another Luhn-valid Visa", IsTestCard("4111111111111111"), false},
		{"a test card by BIN and last 4", IsTestCardMasked("424242", "4242"), true},
		{"the declined card by BIN and last 4", IsTestCardMasked("400000", "0002"), true},
		{"an unknown card by BIN and last 4", IsTestCardMasked("411111", "1111"), false},
		{"a short BIN", IsTestCardMasked("4242", "4242"), false},
		{"example.com", IsTestEmail("ada@example.com"), true},
		{"a subdomain of example.org", IsTestEmail("ada@shop.example.org"), true},
		{"upper case", IsTestEmail("Ada@EXAMPLE.NET"), true},
		{"the .test TLD", IsTestEmail(EmailReview), true},
		{"a real domain", IsTestEmail("ada@gmail.com"), false},
		{"a lookalike domain", IsTestEmail("ada@notexample.com"), false},
		{"no domain", IsTestEmail("ada"), false},
		{"loopback", IsTestIP("127.0.0.1"), true},
		{"IPv6 loopback", IsTestIP("::1"), true},
		{"documentation range", IsTestIP("203.0.113.7"), true},
		{"private range", IsTestIP("192.168.1.20"), true},
		{"IPv4-mapped loopback", IsTestIP("::ffff:127.0.0.1"), true},
		{"a public address", IsTestIP("8.8.8.8"), false},
		{"not an address", IsTestIP("localhost"), false},
		{"simulated connector", Simulated("sim-bank"), true},
		{"a real acquirer", Simulated("adyen"), false},
		{"modes", Valid(Test) && Valid(Live) && !Valid("sandbox"), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %v, want %v", tc.got, tc.want)
			}
		})
	}
}

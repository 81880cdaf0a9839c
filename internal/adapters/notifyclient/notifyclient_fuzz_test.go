package notifyclient

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// Fuzz targets: go test -run='^$' -fuzz='^FuzzCheckURL$' ./internal/adapters/notifyclient
// (or make fuzz). Plain go test runs the seeds.

// FuzzCheckURL checks that every notify URL CheckURL lets through parses as
// an absolute http or https URL with a host and no user info, and holds no
// control character in the part that is sent (the fragment never is).
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://merchant.example/notify", "http://203.0.113.7:8080/n?a=1#f", "https://user:pw@merchant.example/",
		"ftp://merchant.example/", "https:///path", "https://", "//merchant.example/n", "merchant.example/n",
		"https://[::1]/", "https://[fe80::1%25eth0]/", "https://127.0.0.1/", "http://0x7f.1/", "http://2130706433/",
		"https://merchant.example\x00.evil/", "https://merchant.example/\r\nX: y", "https://mérchant.example/",
		"https://\xff/", "HTTPS://MERCHANT.EXAMPLE/", " https://merchant.example/", "https://a b/", "",
		"javascript:alert(1)", "http://[::ffff:127.0.0.1]/", "http://@merchant.example/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		err := CheckURL(raw)
		if err != nil {
			if !errors.Is(err, ErrForbiddenAddress) {
				t.Fatalf("CheckURL(%q) = %v, want ErrForbiddenAddress", raw, err)
			}
			return
		}
		u, perr := url.Parse(raw)
		if perr != nil {
			t.Fatalf("CheckURL(%q) accepts what url.Parse refuses: %v", raw, perr)
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "" || u.User != nil {
			t.Fatalf("CheckURL(%q) accepts scheme %q host %q user %v", raw, u.Scheme, u.Hostname(), u.User)
		}
		sent, _, _ := strings.Cut(raw, "#")
		if strings.ContainsFunc(sent, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			t.Fatalf("CheckURL(%q) accepts a control character", raw)
		}
	})
}

// mustForbid are ranges no delivery may reach, whatever list the guard uses.
var mustForbid = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"), netip.MustParsePrefix("224.0.0.0/4"),
	netip.MustParsePrefix("::/128"), netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("fe80::/10"), netip.MustParsePrefix("ff00::/8"),
}

// FuzzForbidden checks the address guard on any 4 or 16 bytes: the private,
// loopback, link-local, CGNAT, multicast and unspecified ranges are always
// forbidden, and an IPv4 address that is forbidden stays forbidden when it
// comes IPv4-mapped in IPv6.
func FuzzForbidden(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1", "10.1.2.3", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
		"8.8.8.8", "224.0.0.1", "255.255.255.255", "198.18.0.1", "240.0.0.1", "::1", "::", "fe80::1", "fd00::1",
		"ff02::1", "::ffff:127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::", "2001:4860::8888",
	} {
		f.Add(netip.MustParseAddr(s).AsSlice())
	}
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		ip, ok := netip.AddrFromSlice(b)
		if !ok {
			if !Forbidden(ip) {
				t.Fatalf("the invalid address from %v is not forbidden", b)
			}
			return
		}
		got := Forbidden(ip)
		for _, p := range mustForbid {
			if p.Contains(ip.Unmap()) && !got {
				t.Fatalf("Forbidden(%s) = false inside %s", ip, p)
			}
		}
		if ip.Is4() && got && !Forbidden(netip.AddrFrom16(ip.As16())) {
			t.Fatalf("%s is forbidden but its IPv4-mapped form %s is not", ip, netip.AddrFrom16(ip.As16()))
		}
	})
}

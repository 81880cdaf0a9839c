package notifyclient

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

// TestForbidden names each IANA special-purpose range (IPv4 and IPv6
// Special-Purpose Address Registries, plus multicast and reserved space)
// with addresses at its edges, and global unicast addresses that must
// stay reachable.
func TestForbidden(t *testing.T) {
	tests := []struct {
		name string
		ip   string
		want bool
	}{
		// IPv4 special-purpose registry.
		{"0.0.0.0/8 this network (first)", "0.0.0.0", true},
		{"0.0.0.0/8 this network (last)", "0.255.255.255", true},
		{"10.0.0.0/8 private use", "10.1.2.3", true},
		{"10.0.0.0/8 private use (last)", "10.255.255.255", true},
		{"100.64.0.0/10 shared address space (CGNAT)", "100.64.0.1", true},
		{"100.64.0.0/10 shared address space (last)", "100.127.255.255", true},
		{"127.0.0.0/8 loopback", "127.0.0.1", true},
		{"127.0.0.0/8 loopback (other)", "127.8.9.10", true},
		{"169.254.0.0/16 link local (cloud metadata)", "169.254.169.254", true},
		{"172.16.0.0/12 private use", "172.16.0.1", true},
		{"172.16.0.0/12 private use (last)", "172.31.255.255", true},
		{"192.0.0.0/24 IETF protocol assignments", "192.0.0.1", true},
		{"192.0.0.0/24 IETF protocol assignments (DS-Lite 192.0.0.8)", "192.0.0.8", true},
		{"192.0.0.0/24 IETF protocol assignments (NAT64 discovery 192.0.0.170)", "192.0.0.170", true},
		{"192.0.2.0/24 documentation TEST-NET-1", "192.0.2.10", true},
		{"192.31.196.0/24 AS112-v4", "192.31.196.1", true},
		{"192.52.193.0/24 AMT", "192.52.193.1", true},
		{"192.88.99.0/24 6to4 relay anycast (deprecated)", "192.88.99.1", true},
		{"192.168.0.0/16 private use", "192.168.1.1", true},
		{"192.175.48.0/24 AS112 direct delegation", "192.175.48.1", true},
		{"198.18.0.0/15 benchmarking", "198.18.0.1", true},
		{"198.18.0.0/15 benchmarking (last)", "198.19.255.255", true},
		{"198.51.100.0/24 documentation TEST-NET-2", "198.51.100.7", true},
		{"203.0.113.0/24 documentation TEST-NET-3", "203.0.113.7", true},
		{"224.0.0.0/4 multicast", "224.0.0.1", true},
		{"224.0.0.0/4 multicast (last)", "239.255.255.255", true},
		{"240.0.0.0/4 reserved", "240.0.0.1", true},
		{"255.255.255.255/32 limited broadcast", "255.255.255.255", true},

		// IPv6 outside global unicast 2000::/3.
		{"::/128 unspecified", "::", true},
		{"::1/128 loopback", "::1", true},
		{"::ffff:0:0/96 IPv4-mapped loopback", "::ffff:127.0.0.1", true},
		{"::ffff:0:0/96 IPv4-mapped private", "::ffff:10.0.0.1", true},
		{"::ffff:0:0/96 IPv4-mapped benchmarking", "::ffff:198.18.0.1", true},
		{"64:ff9b::/96 NAT64 well-known prefix", "64:ff9b::808:808", true},
		{"64:ff9b::/96 NAT64 of loopback", "64:ff9b::7f00:1", true},
		{"64:ff9b:1::/48 local-use NAT64", "64:ff9b:1::1", true},
		{"100::/64 discard only", "100::1", true},
		{"fc00::/7 unique local", "fc00::1", true},
		{"fc00::/7 unique local (fd)", "fd12:3456::1", true},
		{"fe80::/10 link local", "fe80::1", true},
		{"ff00::/8 multicast", "ff02::1", true},
		{"ff00::/8 multicast (global scope)", "ff0e::1", true},
		{"::/96 IPv4-compatible (deprecated)", "::8.8.8.8", true},

		// IPv6 special-purpose blocks inside 2000::/3.
		{"2001::/32 Teredo", "2001:0:4136:e378:8000:63bf:3fff:fdd2", true},
		{"2001::/23 IETF protocol assignments (ORCHIDv2)", "2001:20::1", true},
		{"2001:db8::/32 documentation", "2001:db8::1", true},
		{"2002::/16 6to4", "2002:c0a8:101::1", true},
		{"2002::/16 6to4 of a public address", "2002:808:808::1", true},
		{"2620:4f:8000::/48 AS112 direct delegation", "2620:4f:8000::1", true},
		{"3fff::/20 documentation", "3fff::1", true},

		// Global unicast: allowed.
		{"IPv4 public (Google DNS)", "8.8.8.8", false},
		{"IPv4 public (Cloudflare)", "1.1.1.1", false},
		{"IPv4 just after 172.16.0.0/12", "172.32.0.1", false},
		{"IPv4 just after 100.64.0.0/10", "100.128.0.1", false},
		{"IPv4 just after 198.18.0.0/15", "198.20.0.1", false},
		{"IPv4 just before 240.0.0.0/4", "223.255.255.254", false},
		{"IPv4-mapped public", "::ffff:8.8.8.8", false},
		{"IPv6 public (Google)", "2001:4860:4860::8888", false},
		{"IPv6 public (Cloudflare)", "2606:4700:4700::1111", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Forbidden(netip.MustParseAddr(tt.ip)); got != tt.want {
				t.Fatalf("Forbidden(%s) = %v, want %v", tt.ip, got, tt.want)
			}
		})
	}
	if !Forbidden(netip.Addr{}) {
		t.Fatal("the zero Addr is not forbidden")
	}
}

// TestRefuseForbiddenAtDial checks the dial-time hook on the address form
// the dialer gives it, v4 and v6, with ports other than 80 and 443.
func TestRefuseForbiddenAtDial(t *testing.T) {
	tests := []struct {
		network, address string
		refused          bool
	}{
		{"tcp4", "127.0.0.1:8080", true},
		{"tcp4", "198.18.0.5:443", true},
		{"tcp6", "[64:ff9b::a00:1]:443", true},
		{"tcp6", "[2002:a00:1::1]:443", true},
		{"tcp6", "[::ffff:169.254.169.254]:80", true},
		{"tcp4", "not an address", true},
		{"tcp4", "8.8.8.8:8443", false},
		{"tcp6", "[2001:4860:4860::8888]:9000", false},
	}
	for _, tt := range tests {
		t.Run(tt.address, func(t *testing.T) {
			err := refuseForbidden(tt.network, tt.address, nil)
			if tt.refused && !errors.Is(err, ErrForbiddenAddress) {
				t.Fatalf("refuseForbidden(%s) = %v, want ErrForbiddenAddress", tt.address, err)
			}
			if !tt.refused && err != nil {
				t.Fatalf("refuseForbidden(%s) = %v, want nil", tt.address, err)
			}
		})
	}
}

func TestCheckURL(t *testing.T) {
	tests := []struct {
		name string
		url  string
		ok   bool
	}{
		{"https", "https://shop.example/notify", true},
		{"http with port and query", "http://shop.example:8080/n?x=1", true},
		{"upper-case scheme", "HTTPS://shop.example/n", true},
		{"ip literal (checked at dial time)", "http://127.0.0.1:9000/n", true},
		{"ftp", "ftp://shop.example/n", false},
		{"javascript", "javascript:alert(1)", false},
		{"file", "file:///etc/passwd", false},
		{"relative", "/notify", false},
		{"no host", "https:///notify", false},
		{"opaque", "https:shop.example", false},
		{"port only", "https://:443/n", false},
		{"user info", "https://user:pass@shop.example/n", false},
		{"user only", "https://user@shop.example/n", false},
		{"empty", "", false},
		{"bad escape", "https://shop.example/%zz", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckURL(tt.url)
			if tt.ok && err != nil {
				t.Fatalf("CheckURL(%q) = %v, want nil", tt.url, err)
			}
			if !tt.ok && !errors.Is(err, ErrForbiddenAddress) {
				t.Fatalf("CheckURL(%q) = %v, want ErrForbiddenAddress", tt.url, err)
			}
		})
	}
}

func TestNewClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/final", http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	t.Run("refuses loopback", func(t *testing.T) {
		resp, err := NewClient(time.Second, false).Post(srv.URL+"/n", "application/x-www-form-urlencoded", nil)
		if err == nil {
			resp.Body.Close()
			t.Fatal("delivery to 127.0.0.1 succeeded")
		}
		if !errors.Is(err, ErrForbiddenAddress) {
			t.Fatalf("err = %v, want ErrForbiddenAddress", err)
		}
	})
	t.Run("refuses localhost by name", func(t *testing.T) {
		u := "http://localhost:" + srv.URL[len("http://127.0.0.1:"):] + "/n"
		resp, err := NewClient(time.Second, false).Get(u)
		if err == nil {
			resp.Body.Close()
			t.Fatal("delivery to localhost succeeded")
		}
		if !errors.Is(err, ErrForbiddenAddress) {
			t.Fatalf("err = %v, want ErrForbiddenAddress", err)
		}
	})
	t.Run("allowPrivate reaches it", func(t *testing.T) {
		resp, err := NewClient(time.Second, true).Post(srv.URL+"/n", "application/x-www-form-urlencoded", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("status = %d, want 204", resp.StatusCode)
		}
	})
	t.Run("redirect not followed", func(t *testing.T) {
		resp, err := NewClient(time.Second, true).Post(srv.URL+"/redirect", "application/x-www-form-urlencoded", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/final" {
			t.Fatalf("status = %d, Location = %q; want 302 to /final", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
	t.Run("defaults", func(t *testing.T) {
		c := NewClient(0, false)
		if c.Timeout != DefaultTimeout {
			t.Fatalf("Timeout = %s, want %s", c.Timeout, DefaultTimeout)
		}
		if c.Transport.(*http.Transport).Proxy != nil {
			t.Fatal("the client takes a proxy from the environment")
		}
	})
}

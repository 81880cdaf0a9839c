package notify

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

func TestForbidden(t *testing.T) {
	tests := []struct {
		ip   string
		want bool
	}{
		{"127.0.0.1", true},
		{"127.8.9.10", true},
		{"::1", true},
		{"10.1.2.3", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"172.32.0.1", false},
		{"192.168.1.1", true},
		{"169.254.169.254", true},
		{"fe80::1", true},
		{"fc00::1", true},
		{"fd12:3456::1", true},
		{"100.64.0.1", true},
		{"100.127.255.255", true},
		{"100.128.0.1", false},
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"::", true},
		{"224.0.0.1", true},
		{"ff02::1", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.0.0.1", true},
		{"8.8.8.8", false},
		{"1.1.1.1", false},
		{"2001:4860::8888", false},
		{"::ffff:8.8.8.8", false},
	}
	for _, tt := range tests {
		t.Run(tt.ip, func(t *testing.T) {
			if got := Forbidden(netip.MustParseAddr(tt.ip)); got != tt.want {
				t.Fatalf("Forbidden(%s) = %v, want %v", tt.ip, got, tt.want)
			}
		})
	}
	if !Forbidden(netip.Addr{}) {
		t.Fatal("the zero Addr is not forbidden")
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

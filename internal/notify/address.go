package notify

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// ErrForbiddenAddress is returned (wrapped) when a notify URL or the address
// it resolves to may not be used for deliveries.
var ErrForbiddenAddress = errors.New("notify: forbidden notify address")

// DefaultTimeout is the per-request timeout of NewClient when none is given.
const DefaultTimeout = 10 * time.Second

// CheckURL refuses a notify URL that is not absolute http or https, has no
// host, or carries user info. It does not resolve the host: the client of
// NewClient checks the address at dial time.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrForbiddenAddress, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: scheme %q is not http or https", ErrForbiddenAddress, u.Scheme)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("%w: %q has no host", ErrForbiddenAddress, raw)
	}
	if u.User != nil {
		return fmt.Errorf("%w: user info in the URL", ErrForbiddenAddress)
	}
	return nil
}

var forbiddenPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),     // "this network"
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
}

// Forbidden reports whether deliveries must not go to ip: loopback, private
// (RFC 1918, fc00::/7), link-local (169.254.0.0/16, fe80::/10), unspecified,
// multicast, 100.64.0.0/10 (CGNAT) or 0.0.0.0/8. IPv4-mapped IPv6 addresses
// are judged as the IPv4 address they carry; an invalid address is forbidden.
func Forbidden(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() {
		return true
	}
	for _, p := range forbiddenPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// refuseForbidden is a net.Dialer Control function: it sees the resolved IP
// of every connection attempt, so DNS rebinding cannot get around it.
func refuseForbidden(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse dial address %q: %v", ErrForbiddenAddress, address, err)
	}
	if Forbidden(ap.Addr()) {
		return fmt.Errorf("%w: %s is a private, loopback, link-local or reserved address", ErrForbiddenAddress, ap.Addr())
	}
	return nil
}

// NewClient returns an HTTP client for deliveries. Each request times out
// after timeout (DefaultTimeout when not positive); redirects are not
// followed (the 3xx response is returned); no proxy is taken from the
// environment; and unless allowPrivate, connecting to any Forbidden address is
// refused at dial time with an error wrapping ErrForbiddenAddress.
func NewClient(timeout time.Duration, allowPrivate bool) *http.Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = refuseForbidden
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = dialer.DialContext
	tr.MaxResponseHeaderBytes = 64 << 10
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

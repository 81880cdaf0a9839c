package notifyclient

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
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

// guardian judges addresses by code.dny.dev/ssrf's lists, generated from
// the IANA IPv4 and IPv6 Special-Purpose Address Registries: every IPv4
// special-purpose block (this network, private use, shared address space
// 100.64/10, loopback, link local, IETF protocol assignments 192.0.0/24,
// documentation, AS112, AMT, the 6to4 relay anycast, benchmarking
// 198.18/15, reserved 240/4, multicast, broadcast) and, for IPv6, anything
// outside global unicast 2000::/3 (loopback, unspecified, IPv4-mapped,
// NAT64 64:ff9b::/96 and 64:ff9b:1::/48, discard, unique local, link
// local, multicast) plus the special-purpose blocks inside it (IETF
// protocol assignments 2001::/23 with Teredo 2001::/32, documentation
// 2001:db8::/32 and 3fff::/20, 6to4 2002::/16, AS112 2620:4f:8000::/48).
// Ports and networks are not its business here: merchants use any port.
var guardian = ssrf.New(ssrf.WithAnyPort(), ssrf.WithAnyNetwork())

// Forbidden reports whether deliveries must not go to ip: any address in an
// IANA special-purpose block (see guardian), so only global unicast
// remains. An IPv4-mapped IPv6 address is judged as the IPv4 address it
// carries; an invalid address is forbidden.
func Forbidden(ip netip.Addr) bool {
	if !ip.IsValid() {
		return true
	}
	return guardian.SafeAddr(ip.Unmap()) != nil
}

// refuseForbidden is a net.Dialer Control function: it sees the resolved IP
// of every connection attempt, so DNS rebinding cannot get around it.
func refuseForbidden(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse dial address %q: %v", ErrForbiddenAddress, address, err)
	}
	if Forbidden(ap.Addr()) {
		return fmt.Errorf("%w: %s is in an IANA special-purpose range (private, loopback, link-local, reserved...)", ErrForbiddenAddress, ap.Addr())
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

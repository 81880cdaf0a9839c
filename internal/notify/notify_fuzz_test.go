package notify

import (
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/signing"
)

// Fuzz targets: go test -run='^$' -fuzz='^FuzzCheckURL$' ./internal/notify
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

// FuzzParseSchedule checks that a schedule ParseSchedule accepts is
// positive with max at least initial, reads back the same from its own
// rendering, and gives delays within [base/2, base] for any attempt, base
// being initial doubled per attempt up to max, always the same for one seed.
func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{
		"", "initial=30s,max=1h,horizon=72h", "max=1s", "initial=2h", "initial=1ns,max=2562047h", " initial = 1m , ",
		"initial=0s", "initial=-1s", "initial=1s,initial=2s", "bogus=1s", "initial", "initial=1e9", "initial=1µs",
		"initial=9223372036854775807ns", "initial=1s,max=9223372036854775807ns", "initial=1s\x00", ",,,",
	} {
		f.Add(s, "order-1", 1)
	}
	f.Add("initial=1ns,max=9223372036854775807ns", "x", 100)
	f.Add("", "", -5)
	f.Fuzz(func(t *testing.T, spec, seed string, attempt int) {
		s, err := ParseSchedule(spec)
		if err != nil {
			return
		}
		if s.Initial <= 0 || s.Max < s.Initial || s.Horizon <= 0 {
			t.Fatalf("ParseSchedule(%q) = %+v", spec, s)
		}
		again, err := ParseSchedule(fmt.Sprintf("initial=%s,max=%s,horizon=%s", s.Initial, s.Max, s.Horizon))
		if err != nil || again != s {
			t.Fatalf("ParseSchedule of %+v rendered = %+v, %v", s, again, err)
		}
		attempt %= 200
		n := max(attempt, 1)
		base := new(big.Int).Lsh(big.NewInt(int64(s.Initial)), uint(n-1))
		if base.Cmp(big.NewInt(int64(s.Max))) > 0 {
			base.SetInt64(int64(s.Max))
		}
		d := time.Duration(base.Int64())
		got := s.Delay(seed, attempt)
		if got < d/2 || got > d {
			t.Fatalf("%+v.Delay(%q, %d) = %s, want within [%s, %s]", s, seed, attempt, got, d/2, d)
		}
		if s.Delay(seed, attempt) != got {
			t.Fatalf("Delay(%q, %d) is not deterministic", seed, attempt)
		}
	})
}

// FuzzWebhookSignature checks the Standard Webhooks headers: what Sign
// makes, VerifyHeaders accepts at the signing time; another key, body or id,
// a changed signature or a timestamp outside the tolerance is refused.
func FuzzWebhookSignature(f *testing.F) {
	f.Add("whsec", "msg_1", int64(1767225600), []byte("merchant_id=10086&amount=12.34"), uint8(0))
	f.Add("", "x", int64(0), []byte{}, uint8(7))
	f.Add("k\x00", "id with spaces", int64(-62135596800), []byte("\x00\xff"), uint8(43))
	f.Add("ключ", "\xff", int64(253402300799), []byte(strings.Repeat("a", 1000)), uint8(255))
	f.Fuzz(func(t *testing.T, key, id string, sec int64, body []byte, at uint8) {
		if strings.TrimSpace(id) == "" || strings.ContainsAny(id, "\r\n") {
			return
		}
		sec %= 1 << 37 // some 4,000 years either side of 1970
		ts := time.Unix(sec, 0)
		h := Sign(key, id, ts, body)
		if err := VerifyHeaders(key, h, body, ts, 0); err != nil {
			t.Fatalf("VerifyHeaders of its own headers = %v", err)
		}
		if err := VerifyHeaders(key, h, body, ts.Add(DefaultTolerance), 0); err != nil {
			t.Fatalf("VerifyHeaders at the edge of the tolerance = %v", err)
		}
		if err := VerifyHeaders(key, h, body, ts.Add(DefaultTolerance+time.Second), 0); !errors.Is(err, ErrStaleTimestamp) {
			t.Fatalf("VerifyHeaders past the tolerance = %v, want ErrStaleTimestamp", err)
		}
		for name, err := range map[string]error{
			"another key":  VerifyHeaders(key+"x", h, body, ts, 0),
			"another body": VerifyHeaders(key, h, append(body[:len(body):len(body)], 'x'), ts, 0),
		} {
			if !errors.Is(err, ErrBadSignature) {
				t.Fatalf("%s: VerifyHeaders = %v, want ErrBadSignature", name, err)
			}
		}
		other := h.Clone()
		other.Set(HeaderID, id+"x")
		if err := VerifyHeaders(key, other, body, ts, 0); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("another id: VerifyHeaders = %v, want ErrBadSignature", err)
		}
		sig := []byte(h.Get(HeaderSignature))
		// Inside the base64, short of its last character, whose low bits the
		// lenient decoder ignores.
		i := 3 + int(at)%(len(sig)-5)
		sig[i] ^= 0x01
		if sig[i] == '=' || sig[i] == 0 {
			return
		}
		other = h.Clone()
		other.Set(HeaderSignature, string(sig))
		if err := VerifyHeaders(key, other, body, ts, 0); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("changed signature %s: VerifyHeaders = %v, want ErrBadSignature", sig, err)
		}
	})
}

// FuzzVerifyBody checks the encryption_data of a notification body: a body
// built by Body with PaymentResultSignature verifies and stops verifying
// when any signed value changes; on any body, VerifyBody accepts exactly a
// form with no repeated field whose encryption_data is the recipe signature.
func FuzzVerifyBody(f *testing.F) {
	f.Add("sign-key", "10086", "1234567890123456789", "12.34", "success", []byte("merchant_id=10086&encryption_data=00"))
	f.Add("", "", "", "", "", []byte(""))
	f.Add("k", "a&b=c", "\x00", "12.3", "\xff", []byte("amount=%zz"))
	f.Add("k", " 1 ", "+", "%41", "é", []byte("a=1&a=2&encryption_data=x"))
	f.Add("k", "1", "2", "3", "4", []byte("merchant_id=1;account_id=2"))
	f.Fuzz(func(t *testing.T, key, merchant, txid, amount, status string, raw []byte) {
		fields := Fields{"merchant_id": merchant, "account_id": "1008601", "transaction_id": txid, "order_no": "A1",
			"currency": "USD", "amount": amount, "order_status": status, "result_info": "ok"}
		fields[EncryptionDataField] = PaymentResultSignature(key, fields)
		body := Body(fields)
		if err := VerifyBody(key, body); err != nil {
			t.Fatalf("VerifyBody(%q) of its own signature = %v", body, err)
		}
		changed := Fields{}
		for k, v := range fields {
			changed[k] = v
		}
		changed["amount"] += "0"
		if err := VerifyBody(key, Body(changed)); !errors.Is(err, ErrBadEncryptionData) {
			t.Fatalf("VerifyBody with the amount changed = %v, want ErrBadEncryptionData", err)
		}

		err := VerifyBody(key, raw)
		v, perr := url.ParseQuery(string(raw))
		want := perr == nil
		for _, vs := range v {
			want = want && len(vs) == 1
		}
		sig := strings.TrimSpace(v.Get(EncryptionDataField))
		values := make([]string, len(PaymentResultFields))
		for i, name := range PaymentResultFields {
			values[i] = v.Get(name)
		}
		want = want && sig != "" && signing.Verify(key, sig, values...)
		if (err == nil) != want || (err != nil && !errors.Is(err, ErrBadEncryptionData)) {
			t.Fatalf("VerifyBody(%q) = %v, want accepted %v", raw, err, want)
		}
	})
}

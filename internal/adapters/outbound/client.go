package outbound

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultTimeout bounds one call to an outside API when its client is
// given none.
const DefaultTimeout = 10 * time.Second

// BaseURL checks the base URL of an outside HTTP API: http or https, a
// host, no user info, query or fragment. It returns it without a trailing
// slash, ready for paths to be appended. who names the client in errors.
func BaseURL(who, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: parse base url: %w", who, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%s: base url scheme must be http or https, got %q", who, u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%s: base url has no host", who)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%s: base url must not carry user info, query or fragment", who)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// Timeout is t, or DefaultTimeout when t is zero; a negative t is an error.
func Timeout(who string, t time.Duration) (time.Duration, error) {
	if t < 0 {
		return 0, fmt.Errorf("%s: negative timeout %s", who, t)
	}
	if t == 0 {
		return DefaultTimeout, nil
	}
	return t, nil
}

// Failures are a client's own errors for a call that got no answer:
// Unavailable when the call provably never reached the other side (no
// connection, an unknown host), Timeout when it may have (the outcome is
// unknown and must be asked for).
type Failures struct {
	Timeout     error
	Unavailable error
}

// Exchange sends req with c and reads at most limit bytes of the answer.
// A failure to get the answer is one of f's (see Of); what names the call
// in errors and holds no card data.
func (f Failures) Exchange(ctx context.Context, c *http.Client, req *http.Request, limit int64, what string) (int, []byte, error) {
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, f.Of(ctx, what, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return 0, nil, f.Of(ctx, what, err)
	}
	return resp.StatusCode, raw, nil
}

// Of classifies a failure to get an answer. Only a failure to connect
// proves the other side did nothing; any other failure leaves the outcome
// unknown and is f.Timeout. The underlying error is formatted, not wrapped,
// so that errors.Is sees only the classification.
func (f Failures) Of(ctx context.Context, what string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return fmt.Errorf("%s: %w: %w", what, f.Timeout, ctxErr)
		}
		return fmt.Errorf("%s: %w", what, ctxErr)
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return fmt.Errorf("%s: %w: cannot connect: %v", what, f.Unavailable, opErr.Err)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && !dnsErr.IsTimeout {
		return fmt.Errorf("%s: %w: cannot resolve host", what, f.Unavailable)
	}
	return fmt.Errorf("%s: %w: %v", what, f.Timeout, err)
}

// JSONRequest builds a request to base's path (with query, if any) whose
// body, when in is not nil, is in as JSON; it accepts JSON back. path is
// escaped (url.PathEscape around each value in it) and goes out as it is.
func JSONRequest(ctx context.Context, base *url.URL, method, path string, query url.Values, in any) (*http.Request, error) {
	unescaped, err := url.PathUnescape(path)
	if err != nil {
		return nil, fmt.Errorf("build request: path %q: %w", path, err)
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	u := *base
	// Both forms, so that an escaped '/' or '%' in a value is sent escaped
	// once: a key "a/b" went out as a%252Fb, and the acquirer's inquiry of
	// it answered not found for a charge it held.
	u.RawPath = base.EscapedPath() + path
	u.Path += unescaped
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// DeadlineHeader carries the moment after which the caller no longer waits
// for the answer (RFC 3339, UTC). An acquirer that refuses to act on a
// request past it makes its inquiry final once the caller's timeout has
// passed: no charge of a timed-out request can land after the inquiry.
const DeadlineHeader = "X-Request-Deadline"

// StampDeadline sets req's DeadlineHeader to the end of timeout from now,
// or to its context's deadline when that comes first.
func StampDeadline(req *http.Request, timeout time.Duration) {
	d := time.Now().Add(timeout)
	if cd, ok := req.Context().Deadline(); ok && cd.Before(d) {
		d = cd
	}
	req.Header.Set(DeadlineHeader, d.UTC().Format(time.RFC3339Nano))
}

// RequestDeadline is the DeadlineHeader of a request received, zero when it
// names none or one that does not parse: what an acquirer (the simulators)
// reads of StampDeadline.
func RequestDeadline(r *http.Request) time.Time {
	t, err := time.Parse(time.RFC3339Nano, r.Header.Get(DeadlineHeader))
	if err != nil {
		return time.Time{}
	}
	return t
}

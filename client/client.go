// Package client is a Go client of Paygate's merchant API: typed requests
// and answers for every merchant operation, requests signed with the
// account's key (the strong Paygate-Signature scheme, or encryption_data
// for accounts that keep the compatible one), an Idempotency-Key on every
// request so that retries after a timeout or a 503 never move money twice,
// answers' signatures checked, paging through the order query, and
// verification of the notifications the gateway sends.
//
// A refusal of the request itself (a result code I…) is an *Error; a
// payment the acquirer declined is an answer, not an error: read its
// OrderStatus and ResultInfo. An *Error whose Temporary is true (S0001,
// I0021, 429, 5xx, or no answer once the retries are spent) leaves the
// outcome unknown: the request may have been carried out. Send it again
// with the same key (WithIdempotencyKey) or look it up (QueryOrders by
// order_no, PayoutQuery by request_id); never send it as a new order.
//
// What an answer's signature covers is the gateway's recipe
// (docs/design.md §3): a payment result's ids, amount, status and result;
// a batch's ids and return_status (not each entry's status); a payout's
// ids, request_id, currency and amount (trust a payout's final status from
// its verified notification). An answer the gateway signs that comes
// without a signature, or with a wrong one, is ErrAnswerSignature.
package client

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/domain/signing"
)

// Scheme is how the client proves the account's key.
type Scheme int

const (
	// Strong signs the method, path, a timestamp, a nonce and every field
	// of the body (the Paygate-Signature header). New accounts need it for
	// every operation that moves money.
	Strong Scheme = iota
	// Compatible signs the operation's recipe of docs/design.md §3 into
	// encryption_data, for accounts that keep the compatible scheme.
	Compatible
)

// Credentials name the merchant account and hold its sign key.
// OldSignKeys are keys the gateway may still sign notifications with
// during a key rotation's grace period; requests are signed with SignKey.
type Credentials struct {
	MerchantID  string
	AccountID   string
	SignKey     string
	OldSignKeys []string
}

// Retry says how often and how patiently a request is sent again after a
// failure that leaves its outcome open: no answer, 429, 502, 503, 504,
// S0001 (a temporary system error) or I0021 (the same request is still in
// progress). Every attempt carries the same Idempotency-Key, so the
// gateway executes the request at most once and answers a repeat with the
// first answer.
type Retry struct {
	Attempts   int           // sends in all; 1 sends once
	Backoff    time.Duration // the first wait, doubled after each attempt
	MaxBackoff time.Duration // the longest wait
}

// DefaultRetry is the Retry of a new Client.
var DefaultRetry = Retry{Attempts: 5, Backoff: 250 * time.Millisecond, MaxBackoff: 5 * time.Second}

// Client calls one merchant account's operations. It is safe for
// concurrent use.
type Client struct {
	baseURL string
	creds   Credentials
	scheme  Scheme
	http    *http.Client
	retry   Retry
	now     func() time.Time
	agent   string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sends requests with h (its timeout bounds one attempt).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithScheme chooses the signing scheme (Strong by default).
func WithScheme(s Scheme) Option { return func(c *Client) { c.scheme = s } }

// WithRetry replaces DefaultRetry.
func WithRetry(r Retry) Option { return func(c *Client) { c.retry = r } }

// WithClock gives the time strong signatures and notification checks are
// made at.
func WithClock(now func() time.Time) Option { return func(c *Client) { c.now = now } }

// WithUserAgent names the caller in the User-Agent header.
func WithUserAgent(agent string) Option { return func(c *Client) { c.agent = agent + " " + c.agent } }

// New returns a client of the gateway at baseURL (such as
// "https://pay.example.com") for one merchant account.
func New(baseURL string, creds Credentials, opts ...Option) *Client {
	c := &Client{
		baseURL: strings.TrimRight(baseURL, "/"),
		creds:   creds,
		http:    &http.Client{Timeout: 60 * time.Second},
		retry:   DefaultRetry,
		now:     time.Now,
		agent:   "paygate-go-client/1",
	}
	for _, o := range opts {
		o(c)
	}
	if c.retry.Attempts < 1 {
		c.retry.Attempts = 1
	}
	return c
}

// CallOption configures one call.
type CallOption func(*call)

type call struct {
	idempotencyKey string
	readOnly       bool // a query: nothing to carry out twice, so no key
}

// WithIdempotencyKey names the request, so that sending it again later (a
// retry across a restart of the caller, say) is answered with the first
// answer rather than executed again. Without it each call gets a random
// key of its own, shared by its retries.
func WithIdempotencyKey(key string) CallOption { return func(c *call) { c.idempotencyKey = key } }

// Error is a refusal of the request: its result code and message, the HTTP
// status, and the address of the code's row in docs/result-codes.md.
type Error struct {
	HTTPStatus int
	Code       string // "I0013"; "" when the gateway's answer had none
	Message    string
	Help       string // the Link rel="help" address, when sent
}

func (e *Error) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("paygate: HTTP %d: %s", e.HTTPStatus, e.Message)
	}
	return fmt.Sprintf("paygate: %s %s (HTTP %d)", e.Code, e.Message, e.HTTPStatus)
}

// Temporary reports whether sending the same request again later may
// succeed.
func (e *Error) Temporary() bool { return retryable(e.HTTPStatus, e.Code) }

// ErrAnswerSignature is an answer whose encryption_data is missing where
// the gateway signs, or is not the gateway's signature under the account's
// key: do not act on it.
var ErrAnswerSignature = errors.New("paygate: the answer's signature does not match")

// answer is what an operation's answer tells the client.
type answer interface {
	// result is the whole request's "code:message", "" for none.
	result() string
	// signed is the answer's encryption_data and the values its recipe
	// covers; required says the gateway signs this answer (the client
	// always proves the key), so a missing signature is a forged answer.
	signed() (sig string, values []string, required bool)
}

// replayed is an answer that can say it was the first answer of the same
// request, given again (the Idempotent-Replayed header).
type replayed interface{ setReplayed(bool) }

// maxAnswer is the largest answer read.
const maxAnswer = 8 << 20

// post sends body (a request struct) to path, signed with the values of
// its compatible recipe, and decodes the answer into out.
func (c *Client) post(ctx context.Context, path string, body any, recipe []string, out answer, opts []CallOption) error {
	payload, err := c.body(body, recipe)
	if err != nil {
		return err
	}
	cl := call{}
	for _, o := range opts {
		o(&cl)
	}
	switch {
	case cl.readOnly:
		// A query has nothing to carry out twice; a key would only keep
		// its answer (and the shoppers in it) in the gateway for a day.
		cl.idempotencyKey = ""
	case cl.idempotencyKey == "":
		cl.idempotencyKey = "pgc-" + randomHex(16)
	}
	var last error
	for attempt := 0; attempt < c.retry.Attempts; attempt++ {
		if attempt > 0 {
			if err := c.wait(ctx, attempt); err != nil {
				return errors.Join(err, last)
			}
		}
		var again bool
		again, last = c.send(ctx, path, payload, cl.idempotencyKey, out)
		if !again {
			return last
		}
	}
	return last
}

// body encodes the request with the account's ids and, in the compatible
// scheme, its encryption_data.
func (c *Client) body(req any, recipe []string) ([]byte, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("paygate: encode request: %w", err)
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, fmt.Errorf("paygate: encode request: %w", err)
	}
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	fields["merchant_id"] = str(c.creds.MerchantID)
	fields["account_id"] = str(c.creds.AccountID)
	if c.scheme == Compatible {
		values := append([]string{c.creds.MerchantID, c.creds.AccountID}, recipe...)
		fields["encryption_data"] = str(signing.Sign(c.creds.SignKey, values...))
	}
	out, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("paygate: encode request: %w", err)
	}
	return out, nil
}

// send makes one attempt. again reports whether the outcome is open and
// another attempt may settle it.
func (c *Client) send(ctx context.Context, path string, payload []byte, key string, out answer) (again bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+path, bytes.NewReader(payload))
	if err != nil {
		return false, fmt.Errorf("paygate: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	req.Header.Set("User-Agent", c.agent)
	if c.scheme == Strong {
		sig, err := signing.SignStrong(c.creds.SignKey, http.MethodPost, path, c.now().Unix(), randomHex(16), payload)
		if err != nil {
			return false, fmt.Errorf("paygate: sign: %w", err)
		}
		req.Header.Set(signing.StrongHeader, sig.String())
	}
	res, err := c.http.Do(req)
	if err != nil {
		// No answer: the request may or may not have been executed; the
		// same key makes sending it again safe.
		return ctx.Err() == nil, fmt.Errorf("paygate: POST %s: %w", path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return ctx.Err() == nil, fmt.Errorf("paygate: POST %s: read answer: %w", path, err)
	}
	help := helpLink(res.Header.Get("Link"))
	reflect.ValueOf(out).Elem().SetZero() // an earlier attempt's answer must not show through
	decodeErr := decode(res.Header.Get("Content-Type"), raw, out)
	code, message := splitResult(out.result())
	if code == "" && help.code != "" {
		code, message = help.code, http.StatusText(res.StatusCode)
	}
	switch {
	case retryable(res.StatusCode, code):
		return true, &Error{HTTPStatus: res.StatusCode, Code: code, Message: message, Help: help.url}
	case code != "" && (code[0] == 'I' || code[0] == 'S'):
		return false, &Error{HTTPStatus: res.StatusCode, Code: code, Message: message, Help: help.url}
	case res.StatusCode/100 != 2:
		return false, &Error{HTTPStatus: res.StatusCode, Code: code, Message: cmp.Or(message, http.StatusText(res.StatusCode))}
	case decodeErr != nil:
		return false, fmt.Errorf("paygate: POST %s: unreadable answer: %w", path, decodeErr)
	}
	sig, values, required := out.signed()
	if sig == "" && required || sig != "" && !signing.Verify(c.creds.SignKey, sig, values...) {
		return false, ErrAnswerSignature
	}
	if r, ok := out.(replayed); ok {
		r.setReplayed(res.Header.Get("Idempotent-Replayed") == "true")
	}
	return false, nil
}

// decode reads an answer as its content type says.
func decode(contentType string, raw []byte, out answer) error {
	switch {
	case strings.HasPrefix(contentType, "text/html"):
		if p, ok := out.(*HostedPage); ok {
			p.HTML = raw
			return nil
		}
		return fmt.Errorf("a page where %T was expected", out)
	case strings.Contains(contentType, "xml"):
		return xmlUnmarshal(raw, out)
	default:
		return json.Unmarshal(raw, out)
	}
}

// retryable reports whether an answer leaves the request's outcome open:
// the gateway did not take it now, or the same request is in progress.
func retryable(status int, code string) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return code == "S0001" || code == "I0021"
}

// wait sleeps before attempt n (n ≥ 1): the backoff doubled n-1 times,
// at most MaxBackoff, with jitter so that many clients do not come back
// together.
func (c *Client) wait(ctx context.Context, n int) error {
	d := c.retry.Backoff
	for i := 1; i < n && d < c.retry.MaxBackoff; i++ {
		d *= 2
	}
	if c.retry.MaxBackoff > 0 && d > c.retry.MaxBackoff {
		d = c.retry.MaxBackoff
	}
	if d > 0 {
		d = d/2 + mrand.N(d/2+1)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// splitResult splits "code:message".
func splitResult(r string) (code, message string) {
	code, message, _ = strings.Cut(r, ":")
	return strings.TrimSpace(code), strings.TrimSpace(message)
}

type link struct{ url, code string }

// helpLink reads a Link header's rel="help" address, whose fragment is the
// result code in lower case.
func helpLink(h string) link {
	for part := range strings.SplitSeq(h, ",") {
		target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
		if !ok || !strings.Contains(params, `rel="help"`) {
			continue
		}
		u := strings.Trim(strings.TrimSpace(target), "<>")
		_, frag, _ := strings.Cut(u, "#")
		return link{url: u, code: strings.ToUpper(frag)}
	}
	return link{}
}

// randomHex returns 2n random hex digits.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails.
	return hex.EncodeToString(b)
}

// Package rail is the HTTP client of a bank payout rail, today the simulated
// one (internal/dev/railsim).
//
// A transfer is submitted under an idempotency key and decided by the rail
// asynchronously: Submit answers it "submitted", and Get or FindByKey later
// answer "completed" or "failed". Re-submitting under the same key never
// pays twice: the rail answers the transfer it holds, or, when that transfer
// failed, tries it again as a new attempt.
//
// Every error the client returns for an operation it sent wraps one of the
// package's sentinel errors (or the caller's context error), and Retryable
// tells an activity whether to try again. Answers of the rail are returned
// as *Error, which also carries the rail's status and error code. Nothing the
// client returns in an error holds beneficiary data, and the client does not
// log.
package rail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/adapters/outbound"
)

// maxResponseBytes bounds an answer read.
const maxResponseBytes = 1 << 20

// Transfer statuses.
const (
	StatusSubmitted = "submitted"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// Errors the client's operations wrap.
var (
	// ErrUnavailable means the rail answered 5xx or could not be reached:
	// nothing was recorded, and retrying with the same idempotency key is
	// safe.
	ErrUnavailable = errors.New("rail: unavailable")
	// ErrTimeout means no answer arrived in time, or the connection broke
	// after the request may have reached the rail: the outcome is unknown.
	// Retrying under the same idempotency key is safe, and FindByKey tells
	// what the rail holds.
	ErrTimeout = errors.New("rail: no answer in time, outcome unknown")
	// ErrRejected means the rail refused the request itself (4xx): it must
	// not be retried unchanged.
	ErrRejected = errors.New("rail: request rejected")
	// ErrConflict means the idempotency key was already used with a
	// different transfer; it must not be retried.
	ErrConflict = errors.New("rail: idempotency key used with a different transfer")
	// ErrNotFound means the rail holds no such transfer.
	ErrNotFound = errors.New("rail: transfer not found")
)

// Retryable reports whether err is a failure after which the same call may
// be made again: the rail was unavailable or did not answer in time.
func Retryable(err error) bool {
	return errors.Is(err, ErrUnavailable) || errors.Is(err, ErrTimeout)
}

// Error is a non-2xx answer of the rail. It unwraps to ErrUnavailable,
// ErrRejected, ErrConflict or ErrNotFound.
type Error struct {
	// Op names the operation and the key or id it was about.
	Op         string
	StatusCode int
	// Code is the rail's error code, e.g. "invalid_request".
	Code string
	// Message is the rail's explanation; the simulator's never quotes
	// beneficiary data.
	Message string
	kind    error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s: %v: status %d", e.Op, e.kind, e.StatusCode)
	if e.Code != "" {
		msg += " " + e.Code
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// Unwrap returns the sentinel error that classifies e.
func (e *Error) Unwrap() error { return e.kind }

// Client calls a payout rail's HTTP API. It is safe for concurrent use.
type Client struct {
	baseURL *url.URL
	http    *http.Client
}

// NewClient returns a client for the rail at baseURL whose requests give up
// after timeout; a zero timeout means 10 seconds.
func NewClient(baseURL string, timeout time.Duration) (*Client, error) {
	timeout, err := outbound.Timeout("rail client", timeout)
	if err != nil {
		return nil, err
	}
	u, err := outbound.BaseURL("rail client", baseURL)
	if err != nil {
		return nil, err
	}
	return &Client{baseURL: u, http: &http.Client{
		Timeout: timeout,
		// The rail answers where it was asked; a redirect is not followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
}

// failures are the rail's errors for a call that got no answer.
var failures = outbound.Failures{Timeout: ErrTimeout, Unavailable: ErrUnavailable}

// Beneficiary is who a transfer pays. One of IBAN and AccountNumber is
// required. Its String, GoString and LogValue forms show only the country,
// the BIC and the last four characters of the account, so a request or a
// transfer can be logged safely.
type Beneficiary struct {
	Name          string `json:"name"`
	IBAN          string `json:"iban"`
	AccountNumber string `json:"account_number"`
	BIC           string `json:"bic"`
	Country       string `json:"country"`
}

// String describes b without its name or full account.
func (b Beneficiary) String() string {
	return fmt.Sprintf("Beneficiary{Account:%s BIC:%q Country:%q}", b.maskedAccount(), b.BIC, b.Country)
}

// GoString describes b like String, for the %#v verb.
func (b Beneficiary) GoString() string { return b.String() }

// LogValue describes b for log/slog like String.
func (b Beneficiary) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("account", b.maskedAccount()),
		slog.String("bic", b.BIC),
		slog.String("country", b.Country),
	)
}

func (b Beneficiary) maskedAccount() string {
	acct := b.IBAN
	if acct == "" {
		acct = b.AccountNumber
	}
	acct = strings.ReplaceAll(acct, " ", "")
	if len(acct) < 4 {
		return "****"
	}
	return "****" + acct[len(acct)-4:]
}

// SubmitRequest asks the rail to pay Amount minor units of Currency to
// Beneficiary. IdempotencyKey makes a retried submission safe; the gateway
// uses one key per payout for all of the payout's runs.
type SubmitRequest struct {
	IdempotencyKey string
	Amount         int64
	Currency       string
	Beneficiary    Beneficiary
	Reference      string
}

// LogValue describes r for log/slog with the beneficiary masked.
func (r SubmitRequest) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("idempotency_key", r.IdempotencyKey),
		slog.Int64("amount", r.Amount),
		slog.String("currency", r.Currency),
		slog.String("reference", r.Reference),
		slog.Any("beneficiary", r.Beneficiary),
	)
}

// submitWire is the body of POST /transfers; the key goes in a header.
type submitWire struct {
	Amount      int64       `json:"amount"`
	Currency    string      `json:"currency"`
	Beneficiary Beneficiary `json:"beneficiary"`
	Reference   string      `json:"reference"`
}

// Attempt is one try of a transfer.
type Attempt struct {
	Number        int        `json:"number"`
	Status        string     `json:"status"`
	FailureType   string     `json:"failure_type"`
	FailureReason string     `json:"failure_reason"`
	SubmittedAt   time.Time  `json:"submitted_at"`
	FinishedAt    *time.Time `json:"finished_at,omitempty"`
}

// Transfer is the rail's record of a transfer. Status, FailureType and
// FailureReason are those of its last attempt.
type Transfer struct {
	ID             string      `json:"id"`
	IdempotencyKey string      `json:"idempotency_key"`
	Amount         int64       `json:"amount"`
	Currency       string      `json:"currency"`
	Beneficiary    Beneficiary `json:"beneficiary"`
	Reference      string      `json:"reference"`
	Status         string      `json:"status"`
	FailureType    string      `json:"failure_type"`
	FailureReason  string      `json:"failure_reason"`
	Attempt        int         `json:"attempt"`
	Attempts       []Attempt   `json:"attempts"`
	CreatedAt      time.Time   `json:"created_at"`
	UpdatedAt      time.Time   `json:"updated_at"`
}

// Final reports whether the rail has decided the transfer's last attempt.
func (t Transfer) Final() bool { return t.Status == StatusCompleted || t.Status == StatusFailed }

// Completed reports whether the transfer paid the beneficiary.
func (t Transfer) Completed() bool { return t.Status == StatusCompleted }

// Failed reports whether the transfer's last attempt failed; it paid nothing.
func (t Transfer) Failed() bool { return t.Status == StatusFailed }

// Stats counts the rail's transfers and what they paid (minor units by
// currency, completed transfers only). It is for tests.
type Stats struct {
	Transfers   int                       `json:"transfers"`
	Submitted   int                       `json:"submitted"`
	Completed   int                       `json:"completed"`
	Failed      int                       `json:"failed"`
	Attempts    int                       `json:"attempts"`
	Paid        map[string]int64          `json:"paid"`
	ByKey       map[string]KeyStats       `json:"by_key"`
	ByReference map[string]ReferenceStats `json:"by_reference"`
}

// KeyStats is the transfer under one idempotency key.
type KeyStats struct {
	TransferID string `json:"transfer_id"`
	Status     string `json:"status"`
	Attempts   int    `json:"attempts"`
	Completed  int    `json:"completed"`
	Paid       int64  `json:"paid"`
	Currency   string `json:"currency"`
}

// ReferenceStats counts the transfers that carry one reference.
type ReferenceStats struct {
	Transfers int              `json:"transfers"`
	Completed int              `json:"completed"`
	Paid      map[string]int64 `json:"paid"`
}

// Submit sends a transfer. The answer is the transfer as the rail holds it:
// "submitted" for a new transfer or a new attempt of a failed one, or its
// current state when the key was already used for the same transfer.
func (c *Client) Submit(ctx context.Context, req SubmitRequest) (Transfer, error) {
	what := "submit transfer " + req.IdempotencyKey
	if req.IdempotencyKey == "" {
		return Transfer{}, fmt.Errorf("submit transfer: %w: empty idempotency key", ErrRejected)
	}
	body := submitWire{Amount: req.Amount, Currency: req.Currency, Beneficiary: req.Beneficiary, Reference: req.Reference}
	var out Transfer
	err := c.do(ctx, what, http.MethodPost, "/transfers", nil, req.IdempotencyKey, body, &out)
	return out, err
}

// Get returns the transfer with id.
func (c *Client) Get(ctx context.Context, id string) (Transfer, error) {
	what := "get transfer " + id
	if id == "" {
		return Transfer{}, fmt.Errorf("get transfer: %w: empty transfer id", ErrRejected)
	}
	var out Transfer
	err := c.do(ctx, what, http.MethodGet, "/transfers/"+url.PathEscape(id), nil, "", nil, &out)
	return out, err
}

// FindByKey returns the transfer submitted under idempotencyKey, or an
// error wrapping ErrNotFound when the rail never accepted one.
func (c *Client) FindByKey(ctx context.Context, idempotencyKey string) (Transfer, error) {
	what := "find transfer " + idempotencyKey
	if idempotencyKey == "" {
		return Transfer{}, fmt.Errorf("find transfer: %w: empty idempotency key", ErrRejected)
	}
	var out Transfer
	q := url.Values{"idempotency_key": {idempotencyKey}}
	err := c.do(ctx, what, http.MethodGet, "/transfers", q, "", nil, &out)
	return out, err
}

// Stats returns the rail's counts of transfers and of what they paid.
func (c *Client) Stats(ctx context.Context) (Stats, error) {
	var out Stats
	err := c.do(ctx, "transfer stats", http.MethodGet, "/transfers/stats", nil, "", nil, &out)
	return out, err
}

type errorBody struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// do sends one request and decodes a 2xx answer into out. what names the
// operation in errors and must not hold beneficiary data.
func (c *Client) do(ctx context.Context, what, method, path string, query url.Values, idempotencyKey string, in, out any) error {
	req, err := outbound.JSONRequest(ctx, c.baseURL, method, path, query, in)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}

	statusCode, raw, err := failures.Exchange(ctx, c.http, req, maxResponseBytes, what)
	if err != nil {
		return err
	}

	if statusCode >= 200 && statusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s: decode response: %w", what, err)
		}
		return nil
	}
	var eb errorBody
	_ = json.Unmarshal(raw, &eb)
	e := &Error{Op: what, StatusCode: statusCode, Code: eb.Error, Message: eb.Message}
	switch {
	case statusCode == http.StatusNotFound:
		e.kind = ErrNotFound
	case statusCode == http.StatusConflict:
		e.kind = ErrConflict
	case statusCode >= 500:
		e.kind = ErrUnavailable
	default:
		// Other 4xx answers and anything unexpected (1xx, 3xx) are refusals
		// the same request will meet again.
		e.kind = ErrRejected
	}
	return e
}

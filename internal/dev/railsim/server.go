// Package railsim is an HTTP simulator of a bank payout rail, for local
// development and tests.
//
// The rail takes transfers over a small JSON API and decides them
// asynchronously, like a real rail: a transfer is answered "submitted" at once
// and becomes "completed" or "failed" after a delay.
//
//	POST /transfers                          submit; Idempotency-Key header required
//	GET  /transfers/{id}                     one transfer
//	GET  /transfers?idempotency_key=K        the transfer submitted under K
//	GET  /transfers/stats                    what was paid, per key and per reference
//
// # Idempotency
//
// A transfer belongs to its idempotency key; the rail never holds two
// transfers under one key. A submission under a new key is recorded and
// answered 202 with status "submitted". A repeat under the same key must
// carry the same body (else 409 idempotency_conflict) and then:
//
//   - if the transfer is submitted or completed, it is answered unchanged with
//     200 and the header Idempotent-Replayed: true; nothing is paid again;
//   - if the transfer failed, the repeat is a new attempt of the same transfer
//     (same id, attempt number one higher), answered 202 "submitted". A failed
//     attempt paid nothing, so trying again under the same key can still pay
//     at most once. This is how the gateway re-runs a failed payout.
//
// # Test beneficiaries
//
// The outcome depends only on the beneficiary's account identifier (the IBAN
// when one is given, else the account number, with spaces removed and letters
// upper-cased) and on the attempt number, so every test is deterministic:
//
//	identifier ends in  example IBAN              outcome
//	9900000001          DE32370400449900000001    every attempt fails: beneficiary_account_closed
//	9900000002          DE05370400449900000002    attempt 1 fails: beneficiary_bank_unavailable;
//	                                              later attempts (a re-submission under the same
//	                                              key after the failure) complete
//	9900000003          DE75370400449900000003    the first 2 submissions under each key answer
//	                                              503 rail_unavailable and record nothing; the
//	                                              third is accepted and completes
//	9900000004          DE48370400449900000004    stays submitted for Options.PendingDelay
//	                                              (default 1h), then completes
//	anything else       DE89370400440532013000    completes after Options.SettleDelay
//
// # Time
//
// The rail decides a transfer when it is next looked at (read, re-submitted
// or counted) at or after its settle time, and records the settle time as the
// moment it finished. Outcomes are deterministic, so deciding lazily gives the
// same answers as a timer would, needs no goroutines, and lets a test drive
// time through Options.Now.
//
// # Persistence
//
// With Options.DataPath set, every change to a transfer is appended to that
// file as one JSON line and fsynced before it is answered or becomes visible,
// and the file is read back (and compacted) by NewServer. A restarted rail
// therefore knows every transfer it ever acknowledged, which is what a crash
// test counts. Without DataPath the transfers live in memory only.
//
// The rail logs one line per request with the path, the idempotency key, the
// transfer id and the outcome; never a beneficiary's name or account.
package railsim

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/paygate/paygate/internal/dev/reqlog"
)

// Defaults of Options.
const (
	DefaultSettleDelay  = 200 * time.Millisecond
	DefaultPendingDelay = time.Hour
)

// UnavailableAnswers is how many submissions under one idempotency key the
// unavailable test beneficiary answers with 503 before one is accepted.
const UnavailableAnswers = 2

// Transfer statuses.
const (
	StatusSubmitted = "submitted"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// Failure types of failed transfers.
const (
	FailureAccountClosed   = "beneficiary_account_closed"
	FailureBankUnavailable = "beneficiary_bank_unavailable"
)

// Test account markers: a beneficiary whose account identifier ends in one
// of these gets the outcome the package documentation describes.
const (
	MarkerAccountClosed = "9900000001"
	MarkerFailOnce      = "9900000002"
	MarkerUnavailable   = "9900000003"
	MarkerPending       = "9900000004"
)

// Test IBANs (German, with valid check digits), one per outcome.
const (
	IBANCompletes     = "DE89370400440532013000"
	IBANAccountClosed = "DE32370400449900000001"
	IBANFailOnce      = "DE05370400449900000002"
	IBANUnavailable   = "DE75370400449900000003"
	IBANPending       = "DE48370400449900000004"
)

// Options configures a Server. Zero values select the defaults.
type Options struct {
	// Logger receives one line per request; default slog.Default().
	Logger *slog.Logger
	// DataPath is the file the transfers are kept in (JSON lines, created
	// with its directory if missing). Empty keeps them in memory only.
	DataPath string
	// SettleDelay is how long a transfer stays submitted before the rail
	// decides it; zero selects DefaultSettleDelay and a negative value
	// decides at once (the submission is still answered "submitted", the
	// next read sees the outcome).
	SettleDelay time.Duration
	// PendingDelay is how long the pending test beneficiary's transfers stay
	// submitted; zero selects DefaultPendingDelay.
	PendingDelay time.Duration
	// Now is the rail's clock; default time.Now. Tests set it to drive time.
	Now func() time.Time
	// CallbackURL, when set, is told (Callback, signed with Secret) when a
	// transfer's attempt is decided, at its settle time; without it the
	// rail decides a transfer when it is next read.
	CallbackURL string
	Secret      string
}

// Beneficiary is who a transfer pays. One of IBAN and AccountNumber is
// required; when both are given the IBAN decides the test outcome.
type Beneficiary struct {
	Name          string `json:"name"`
	IBAN          string `json:"iban"`
	AccountNumber string `json:"account_number"`
	BIC           string `json:"bic"`
	Country       string `json:"country"`
}

// TransferRequest is the body of POST /transfers.
type TransferRequest struct {
	// Amount is in minor units of Currency.
	Amount      int64       `json:"amount"`
	Currency    string      `json:"currency"`
	Beneficiary Beneficiary `json:"beneficiary"`
	Reference   string      `json:"reference"`
}

// Attempt is one try of a transfer. A transfer has one attempt per
// submission that the rail accepted under its key.
type Attempt struct {
	Number        int        `json:"number"`
	Status        string     `json:"status"`
	FailureType   string     `json:"failure_type"`
	FailureReason string     `json:"failure_reason"`
	SubmittedAt   time.Time  `json:"submitted_at"`
	FinishedAt    *time.Time `json:"finished_at,omitempty"`
}

// Transfer is the rail's record of one transfer. Status, FailureType and
// FailureReason are those of the last attempt.
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

// request returns the body t was submitted with, to compare a repeat with.
func (t Transfer) request() TransferRequest {
	return TransferRequest{Amount: t.Amount, Currency: t.Currency, Beneficiary: t.Beneficiary, Reference: t.Reference}
}

// Server is the payout rail simulator. Create one with NewServer.
type Server struct {
	logger       *slog.Logger
	settleDelay  time.Duration // negative: at once
	pendingDelay time.Duration
	now          func() time.Time
	store        *store // nil: memory only

	// mu serialises everything, file writes included: the rail is a test
	// tool, and one lock makes "never two transfers under one key" obvious.
	mu          sync.Mutex
	byID        map[string]*record
	byKey       map[string]*record
	ids         []string // creation order
	unavailable map[string]int
	closed      bool

	callbackURL, secret string
	client              *http.Client
	timers              map[string]*time.Timer
	done                chan struct{}
}

// NewServer returns a rail configured by opts, with the transfers of
// opts.DataPath loaded.
func NewServer(opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.SettleDelay == 0 {
		opts.SettleDelay = DefaultSettleDelay
	}
	if opts.PendingDelay <= 0 {
		opts.PendingDelay = DefaultPendingDelay
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{
		logger:       opts.Logger,
		settleDelay:  opts.SettleDelay,
		pendingDelay: opts.PendingDelay,
		now:          opts.Now,
		byID:         make(map[string]*record),
		byKey:        make(map[string]*record),
		unavailable:  make(map[string]int),
		callbackURL:  opts.CallbackURL,
		secret:       opts.Secret,
		client: &http.Client{Timeout: callbackTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		timers: make(map[string]*time.Timer),
		done:   make(chan struct{}),
	}
	if opts.DataPath == "" {
		return s, nil
	}
	st, recs, err := openStore(opts.DataPath, opts.Logger)
	if err != nil {
		return nil, fmt.Errorf("rail simulator: %w", err)
	}
	s.store = st
	for _, r := range recs {
		s.put(r)
	}
	// Transfers still undecided are decided, and told of, on time.
	for _, id := range s.ids {
		if r := s.byID[id]; r.Status == StatusSubmitted {
			s.scheduleLocked(r)
		}
	}
	opts.Logger.Info("rail simulator loaded transfers", "path", opts.DataPath, "transfers", len(recs))
	return s, nil
}

// Handler returns the HTTP handler serving the rail's API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /transfers", s.handleSubmit)
	mux.HandleFunc("GET /transfers", s.handleFind)
	mux.HandleFunc("GET /transfers/stats", s.handleStats)
	mux.HandleFunc("GET /transfers/{id}", s.handleGet)
	return s.logRequests(mux)
}

// Close closes the data file. Requests after Close are answered 503. Close
// is safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	for id, t := range s.timers {
		t.Stop()
		delete(s.timers, id)
	}
	close(s.done)
	if s.store != nil {
		return s.store.close()
	}
	return nil
}

// Transfers returns every transfer in creation order, after deciding those
// whose settle time has come.
func (s *Server) Transfers() ([]Transfer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.settleAllLocked(); err != nil {
		return nil, err
	}
	out := make([]Transfer, 0, len(s.ids))
	for _, id := range s.ids {
		out = append(out, s.byID[id].snapshot())
	}
	return out, nil
}

// Stats counts the transfers and what they paid, after deciding those whose
// settle time has come.
func (s *Server) Stats() (Stats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.settleAllLocked(); err != nil {
		return Stats{}, err
	}
	return s.statsLocked(), nil
}

// requestInfo carries what the log line reports about a request. Handlers
// fill it in; it must never hold beneficiary data.
type requestInfo struct {
	idempotencyKey string
	transferID     string
	outcome        string
}

func infoFrom(ctx context.Context) *requestInfo { return reqlog.From[requestInfo](ctx) }

// logRequests writes one structured line per request (reqlog): the path,
// which holds only identifiers, never the body.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return reqlog.Middleware(s.logger, "rail request",
		func(r *http.Request) *requestInfo { return &requestInfo{} },
		func(info *requestInfo) []slog.Attr {
			return []slog.Attr{slog.String("idempotency_key", info.idempotencyKey), slog.String("transfer_id", info.transferID),
				slog.String("outcome", info.outcome)}
		}, next)
}

// fileMode is the data file's permission: it holds beneficiaries' accounts.
const fileMode os.FileMode = 0o600

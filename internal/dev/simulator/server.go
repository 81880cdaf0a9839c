// Package acquirer is an in-memory HTTP simulator of a card acquirer.
//
// It authorises, captures, voids and refunds charges over a small JSON API,
// with deterministic outcomes chosen by test card numbers. It keeps a record
// of every charge so tests can prove that no order was charged twice. It never
// stores or logs a full card number or a CVV: a charge keeps only the first
// six and the last four digits of the card.
package simulator

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/paygate/paygate/internal/dev/reqlog"
)

const (
	defaultTimeoutDelay = 30 * time.Second
	defaultSettleDelay  = 2 * time.Second
	defaultSlowDelay    = 3 * time.Second
	maxBodyBytes        = 64 << 10
	// maxEvidenceBytes bounds a dispute answer's body: a file of each
	// kind, 512 KiB each as the gateway takes them, in base64.
	maxEvidenceBytes = 8 << 20
	defaultSecret    = "sim-secret"
	callbackTimeout  = 5 * time.Second
)

// Charge statuses.
const (
	StatusApproved = "approved"
	StatusDeclined = "declined"
)

// Refund statuses.
const (
	RefundSucceeded = "succeeded"
	RefundPending   = "pending"
	RefundFailed    = "failed"
)

// Options configures a Server. Zero values select the defaults.
type Options struct {
	// TimeoutDelay is how long the answer for the timeout test card is held
	// back; default 30s.
	TimeoutDelay time.Duration
	// SettleDelay is how long a pending refund waits before it settles;
	// default 2s.
	SettleDelay time.Duration
	// Logger receives one line per request; default slog.Default().
	Logger *slog.Logger
	// Secret is the HMAC key the simulator signs 3-D Secure results and APM
	// provider callbacks with; default "sim-secret".
	Secret string
	// DataPath, used by Open, is the file the simulator keeps its charges,
	// refunds and idempotency keys in across restarts.
	DataPath string
	// SlowCardDelay is how long the slow test card's answer takes; default
	// 3s, well within the gateway's acquirer timeout.
	SlowCardDelay time.Duration
	// EnableFaults serves /_sim/faults, through which a test rig makes the
	// simulator fail (see faults.go). Off, those paths are not found.
	EnableFaults bool
	// IgnoreIdempotency makes every charge request a new charge, repeated
	// key or not: deliberately unsafe, to prove a test sees double charges.
	IgnoreIdempotency bool
	// PublicURL is the simulator's address as shoppers' browsers reach it,
	// for the ACS and APM page links it hands out; empty means the address
	// each request reached it at. Behind a container's port mapping the two
	// differ.
	PublicURL string
	// CallbackVia, when set, is the base URL the APM provider posts its
	// callbacks to, in place of the callback URL's own scheme and host:
	// the gateway's public address may not be reachable from where the
	// simulator runs (a container network), its internal one is.
	CallbackVia string
	// SettlementDays is the acquirer's settlement delay, T+n; default 1.
	// FeeFixed and FeeBasisPoints are its contracted fee on a capture;
	// default 30 and 290 (settlement.go).
	SettlementDays int
	FeeFixed       int64
	FeeBasisPoints int64
	// Now is the simulator's clock, time.Now when nil: a test of several
	// settlement days moves it from day to day.
	Now func() time.Time
	// DisputeAfter, with DisputeCallbackURL (the gateway's
	// /v1/disputes/callback), disputes every capture of the dispute test
	// card 4000000000000259 that long after it; 0 raises none.
	DisputeAfter       time.Duration
	DisputeCallbackURL string
}

// Charge is the acquirer's record of one charge attempt that reached a
// decision. It holds no card number or CVV.
type Charge struct {
	ChargeID       string `json:"charge_id"`
	IdempotencyKey string `json:"idempotency_key"`
	Reference      string `json:"reference"`
	Status         string `json:"status"`
	DeclineCode    string `json:"decline_code"`
	Message        string `json:"message"`
	AuthCode       string `json:"auth_code"`
	Amount         int64  `json:"amount"`
	Currency       string `json:"currency"`
	CapturedAmount int64  `json:"captured_amount"`
	RefundedAmount int64  `json:"refunded_amount"`
	Voided         bool   `json:"voided"`
	CardBIN        string `json:"card_bin"`
	CardLast4      string `json:"card_last4"`
	ThreeDS        bool   `json:"three_ds"`
	// Installments is the number of monthly installments the charge is
	// paid in, 0 for none.
	Installments int       `json:"installments,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	// CapturedAt is when the charge was captured (a sale: when it was
	// made); zero before. Its settlement day follows from it.
	CapturedAt time.Time `json:"captured_at,omitzero"`
}

// Refund is the acquirer's record of one refund of a captured charge.
type Refund struct {
	RefundID       string     `json:"refund_id"`
	ChargeID       string     `json:"charge_id"`
	IdempotencyKey string     `json:"idempotency_key"`
	Amount         int64      `json:"amount"`
	Currency       string     `json:"currency"`
	Status         string     `json:"status"`
	CreatedAt      time.Time  `json:"created_at"`
	SettledAt      *time.Time `json:"settled_at"`
}

// Server is the acquirer simulator. Its zero value is not usable; create one
// with NewServer.
type Server struct {
	clock        func() time.Time
	settlement   settlementTerms
	timeoutDelay time.Duration
	settleDelay  time.Duration
	logger       *slog.Logger
	fpSecret     []byte
	secret       []byte
	callbacks    *http.Client

	slowDelay    time.Duration
	publicURL    string
	callbackVia  string
	enableFaults bool

	disputeAfter       time.Duration
	disputeCallbackURL string
	faults             faultState

	mu           sync.Mutex
	store        *store
	charges      []*Charge
	chargesByID  map[string]*Charge
	chargesByKey map[string]*Charge
	refunds      []*Refund
	refundsByID  map[string]*Refund
	idem         map[string]*idemEntry
	timers       map[string]*time.Timer
	auths        map[string]*authentication
	apmPayments  map[string]*apmPayment
	disputes     map[string]*Dispute
	closed       bool

	done      chan struct{}
	closeOnce sync.Once
}

// now is the simulator's time, in UTC.
func (s *Server) now() time.Time { return s.clock().UTC() }

// NewServer returns a simulator configured by opts.
func NewServer(opts Options) *Server {
	if opts.TimeoutDelay <= 0 {
		opts.TimeoutDelay = defaultTimeoutDelay
	}
	if opts.SettleDelay <= 0 {
		opts.SettleDelay = defaultSettleDelay
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Secret == "" {
		opts.Secret = defaultSecret
	}
	if opts.SlowCardDelay <= 0 {
		opts.SlowCardDelay = defaultSlowDelay
	}
	if opts.SettlementDays <= 0 {
		opts.SettlementDays = defaultSettlementDays
	}
	if opts.FeeFixed == 0 && opts.FeeBasisPoints == 0 {
		opts.FeeFixed, opts.FeeBasisPoints = defaultFeeFixed, defaultFeeBasisPoints
	}
	fpSecret := make([]byte, 32)
	_, _ = rand.Read(fpSecret) // crypto/rand.Read never returns an error.
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Server{
		clock:        opts.Now,
		settlement:   settlementTerms{days: opts.SettlementDays, feeFixed: opts.FeeFixed, feeBasisPoints: opts.FeeBasisPoints},
		timeoutDelay: opts.TimeoutDelay,
		settleDelay:  opts.SettleDelay,
		slowDelay:    opts.SlowCardDelay,
		publicURL:    strings.TrimSuffix(opts.PublicURL, "/"),
		callbackVia:  strings.TrimSuffix(opts.CallbackVia, "/"),
		disputeAfter: opts.DisputeAfter, disputeCallbackURL: opts.DisputeCallbackURL,
		enableFaults: opts.EnableFaults,
		faults:       faultState{ignoreIdempotency: opts.IgnoreIdempotency},
		logger:       opts.Logger,
		fpSecret:     fpSecret,
		secret:       []byte(opts.Secret),
		callbacks: &http.Client{
			Timeout: callbackTimeout,
			// A callback is delivered to the address given, never elsewhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		chargesByID:  make(map[string]*Charge),
		chargesByKey: make(map[string]*Charge),
		refundsByID:  make(map[string]*Refund),
		idem:         make(map[string]*idemEntry),
		timers:       make(map[string]*time.Timer),
		auths:        make(map[string]*authentication),
		apmPayments:  make(map[string]*apmPayment),
		done:         make(chan struct{}),
	}
}

// Handler returns the HTTP handler serving the simulator's API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { writeRaw(w, http.StatusOK, []byte("ok")) })
	if s.enableFaults {
		mux.HandleFunc("GET /_sim/faults", s.devOnly(s.handleGetFaults))
		mux.HandleFunc("POST /_sim/faults", s.devOnly(s.handleSetFaults))
	}
	mux.HandleFunc("POST /v1/charges", s.faulty(s.handleCreateCharge))
	mux.HandleFunc("GET /v1/charges", s.devOnly(s.handleListCharges))
	mux.HandleFunc("GET /v1/settlements/{date}", s.handleSettlement)
	mux.HandleFunc("GET /v1/charges/{idempotency_key}", s.handleInquire)
	mux.HandleFunc("POST /v1/charges/{charge_id}/capture", s.faulty(s.handleCapture))
	mux.HandleFunc("POST /v1/charges/{charge_id}/void", s.faulty(s.handleVoid))
	mux.HandleFunc("POST /v1/charges/{charge_id}/refunds", s.faulty(s.handleRefund))
	mux.HandleFunc("GET /v1/refunds", s.devOnly(s.handleListRefunds))
	mux.HandleFunc("GET /v1/refunds/{refund_id}", s.handleGetRefund)
	mux.HandleFunc("POST /v1/3ds/authentications", s.handleCreateAuthentication)
	mux.HandleFunc("GET /v1/3ds/authentications/{id}", s.handleGetAuthentication)
	mux.HandleFunc("GET /acs/{id}", s.handleACSPage)
	mux.HandleFunc("POST /acs/{id}", s.handleACSSubmit)
	mux.HandleFunc("GET /v1/apm/methods", s.handleAPMMethods)
	mux.HandleFunc("POST /v1/apm/payments", s.handleCreateAPMPayment)
	mux.HandleFunc("GET /v1/apm/payments/{id}", s.handleGetAPMPayment)
	mux.HandleFunc("POST /v1/apm/payments/{id}/cancel", s.handleCancelAPMPayment)
	mux.HandleFunc("GET /apm/{id}", s.handleAPMPage)
	mux.HandleFunc("POST /apm/{id}/pay", s.handleAPMPay)
	mux.HandleFunc("POST /apm/{id}/cancel", s.handleAPMCancel)
	mux.HandleFunc("GET /v1/disputes/{id}", s.handleGetDispute)
	mux.HandleFunc("POST /v1/disputes/{id}/evidence", s.handleDisputeEvidence)
	mux.HandleFunc("POST /v1/disputes/{id}/accept", s.handleAcceptDispute)
	mux.HandleFunc("POST /_sim/disputes", s.devOnly(s.handleRaiseDispute))
	mux.HandleFunc("POST /_sim/disputes/{id}/decide", s.devOnly(s.handleDecideDispute))
	return s.logRequests(mux)
}

// devOnly guards what only the people running the simulator may see or
// change (every charge and refund, the fault settings): the request must
// carry the simulator's secret as a bearer token.
func (s *Server) devOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(token), s.secret) != 1 {
			writeError(w, http.StatusUnauthorized, "unauthorized", "the simulator's secret is required (Authorization: Bearer <secret>)")
			return
		}
		h(w, r)
	}
}

// Charges returns a copy of every charge in creation order.
func (s *Server) Charges() []Charge {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Charge, len(s.charges))
	for i, c := range s.charges {
		out[i] = *c
	}
	return out
}

// Refunds returns a copy of every refund in creation order.
func (s *Server) Refunds() []Refund {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Refund, len(s.refunds))
	for i, r := range s.refunds {
		out[i] = copyRefund(r)
	}
	return out
}

// Close stops pending settle timers and releases answers that are being held
// back. Refunds still pending stay pending. Close is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		if s.store != nil {
			s.store.close()
		}
		for id, t := range s.timers {
			t.Stop()
			delete(s.timers, id)
		}
		s.mu.Unlock()
		close(s.done)
	})
}

// postSigned posts body, signed with the provider's secret, to target (by
// way of CallbackVia when set) and returns the answer's HTTP status, or 0
// when none came; what and the attributes name it in the log.
func (s *Server) postSigned(ctx context.Context, target string, body []byte, what string, attrs ...any) int {
	ctx, cancel := context.WithTimeout(ctx, callbackTimeout)
	defer cancel()
	if s.callbackVia != "" {
		if u, err := url.Parse(target); err == nil {
			target = s.callbackVia + u.RequestURI()
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		s.logger.Warn(what+" has no valid address", append(attrs, "error", err)...)
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Provider-Signature", sign(s.secret, body))
	resp, err := s.callbacks.Do(req)
	if err != nil {
		s.logger.Warn(what+" failed", append(attrs, "error", err)...)
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// requestInfo carries what the log line reports about a request. Handlers
// fill it in; it must never hold card data.
type requestInfo struct {
	idempotencyKey string
	outcome        string
}

func infoFrom(ctx context.Context) *requestInfo { return reqlog.From[requestInfo](ctx) }

// logRequests writes one structured line per request (reqlog): the path,
// which holds only identifiers, never the body.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return reqlog.Middleware(s.logger, "acquirer request",
		func(r *http.Request) *requestInfo { return &requestInfo{} },
		func(info *requestInfo) []slog.Attr {
			return []slog.Attr{slog.String("idempotency_key", info.idempotencyKey), slog.String("outcome", info.outcome)}
		}, next)
}

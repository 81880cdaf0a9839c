// Package simbank is an in-memory HTTP simulator of a second card acquirer,
// "sim-bank", whose API looks nothing like the first simulator's: requests
// and answers are form-encoded, amounts are decimal strings in the
// currency's major unit, outcomes are ISO 8583 style response codes and
// upper-case states, and the idempotency key travels in the X-Request-Id
// header. It exists to prove that the gateway's connectors sit behind one
// interface. It offers card payments only (no 3-D Secure, no APMs).
//
//	POST /gw/v2/payments                      txn_type=SALE|AUTH, merchant_ref, pan, exp (MMYY), cvc, amount, currency
//	GET  /gw/v2/payments?request_id=KEY       the payment made by the request with that X-Request-Id
//	POST /gw/v2/payments/{payment_id}/capture amount, currency
//	POST /gw/v2/payments/{payment_id}/reversal
//	POST /gw/v2/payments/{payment_id}/refunds amount, currency
//	GET  /gw/v2/refunds/{refund_id}
//
// Outcomes follow the same test cards as the first simulator (docs/design.md §8),
// except that the 3-D Secure card is refused with response code 1A. A
// refund whose minor units end in 77 is QUEUED and settles later; one
// ending in 99 is REJECTED. It never stores or logs a full card number or a
// security code.
package simbank

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/paygate/paygate/internal/dev/reqlog"
)

const (
	defaultTimeoutDelay = 30 * time.Second
	defaultSettleDelay  = 2 * time.Second
	maxBodyBytes        = 16 << 10
	// Prefix is where the API lives on the simulator's address.
	Prefix = "/gw/v2"
)

// Payment states.
const (
	StateAuthorised = "AUTHORISED"
	StateCaptured   = "CAPTURED"
	StateRefused    = "REFUSED"
	StateReversed   = "REVERSED"
)

// Refund states.
const (
	RefundDone     = "DONE"
	RefundQueued   = "QUEUED"
	RefundRejected = "REJECTED"
)

// Options configures a Server. Zero values select the defaults.
type Options struct {
	// TimeoutDelay is how long the answer for the timeout test card is held
	// back; default 30s.
	TimeoutDelay time.Duration
	// SettleDelay is how long a QUEUED refund waits before it is DONE;
	// default 2s.
	SettleDelay time.Duration
	// Logger receives one line per request; default slog.Default().
	Logger *slog.Logger
}

// Payment is the simulator's record of one payment that reached a
// decision. Amounts are in minor units. It holds no card number or CVV.
type Payment struct {
	PaymentID    string
	RequestID    string
	MerchantRef  string
	TxnType      string
	State        string
	ResponseCode string
	Text         string
	ApprovalCode string
	Amount       int64
	Captured     int64
	Refunded     int64
	Currency     string
	CardLast4    string
	CreatedAt    time.Time
	// CapturedAt is when the payment was captured (a SALE: when it was
	// made); zero before. Its settlement day follows from it.
	CapturedAt time.Time
}

// Refund is the simulator's record of one refund.
type Refund struct {
	RefundID  string
	PaymentID string
	RequestID string
	State     string
	Amount    int64
	Currency  string
	CreatedAt time.Time
	SettledAt *time.Time
}

// Server is the simulator. Create one with NewServer.
type Server struct {
	timeoutDelay time.Duration
	settleDelay  time.Duration
	logger       *slog.Logger
	fpSecret     []byte

	mu            sync.Mutex
	payments      []*Payment
	paymentsByID  map[string]*Payment
	paymentsByReq map[string]*Payment
	refunds       []*Refund
	refundsByID   map[string]*Refund
	idem          map[string]*idemEntry
	timers        map[string]*time.Timer
	closed        bool
	done          chan struct{}
	closeOnce     sync.Once
}

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
	fpSecret := make([]byte, 32)
	_, _ = rand.Read(fpSecret) // crypto/rand.Read never returns an error.
	return &Server{
		timeoutDelay:  opts.TimeoutDelay,
		settleDelay:   opts.SettleDelay,
		logger:        opts.Logger,
		fpSecret:      fpSecret,
		paymentsByID:  map[string]*Payment{},
		paymentsByReq: map[string]*Payment{},
		refundsByID:   map[string]*Refund{},
		idem:          map[string]*idemEntry{},
		timers:        map[string]*time.Timer{},
		done:          make(chan struct{}),
	}
}

// Handler returns the HTTP handler serving the simulator's API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+Prefix+"/payments", s.handleCreatePayment)
	mux.HandleFunc("GET "+Prefix+"/payments", s.handleInquire)
	mux.HandleFunc("POST "+Prefix+"/payments/{payment_id}/capture", s.handleCapture)
	mux.HandleFunc("POST "+Prefix+"/payments/{payment_id}/reversal", s.handleReversal)
	mux.HandleFunc("POST "+Prefix+"/payments/{payment_id}/refunds", s.handleRefund)
	mux.HandleFunc("GET "+Prefix+"/refunds/{refund_id}", s.handleGetRefund)
	mux.HandleFunc("GET "+Prefix+"/settlements/{date}", s.handleSettlement)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "NO_SUCH_RESOURCE", "no such resource")
	})
	return s.logRequests(mux)
}

// Payments returns a copy of every payment in creation order.
func (s *Server) Payments() []Payment {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Payment, len(s.payments))
	for i, p := range s.payments {
		out[i] = *p
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

// Close stops the settle timers and releases answers being held back.
// QUEUED refunds stay queued. Close is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		for id, t := range s.timers {
			t.Stop()
			delete(s.timers, id)
		}
		s.mu.Unlock()
		close(s.done)
	})
}

// requestInfo is what the log line reports of a request; never card data.
type requestInfo struct {
	requestID string
	outcome   string
}

func infoFrom(ctx context.Context) *requestInfo { return reqlog.From[requestInfo](ctx) }

// logRequests writes one structured line per request (reqlog): the path,
// which holds only identifiers, never the body.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return reqlog.Middleware(s.logger, "sim-bank request",
		func(r *http.Request) *requestInfo { return &requestInfo{requestID: r.Header.Get(headerRequestID)} },
		func(info *requestInfo) []slog.Attr {
			return []slog.Attr{slog.String("request_id", info.requestID), slog.String("outcome", info.outcome)}
		}, next)
}

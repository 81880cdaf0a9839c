package simulator

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// Fault modes a test rig sets through POST /_sim/faults. They apply to a
// share of the operations that move money (charge, capture, void, refund),
// never to the inquiries and lists a test counts with.
const (
	// FaultNone: every operation is served.
	FaultNone = "none"
	// FaultError: the operation is answered 503 and nothing is done, as an
	// acquirer's front door failing would.
	FaultError = "error"
	// FaultHang: the request is held, nothing done, until for_ms passes or
	// the client gives up, and then dropped without an answer.
	FaultHang = "hang"
	// FaultChargeThenError: the operation is done, and then answered 503
	// as if it had not been: an acquirer that lies. Only to prove that the
	// fault suite sees what a gateway trusting the 503 would do (a
	// failover that charges twice).
	FaultChargeThenError = "charge_then_error"
)

const defaultHang = time.Minute

// Faults is the fault setting, as GET and POST /_sim/faults carry it.
type Faults struct {
	Mode              string  `json:"mode"`
	Rate              float64 `json:"rate"`
	ForMS             int64   `json:"for_ms,omitempty"`
	IgnoreIdempotency bool    `json:"ignore_idempotency"`
	// Amount, when set, keeps the faults to requests of that amount (minor
	// units), so a test can take the acquirer down for its own payments
	// while the others' go on.
	Amount int64 `json:"amount,omitempty"`
}

type faultState struct {
	mu                sync.Mutex
	mode              string
	rate              float64
	hang              time.Duration
	ignoreIdempotency bool
	amount            int64
	// held counts the requests a hang holds now, so that a test can break
	// something else while an operation is at the acquirer.
	held int
}

func (f *faultState) get() Faults {
	f.mu.Lock()
	defer f.mu.Unlock()
	mode := f.mode
	if mode == "" {
		mode = FaultNone
	}
	return Faults{Mode: mode, Rate: f.rate, ForMS: f.hang.Milliseconds(), IgnoreIdempotency: f.ignoreIdempotency, Amount: f.amount}
}

func (f *faultState) ignoringIdempotency() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ignoreIdempotency
}

// draw decides whether a request for amount meets the fault, and which.
func (f *faultState) draw(amount int64) (string, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mode == "" || f.mode == FaultNone || f.amount != 0 && amount != f.amount || rand.Float64() >= f.rate {
		return FaultNone, 0
	}
	return f.mode, f.hang
}

func (f *faultState) hold(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held += n
}

// Held is how many operations a hang holds now.
func (s *Server) Held() int {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	return s.faults.held
}

// amountOf reads the amount of a request's JSON body and puts the body
// back for the handler; 0 when it has none.
func amountOf(r *http.Request) int64 {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	r.Body = io.NopCloser(bytes.NewReader(body))
	var in struct {
		Amount int64 `json:"amount"`
	}
	if err != nil || json.Unmarshal(body, &in) != nil {
		return 0
	}
	return in.Amount
}

func (s *Server) handleGetFaults(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.faults.get())
}

func (s *Server) handleSetFaults(w http.ResponseWriter, r *http.Request) {
	var in Faults
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "the body must be a JSON fault setting")
		return
	}
	switch {
	case in.Mode != FaultNone && in.Mode != FaultError && in.Mode != FaultHang && in.Mode != FaultChargeThenError:
		writeError(w, http.StatusBadRequest, "invalid_request", "mode must be none, error, hang or charge_then_error")
		return
	case in.Rate < 0 || in.Rate > 1:
		writeError(w, http.StatusBadRequest, "invalid_request", "rate must be between 0 and 1")
		return
	case in.ForMS < 0:
		writeError(w, http.StatusBadRequest, "invalid_request", "for_ms must not be negative")
		return
	case in.Amount < 0:
		writeError(w, http.StatusBadRequest, "invalid_request", "amount must not be negative")
		return
	}
	hang := time.Duration(in.ForMS) * time.Millisecond
	if hang == 0 {
		hang = defaultHang
	}
	s.faults.mu.Lock()
	s.faults.mode, s.faults.rate, s.faults.hang, s.faults.ignoreIdempotency = in.Mode, in.Rate, hang, in.IgnoreIdempotency
	s.faults.amount = in.Amount
	s.faults.mu.Unlock()
	s.logger.Warn("acquirer simulator faults set", "mode", in.Mode, "rate", in.Rate, "hang", hang, "ignore_idempotency", in.IgnoreIdempotency,
		"amount", in.Amount)
	writeJSON(w, http.StatusOK, s.faults.get())
}

// faulty serves h unless the request meets the fault set.
func (s *Server) faulty(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var amount int64
		if s.faults.get().Amount != 0 {
			amount = amountOf(r)
		}
		switch mode, hang := s.faults.draw(amount); mode {
		case FaultError:
			infoFrom(r.Context()).outcome = "fault_error"
			writeError(w, http.StatusServiceUnavailable, "acquirer_unavailable", "the acquirer is temporarily unavailable")
		case FaultChargeThenError:
			h(discardAnswer{header: http.Header{}}, r)
			infoFrom(r.Context()).outcome = "fault_charge_then_error"
			writeError(w, http.StatusServiceUnavailable, "acquirer_unavailable", "the acquirer is temporarily unavailable")
		case FaultHang:
			infoFrom(r.Context()).outcome = "fault_hang"
			s.faults.hold(1)
			defer s.faults.hold(-1)
			t := time.NewTimer(hang)
			defer t.Stop()
			select {
			case <-t.C:
			case <-r.Context().Done():
			case <-s.done:
			}
			// Dropped without an answer, as a connection that dies would.
			panic(http.ErrAbortHandler)
		default:
			h(w, r)
		}
	}
}

// discardAnswer is an answer nobody reads: the work of a lying fault is
// done, and its true answer dropped.
type discardAnswer struct{ header http.Header }

func (d discardAnswer) Header() http.Header         { return d.header }
func (d discardAnswer) Write(b []byte) (int, error) { return len(b), nil }
func (d discardAnswer) WriteHeader(int)             {}

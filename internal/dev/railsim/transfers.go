package railsim

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"time"
)

// record is a transfer with what the rail keeps about it beyond its API
// form. Records are never changed in place: a change makes a new record,
// which replaces the old one only once it is on disk, so a failed write
// leaves the rail as it was.
type record struct {
	Transfer
	// SettleAt is when the current attempt is decided.
	SettleAt time.Time `json:"settle_at"`
}

func (r *record) snapshot() Transfer {
	t := r.Transfer
	t.Attempts = slices.Clone(r.Attempts)
	return t
}

func (r *record) clone() *record {
	c := *r
	c.Attempts = slices.Clone(r.Attempts)
	return &c
}

// accountIdentifier is what the test outcomes are chosen by: the IBAN when
// one is given, else the account number, without spaces and upper-cased.
func accountIdentifier(b Beneficiary) string {
	id := b.IBAN
	if id == "" {
		id = b.AccountNumber
	}
	return compact(id)
}

func hasMarker(b Beneficiary, marker string) bool {
	return strings.HasSuffix(accountIdentifier(b), marker)
}

// outcome decides attempt number attempt of a transfer to b.
func outcome(b Beneficiary, attempt int) (status, failureType, failureReason string) {
	switch {
	case hasMarker(b, MarkerAccountClosed):
		return StatusFailed, FailureAccountClosed, "beneficiary account closed"
	case hasMarker(b, MarkerFailOnce) && attempt == 1:
		return StatusFailed, FailureBankUnavailable, "beneficiary bank did not answer; the transfer may be tried again"
	default:
		return StatusCompleted, "", ""
	}
}

// holdFor is how long an attempt of a transfer to b stays submitted.
func (s *Server) holdFor(b Beneficiary) time.Duration {
	if hasMarker(b, MarkerPending) {
		return s.pendingDelay
	}
	return max(s.settleDelay, 0)
}

// answer is what an operation decided, written by the handler once the lock
// is released.
type answer struct {
	status     int
	body       any
	replayed   bool
	retryAfter bool
	outcome    string
	transferID string
}

func transferAnswer(status int, r *record, outcome string) answer {
	return answer{status: status, body: r.snapshot(), outcome: outcome, transferID: r.ID}
}

func errorAnswer(status int, code, message string) answer {
	return answer{status: status, body: errorBody{Error: code, Message: message}, outcome: code}
}

func closedAnswer() answer {
	a := errorAnswer(http.StatusServiceUnavailable, "rail_unavailable", "the rail is shutting down")
	a.retryAfter = true
	return a
}

func storageAnswer() answer {
	return errorAnswer(http.StatusInternalServerError, "storage_error", "the rail could not record the transfer")
}

// submit records a submission of req under key, or answers the transfer
// already recorded under it (see the package documentation).
func (s *Server) submit(key string, req TransferRequest) answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return closedAnswer()
	}
	now := s.now().UTC()

	if r, ok := s.byKey[key]; ok {
		if r.request() != req {
			a := errorAnswer(http.StatusConflict, "idempotency_conflict", "idempotency key was already used with a different request")
			a.transferID = r.ID
			return a
		}
		r, err := s.settleLocked(r, now)
		if err != nil {
			s.logger.Error("rail simulator: record transfer", "transfer_id", r.ID, "error", err)
			return storageAnswer()
		}
		if r.Status != StatusFailed {
			a := transferAnswer(http.StatusOK, r, "replayed:"+r.Status)
			a.replayed = true
			return a
		}
		next := r.clone()
		next.Attempt++
		next.Status, next.FailureType, next.FailureReason = StatusSubmitted, "", ""
		next.Attempts = append(next.Attempts, Attempt{Number: next.Attempt, Status: StatusSubmitted, SubmittedAt: now})
		next.UpdatedAt = now
		next.SettleAt = now.Add(s.holdFor(next.Beneficiary))
		if err := s.commitLocked(next); err != nil {
			s.logger.Error("rail simulator: record transfer", "transfer_id", r.ID, "error", err)
			return storageAnswer()
		}
		s.scheduleLocked(next)
		return transferAnswer(http.StatusAccepted, next, "new_attempt")
	}

	if hasMarker(req.Beneficiary, MarkerUnavailable) && s.unavailable[key] < UnavailableAnswers {
		s.unavailable[key]++
		a := errorAnswer(http.StatusServiceUnavailable, "rail_unavailable", "the rail is temporarily unavailable; retry with the same idempotency key")
		a.retryAfter = true
		return a
	}
	delete(s.unavailable, key)

	r := &record{
		Transfer: Transfer{
			ID:             newID("tr_"),
			IdempotencyKey: key,
			Amount:         req.Amount,
			Currency:       req.Currency,
			Beneficiary:    req.Beneficiary,
			Reference:      req.Reference,
			Status:         StatusSubmitted,
			Attempt:        1,
			Attempts:       []Attempt{{Number: 1, Status: StatusSubmitted, SubmittedAt: now}},
			CreatedAt:      now,
			UpdatedAt:      now,
		},
		SettleAt: now.Add(s.holdFor(req.Beneficiary)),
	}
	if err := s.commitLocked(r); err != nil {
		s.logger.Error("rail simulator: record transfer", "transfer_id", r.ID, "error", err)
		return storageAnswer()
	}
	s.scheduleLocked(r)
	return transferAnswer(http.StatusAccepted, r, "submitted")
}

// lookup answers the transfer with id, or the one under key when id is
// empty.
func (s *Server) lookup(id, key string) answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return closedAnswer()
	}
	var (
		r  *record
		ok bool
	)
	if id != "" {
		r, ok = s.byID[id]
	} else {
		r, ok = s.byKey[key]
	}
	if !ok {
		return errorAnswer(http.StatusNotFound, "not_found", "no such transfer")
	}
	r, err := s.settleLocked(r, s.now().UTC())
	if err != nil {
		s.logger.Error("rail simulator: record transfer", "transfer_id", r.ID, "error", err)
		return storageAnswer()
	}
	return transferAnswer(http.StatusOK, r, r.Status)
}

// settleLocked decides the current attempt of r if its settle time has
// come, and returns the transfer as it now stands. The attempt is recorded
// as finished at its settle time, so the history does not depend on when
// someone looked.
func (s *Server) settleLocked(r *record, now time.Time) (*record, error) {
	if r.Status != StatusSubmitted || now.Before(r.SettleAt) {
		return r, nil
	}
	next := r.clone()
	at := r.SettleAt
	next.Status, next.FailureType, next.FailureReason = outcome(next.Beneficiary, next.Attempt)
	last := &next.Attempts[len(next.Attempts)-1]
	last.Status, last.FailureType, last.FailureReason = next.Status, next.FailureType, next.FailureReason
	last.FinishedAt = &at
	next.UpdatedAt = at
	if err := s.commitLocked(next); err != nil {
		return r, err
	}
	return next, nil
}

func (s *Server) settleAllLocked() error {
	if s.closed {
		return errClosed
	}
	now := s.now().UTC()
	for _, id := range s.ids {
		if _, err := s.settleLocked(s.byID[id], now); err != nil {
			return err
		}
	}
	return nil
}

// commitLocked writes r to the data file, then makes it the transfer's
// current state.
func (s *Server) commitLocked(r *record) error {
	if s.store != nil {
		if err := s.store.append(r); err != nil {
			return err
		}
	}
	s.put(r)
	return nil
}

func (s *Server) put(r *record) {
	if _, ok := s.byID[r.ID]; !ok {
		s.ids = append(s.ids, r.ID)
	}
	s.byID[r.ID] = r
	s.byKey[r.IdempotencyKey] = r
}

func newID(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error.
	return prefix + hex.EncodeToString(b)
}

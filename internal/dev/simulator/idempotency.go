package simulator

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

// Idempotency scopes. A key is unique within its scope, so one key may be used
// once for a charge and once for a capture without conflict.
const (
	scopeCharge  = "charge"
	scopeCapture = "capture"
	scopeVoid    = "void"
	scopeRefund  = "refund"
)

// idemEntry is the state of one idempotency key. Its mutex is held while a
// request for the key is processed, which serialises concurrent requests with
// the same key.
type idemEntry struct {
	mu          sync.Mutex
	fingerprint string
	attempts    int
	done        bool
	status      int
	body        []byte
}

// result is what an operation decided. When store is set the answer is kept
// and replayed for later requests with the same key and body.
type result struct {
	status  int
	body    []byte
	outcome string
	store   bool
	delay   time.Duration
}

// fingerprint returns a keyed SHA-256 of the canonical request. Keying it with
// a per-server secret means the stored value cannot be used to guess the card
// number it was computed over.
func (s *Server) fingerprint(scope, target string, req any) string {
	canonical, err := json.Marshal(req)
	if err != nil {
		// The request types are plain structs; this cannot happen.
		panic("acquirer: marshal canonical request: " + err.Error())
	}
	mac := hmac.New(sha256.New, s.fpSecret)
	mac.Write([]byte(scope))
	mac.Write([]byte{0})
	mac.Write([]byte(target))
	mac.Write([]byte{0})
	mac.Write(canonical)
	return hex.EncodeToString(mac.Sum(nil))
}

func (s *Server) entry(scope, key string) *idemEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := scope + "\x00" + key
	e, ok := s.idem[k]
	if !ok {
		e = &idemEntry{}
		s.idem[k] = e
	}
	return e
}

// idempotent runs op at most once per (scope, key) and writes its answer.
// A repeat with the same fingerprint replays a stored answer; a different
// fingerprint is a conflict. Answers that are not stored (unavailable, not
// found, invalid state) leave the key free to be retried with the same body.
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, scope, key, fp string, op func(e *idemEntry) result) {
	info := infoFrom(r.Context())
	e := s.entry(scope, key)

	if s.faults.ignoringIdempotency() {
		// Every request is new: the unsafe mode a test uses to see that
		// it would notice a double charge.
		e = &idemEntry{}
	}
	e.mu.Lock()
	if e.fingerprint != "" && e.fingerprint != fp {
		e.mu.Unlock()
		info.outcome = "idempotency_conflict"
		writeError(w, http.StatusConflict, "idempotency_conflict", "idempotency key was already used with a different request")
		return
	}
	if e.done {
		status, body := e.status, e.body
		e.mu.Unlock()
		info.outcome = "replayed"
		w.Header().Set("Idempotent-Replayed", "true")
		writeRaw(w, status, body)
		return
	}
	e.fingerprint = fp
	e.attempts++
	res := op(e)
	if res.store {
		e.done = true
		e.status = res.status
		e.body = res.body
		s.keepIdem(scope, key, e)
	}
	e.mu.Unlock()

	info.outcome = res.outcome
	if res.delay > 0 {
		t := time.NewTimer(res.delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			info.outcome += ",client_gone"
		case <-s.done:
		}
		t.Stop()
	}
	writeRaw(w, res.status, res.body)
}

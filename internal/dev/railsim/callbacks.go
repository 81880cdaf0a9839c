package railsim

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"
)

// Callback is the body the rail posts to Options.CallbackURL when a
// transfer's attempt is decided. It names the transfer only: the gateway
// asks the rail for the rest.
type Callback struct {
	TransferID     string `json:"transfer_id"`
	IdempotencyKey string `json:"idempotency_key"`
}

// SignatureHeader carries a callback's signature: the hex HMAC-SHA256 of
// the body under Options.Secret.
const SignatureHeader = "X-Rail-Signature"

// Sign is a callback body's signature under secret.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// A callback the gateway could not take (no answer, a 5xx) is sent again,
// the pause doubling from callbackRetryFirst, callbackAttempts times in
// all; a 4xx is the gateway's final word. The payout's own polls cover a
// callback given up.
const (
	callbackRetryFirst = 250 * time.Millisecond
	callbackAttempts   = 8
	callbackTimeout    = 5 * time.Second
)

// scheduleLocked arranges for r's current attempt to be decided at its
// settle time and the gateway told, when callbacks are configured; s.mu is
// held.
func (s *Server) scheduleLocked(r *record) {
	if s.callbackURL == "" || s.closed {
		return
	}
	id, attempt := r.ID, r.Attempt
	s.timers[id] = time.AfterFunc(max(r.SettleAt.Sub(s.now()), 0), func() { s.decideAndTell(id, attempt) })
}

// decideAndTell decides the transfer's attempt and posts its callback.
func (s *Server) decideAndTell(id string, attempt int) {
	s.mu.Lock()
	r, ok := s.byID[id]
	if !ok || s.closed || r.Attempt != attempt {
		s.mu.Unlock()
		return
	}
	delete(s.timers, id)
	// The timer may fire a moment before the rail's clock reaches the
	// settle time; the attempt is recorded as decided at that time anyway.
	r, err := s.settleLocked(r, maxTime(s.now().UTC(), r.SettleAt))
	s.mu.Unlock()
	if err != nil {
		s.logger.Error("rail simulator: decide transfer", "transfer_id", id, "error", err)
		return
	}
	body, err := json.Marshal(Callback{TransferID: r.ID, IdempotencyKey: r.IdempotencyKey})
	if err != nil {
		panic("rail simulator: marshal callback: " + err.Error())
	}
	pause := callbackRetryFirst
	for n := 1; ; n++ {
		code := s.post(body)
		if code >= 200 && code < 500 || n == callbackAttempts {
			if code < 200 || code >= 300 {
				s.logger.Warn("rail simulator: callback not taken", "transfer_id", id, "status", code, "attempts", n)
			}
			return
		}
		select {
		case <-s.done:
			return
		case <-time.After(pause):
		}
		pause *= 2
	}
}

// post sends one callback and returns the answer's status, 0 for none.
func (s *Server) post(body []byte) int {
	ctx, cancel := context.WithTimeout(context.Background(), callbackTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.callbackURL, bytes.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, Sign(s.secret, body))
	resp, err := s.client.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

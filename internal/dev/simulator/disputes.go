package simulator

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Dispute stages and statuses, as the simulated acquirer names them
// (internal/domain/dispute maps them).
const (
	DisputeInquiry        = "inquiry"
	DisputeChargeback     = "chargeback"
	DisputePreArbitration = "pre_arbitration"

	DisputeNeedsResponse = "needs_response"
	DisputeUnderReview   = "under_review"
	DisputeWon           = "won"
	DisputeLost          = "lost"
	DisputeClosed        = "closed"
)

// Evidence that decides a dispute at once, as a test asks.
const (
	WinningEvidence = "winning_evidence"
	LosingEvidence  = "losing_evidence"
)

// defaultEvidenceWindow is how long a merchant has to answer.
const defaultEvidenceWindow = 7 * 24 * time.Hour

// Dispute is the acquirer's record of a cardholder's dispute of a charge.
type Dispute struct {
	DisputeID   string    `json:"dispute_id"`
	ChargeID    string    `json:"charge_id"`
	Reference   string    `json:"reference"`
	Amount      int64     `json:"amount"`
	Currency    string    `json:"currency"`
	Reason      string    `json:"reason"`
	Stage       string    `json:"stage"`
	Status      string    `json:"status"`
	EvidenceDue time.Time `json:"evidence_due_by,omitzero"`
	// EvidenceCount counts the merchant's answers; the simulator keeps
	// none of their text, only reads it for the test words.
	EvidenceCount int `json:"evidence_count"`
	// EvidenceFiles are the files of the last answer as they arrived: each
	// one's kind, name, size and SHA-256, so a test can tell its bytes
	// came (the simulator keeps no content).
	EvidenceFiles []EvidenceFileSeen `json:"evidence_files,omitempty"`
	CreatedAt     time.Time          `json:"created_at"`
	// DebitedAt is when the acquirer took the disputed amount back (a
	// chargeback, or an inquiry lost), ReinstatedAt when it gave it back
	// (won after the debit): each is a line of that day's settlement.
	DebitedAt time.Time `json:"debited_at,omitzero"`
	// Fee is the acquirer's chargeback fee, charged with the debit (in
	// minor units of Currency); none before it.
	Fee          int64     `json:"fee,omitempty"`
	ReinstatedAt time.Time `json:"reinstated_at,omitzero"`
	// CallbackStatus is the HTTP status the last callback was answered
	// with, 0 when none came; CallbackAttempts counts the callbacks sent,
	// and CallbackPending says another will be.
	CallbackStatus   int  `json:"callback_status"`
	CallbackAttempts int  `json:"callback_attempts"`
	CallbackPending  bool `json:"callback_pending"`
	callbackURL      string
}

// disputeCallback is the body the acquirer posts when a dispute moves: it
// names the dispute only; the gateway asks for the rest.
type disputeCallback struct {
	DisputeID string `json:"dispute_id"`
	Reference string `json:"reference"`
}

// raiseRequest is the body of POST /_sim/disputes: the test rig or ops
// raise a dispute of a captured charge.
type raiseRequest struct {
	ChargeID    string `json:"charge_id"`
	Reference   string `json:"reference"`
	Stage       string `json:"stage"`
	Reason      string `json:"reason"`
	CallbackURL string `json:"callback_url"`
	// EvidenceWindowSeconds shortens the answer's window (default 7 days).
	EvidenceWindowSeconds int64 `json:"evidence_window_seconds"`
}

// handleRaiseDispute raises a dispute of a captured charge (by charge_id or
// reference) and tells the gateway at callback_url.
func (s *Server) handleRaiseDispute(w http.ResponseWriter, r *http.Request) {
	var req raiseRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if req.Stage == "" {
		req.Stage = DisputeChargeback
	}
	if req.Stage != DisputeInquiry && req.Stage != DisputeChargeback {
		writeError(w, http.StatusBadRequest, "invalid_request", "stage must be inquiry or chargeback")
		return
	}
	if req.Reason == "" {
		req.Reason = "fraudulent"
	}
	window := defaultEvidenceWindow
	if req.EvidenceWindowSeconds > 0 {
		window = time.Duration(req.EvidenceWindowSeconds) * time.Second
	}
	s.mu.Lock()
	var c *Charge
	for _, ch := range s.charges {
		if ch.ChargeID == req.ChargeID || req.ChargeID == "" && ch.Reference == req.Reference && ch.CapturedAmount > 0 {
			c = ch
		}
	}
	if c == nil || c.CapturedAmount == 0 {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "not_found", "no captured charge with that charge_id or reference")
		return
	}
	out := s.raise(c, req.Stage, req.Reason, window, req.CallbackURL)
	s.mu.Unlock()
	s.tellDispute(r.Context(), out.DisputeID)
	s.mu.Lock()
	out = *s.disputes[out.DisputeID]
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// raise opens a dispute of captured charge c; the caller holds s.mu.
func (s *Server) raise(c *Charge, stage, reason string, window time.Duration, callbackURL string) Dispute {
	now := s.now()
	d := &Dispute{DisputeID: newID("dp_"), ChargeID: c.ChargeID, Reference: c.Reference, Amount: c.CapturedAmount - c.RefundedAmount,
		Currency: c.Currency, Reason: reason, Stage: stage, Status: DisputeNeedsResponse, EvidenceDue: now.Add(window),
		CreatedAt: now, callbackURL: callbackURL}
	if s.disputes == nil {
		s.disputes = map[string]*Dispute{}
	}
	s.disputes[d.DisputeID] = d
	s.moveDisputedMoney(d)
	s.keepDispute(d)
	return *d
}

// chargebackFee is what the acquirer charges the merchant account for a
// chargeback, beside the amount it takes back.
const chargebackFee = 1500

// moveDisputedMoney marks the acquirer's debit and reinstatement of a
// dispute's money as its stage and status come to them; the caller holds
// s.mu. A chargeback (and any later stage) is debited at once; an inquiry
// only if lost; a won dispute that was debited is given back.
func (s *Server) moveDisputedMoney(d *Dispute) {
	now := s.now()
	if d.DebitedAt.IsZero() && (d.Stage != DisputeInquiry || d.Status == DisputeLost) {
		d.DebitedAt, d.Fee = now, chargebackFee
	}
	if d.Status == DisputeWon && !d.DebitedAt.IsZero() && d.ReinstatedAt.IsZero() {
		d.ReinstatedAt = now
	}
}

// DisputeCardBIN and DisputeCardLast4 make the dispute test card
// (4000000000000259): a capture of it is disputed DisputeAfter later when
// the simulator is told where to call back (Options).
const (
	DisputeCardBIN   = "400000"
	DisputeCardLast4 = "0259"
)

// scheduleDispute raises, after the configured delay, a chargeback of a
// captured charge of the dispute test card; the caller holds s.mu.
func (s *Server) scheduleDispute(c *Charge) {
	if s.disputeAfter <= 0 || s.disputeCallbackURL == "" || c.CardBIN != DisputeCardBIN || c.CardLast4 != DisputeCardLast4 ||
		c.CapturedAmount == 0 || s.closed {
		return
	}
	id := c.ChargeID
	s.timers["dispute/"+id] = time.AfterFunc(s.disputeAfter, func() {
		s.mu.Lock()
		delete(s.timers, "dispute/"+id)
		ch, ok := s.chargesByID[id]
		if !ok || s.closed {
			s.mu.Unlock()
			return
		}
		d := s.raise(ch, DisputeChargeback, "fraudulent", defaultEvidenceWindow, s.disputeCallbackURL)
		s.mu.Unlock()
		s.tellDispute(context.Background(), d.DisputeID)
	})
}

// handleGetDispute answers a dispute as it stands.
func (s *Server) handleGetDispute(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	d, ok := s.disputes[r.PathValue("id")]
	var out Dispute
	if ok {
		out = *d
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "no such dispute")
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// evidenceRequest is the body of POST /v1/disputes/{id}/evidence: the
// texts, and at most one file of each kind.
type evidenceRequest struct {
	Text  string `json:"text"`
	Files []struct {
		Kind          string `json:"kind"`
		Name          string `json:"name"`
		ContentType   string `json:"content_type"`
		ContentBase64 string `json:"content_base64"`
	} `json:"files"`
}

// EvidenceFileSeen is a file of an answer as the simulator received it.
type EvidenceFileSeen struct {
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
}

// filesSeen checks an answer's files (named, of a kind once each, bytes in
// base64) and returns them as seen, or why they are refused.
func (req evidenceRequest) filesSeen() ([]EvidenceFileSeen, string) {
	var out []EvidenceFileSeen
	kinds := map[string]bool{}
	for i, f := range req.Files {
		content, err := base64.StdEncoding.DecodeString(f.ContentBase64)
		switch {
		case f.Kind == "" || f.Name == "":
			return nil, fmt.Sprintf("file %d has no kind or no name", i)
		case kinds[f.Kind]:
			return nil, "two files of kind " + f.Kind
		case err != nil || len(content) == 0:
			return nil, fmt.Sprintf("file %d has no content in base64", i)
		}
		kinds[f.Kind] = true
		sum := sha256.Sum256(content)
		out = append(out, EvidenceFileSeen{Kind: f.Kind, Name: f.Name, Size: len(content), SHA256: hex.EncodeToString(sum[:])})
	}
	return out, ""
}

// handleDisputeEvidence takes the merchant's evidence of a dispute that
// needs a response: it goes under review, and the test words decide it at
// once. Evidence after the deadline, or for a dispute not waiting for it,
// is refused.
func (s *Server) handleDisputeEvidence(w http.ResponseWriter, r *http.Request) {
	var req evidenceRequest
	if !decodeBodyUpTo(w, r, &req, maxEvidenceBytes) {
		return
	}
	files, refused := req.filesSeen()
	if refused != "" {
		writeError(w, http.StatusBadRequest, "invalid_request", refused)
		return
	}
	s.changeDispute(w, r, func(d *Dispute) (int, string) {
		if d.Status != DisputeNeedsResponse {
			return http.StatusConflict, "the dispute is " + d.Status
		}
		if s.now().After(d.EvidenceDue) {
			return http.StatusConflict, "the evidence is late"
		}
		d.EvidenceCount++
		d.EvidenceFiles = files
		d.Status = DisputeUnderReview
		switch {
		case strings.Contains(req.Text, WinningEvidence):
			d.Status = DisputeWon
		case strings.Contains(req.Text, LosingEvidence):
			d.Status = DisputeLost
		}
		return 0, ""
	})
}

// handleAcceptDispute is the merchant giving the dispute up: it is lost.
func (s *Server) handleAcceptDispute(w http.ResponseWriter, r *http.Request) {
	s.changeDispute(w, r, func(d *Dispute) (int, string) {
		if d.Status != DisputeNeedsResponse && d.Status != DisputeUnderReview {
			return http.StatusConflict, "the dispute is " + d.Status
		}
		d.Status = DisputeLost
		return 0, ""
	})
}

// decideRequest is the body of POST /_sim/disputes/{id}/decide.
type decideRequest struct {
	// Outcome is won, lost, closed (an inquiry dropped), chargeback (an
	// inquiry escalated) or pre_arbitration (the issuer asks again).
	Outcome string `json:"outcome"`
	// EvidenceWindowSeconds is the new answer's window on an escalation.
	EvidenceWindowSeconds int64 `json:"evidence_window_seconds"`
}

// handleDecideDispute is the issuer's word, as the test rig or ops give
// it.
func (s *Server) handleDecideDispute(w http.ResponseWriter, r *http.Request) {
	var req decideRequest
	if !decodeBody(w, r, &req) {
		return
	}
	s.changeDispute(w, r, func(d *Dispute) (int, string) {
		if d.Status == DisputeWon || d.Status == DisputeLost || d.Status == DisputeClosed {
			return http.StatusConflict, "the dispute is " + d.Status
		}
		window := defaultEvidenceWindow
		if req.EvidenceWindowSeconds > 0 {
			window = time.Duration(req.EvidenceWindowSeconds) * time.Second
		}
		switch req.Outcome {
		case DisputeWon, DisputeLost:
			d.Status = req.Outcome
		case DisputeClosed:
			if d.Stage != DisputeInquiry {
				return http.StatusConflict, "only an inquiry closes"
			}
			d.Status = DisputeClosed
		case DisputeChargeback, DisputePreArbitration:
			d.Stage, d.Status, d.EvidenceDue = req.Outcome, DisputeNeedsResponse, s.now().Add(window)
		default:
			return http.StatusBadRequest, "outcome must be won, lost, closed, chargeback or pre_arbitration"
		}
		return 0, ""
	})
}

// changeDispute applies change to the dispute the path names, answers it
// and tells the gateway.
func (s *Server) changeDispute(w http.ResponseWriter, r *http.Request, change func(*Dispute) (int, string)) {
	s.mu.Lock()
	d, ok := s.disputes[r.PathValue("id")]
	if !ok {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "not_found", "no such dispute")
		return
	}
	if code, msg := change(d); code != 0 {
		s.mu.Unlock()
		writeError(w, code, "invalid_state", msg)
		return
	}
	s.moveDisputedMoney(d)
	s.keepDispute(d)
	s.mu.Unlock()
	s.tellDispute(r.Context(), d.DisputeID)
	s.mu.Lock()
	out := *d
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// Dispute callbacks that find the gateway unable to take them (no answer,
// or a 5xx) are sent again, as acquirers do, after a pause that doubles from
// disputeRetryFirst to disputeRetryMax, for disputeRetryFor at most. A 2xx
// is the end; so is a 4xx, the gateway's word that it will never take it.
const (
	disputeRetryFirst = 250 * time.Millisecond
	disputeRetryMax   = 10 * time.Second
	disputeRetryFor   = 24 * time.Hour
)

// tellDispute posts the signed callback of a dispute's move once and, when
// the gateway could not take it, goes on trying in the background.
func (s *Server) tellDispute(ctx context.Context, id string) {
	if s.callDispute(ctx, id) {
		go s.retryDispute(id)
	}
}

// callDispute sends the dispute's callback once, records the answer and
// reports whether it should be sent again.
func (s *Server) callDispute(ctx context.Context, id string) (again bool) {
	s.mu.Lock()
	d, ok := s.disputes[id]
	if !ok || d.callbackURL == "" || s.closed {
		s.mu.Unlock()
		return false
	}
	target, since, cb := d.callbackURL, d.CreatedAt, disputeCallback{DisputeID: d.DisputeID, Reference: d.Reference}
	s.mu.Unlock()
	body, err := json.Marshal(cb)
	if err != nil {
		panic("acquirer: marshal dispute callback: " + err.Error())
	}
	code := s.postSigned(context.WithoutCancel(ctx), target, body, "dispute callback", "dispute_id", id)
	s.mu.Lock()
	defer s.mu.Unlock()
	d.CallbackStatus = code
	d.CallbackAttempts++
	again = (code == 0 || code >= 500) && s.now().Sub(since) < disputeRetryFor
	d.CallbackPending = again
	s.keepDispute(d)
	return again
}

// retryDispute sends a dispute's callback again until it is taken, given
// up, or the simulator closes.
func (s *Server) retryDispute(id string) {
	pause := disputeRetryFirst
	for {
		t := time.NewTimer(pause)
		select {
		case <-s.done:
			t.Stop()
			return
		case <-t.C:
		}
		if !s.callDispute(context.Background(), id) {
			return
		}
		pause = min(2*pause, disputeRetryMax)
	}
}

// Disputes returns a copy of every dispute, in no particular order.
func (s *Server) Disputes() []Dispute {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Dispute, 0, len(s.disputes))
	for _, d := range s.disputes {
		out = append(out, *d)
	}
	return out
}

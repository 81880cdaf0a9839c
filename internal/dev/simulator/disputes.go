package simulator

import (
	"bytes"
	"context"
	"encoding/json"
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
	EvidenceCount int       `json:"evidence_count"`
	CreatedAt     time.Time `json:"created_at"`
	callbackURL   string
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
	now := s.now()
	d := &Dispute{DisputeID: newID("dp_"), ChargeID: c.ChargeID, Reference: c.Reference, Amount: c.CapturedAmount - c.RefundedAmount,
		Currency: c.Currency, Reason: req.Reason, Stage: req.Stage, Status: DisputeNeedsResponse, EvidenceDue: now.Add(window),
		CreatedAt: now, callbackURL: req.CallbackURL}
	if s.disputes == nil {
		s.disputes = map[string]*Dispute{}
	}
	s.disputes[d.DisputeID] = d
	out := *d
	s.mu.Unlock()
	s.tellDispute(r.Context(), out)
	writeJSON(w, http.StatusOK, out)
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

// evidenceRequest is the body of POST /v1/disputes/{id}/evidence.
type evidenceRequest struct {
	Text string `json:"text"`
}

// handleDisputeEvidence takes the merchant's evidence of a dispute that
// needs a response: it goes under review, and the test words decide it at
// once. Evidence after the deadline, or for a dispute not waiting for it,
// is refused.
func (s *Server) handleDisputeEvidence(w http.ResponseWriter, r *http.Request) {
	var req evidenceRequest
	if !decodeBody(w, r, &req) {
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
	out := *d
	s.mu.Unlock()
	s.tellDispute(r.Context(), out)
	writeJSON(w, http.StatusOK, out)
}

// tellDispute posts the signed callback of a dispute's move.
func (s *Server) tellDispute(ctx context.Context, d Dispute) {
	if d.callbackURL == "" {
		return
	}
	body, err := json.Marshal(disputeCallback{DisputeID: d.DisputeID, Reference: d.Reference})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callbackTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.callbackURL, bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Provider-Signature", sign(s.secret, body))
	resp, err := s.callbacks.Do(req)
	if err != nil {
		s.logger.Warn("dispute callback failed", "dispute_id", d.DisputeID, "error", err)
		return
	}
	resp.Body.Close()
}

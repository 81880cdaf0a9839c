package simulator

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/paygate/paygate/internal/adapters/outbound"
)

// Test cards with a fixed outcome. Any other well-formed card is approved.
const (
	cardUnavailable = "4000000000000119"
	cardTimeout     = "4000000000000341"
	// cardSlow is approved after Options.SlowCardDelay, within the
	// gateway's timeout: a worker stopped at a random moment is then often
	// stopped in the middle of a charge.
	cardSlow = "4000000000000267"
)

type decline struct {
	code    string
	message string
}

var declines = map[string]decline{
	"4000000000000002": {"do_not_honor", "The card issuer declined the charge."},
	"4000000000009995": {"insufficient_funds", "The card has insufficient funds."},
	"4000000000000069": {"expired_card", "The card has expired."},
	"4000000000000127": {"incorrect_cvc", "The card's security code is incorrect."},
}

// cardChallenge needs a 3-D Secure challenge; a charge of it is approved only
// with the data of a successful authentication.
const cardChallenge = "4000000000003220"

const maxKeyLen = 255

// chargeRequest is the body of POST /v1/charges. It is never logged or kept.
type chargeRequest struct {
	IdempotencyKey string `json:"idempotency_key"`
	Reference      string `json:"reference"`
	CardNumber     string `json:"card_number"`
	ExpiryMonth    string `json:"expiry_month"`
	ExpiryYear     string `json:"expiry_year"`
	CVV            string `json:"cvv"`
	Amount         int64  `json:"amount"`
	Currency       string `json:"currency"`
	Capture        bool   `json:"capture"`
	// ThreeDS carries the result of a 3-D Secure authentication, if any.
	ThreeDS *threeDSData `json:"three_ds,omitempty"`
	// Stored marks a charge of a card the merchant keeps: it comes without
	// a CVV, as card-on-file charges do.
	Stored bool `json:"stored_credential,omitempty"`
	// Installments is the number of monthly installments, 0 for none.
	Installments int `json:"installments,omitempty"`
}

// fingerprinted is the request as its idempotency fingerprint covers it: the
// card as its first six and last four digits, and no security code. The
// fingerprints are kept in the data file beside their HMAC secret, so a
// hash over the whole card could be searched for it.
func (r chargeRequest) fingerprinted() chargeRequest {
	r.CardNumber, r.CVV = maskedForFingerprint(r.CardNumber), ""
	return r
}

// maskedForFingerprint keeps a card number's first six and last four digits.
func maskedForFingerprint(number string) string {
	if len(number) < 10 {
		return ""
	}
	return number[:6] + "/" + number[len(number)-4:]
}

// threeDSData names an authentication of this simulator and its result.
type threeDSData struct {
	AuthenticationID string `json:"authentication_id"`
	ECI              string `json:"eci"`
	CAVV             string `json:"cavv"`
	// External is a result the merchant's own 3-D Secure server produced:
	// the simulator takes it when its ECI says authenticated or attempted
	// and a CAVV is there, as an acquirer passes it to the scheme.
	External  bool   `json:"external,omitempty"`
	XID       string `json:"xid,omitempty"`
	DSTransID string `json:"ds_trans_id,omitempty"`
}

// externalECIs are the ECIs of an authenticated or attempted 3-D Secure
// (Visa 05, 06; Mastercard 02, 01).
var externalECIs = []string{"05", "06", "02", "01"}

// validExternal reports whether an external 3-D Secure result is one the
// simulator takes.
func validExternal(d threeDSData) bool {
	return d.External && d.CAVV != "" && slices.Contains(externalECIs, d.ECI)
}

type captureRequest struct {
	IdempotencyKey string `json:"idempotency_key"`
	Amount         int64  `json:"amount"`
}

type voidRequest struct {
	IdempotencyKey string `json:"idempotency_key"`
}

type refundRequest struct {
	IdempotencyKey string `json:"idempotency_key"`
	Amount         int64  `json:"amount"`
}

type errorBody struct {
	Error   string `json:"error"`
	Message string `json:"message,omitempty"`
}

func (s *Server) handleCreateCharge(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	var req chargeRequest
	if !decodeBody(w, r, &req) {
		info.outcome = "invalid_request"
		return
	}
	info.idempotencyKey = req.IdempotencyKey
	if err := validateCharge(req); err != nil {
		info.outcome = "invalid_request"
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	fp := s.fingerprint(scopeCharge, "", req.fingerprinted())
	s.idempotent(w, r, scopeCharge, req.IdempotencyKey, fp, func(e *idemEntry) result {
		if req.CardNumber == cardUnavailable && e.attempts == 1 {
			return errorResult(http.StatusServiceUnavailable, "acquirer_unavailable", "the acquirer is temporarily unavailable", false)
		}
		c, ok := s.createCharge(req, outbound.RequestDeadline(r))
		if !ok {
			return errorResult(http.StatusRequestTimeout, "request_expired", "the request's deadline passed before it was processed", false)
		}
		res := jsonResult(http.StatusOK, c, true)
		res.outcome = c.Status
		if c.DeclineCode != "" {
			res.outcome += ":" + c.DeclineCode
		}
		switch req.CardNumber {
		case cardTimeout:
			res.delay = s.timeoutDelay
			res.outcome += ",held"
		case cardSlow:
			res.delay = s.slowDelay
			res.outcome += ",slow"
		}
		return res
	})
}

// createCharge records the decision for req and returns a copy of it,
// unless the caller's deadline has passed (ok false): the check and the
// record share the lock that inquiries read under, so an inquiry made after
// the deadline sees every charge that will ever exist for the key.
func (s *Server) createCharge(req chargeRequest, deadline time.Time) (Charge, bool) {
	c := &Charge{
		ChargeID:       newID("ch_"),
		IdempotencyKey: req.IdempotencyKey,
		Reference:      req.Reference,
		Amount:         req.Amount,
		Currency:       req.Currency,
		CardBIN:        req.CardNumber[:6],
		CardLast4:      req.CardNumber[len(req.CardNumber)-4:],
		CreatedAt:      s.now(),
	}
	authenticated := req.ThreeDS != nil && (validExternal(*req.ThreeDS) || !req.ThreeDS.External && s.validThreeDS(req.CardNumber, *req.ThreeDS))
	c.ThreeDS = authenticated
	c.Installments = req.Installments
	d, declined := declines[req.CardNumber]
	switch {
	case req.CardNumber == cardChallenge && !authenticated:
		declined = true
		d = decline{"authentication_required", "The card requires 3-D Secure authentication."}
	case req.ThreeDS != nil && !authenticated:
		declined = true
		d = decline{"authentication_failed", "The 3-D Secure authentication data is not valid."}
	}
	if declined {
		c.Status = StatusDeclined
		c.DeclineCode = d.code
		c.Message = d.message
	} else {
		c.Status = StatusApproved
		c.Message = "Approved."
		c.AuthCode = newAuthCode()
		if req.Capture {
			c.CapturedAmount = req.Amount
			c.CapturedAt = c.CreatedAt
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !deadline.IsZero() && time.Now().After(deadline) {
		return Charge{}, false
	}
	s.charges = append(s.charges, c)
	s.chargesByID[c.ChargeID] = c
	s.chargesByKey[c.IdempotencyKey] = c
	s.keepCharge(c)
	s.scheduleDispute(c)
	return *c, true
}

func (s *Server) handleInquire(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	key := r.PathValue("idempotency_key")
	info.idempotencyKey = key
	s.mu.Lock()
	c, ok := s.chargesByKey[key]
	var out Charge
	if ok {
		out = *c
	}
	s.mu.Unlock()
	if !ok {
		info.outcome = "not_found"
		writeError(w, http.StatusNotFound, "not_found", "no charge with this idempotency key")
		return
	}
	info.outcome = out.Status
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleListCharges(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, struct {
		Charges []Charge `json:"charges"`
	}{s.Charges()})
}

func (s *Server) handleCapture(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	chargeID := r.PathValue("charge_id")
	var req captureRequest
	if !decodeBody(w, r, &req) {
		info.outcome = "invalid_request"
		return
	}
	info.idempotencyKey = req.IdempotencyKey
	if err := validateKey(req.IdempotencyKey); err != nil {
		info.outcome = "invalid_request"
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	fp := s.fingerprint(scopeCapture, chargeID, req)
	s.idempotent(w, r, scopeCapture, req.IdempotencyKey, fp, func(*idemEntry) result {
		s.mu.Lock()
		defer s.mu.Unlock()
		c, ok := s.chargesByID[chargeID]
		switch {
		case !ok:
			return errorResult(http.StatusNotFound, "not_found", "no such charge", false)
		case c.Status != StatusApproved || c.Voided || c.CapturedAmount > 0:
			return errorResult(http.StatusConflict, "invalid_state", "only an approved, uncaptured, unvoided charge can be captured", false)
		case req.Amount < 1 || req.Amount > c.Amount:
			return errorResult(http.StatusBadRequest, "invalid_amount", fmt.Sprintf("amount must be between 1 and %d", c.Amount), false)
		}
		c.CapturedAmount = req.Amount
		c.CapturedAt = s.now()
		s.keepCharge(c)
		s.scheduleDispute(c)
		res := jsonResult(http.StatusOK, *c, true)
		res.outcome = "captured"
		return res
	})
}

func (s *Server) handleVoid(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	chargeID := r.PathValue("charge_id")
	var req voidRequest
	if !decodeBody(w, r, &req) {
		info.outcome = "invalid_request"
		return
	}
	info.idempotencyKey = req.IdempotencyKey
	if err := validateKey(req.IdempotencyKey); err != nil {
		info.outcome = "invalid_request"
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	fp := s.fingerprint(scopeVoid, chargeID, req)
	s.idempotent(w, r, scopeVoid, req.IdempotencyKey, fp, func(*idemEntry) result {
		s.mu.Lock()
		defer s.mu.Unlock()
		c, ok := s.chargesByID[chargeID]
		switch {
		case !ok:
			return errorResult(http.StatusNotFound, "not_found", "no such charge", false)
		case c.Status != StatusApproved || c.Voided || c.CapturedAmount > 0:
			return errorResult(http.StatusConflict, "invalid_state", "only an approved, uncaptured, unvoided charge can be voided", false)
		}
		c.Voided = true
		s.keepCharge(c)
		res := jsonResult(http.StatusOK, *c, true)
		res.outcome = "voided"
		return res
	})
}

func (s *Server) handleRefund(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	chargeID := r.PathValue("charge_id")
	var req refundRequest
	if !decodeBody(w, r, &req) {
		info.outcome = "invalid_request"
		return
	}
	info.idempotencyKey = req.IdempotencyKey
	if err := validateKey(req.IdempotencyKey); err != nil {
		info.outcome = "invalid_request"
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	fp := s.fingerprint(scopeRefund, chargeID, req)
	s.idempotent(w, r, scopeRefund, req.IdempotencyKey, fp, func(*idemEntry) result {
		s.mu.Lock()
		defer s.mu.Unlock()
		c, ok := s.chargesByID[chargeID]
		switch {
		case !ok:
			return errorResult(http.StatusNotFound, "not_found", "no such charge", false)
		case c.CapturedAmount == 0:
			return errorResult(http.StatusConflict, "invalid_state", "only a captured charge can be refunded", false)
		case req.Amount < 1:
			return errorResult(http.StatusBadRequest, "invalid_amount", "amount must be at least 1", false)
		}
		var reserved int64
		for _, rf := range s.refunds {
			if rf.ChargeID == chargeID && rf.Status != RefundFailed {
				reserved += rf.Amount
			}
		}
		if reserved+req.Amount > c.CapturedAmount {
			return errorResult(http.StatusConflict, "amount_exceeds_captured",
				fmt.Sprintf("refunds would total %d, more than the captured %d", reserved+req.Amount, c.CapturedAmount), false)
		}
		now := s.now()
		rf := &Refund{
			RefundID:       newID("re_"),
			ChargeID:       chargeID,
			IdempotencyKey: req.IdempotencyKey,
			Amount:         req.Amount,
			Currency:       c.Currency,
			CreatedAt:      now,
		}
		if req.Amount%100 == 77 {
			rf.Status = RefundPending
			if !s.closed {
				s.timers[rf.RefundID] = time.AfterFunc(s.settleDelay, func() { s.settle(rf.RefundID) })
			}
		} else {
			rf.Status = RefundSucceeded
			rf.SettledAt = &now
			c.RefundedAmount += rf.Amount
		}
		s.refunds = append(s.refunds, rf)
		s.refundsByID[rf.RefundID] = rf
		s.keepRefund(rf)
		s.keepCharge(c)
		res := jsonResult(http.StatusOK, copyRefund(rf), true)
		res.outcome = "refund_" + rf.Status
		return res
	})
}

// settle moves a pending refund to succeeded.
func (s *Server) settle(refundID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.timers, refundID)
	if s.closed {
		return
	}
	rf, ok := s.refundsByID[refundID]
	if !ok || rf.Status != RefundPending {
		return
	}
	now := s.now()
	rf.Status = RefundSucceeded
	rf.SettledAt = &now
	s.keepRefund(rf)
	if c, ok := s.chargesByID[rf.ChargeID]; ok {
		c.RefundedAmount += rf.Amount
		s.keepCharge(c)
	}
	s.logger.Info("acquirer refund settled", "refund_id", rf.RefundID, "charge_id", rf.ChargeID, "amount", rf.Amount)
}

func (s *Server) handleGetRefund(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	s.mu.Lock()
	rf, ok := s.refundsByID[r.PathValue("refund_id")]
	var out Refund
	if ok {
		out = copyRefund(rf)
	}
	s.mu.Unlock()
	if !ok {
		info.outcome = "not_found"
		writeError(w, http.StatusNotFound, "not_found", "no such refund")
		return
	}
	info.idempotencyKey = out.IdempotencyKey
	info.outcome = out.Status
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleListRefunds(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, struct {
		Refunds []Refund `json:"refunds"`
	}{s.Refunds()})
}

func copyRefund(r *Refund) Refund {
	out := *r
	if r.SettledAt != nil {
		t := *r.SettledAt
		out.SettledAt = &t
	}
	return out
}

// validateCharge checks the shape of req. Its messages never echo the
// request's values.
func validateCharge(req chargeRequest) error {
	if err := validateCardRequest(req.IdempotencyKey, req.Reference, req.CardNumber, req.ExpiryMonth, req.ExpiryYear,
		req.Amount, req.Currency); err != nil {
		return err
	}
	if req.Installments < 0 || req.Installments == 1 || req.Installments > 60 {
		return errors.New("installments must be 2 to 60, or none")
	}
	if req.Stored && req.CVV == "" {
		return nil
	}
	if (len(req.CVV) != 3 && len(req.CVV) != 4) || !digits(req.CVV) {
		return errors.New("cvv must be 3 or 4 digits")
	}
	return nil
}

// validateCardRequest checks what charges and authentications share: the
// key, the reference, the card, the amount. Its messages never echo values.
func validateCardRequest(key, reference, cardNumber, month, year string, amount int64, currency string) error {
	if err := validateKey(key); err != nil {
		return err
	}
	switch {
	case len(reference) > maxKeyLen:
		return fmt.Errorf("reference must be at most %d characters", maxKeyLen)
	case len(cardNumber) < 12 || len(cardNumber) > 19 || !digits(cardNumber):
		return errors.New("card_number must be 12 to 19 digits")
	case !validMonth(month):
		return errors.New("expiry_month must be 1 to 12")
	case (len(year) != 2 && len(year) != 4) || !digits(year):
		return errors.New("expiry_year must be 2 or 4 digits")
	case amount <= 0:
		return errors.New("amount must be a positive number of minor units")
	case !validCurrency(currency):
		return errors.New("currency must be 3 upper-case letters")
	}
	return nil
}

func validateKey(key string) error {
	if key == "" {
		return errors.New("idempotency_key is required")
	}
	if len(key) > maxKeyLen {
		return fmt.Errorf("idempotency_key must be at most %d characters", maxKeyLen)
	}
	for _, r := range key {
		if r < 0x21 || r > 0x7e || r == '/' {
			return errors.New("idempotency_key must be printable ASCII without spaces or slashes")
		}
	}
	return nil
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func validMonth(s string) bool {
	if len(s) < 1 || len(s) > 2 || !digits(s) {
		return false
	}
	m, _ := strconv.Atoi(s)
	return m >= 1 && m <= 12
}

func validCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, r := range s {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}

// decodeBody reads a JSON object into v, answering 400 itself on failure.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	return decodeBodyUpTo(w, r, v, maxBodyBytes)
}

// decodeBodyUpTo is decodeBody for a body of at most limit bytes.
func decodeBodyUpTo(w http.ResponseWriter, r *http.Request, v any, limit int64) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		// The decoder's message could quote a field; answer a fixed text.
		writeError(w, http.StatusBadRequest, "invalid_request", "body must be a JSON object with the documented fields")
		return false
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, "invalid_request", "body must hold a single JSON object")
		return false
	}
	return true
}

func jsonResult(status int, v any, store bool) result {
	body, err := json.Marshal(v)
	if err != nil {
		panic("acquirer: marshal response: " + err.Error())
	}
	return result{status: status, body: body, store: store}
}

func errorResult(status int, code, message string, store bool) result {
	res := jsonResult(status, errorBody{Error: code, Message: message}, store)
	res.outcome = code
	return res
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"error":"internal"}`, http.StatusInternalServerError)
		return
	}
	writeRaw(w, status, body)
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, errorBody{Error: code, Message: message})
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	_, _ = w.Write([]byte("\n"))
}

func newID(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

const authAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"

func newAuthCode() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = authAlphabet[int(b[i])%len(authAlphabet)]
	}
	return string(b)
}

package simbank

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/paygate/paygate/internal/adapters/outbound"
	"github.com/paygate/paygate/internal/domain/money"
)

// headerRequestID carries the idempotency key of every POST.
const headerRequestID = "X-Request-Id"

// Test cards with a fixed outcome. Any other well-formed card is approved.
const (
	cardUnavailable = "4000000000000119"
	cardTimeout     = "4000000000000341"
)

type refusal struct{ code, text string }

// refusals are the response codes of the refused test cards, in the ISO
// 8583 style this acquirer answers with.
var refusals = map[string]refusal{
	"4000000000000002": {"05", "Do not honour"},
	"4000000000009995": {"51", "Insufficient funds"},
	"4000000000000069": {"54", "Expired card"},
	"4000000000000127": {"N7", "CVV2 mismatch"},
	// The 3-D Secure test card: this acquirer offers no 3-D Secure, so a
	// card that needs it is refused.
	"4000000000003220": {"1A", "Strong customer authentication required"},
}

// Idempotency scopes: a request id is unique within its scope.
const (
	scopePayment  = "payment"
	scopeCapture  = "capture"
	scopeReversal = "reversal"
	scopeRefund   = "refund"
)

const maxRequestIDLen = 255

// idemEntry is the state of one request id. Its mutex is held while a
// request for the id runs, which serialises concurrent requests with it.
type idemEntry struct {
	mu          sync.Mutex
	fingerprint string
	attempts    int
	done        bool
	status      int
	body        []byte
}

// result is what an operation decided. When store is set the answer is kept
// and replayed for later requests with the same id and body.
type result struct {
	status  int
	body    []byte
	outcome string
	store   bool
	delay   time.Duration
}

func (s *Server) handleCreatePayment(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	id, ok := requestID(w, r)
	if !ok {
		info.outcome = "invalid_request"
		return
	}
	f, ok := readForm(w, r, "txn_type", "merchant_ref", "pan", "exp", "cvc", "cof", "amount", "currency")
	if !ok {
		info.outcome = "invalid_request"
		return
	}
	amount, field, problem := validatePayment(f)
	if field != "" {
		info.outcome = "invalid_field:" + field
		writeFieldError(w, field, problem)
		return
	}
	s.idempotent(w, r, scopePayment, id, s.fingerprint(scopePayment, "", f), func(e *idemEntry) result {
		pan := f.Get("pan")
		if pan == cardUnavailable && e.attempts == 1 {
			return errorResult(http.StatusServiceUnavailable, "TRY_AGAIN_LATER", "the host is temporarily unavailable", false)
		}
		p, ok := s.createPayment(id, f, amount, outbound.RequestDeadline(r))
		if !ok {
			return errorResult(http.StatusRequestTimeout, "REQUEST_EXPIRED", "the request's deadline passed before it was processed", false)
		}
		res := formResult(http.StatusOK, p.form(), true)
		res.outcome = p.State + ":" + p.ResponseCode
		if pan == cardTimeout {
			res.delay = s.timeoutDelay
			res.outcome += ",held"
		}
		return res
	})
}

// createPayment records the decision on a payment and returns a copy,
// unless the caller's deadline has passed (ok false): the check and the
// record share the lock that inquiries read under, so an inquiry made after
// the deadline sees every payment that will ever exist for the request id.
func (s *Server) createPayment(id string, f url.Values, amount money.Amount, deadline time.Time) (Payment, bool) {
	pan := f.Get("pan")
	p := &Payment{
		PaymentID:   newID("pay_"),
		RequestID:   id,
		MerchantRef: f.Get("merchant_ref"),
		TxnType:     f.Get("txn_type"),
		Amount:      amount.Minor,
		Currency:    amount.Currency,
		CardLast4:   pan[len(pan)-4:],
		CreatedAt:   time.Now().UTC(),
	}
	if ref, refused := refusals[pan]; refused {
		p.State, p.ResponseCode, p.Text = StateRefused, ref.code, ref.text
	} else {
		p.State, p.ResponseCode, p.Text = StateAuthorised, "00", "Approved"
		p.ApprovalCode = newApprovalCode()
		if p.TxnType == "SALE" {
			p.State, p.Captured = StateCaptured, p.Amount
			p.CapturedAt = p.CreatedAt
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !deadline.IsZero() && time.Now().After(deadline) {
		return Payment{}, false
	}
	s.payments = append(s.payments, p)
	s.paymentsByID[p.PaymentID] = p
	s.paymentsByReq[p.RequestID] = p
	return *p, true
}

func (s *Server) handleInquire(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	id := r.URL.Query().Get("request_id")
	info.requestID = id
	if id == "" {
		info.outcome = "invalid_request"
		writeFieldError(w, "request_id", "request_id is required")
		return
	}
	s.mu.Lock()
	p, ok := s.paymentsByReq[id]
	var out Payment
	if ok {
		out = *p
	}
	s.mu.Unlock()
	if !ok {
		info.outcome = "not_found"
		writeError(w, http.StatusNotFound, "NO_SUCH_PAYMENT", "no payment was made with this request id")
		return
	}
	info.outcome = out.State
	writeForm(w, http.StatusOK, out.form())
}

func (s *Server) handleCapture(w http.ResponseWriter, r *http.Request) {
	s.changePayment(w, r, scopeCapture, true, func(p *Payment, amount int64) result {
		switch {
		case p.State != StateAuthorised:
			return errorResult(http.StatusConflict, "WRONG_STATE", "only an AUTHORISED payment can be captured", false)
		case amount < 1 || amount > p.Amount:
			return fieldResult("amount", "amount must be more than zero and at most the authorised amount")
		}
		p.State, p.Captured = StateCaptured, amount
		p.CapturedAt = time.Now().UTC()
		res := formResult(http.StatusOK, p.form(), true)
		res.outcome = "captured"
		return res
	})
}

func (s *Server) handleReversal(w http.ResponseWriter, r *http.Request) {
	s.changePayment(w, r, scopeReversal, false, func(p *Payment, _ int64) result {
		if p.State != StateAuthorised {
			return errorResult(http.StatusConflict, "WRONG_STATE", "only an AUTHORISED payment can be reversed", false)
		}
		p.State = StateReversed
		res := formResult(http.StatusOK, p.form(), true)
		res.outcome = "reversed"
		return res
	})
}

func (s *Server) handleRefund(w http.ResponseWriter, r *http.Request) {
	s.changePayment(w, r, scopeRefund, true, func(p *Payment, amount int64) result {
		if p.State != StateCaptured {
			return errorResult(http.StatusConflict, "WRONG_STATE", "only a CAPTURED payment can be refunded", false)
		}
		if amount < 1 {
			return fieldResult("amount", "amount must be more than zero")
		}
		var reserved int64
		for _, rf := range s.refunds {
			if rf.PaymentID == p.PaymentID && rf.State != RefundRejected {
				reserved += rf.Amount
			}
		}
		if reserved+amount > p.Captured {
			return errorResult(http.StatusConflict, "AMOUNT_TOO_HIGH", "refunds would exceed the captured amount", false)
		}
		now := time.Now().UTC()
		rf := &Refund{
			RefundID:  newID("rf_"),
			PaymentID: p.PaymentID,
			RequestID: r.Header.Get(headerRequestID),
			Amount:    amount,
			Currency:  p.Currency,
			CreatedAt: now,
		}
		switch amount % 100 {
		case 77:
			rf.State = RefundQueued
			if !s.closed {
				s.timers[rf.RefundID] = time.AfterFunc(s.settleDelay, func() { s.settle(rf.RefundID) })
			}
		case 99:
			rf.State = RefundRejected
			rf.SettledAt = &now
		default:
			rf.State = RefundDone
			rf.SettledAt = &now
			p.Refunded += amount
		}
		s.refunds = append(s.refunds, rf)
		s.refundsByID[rf.RefundID] = rf
		res := formResult(http.StatusOK, copyRefund(rf).form(), true)
		res.outcome = "refund_" + rf.State
		return res
	})
}

// changePayment runs change on the payment named in the path, under the
// request's id and with the amount of its form (when withAmount is set),
// while holding the simulator's lock.
func (s *Server) changePayment(w http.ResponseWriter, r *http.Request, scope string, withAmount bool,
	change func(p *Payment, amount int64) result) {
	info := infoFrom(r.Context())
	id, ok := requestID(w, r)
	if !ok {
		info.outcome = "invalid_request"
		return
	}
	var fields []string
	if withAmount {
		fields = []string{"amount", "currency"}
	}
	f, ok := readForm(w, r, fields...)
	if !ok {
		info.outcome = "invalid_request"
		return
	}
	paymentID := r.PathValue("payment_id")
	s.idempotent(w, r, scope, id, s.fingerprint(scope, paymentID, f), func(*idemEntry) result {
		s.mu.Lock()
		defer s.mu.Unlock()
		p, ok := s.paymentsByID[paymentID]
		if !ok {
			return errorResult(http.StatusNotFound, "NO_SUCH_PAYMENT", "no such payment", false)
		}
		var amount int64
		if withAmount {
			if f.Get("currency") != p.Currency {
				return fieldResult("currency", "currency must be the payment's")
			}
			a, err := money.Parse(f.Get("amount"), p.Currency)
			if err != nil || money.FromMinor(a.Minor, p.Currency).String() != f.Get("amount") {
				return fieldResult("amount", "amount must be a decimal with exactly the currency's decimals")
			}
			amount = a.Minor
		}
		return change(p, amount)
	})
}

// settle moves a QUEUED refund to DONE.
func (s *Server) settle(refundID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.timers, refundID)
	if s.closed {
		return
	}
	rf, ok := s.refundsByID[refundID]
	if !ok || rf.State != RefundQueued {
		return
	}
	now := time.Now().UTC()
	rf.State, rf.SettledAt = RefundDone, &now
	if p, ok := s.paymentsByID[rf.PaymentID]; ok {
		p.Refunded += rf.Amount
	}
	s.logger.Info("sim-bank refund settled", "refund_id", rf.RefundID, "payment_id", rf.PaymentID, "amount", rf.Amount)
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
		writeError(w, http.StatusNotFound, "NO_SUCH_REFUND", "no such refund")
		return
	}
	info.outcome = out.State
	writeForm(w, http.StatusOK, out.form())
}

// form is the wire form of a payment: amounts as decimal strings.
func (p Payment) form() url.Values {
	v := url.Values{
		"payment_id":    {p.PaymentID},
		"request_id":    {p.RequestID},
		"merchant_ref":  {p.MerchantRef},
		"txn_type":      {p.TxnType},
		"state":         {p.State},
		"response_code": {p.ResponseCode},
		"text":          {p.Text},
		"amount":        {money.FromMinor(p.Amount, p.Currency).String()},
		"captured":      {money.FromMinor(p.Captured, p.Currency).String()},
		"refunded":      {money.FromMinor(p.Refunded, p.Currency).String()},
		"currency":      {p.Currency},
		"card_last4":    {p.CardLast4},
		"created":       {p.CreatedAt.Format(time.RFC3339)},
	}
	if p.ApprovalCode != "" {
		v.Set("approval_code", p.ApprovalCode)
	}
	return v
}

// form is the wire form of a refund.
func (r Refund) form() url.Values {
	v := url.Values{
		"refund_id":  {r.RefundID},
		"payment_id": {r.PaymentID},
		"request_id": {r.RequestID},
		"state":      {r.State},
		"amount":     {money.FromMinor(r.Amount, r.Currency).String()},
		"currency":   {r.Currency},
		"created":    {r.CreatedAt.Format(time.RFC3339)},
	}
	if r.SettledAt != nil {
		v.Set("settled", r.SettledAt.Format(time.RFC3339))
	}
	return v
}

func copyRefund(r *Refund) Refund {
	out := *r
	if r.SettledAt != nil {
		t := *r.SettledAt
		out.SettledAt = &t
	}
	return out
}

// validatePayment checks a payment's form; it names the first bad field and
// why, never echoing a value.
//
// A card on file (cof=1) comes without a security code, as merchants'
// stored-card charges do.
func validatePayment(f url.Values) (money.Amount, string, string) {
	switch {
	case f.Get("txn_type") != "SALE" && f.Get("txn_type") != "AUTH":
		return money.Amount{}, "txn_type", "txn_type must be SALE or AUTH"
	case len(f.Get("merchant_ref")) < 1 || len(f.Get("merchant_ref")) > 64:
		return money.Amount{}, "merchant_ref", "merchant_ref must be 1 to 64 characters"
	case len(f.Get("pan")) < 12 || len(f.Get("pan")) > 19 || !digits(f.Get("pan")):
		return money.Amount{}, "pan", "pan must be 12 to 19 digits"
	case !validExpiry(f.Get("exp")):
		return money.Amount{}, "exp", "exp must be MMYY"
	case !cardOnFile(f) && ((len(f.Get("cvc")) != 3 && len(f.Get("cvc")) != 4) || !digits(f.Get("cvc"))):
		return money.Amount{}, "cvc", "cvc must be 3 or 4 digits"
	case !money.KnownCurrency(f.Get("currency")):
		return money.Amount{}, "currency", "currency must be a supported ISO 4217 code"
	}
	a, err := money.Parse(f.Get("amount"), f.Get("currency"))
	// The amount must be written exactly as the currency writes it: "12.34"
	// for USD, "1234" for JPY.
	if err != nil || a.Minor <= 0 || money.FromMinor(a.Minor, a.Currency).String() != f.Get("amount") {
		return money.Amount{}, "amount", "amount must be a positive decimal with exactly the currency's decimals"
	}
	return a, "", ""
}

func validExpiry(exp string) bool {
	if len(exp) != 4 || !digits(exp) {
		return false
	}
	m, _ := strconv.Atoi(exp[:2])
	return m >= 1 && m <= 12
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// requestID reads the X-Request-Id header, answering 400 itself when it is
// missing or unfit.
func requestID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.Header.Get(headerRequestID)
	if id == "" {
		writeError(w, http.StatusBadRequest, "MISSING_REQUEST_ID", "the X-Request-Id header is required")
		return "", false
	}
	if len(id) > maxRequestIDLen {
		writeError(w, http.StatusBadRequest, "INVALID_REQUEST_ID", fmt.Sprintf("X-Request-Id must be at most %d characters", maxRequestIDLen))
		return "", false
	}
	for _, ch := range id {
		if ch < 0x21 || ch > 0x7e {
			writeError(w, http.StatusBadRequest, "INVALID_REQUEST_ID", "X-Request-Id must be printable ASCII without spaces")
			return "", false
		}
	}
	return id, true
}

// readForm reads a form-encoded body holding only the allowed fields, each
// at most once, and answers the error itself.
func readForm(w http.ResponseWriter, r *http.Request, allowed ...string) (url.Values, bool) {
	if r.ContentLength != 0 || r.Header.Get("Content-Type") != "" {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/x-www-form-urlencoded" {
			writeError(w, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "the body must be application/x-www-form-urlencoded")
			return nil, false
		}
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, "BODY_TOO_LARGE", "the body is too large")
		} else {
			writeError(w, http.StatusBadRequest, "MALFORMED_BODY", "the body could not be read")
		}
		return nil, false
	}
	f, err := url.ParseQuery(string(raw))
	if err != nil {
		writeError(w, http.StatusBadRequest, "MALFORMED_BODY", "the body is not a form")
		return nil, false
	}
	for name, vals := range f {
		known := false
		for _, a := range allowed {
			known = known || a == name
		}
		if !known {
			// The name is not echoed: it could be anything.
			writeFieldError(w, "", "the body holds a field this operation does not take")
			return nil, false
		}
		if len(vals) != 1 {
			writeFieldError(w, name, "the field is given more than once")
			return nil, false
		}
	}
	return f, true
}

// fingerprint is a keyed SHA-256 of the request's scope, target and form
// (encoded with sorted keys). The key is per server, so the stored value
// cannot be used to guess a card number.
func (s *Server) fingerprint(scope, target string, f url.Values) string {
	mac := hmac.New(sha256.New, s.fpSecret)
	mac.Write([]byte(scope))
	mac.Write([]byte{0})
	mac.Write([]byte(target))
	mac.Write([]byte{0})
	mac.Write([]byte(f.Encode()))
	return hex.EncodeToString(mac.Sum(nil))
}

func (s *Server) entry(scope, id string) *idemEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := scope + "\x00" + id
	e, ok := s.idem[k]
	if !ok {
		e = &idemEntry{}
		s.idem[k] = e
	}
	return e
}

// idempotent runs op at most once per (scope, request id) and writes its
// answer. A repeat with the same fingerprint replays a stored answer with
// X-Replayed: 1; another body is refused with REQUEST_ID_REUSED. Answers
// that are not stored leave the id free to be retried with the same body.
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, scope, id, fp string, op func(e *idemEntry) result) {
	info := infoFrom(r.Context())
	e := s.entry(scope, id)
	e.mu.Lock()
	if e.fingerprint != "" && e.fingerprint != fp {
		e.mu.Unlock()
		info.outcome = "request_id_reused"
		writeError(w, http.StatusConflict, "REQUEST_ID_REUSED", "the request id was used with another request")
		return
	}
	if e.done {
		status, body := e.status, e.body
		e.mu.Unlock()
		info.outcome = "replayed"
		w.Header().Set("X-Replayed", "1")
		writeRaw(w, status, body)
		return
	}
	e.fingerprint = fp
	e.attempts++
	res := op(e)
	if res.store {
		e.done, e.status, e.body = true, res.status, res.body
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

func formResult(status int, v url.Values, store bool) result {
	return result{status: status, body: []byte(v.Encode()), store: store}
}

func errorResult(status int, code, text string, store bool) result {
	res := formResult(status, url.Values{"error": {code}, "error_text": {text}}, store)
	res.outcome = code
	return res
}

func fieldResult(field, text string) result {
	res := formResult(http.StatusBadRequest, url.Values{"error": {"INVALID_FIELD"}, "field": {field}, "error_text": {text}}, false)
	res.outcome = "invalid_field:" + field
	return res
}

func writeForm(w http.ResponseWriter, status int, v url.Values) {
	writeRaw(w, status, []byte(v.Encode()))
}

func writeError(w http.ResponseWriter, status int, code, text string) {
	writeForm(w, status, url.Values{"error": {code}, "error_text": {text}})
}

func writeFieldError(w http.ResponseWriter, field, text string) {
	writeForm(w, http.StatusBadRequest, url.Values{"error": {"INVALID_FIELD"}, "field": {field}, "error_text": {text}})
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func newID(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func newApprovalCode() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = '0' + b[i]%10
	}
	return string(b)
}

// cardOnFile reports whether a payment charges a card the merchant keeps,
// sent without its security code.
func cardOnFile(f url.Values) bool { return f.Get("cof") == "1" && f.Get("cvc") == "" }

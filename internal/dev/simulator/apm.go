package simulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// APM payment statuses.
const (
	APMPending   = "pending"
	APMSucceeded = "succeeded"
	APMCancelled = "cancelled"
)

const scopeAPM = "apm"

// APMMethod is one alternative payment method the simulated provider offers.
type APMMethod struct {
	Method     string   `json:"method"`
	Currencies []string `json:"currencies"`
	Countries  []string `json:"countries"`
}

var apmMethods = []APMMethod{
	{Method: "PIX", Currencies: []string{"BRL"}, Countries: []string{"BR"}},
	{Method: "OXXO", Currencies: []string{"MXN"}, Countries: []string{"MX"}},
	{Method: "IDEAL", Currencies: []string{"EUR"}, Countries: []string{"NL"}},
}

type apmCustomer struct {
	Name     string `json:"name"`
	Email    string `json:"email"`
	Document string `json:"document"`
}

// apmRequest is the body of POST /v1/apm/payments.
type apmRequest struct {
	IdempotencyKey string      `json:"idempotency_key"`
	Method         string      `json:"method"`
	Amount         int64       `json:"amount"`
	Currency       string      `json:"currency"`
	Country        string      `json:"country"`
	Reference      string      `json:"reference"`
	CallbackURL    string      `json:"callback_url"`
	ReturnURL      string      `json:"return_url"`
	BankCode       string      `json:"bank_code"`
	Customer       apmCustomer `json:"customer"`
}

// APMPayment is the provider's record of one payment. The customer's details
// are checked but not kept.
type APMPayment struct {
	PaymentID      string    `json:"payment_id"`
	IdempotencyKey string    `json:"idempotency_key"`
	Status         string    `json:"status"`
	Method         string    `json:"method"`
	Amount         int64     `json:"amount"`
	Currency       string    `json:"currency"`
	Country        string    `json:"country"`
	Reference      string    `json:"reference"`
	RedirectURL    string    `json:"redirect_url"`
	CallbackStatus int       `json:"callback_status"`
	CreatedAt      time.Time `json:"created_at"`
}

type apmPayment struct {
	APMPayment
	callbackURL string
	returnURL   string
}

// apmCallback is the body the provider posts to the callback URL.
type apmCallback struct {
	PaymentID string `json:"payment_id"`
	Reference string `json:"reference"`
	Status    string `json:"status"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
	Method    string `json:"method"`
}

func (s *Server) handleAPMMethods(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, struct {
		Methods []APMMethod `json:"methods"`
	}{apmMethods})
}

func (s *Server) handleCreateAPMPayment(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	var req apmRequest
	if !decodeBody(w, r, &req) {
		info.outcome = "invalid_request"
		return
	}
	info.idempotencyKey = req.IdempotencyKey
	req.Method = strings.ToUpper(req.Method)
	if code, err := validateAPM(req); err != nil {
		info.outcome = code
		writeError(w, http.StatusBadRequest, code, err.Error())
		return
	}
	base := s.pageBase(r)
	fp := s.fingerprint(scopeAPM, "", req)
	s.idempotent(w, r, scopeAPM, req.IdempotencyKey, fp, func(*idemEntry) result {
		p := &apmPayment{
			APMPayment: APMPayment{
				PaymentID:      newID("ap_"),
				IdempotencyKey: req.IdempotencyKey,
				Status:         APMPending,
				Method:         req.Method,
				Amount:         req.Amount,
				Currency:       req.Currency,
				Country:        req.Country,
				Reference:      req.Reference,
				CreatedAt:      s.now(),
			},
			callbackURL: req.CallbackURL,
			returnURL:   req.ReturnURL,
		}
		p.RedirectURL = base + "/apm/" + p.PaymentID
		s.mu.Lock()
		s.apmPayments[p.PaymentID] = p
		s.mu.Unlock()
		res := jsonResult(http.StatusOK, p.APMPayment, true)
		res.outcome = "apm_" + p.Status
		return res
	})
}

func (s *Server) handleGetAPMPayment(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	p, ok := s.apmPayment(r.PathValue("id"))
	if !ok {
		info.outcome = "not_found"
		writeError(w, http.StatusNotFound, "not_found", "no such payment")
		return
	}
	info.idempotencyKey = p.IdempotencyKey
	info.outcome = "apm_" + p.Status
	writeJSON(w, http.StatusOK, p.APMPayment)
}

// handleCancelAPMPayment is the merchant's side calling off a payment the
// shopper has not completed: a pending payment is cancelled, with no
// callback (the caller asked for it), and the shopper can no longer pay
// it. It answers the payment as it then stands, so a payment the shopper
// completed first answers succeeded.
func (s *Server) handleCancelAPMPayment(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	s.mu.Lock()
	p, ok := s.apmPayments[r.PathValue("id")]
	if !ok {
		s.mu.Unlock()
		info.outcome = "not_found"
		writeError(w, http.StatusNotFound, "not_found", "no such payment")
		return
	}
	if p.Status == APMPending {
		p.Status = APMCancelled
	}
	out := p.APMPayment
	s.mu.Unlock()
	info.idempotencyKey = out.IdempotencyKey
	info.outcome = "apm_cancel_" + out.Status
	writeJSON(w, http.StatusOK, out)
}

// APMPayment returns a copy of the payment with id.
func (s *Server) APMPayment(id string) (APMPayment, bool) {
	p, ok := s.apmPayment(id)
	return p.APMPayment, ok
}

func (s *Server) apmPayment(id string) (apmPayment, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.apmPayments[id]
	if !ok {
		return apmPayment{}, false
	}
	return *p, true
}

// apmView is what the provider page shows.
type apmView struct {
	ID       string
	Method   string
	Amount   string
	Currency string
}

func (s *Server) handleAPMPage(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	p, ok := s.apmPayment(r.PathValue("id"))
	switch {
	case !ok:
		info.outcome = "not_found"
		writePage(w, http.StatusNotFound, notFoundPage, nil)
	case p.Status != APMPending:
		info.outcome = "already_completed"
		writePage(w, http.StatusOK, completedPage, nil)
	default:
		info.outcome = "page_shown"
		writePage(w, http.StatusOK, apmPage, apmView{
			ID:       p.PaymentID,
			Method:   p.Method,
			Amount:   formatAmount(p.Amount, p.Currency),
			Currency: p.Currency,
		})
	}
}

func (s *Server) handleAPMPay(w http.ResponseWriter, r *http.Request) {
	s.finishAPM(w, r, APMSucceeded)
}

func (s *Server) handleAPMCancel(w http.ResponseWriter, r *http.Request) {
	s.finishAPM(w, r, APMCancelled)
}

// finishAPM moves a pending payment to status, posts the signed callback and
// sends the shopper back to the return URL. A payment that is no longer
// pending is left as it is, with no callback, and the shopper is sent back.
func (s *Server) finishAPM(w http.ResponseWriter, r *http.Request, status string) {
	info := infoFrom(r.Context())
	id := r.PathValue("id")
	s.mu.Lock()
	p, ok := s.apmPayments[id]
	if !ok {
		s.mu.Unlock()
		info.outcome = "not_found"
		writePage(w, http.StatusNotFound, notFoundPage, nil)
		return
	}
	info.idempotencyKey = p.IdempotencyKey
	returnURL := p.returnURL
	if p.Status != APMPending {
		s.mu.Unlock()
		info.outcome = "already_completed"
		http.Redirect(w, r, returnURL, http.StatusSeeOther)
		return
	}
	p.Status = status
	cb := apmCallback{
		PaymentID: p.PaymentID,
		Reference: p.Reference,
		Status:    p.Status,
		Amount:    p.Amount,
		Currency:  p.Currency,
		Method:    p.Method,
	}
	callbackURL := p.callbackURL
	s.mu.Unlock()

	code := s.sendCallback(context.WithoutCancel(r.Context()), callbackURL, cb)
	s.mu.Lock()
	p.CallbackStatus = code
	s.mu.Unlock()
	info.outcome = fmt.Sprintf("apm_%s,callback_%d", status, code)
	http.Redirect(w, r, returnURL, http.StatusSeeOther)
}

// sendCallback posts cb to callbackURL and returns the answer's HTTP status,
// or 0 when no answer came.
func (s *Server) sendCallback(ctx context.Context, callbackURL string, cb apmCallback) int {
	body, err := json.Marshal(cb)
	if err != nil {
		panic("acquirer: marshal callback: " + err.Error())
	}
	return s.postSigned(ctx, callbackURL, body, "apm callback", "payment_id", cb.PaymentID)
}

// validateAPM checks req and returns the error code and message to answer.
func validateAPM(req apmRequest) (string, error) {
	const invalid = "invalid_request"
	if err := validateKey(req.IdempotencyKey); err != nil {
		return invalid, err
	}
	switch {
	case req.Method == "":
		return invalid, errors.New("method is required")
	case req.Amount <= 0:
		return invalid, errors.New("amount must be a positive number of minor units")
	case !validCurrency(req.Currency):
		return invalid, errors.New("currency must be 3 upper-case letters")
	case !validCountry(req.Country):
		return invalid, errors.New("country must be 2 upper-case letters")
	case len(req.Reference) > maxKeyLen:
		return invalid, fmt.Errorf("reference must be at most %d characters", maxKeyLen)
	case !validHTTPURL(req.CallbackURL):
		return invalid, errors.New("callback_url must be an absolute http or https URL")
	case !validHTTPURL(req.ReturnURL):
		return invalid, errors.New("return_url must be an absolute http or https URL")
	}
	i := slices.IndexFunc(apmMethods, func(m APMMethod) bool { return m.Method == req.Method })
	if i < 0 {
		return "unsupported_method", errors.New("method must be one of PIX, OXXO, IDEAL")
	}
	m := apmMethods[i]
	if !slices.Contains(m.Currencies, req.Currency) {
		return "currency_not_supported", fmt.Errorf("%s accepts %s", m.Method, strings.Join(m.Currencies, ", "))
	}
	if !slices.Contains(m.Countries, req.Country) {
		return "country_not_supported", fmt.Errorf("%s is offered in %s", m.Method, strings.Join(m.Countries, ", "))
	}
	switch {
	case m.Method == "PIX" && (len(req.Customer.Document) != 11 || !digits(req.Customer.Document)):
		return invalid, errors.New("customer.document must be 11 digits for PIX")
	case m.Method == "IDEAL" && strings.TrimSpace(req.BankCode) == "":
		return invalid, errors.New("bank_code is required for IDEAL")
	}
	return "", nil
}

func validCountry(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z'
}

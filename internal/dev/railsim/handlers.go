package railsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

const (
	maxBodyBytes = 64 << 10
	maxKeyLen    = 255
	maxTextLen   = 140
)

type errorBody struct {
	Error   string `json:"error"`
	Message string `json:"message,omitempty"`
}

func (s *Server) handleSubmit(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	key := r.Header.Get("Idempotency-Key")
	info.idempotencyKey = key
	if err := validateKey(key); err != nil {
		info.outcome = "invalid_request"
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	var req TransferRequest
	if !decodeBody(w, r, &req) {
		info.outcome = "invalid_request"
		return
	}
	if err := validateTransfer(req); err != nil {
		info.outcome = "invalid_request"
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	s.writeAnswer(w, info, s.submit(key, req))
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	id := r.PathValue("id")
	info.transferID = id
	s.writeAnswer(w, info, s.lookup(id, ""))
}

func (s *Server) handleFind(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	key := r.URL.Query().Get("idempotency_key")
	info.idempotencyKey = key
	if err := validateKey(key); err != nil {
		info.outcome = "invalid_request"
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	s.writeAnswer(w, info, s.lookup("", key))
}

func (s *Server) handleStats(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	st, err := s.Stats()
	switch {
	case errors.Is(err, errClosed):
		s.writeAnswer(w, info, closedAnswer())
	case err != nil:
		s.logger.Error("rail simulator: record transfer", "error", err)
		s.writeAnswer(w, info, storageAnswer())
	default:
		info.outcome = "stats"
		writeJSON(w, http.StatusOK, st)
	}
}

func (s *Server) writeAnswer(w http.ResponseWriter, info *requestInfo, a answer) {
	info.outcome = a.outcome
	if a.transferID != "" {
		info.transferID = a.transferID
	}
	if a.replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	if a.retryAfter {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, a.status, a.body)
}

// validateKey checks an idempotency key. Slashes are allowed: the key
// travels in a header or a query parameter, never in a path, and the
// gateway's keys are workflow ids such as payout/{merchant}/{request}.
func validateKey(key string) error {
	if key == "" {
		return errors.New("idempotency key is required")
	}
	if len(key) > maxKeyLen {
		return fmt.Errorf("idempotency key must be at most %d characters", maxKeyLen)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return errors.New("idempotency key must be printable ASCII without spaces")
		}
	}
	return nil
}

// validateTransfer checks the shape of a transfer. Its messages name fields,
// never their values, because the values are a beneficiary's data.
func validateTransfer(req TransferRequest) error {
	b := req.Beneficiary
	switch {
	case req.Amount <= 0:
		return errors.New("amount must be a positive number of minor units")
	case !upperLetters(req.Currency, 3):
		return errors.New("currency must be 3 upper-case letters")
	case strings.TrimSpace(req.Reference) == "":
		return errors.New("reference is required")
	case utf8.RuneCountInString(req.Reference) > maxTextLen:
		return fmt.Errorf("reference must be at most %d characters", maxTextLen)
	case strings.TrimSpace(b.Name) == "":
		return errors.New("beneficiary.name is required")
	case utf8.RuneCountInString(b.Name) > maxTextLen:
		return fmt.Errorf("beneficiary.name must be at most %d characters", maxTextLen)
	case b.IBAN == "" && b.AccountNumber == "":
		return errors.New("beneficiary.iban or beneficiary.account_number is required")
	case b.IBAN != "" && !validIBAN(b.IBAN):
		return errors.New("beneficiary.iban is not a valid IBAN")
	case b.AccountNumber != "" && !validAccountNumber(b.AccountNumber):
		return errors.New("beneficiary.account_number must be 1 to 34 letters or digits")
	case b.BIC != "" && !validBIC(b.BIC):
		return errors.New("beneficiary.bic must be 8 or 11 characters: 6 letters, then letters or digits")
	case !upperLetters(b.Country, 2):
		return errors.New("beneficiary.country must be 2 upper-case letters")
	}
	return nil
}

func upperLetters(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool     { return c >= '0' && c <= '9' }
func isUpper(c byte) bool     { return c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool     { return isDigit(c) || isUpper(c) }
func compact(s string) string { return strings.ToUpper(strings.ReplaceAll(s, " ", "")) }

// validIBAN checks an IBAN's shape and its ISO 13616 check digits (mod 97);
// spaces and lower case are accepted, as printed IBANs have them.
func validIBAN(s string) bool {
	s = compact(s)
	if len(s) < 15 || len(s) > 34 || !isUpper(s[0]) || !isUpper(s[1]) || !isDigit(s[2]) || !isDigit(s[3]) {
		return false
	}
	rearranged := s[4:] + s[:4]
	rem := 0
	for i := 0; i < len(rearranged); i++ {
		c := rearranged[i]
		switch {
		case isDigit(c):
			rem = (rem*10 + int(c-'0')) % 97
		case isUpper(c):
			rem = (rem*100 + int(c-'A') + 10) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// validAccountNumber accepts 1 to 34 letters or digits, with spaces and
// hyphens as printed account numbers have them.
func validAccountNumber(s string) bool {
	s = strings.ReplaceAll(compact(s), "-", "")
	if s == "" || len(s) > 34 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) {
			return false
		}
	}
	return true
}

// validBIC checks the ISO 9362 shape: 4 letters of bank, 2 of country, 2
// letters or digits of location, and an optional 3 of branch.
func validBIC(s string) bool {
	if len(s) != 8 && len(s) != 11 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i < 6 && !isUpper(s[i]) || i >= 6 && !isAlnum(s[i]) {
			return false
		}
	}
	return true
}

// decodeBody reads a JSON object into v, answering 400 itself on failure.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		// The decoder's message could quote a value; answer a fixed text.
		writeError(w, http.StatusBadRequest, "invalid_request", "body must be a JSON object with the documented fields")
		return false
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, "invalid_request", "body must hold a single JSON object")
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"error":"internal"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, errorBody{Error: code, Message: message})
}

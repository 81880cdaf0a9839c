package simulator

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"time"
)

// 3-D Secure authentication statuses.
const (
	AuthAuthenticated     = "authenticated"
	AuthChallengeRequired = "challenge_required"
	AuthFailed            = "failed"
)

const (
	scopeAuthentication = "3ds"
	// challengeOTP is the one-time code the simulated ACS accepts.
	challengeOTP     = "123456"
	eciAuthenticated = "05"
)

// authenticationRequest is the body of POST /v1/3ds/authentications. It is
// never logged or kept.
type authenticationRequest struct {
	IdempotencyKey string `json:"idempotency_key"`
	CardNumber     string `json:"card_number"`
	ExpiryMonth    string `json:"expiry_month"`
	ExpiryYear     string `json:"expiry_year"`
	Amount         int64  `json:"amount"`
	Currency       string `json:"currency"`
	Reference      string `json:"reference"`
	ReturnURL      string `json:"return_url"`
	// Browser is the shopper's browser and device, which a real ACS weighs
	// and lays its challenge out by; the simulator keeps it and shows it
	// back in the authentication.
	Browser *Browser `json:"browser,omitempty"`
}

// Browser is the shopper's browser and device as an authentication
// request carries them.
type Browser struct {
	Language            string `json:"language,omitempty"`
	UserAgent           string `json:"user_agent,omitempty"`
	TimeZone            string `json:"time_zone,omitempty"`
	ScreenResolution    string `json:"screen_resolution,omitempty"`
	ColorDepth          string `json:"color_depth,omitempty"`
	ChallengeWindowSize string `json:"challenge_window_size,omitempty"`
	IP                  string `json:"ip,omitempty"`
	OS                  string `json:"os,omitempty"`
	Name                string `json:"name,omitempty"`
}

// fingerprinted is the request as its idempotency fingerprint covers it
// (chargeRequest.fingerprinted).
func (r authenticationRequest) fingerprinted() authenticationRequest {
	r.CardNumber = maskedForFingerprint(r.CardNumber)
	return r
}

// Authentication is the answer for one 3-D Secure authentication.
type Authentication struct {
	AuthenticationID string `json:"authentication_id"`
	Status           string `json:"status"`
	ECI              string `json:"eci"`
	CAVV             string `json:"cavv"`
	DSTransID        string `json:"ds_trans_id"`
	ACSURL           string `json:"acs_url"`
	// Browser is what the request said of the shopper's browser.
	Browser *Browser `json:"browser,omitempty"`
}

// authentication is the simulator's record of an authentication. It keeps
// the card's last four digits and a keyed hash of the number, which binds a
// later charge to the card without keeping the number.
type authentication struct {
	Authentication
	idempotencyKey string
	reference      string
	returnURL      string
	amount         int64
	currency       string
	cardLast4      string
	cardMAC        string
	createdAt      time.Time
}

func (s *Server) handleCreateAuthentication(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	var req authenticationRequest
	if !decodeBody(w, r, &req) {
		info.outcome = "invalid_request"
		return
	}
	info.idempotencyKey = req.IdempotencyKey
	if err := validateAuthentication(req); err != nil {
		info.outcome = "invalid_request"
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	base := s.pageBase(r)
	fp := s.fingerprint(scopeAuthentication, "", req.fingerprinted())
	s.idempotent(w, r, scopeAuthentication, req.IdempotencyKey, fp, func(*idemEntry) result {
		a := s.createAuthentication(req, base)
		res := jsonResult(http.StatusOK, a, true)
		res.outcome = a.Status
		return res
	})
}

func (s *Server) createAuthentication(req authenticationRequest, base string) Authentication {
	a := &authentication{
		Authentication: Authentication{
			AuthenticationID: newID("au_"),
			DSTransID:        newUUID(),
			Browser:          req.Browser,
		},
		idempotencyKey: req.IdempotencyKey,
		reference:      req.Reference,
		returnURL:      req.ReturnURL,
		amount:         req.Amount,
		currency:       req.Currency,
		cardLast4:      req.CardNumber[len(req.CardNumber)-4:],
		cardMAC:        s.cardMAC(req.CardNumber),
		createdAt:      s.now(),
	}
	if req.CardNumber == cardChallenge {
		a.Status = AuthChallengeRequired
		a.ACSURL = base + "/acs/" + a.AuthenticationID
	} else {
		a.Status = AuthAuthenticated
		a.ECI = eciAuthenticated
		a.CAVV = newCAVV()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.auths[a.AuthenticationID] = a
	return a.Authentication
}

func (s *Server) handleGetAuthentication(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	s.mu.Lock()
	a, ok := s.auths[r.PathValue("id")]
	var out Authentication
	if ok {
		out = a.Authentication
		info.idempotencyKey = a.idempotencyKey
	}
	s.mu.Unlock()
	if !ok {
		info.outcome = "not_found"
		writeError(w, http.StatusNotFound, "not_found", "no such authentication")
		return
	}
	info.outcome = out.Status
	writeJSON(w, http.StatusOK, out)
}

// acsView is what the challenge page shows.
type acsView struct {
	ID       string
	Amount   string
	Currency string
	Last4    string
}

func (s *Server) handleACSPage(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	s.mu.Lock()
	a, ok := s.auths[r.PathValue("id")]
	var view acsView
	var status string
	if ok {
		status = a.Status
		view = acsView{ID: a.AuthenticationID, Amount: formatAmount(a.amount, a.currency), Currency: a.currency, Last4: a.cardLast4}
	}
	s.mu.Unlock()
	switch {
	case !ok:
		info.outcome = "not_found"
		writePage(w, http.StatusNotFound, notFoundPage, nil)
	case status != AuthChallengeRequired:
		info.outcome = "already_completed"
		writePage(w, http.StatusOK, completedPage, nil)
	default:
		info.outcome = "challenge_shown"
		writePage(w, http.StatusOK, acsPage, view)
	}
}

// threeDSResult is the form the ACS posts back to the return URL.
type threeDSResult struct {
	ReturnURL        string
	AuthenticationID string
	Status           string
	ECI              string
	CAVV             string
	DSTransID        string
	Reference        string
	Signature        string
}

func (s *Server) handleACSSubmit(w http.ResponseWriter, r *http.Request) {
	info := infoFrom(r.Context())
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if err := r.ParseForm(); err != nil {
		info.outcome = "invalid_request"
		writePage(w, http.StatusBadRequest, notFoundPage, nil)
		return
	}
	otp := r.PostFormValue("otp")
	cancel := r.PostFormValue("action") == "cancel"

	s.mu.Lock()
	a, ok := s.auths[r.PathValue("id")]
	if !ok || a.Status != AuthChallengeRequired {
		s.mu.Unlock()
		if !ok {
			info.outcome = "not_found"
			writePage(w, http.StatusNotFound, notFoundPage, nil)
			return
		}
		info.outcome = "already_completed"
		writePage(w, http.StatusOK, completedPage, nil)
		return
	}
	if !cancel && subtle.ConstantTimeCompare([]byte(otp), []byte(challengeOTP)) == 1 {
		a.Status = AuthAuthenticated
		a.ECI = eciAuthenticated
		a.CAVV = newCAVV()
	} else {
		a.Status = AuthFailed
	}
	res := threeDSResult{
		ReturnURL:        a.returnURL,
		AuthenticationID: a.AuthenticationID,
		Status:           a.Status,
		ECI:              a.ECI,
		CAVV:             a.CAVV,
		DSTransID:        a.DSTransID,
		Reference:        a.reference,
	}
	info.idempotencyKey = a.idempotencyKey
	s.mu.Unlock()

	res.Signature = signThreeDSResult(s.secret, res.AuthenticationID, res.Status, res.CAVV, res.Reference)
	info.outcome = res.Status
	if cancel {
		info.outcome += ",cancelled"
	}
	writePage(w, http.StatusOK, resultPage, res)
}

// validThreeDS reports whether d names an authentication of this simulator
// that succeeded for card with the same CAVV (and ECI, when given).
func (s *Server) validThreeDS(card string, d threeDSData) bool {
	mac := s.cardMAC(card)
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.auths[d.AuthenticationID]
	if !ok || a.Status != AuthAuthenticated {
		return false
	}
	if d.ECI != "" && d.ECI != a.ECI {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(d.CAVV), []byte(a.CAVV)) == 1 &&
		subtle.ConstantTimeCompare([]byte(mac), []byte(a.cardMAC)) == 1
}

// cardMAC is a keyed hash of a card number under the per-server secret.
func (s *Server) cardMAC(card string) string {
	m := hmac.New(sha256.New, s.fpSecret)
	m.Write([]byte("card\x00"))
	m.Write([]byte(card))
	return hex.EncodeToString(m.Sum(nil))
}

// signThreeDSResult is the signature of the result the ACS posts back:
// lower hex HMAC-SHA256 of "authentication_id|status|cavv|reference".
func signThreeDSResult(secret []byte, id, status, cavv, reference string) string {
	return sign(secret, []byte(id+"|"+status+"|"+cavv+"|"+reference))
}

func sign(secret, msg []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(msg)
	return hex.EncodeToString(m.Sum(nil))
}

// validateAuthentication checks the shape of req. Its messages never echo
// the request's values.
func validateAuthentication(req authenticationRequest) error {
	if err := validateCardRequest(req.IdempotencyKey, req.Reference, req.CardNumber, req.ExpiryMonth, req.ExpiryYear,
		req.Amount, req.Currency); err != nil {
		return err
	}
	if !validHTTPURL(req.ReturnURL) {
		return errors.New("return_url must be an absolute http or https URL")
	}
	return nil
}

func validHTTPURL(s string) bool {
	if len(s) > 2048 {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}

// pageBase is where the shopper's browser finds the simulator's pages:
// the configured public URL, or else the address the request came to.
func (s *Server) pageBase(r *http.Request) string {
	if s.publicURL != "" {
		return s.publicURL
	}
	return baseURL(r)
}

// baseURL is the scheme and host the request reached the simulator at, so
// the pages it links to work on any loopback port.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// newCAVV returns 20 random bytes in standard base64: 28 characters.
func newCAVV() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// AuthenticationOf returns the authentication made for a charge reference
// (the gateway's transaction id), for tests.
func (s *Server) AuthenticationOf(reference string) (Authentication, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.auths {
		if a.reference == reference {
			return a.Authentication, true
		}
	}
	return Authentication{}, false
}

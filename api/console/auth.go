package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
	"unicode"

	"github.com/paygate/paygate/internal/adapters/password"
	"github.com/paygate/paygate/models"
)

// cookieName holds the session token. The __Host- prefix (over HTTPS) pins
// it to this host and path /.
func (s *Server) cookieName() string { return s.prefixed("pg_console") }

// session is a signed-in user with the session's CSRF token.
type session struct {
	User models.ConsoleUser
	CSRF string
	hash string
}

type ctxKey struct{}

func sessionOf(ctx context.Context) *session {
	s, _ := ctx.Value(ctxKey{}).(*session)
	return s
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error.
	return hex.EncodeToString(b)
}

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// current finds the session the request's cookie names, if it is live and
// its user not disabled.
func (s *Server) current(r *http.Request) (*session, error) {
	c, err := r.Cookie(s.cookieName())
	if err != nil || len(c.Value) != 64 {
		return nil, nil
	}
	row, u, err := s.Records.LiveConsoleSession(r.Context(), tokenHash(c.Value), s.Now())
	if err != nil || row == nil {
		return nil, err
	}
	return &session{User: *u, CSRF: row.CSRFToken, hash: row.TokenHash}, nil
}

// signedIn admits requests of a live session and sends the others to the
// sign-in page.
func (s *Server) signedIn(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, err := s.current(r)
		if err != nil {
			s.fail(w, r, "read session", err)
			return
		}
		if sess == nil {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, "/console/login?lang="+langOf(r), http.StatusSeeOther)
				return
			}
			http.Error(w, "sign in first", http.StatusUnauthorized)
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, sess)))
	}
}

// roles admits only users of the given roles: another role is forbidden,
// whatever the URL.
func (s *Server) roles(next http.HandlerFunc, allowed ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess := sessionOf(r.Context())
		for _, role := range allowed {
			if sess.User.Role == role {
				next(w, r)
				return
			}
		}
		s.render(w, r, http.StatusForbidden, "message", pageData{Title: t(langOf(r), "forbidden"), Message: t(langOf(r), "forbidden_text")})
	}
}

// form checks a state-changing form: the session's CSRF token, and a
// one-time form id claimed before anything is done, so the same form sent
// twice (a double click, a reload) does its work once and shows the first
// outcome.
func (s *Server) form(next func(w http.ResponseWriter, r *http.Request, act *models.ConsoleAction)) http.HandlerFunc {
	return s.csrfChecked(func(w http.ResponseWriter, r *http.Request) {
		sess := sessionOf(r.Context())
		formID := r.PostForm.Get("form_id")
		if len(formID) < 16 || len(formID) > 64 {
			http.Error(w, "the form has no id; reload the page", http.StatusBadRequest)
			return
		}
		// The record is keyed by the session and the form's id together,
		// so one browser's ids never meet another's.
		act := &models.ConsoleAction{FormID: tokenHash(sess.hash + "/" + formID), UserID: sess.User.ID,
			Action: r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:], Subject: r.PathValue("tx") + r.PathValue("id"), CreatedAt: s.Now()}
		first, prior, err := s.Records.ClaimConsoleAction(r.Context(), act)
		if err != nil {
			s.fail(w, r, "claim form", err)
			return
		}
		if !first {
			s.render(w, r, http.StatusOK, "message", pageData{Title: t(langOf(r), "already_done"), Message: prior.Outcome,
				Back: pageOfPost(r.URL.Path) + "?lang=" + langOf(r)}) // no referrer comes: Referrer-Policy no-referrer
			return
		}
		next(w, r, act)
	})
}

// csrfChecked checks a form that changes nothing but is posted to keep
// its fields out of the address (a search by a shopper's email): the
// session's CSRF token, without s.form's one-time id.
func (s *Server) csrfChecked(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess := sessionOf(r.Context())
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil || !isText(r.PostForm) {
			http.Error(w, "bad form: it must be text", http.StatusBadRequest)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(sess.CSRF)) != 1 {
			http.Error(w, "the form is stale or not ours (CSRF); reload the page", http.StatusForbidden)
			return
		}
		next(w, r)
	}
}

// done records what a form did, for a second submission to show.
func (s *Server) done(ctx context.Context, act *models.ConsoleAction, outcome string) {
	if len(outcome) > 500 {
		outcome = outcome[:500]
	}
	if err := s.Records.RecordConsoleOutcome(ctx, act, outcome); err != nil {
		s.Logger.Error("console: record form outcome", "error", err)
	}
}

func clientIP(r *http.Request) string {
	// The TCP peer only: a forwarded header would let a guesser pick the
	// address its failures are counted under.
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// The sign-in form's CSRF token is a signed double submit: the page sets
// a random nonce in a cookie and puts its HMAC under SignInKey in the form;
// a post must carry both. There is no session yet to keep a token in, and
// every API process can check it.
const (
	loginCookie  = "pg_console_login"
	deviceCookie = "pg_console_device"
)

func (s *Server) prefixed(name string) string {
	if s.SecureCookies {
		return "__Host-" + name
	}
	return name
}

// mac is the hex HMAC-SHA256 of the parts under SignInKey.
func (s *Server) mac(parts ...string) string {
	m := hmac.New(sha256.New, s.SignInKey)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.renderLogin(w, r, http.StatusOK, "", "")
}

// renderLogin answers the sign-in page with a fresh form token.
func (s *Server) renderLogin(w http.ResponseWriter, r *http.Request, status int, errText, email string) {
	nonce := ""
	if c, err := r.Cookie(s.prefixed(loginCookie)); err == nil && isToken(c.Value) {
		nonce = c.Value
	} else {
		nonce = randomToken()
	}
	http.SetCookie(w, &http.Cookie{Name: s.prefixed(loginCookie), Value: nonce, Path: "/", HttpOnly: true, Secure: s.SecureCookies,
		SameSite: http.SameSiteStrictMode, MaxAge: int(time.Hour / time.Second)})
	lang := langOf(r)
	s.render(w, r, status, "login", pageData{Title: t(lang, "sign_in"), Error: errText, Email: email, CSRF: s.mac("login", nonce)})
}

// loginFormOK reports whether the post carries the form token of the page
// this browser was given.
func (s *Server) loginFormOK(r *http.Request) bool {
	c, err := r.Cookie(s.prefixed(loginCookie))
	if err != nil || !isToken(c.Value) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.mac("login", c.Value))) == 1
}

// trustedBrowser returns the id of the browser's trusted-browser cookie
// when it was set by a sign-in to email, else "".
func (s *Server) trustedBrowser(r *http.Request, email string) string {
	c, err := r.Cookie(s.prefixed(deviceCookie))
	if err != nil {
		return ""
	}
	id, sig, ok := strings.Cut(c.Value, ".")
	if !ok || !isToken(id) || subtle.ConstantTimeCompare([]byte(sig), []byte(s.mac("device", id, email))) != 1 {
		return ""
	}
	return id
}

// takeAttempt counts one sign-in attempt against key's bucket.
func (s *Server) takeAttempt(ctx context.Context, key string, every time.Duration, burst int) (bool, error) {
	return s.Records.TakeLoginToken(ctx, key, s.Now(), every, burst)
}

// login checks the email and password. The attempt is counted before the
// password is looked at, first against the address's hard limit, then
// against the email's slow one (or, from a browser that signed in to this
// email before, that browser's own), so parallel guesses are counted one
// by one and an address already refused spends nothing of the owner's. An
// unknown email costs as long as a known one. A sign-in always starts a
// new session: a session id planted before it is never the one signed in.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	lang := langOf(r)
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	email := strings.ToLower(strings.TrimSpace(r.PostForm.Get("email")))
	pw := r.PostForm.Get("password")
	ip := clientIP(r)
	ctx := r.Context()
	// No console user has such an email: a control character (a NUL would
	// be refused by Postgres) or more than an address holds is a wrong
	// sign-in, answered as one.
	if len(email) > 254 || strings.IndexFunc(email, unicode.IsControl) >= 0 {
		email = ""
	}
	if !s.loginFormOK(r) {
		s.Logger.Warn("console: sign-in without the form's token (CSRF)", "client_ip", ip)
		s.renderLogin(w, r, http.StatusForbidden, t(lang, "stale_form"), email)
		return
	}
	if ok, err := s.takeAttempt(ctx, "ip:"+addressKey(ip), AddressEvery, AddressBurst); err != nil {
		s.fail(w, r, "count sign-in attempt", err)
		return
	} else if !ok {
		s.Logger.Warn("console: sign-in refused: too many attempts from the address", "client_ip", ip)
		s.renderLogin(w, r, http.StatusTooManyRequests, t(lang, "too_many"), email)
		return
	}
	bucket := "email:" + s.mac("email", email)
	if id := s.trustedBrowser(r, email); id != "" {
		bucket = "browser:" + id
	}
	if ok, err := s.takeAttempt(ctx, bucket, EmailEvery, EmailBurst); err != nil {
		s.fail(w, r, "count sign-in attempt", err)
		return
	} else if !ok {
		s.Logger.Warn("console: sign-in refused: too many attempts for the email", "client_ip", ip)
		s.renderLogin(w, r, http.StatusTooManyRequests, t(lang, "too_many"), email)
		return
	}
	u, err := s.Records.ActiveConsoleUser(ctx, email)
	if err != nil {
		s.fail(w, r, "find user", err)
		return
	}
	// A password is checked, against a dummy hash, even for no user, so
	// the answer takes as long whether the email is known or not.
	hash := password.Dummy
	if u != nil {
		hash = u.PasswordHash
	}
	ok, cerr := s.checkPassword(hash, pw)
	if u == nil || cerr != nil || !ok {
		// Kept for the record of who tried; the buckets do the counting.
		if ferr := s.Records.RecordLoginFailure(ctx, &models.ConsoleLoginFailure{Email: email, ClientIP: ip, CreatedAt: s.Now()}); ferr != nil {
			s.Logger.Error("console: record failed sign-in", "error", ferr)
		}
		s.Logger.Info("console: sign-in failed", "client_ip", ip)
		s.renderLogin(w, r, http.StatusUnauthorized, t(lang, "bad_login"), email)
		return
	}
	if err := s.Records.PruneLoginLimits(ctx, s.Now()); err != nil {
		s.Logger.Error("console: prune sign-in limits", "error", err)
	}
	// The session the browser came with, if any, ends here.
	ended := ""
	if c, err := r.Cookie(s.cookieName()); err == nil {
		ended = tokenHash(c.Value)
	}
	token := randomToken()
	now := s.Now()
	row := models.ConsoleSession{TokenHash: tokenHash(token), UserID: u.ID, CSRFToken: randomToken(), CreatedAt: now, ExpiresAt: now.Add(SessionTTL)}
	if err := s.Records.StartConsoleSession(ctx, &row, ended); err != nil {
		s.fail(w, r, "create session", err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: token, Path: "/", HttpOnly: true, Secure: s.SecureCookies,
		SameSite: http.SameSiteStrictMode, MaxAge: int(SessionTTL / time.Second)})
	// This browser now has a bucket of its own for this email.
	id := s.trustedBrowser(r, email)
	if id == "" {
		id = randomToken()
	}
	// Path / as a __Host- cookie must have (under https).
	http.SetCookie(w, &http.Cookie{Name: s.prefixed(deviceCookie), Value: id + "." + s.mac("device", id, email), Path: "/",
		HttpOnly: true, Secure: s.SecureCookies, SameSite: http.SameSiteStrictMode, MaxAge: int(TrustedBrowserTTL / time.Second)})
	s.Logger.Info("console: signed in", "user_id", u.ID, "role", u.Role)
	http.Redirect(w, r, "/console/?lang="+lang, http.StatusSeeOther)
}

// addressKey is the address a limit counts: an IPv4 address, or an IPv6
// address's /64, which one machine usually holds whole.
func addressKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil || a.Is4() || a.Is4In6() {
		return ip
	}
	p, err := a.Prefix(64)
	if err != nil {
		return ip
	}
	return p.String()
}

// isToken reports whether v is a token of randomToken's form.
func isToken(v string) bool {
	if len(v) != 64 {
		return false
	}
	_, err := hex.DecodeString(v)
	return err == nil
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	sess := sessionOf(r.Context())
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil || subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(sess.CSRF)) != 1 {
		http.Error(w, "the form is stale or not ours (CSRF); reload the page", http.StatusForbidden)
		return
	}
	if err := s.Records.EndConsoleSession(r.Context(), sess.hash); err != nil {
		s.fail(w, r, "end session", err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: "", Path: "/", HttpOnly: true, Secure: s.SecureCookies,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/console/login?lang="+langOf(r), http.StatusSeeOther)
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	s.Logger.Error("console: "+what, "path", r.URL.Path, "error", err)
	s.render(w, r, http.StatusServiceUnavailable, "message", pageData{Title: t(langOf(r), "error"), Message: t(langOf(r), "error_text")})
}

// OpsUser returns the email of the ops user whose console session r's
// cookie names: the one person who may read decrypted workflow payloads in
// the Temporal UI (api.CodecEndpoint). Other roles see their own orders
// in the console, never every merchant's histories.
func (s *Server) OpsUser(r *http.Request) (string, bool) {
	sess, err := s.current(r)
	if err != nil {
		s.Logger.Error("console: read session for the codec", "error", err)
		return "", false
	}
	if sess == nil || sess.User.Role != models.RoleOps {
		return "", false
	}
	return sess.User.Email, true
}

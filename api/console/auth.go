package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/adapters/password"
	"github.com/paygate/paygate/models"
)

// cookieName holds the session token. The __Host- prefix (over HTTPS) pins
// it to this host and path /.
func (s *Server) cookieName() string {
	if s.SecureCookies {
		return "__Host-pg_console"
	}
	return "pg_console"
}

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
	var row models.ConsoleSession
	err = s.DB.WithContext(r.Context()).Where("token_hash = ? AND expires_at > ?", tokenHash(c.Value), s.Now()).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var u models.ConsoleUser
	err = s.DB.WithContext(r.Context()).Where("id = ? AND disabled_at IS NULL", row.UserID).Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &session{User: u, CSRF: row.CSRFToken, hash: row.TokenHash}, nil
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
	return func(w http.ResponseWriter, r *http.Request) {
		sess := sessionOf(r.Context())
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(sess.CSRF)) != 1 {
			http.Error(w, "the form is stale or not ours (CSRF); reload the page", http.StatusForbidden)
			return
		}
		formID := r.PostForm.Get("form_id")
		if len(formID) < 16 || len(formID) > 64 {
			http.Error(w, "the form has no id; reload the page", http.StatusBadRequest)
			return
		}
		// The record is keyed by the session and the form's id together,
		// so one browser's ids never meet another's.
		act := &models.ConsoleAction{FormID: tokenHash(sess.hash + "/" + formID), UserID: sess.User.ID,
			Action: r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:], Subject: r.PathValue("tx"), CreatedAt: s.Now()}
		first, prior, err := models.ClaimConsoleAction(r.Context(), s.DB, act)
		if err != nil {
			s.fail(w, r, "claim form", err)
			return
		}
		if !first {
			s.render(w, r, http.StatusOK, "message", pageData{Title: t(langOf(r), "already_done"), Message: prior.Outcome, Back: r.Referer()})
			return
		}
		next(w, r, act)
	}
}

// done records what a form did, for a second submission to show.
func (s *Server) done(ctx context.Context, act *models.ConsoleAction, outcome string) {
	if len(outcome) > 500 {
		outcome = outcome[:500]
	}
	if err := s.DB.WithContext(ctx).Model(act).Update("outcome", outcome).Error; err != nil {
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

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "login", pageData{Title: t(langOf(r), "sign_in")})
}

// login checks the email and password. Too many recent failures for the
// email or from the address refuse it before the password is looked at; an
// unknown email costs as long as a known one. A sign-in always starts a new
// session: a session id planted before it is never the one signed in.
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
	since := s.Now().Add(-LoginWindow)
	var byEmail, byIP int64
	db := s.DB.WithContext(ctx)
	if err := db.Model(&models.ConsoleLoginFailure{}).Where("email = ? AND created_at > ?", email, since).Count(&byEmail).Error; err != nil {
		s.fail(w, r, "count failures", err)
		return
	}
	if err := db.Model(&models.ConsoleLoginFailure{}).Where("client_ip = ? AND created_at > ?", ip, since).Count(&byIP).Error; err != nil {
		s.fail(w, r, "count failures", err)
		return
	}
	if byEmail >= LoginMaxFailures || byIP >= LoginMaxFailures {
		s.Logger.Warn("console: sign-in refused after repeated failures", "client_ip", ip)
		s.render(w, r, http.StatusTooManyRequests, "login", pageData{Title: t(lang, "sign_in"), Error: t(lang, "too_many"), Email: email})
		return
	}
	var u models.ConsoleUser
	err := db.Where("email = ? AND disabled_at IS NULL", email).Take(&u).Error
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		s.fail(w, r, "find user", err)
		return
	}
	hash := u.PasswordHash
	if hash == "" {
		hash = password.Dummy
	}
	ok, cerr := password.Check(hash, pw)
	if err != nil || cerr != nil || !ok {
		if ferr := db.Create(&models.ConsoleLoginFailure{Email: email, ClientIP: ip, CreatedAt: s.Now()}).Error; ferr != nil {
			s.Logger.Error("console: record failed sign-in", "error", ferr)
		}
		s.Logger.Info("console: sign-in failed", "client_ip", ip)
		s.render(w, r, http.StatusUnauthorized, "login", pageData{Title: t(lang, "sign_in"), Error: t(lang, "bad_login"), Email: email})
		return
	}
	// The session the browser came with, if any, ends here.
	if c, err := r.Cookie(s.cookieName()); err == nil {
		db.Where("token_hash = ?", tokenHash(c.Value)).Delete(&models.ConsoleSession{})
	}
	token := randomToken()
	now := s.Now()
	row := models.ConsoleSession{TokenHash: tokenHash(token), UserID: u.ID, CSRFToken: randomToken(), CreatedAt: now, ExpiresAt: now.Add(SessionTTL)}
	if err := db.Create(&row).Error; err != nil {
		s.fail(w, r, "create session", err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: token, Path: "/", HttpOnly: true, Secure: s.SecureCookies,
		SameSite: http.SameSiteStrictMode, MaxAge: int(SessionTTL / time.Second)})
	s.Logger.Info("console: signed in", "user_id", u.ID, "role", u.Role)
	http.Redirect(w, r, "/console/?lang="+lang, http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	sess := sessionOf(r.Context())
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil || subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(sess.CSRF)) != 1 {
		http.Error(w, "the form is stale or not ours (CSRF); reload the page", http.StatusForbidden)
		return
	}
	if err := s.DB.WithContext(r.Context()).Where("token_hash = ?", sess.hash).Delete(&models.ConsoleSession{}).Error; err != nil {
		s.fail(w, r, "end session", err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: "", Path: "/", HttpOnly: true, Secure: s.SecureCookies,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/console/login?lang="+langOf(r), http.StatusSeeOther)
}

// home sends each role to its first page.
func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	target := map[string]string{models.RoleMerchant: "/console/orders", models.RoleFinance: "/console/payouts", models.RoleOps: "/console/stuck"}
	http.Redirect(w, r, target[sessionOf(r.Context()).User.Role]+"?lang="+langOf(r), http.StatusSeeOther)
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	s.Logger.Error("console: "+what, "path", r.URL.Path, "error", err)
	s.render(w, r, http.StatusServiceUnavailable, "message", pageData{Title: t(langOf(r), "error"), Message: t(langOf(r), "error_text")})
}

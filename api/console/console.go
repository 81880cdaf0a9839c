// Package console is the gateway's back office in the browser, under
// /console: merchants manage their orders, finance re-runs payouts, ops see
// what is stuck. Pages are rendered on the server; state-changing forms
// carry the session's CSRF token and a one-time form id, and go through
// the same workflow updates and services as the API.
package console

import (
	"context"
	"crypto/rand"
	"embed"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/password"
	"github.com/paygate/paygate/internal/adapters/payoutrerun"
	"github.com/paygate/paygate/internal/adapters/redeliver"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// OrderOps sends an operation to an order's workflow, as the API's batch
// endpoints do (flows.TemporalOrders).
type OrderOps interface {
	Capture(ctx context.Context, workflowID string, req workflows.CaptureRequest) (workflows.OperationResult, error)
	Cancel(ctx context.Context, workflowID string, req workflows.CancelRequest) (workflows.OperationResult, error)
	Review(ctx context.Context, workflowID string, req workflows.ReviewRequest) (workflows.OperationResult, error)
	Refund(ctx context.Context, workflowID string, req workflows.RefundRequest) (workflows.OperationResult, error)
}

// PayoutReruns plans and runs finance's re-runs (payoutrerun.Service).
type PayoutReruns interface {
	Plan(ctx context.Context, sel models.PayoutSelection) ([]payoutrerun.Item, error)
	Run(ctx context.Context, req payoutrerun.Request, items []payoutrerun.Item, progress payoutrerun.Progress) (payoutrerun.Result, error)
	List(ctx context.Context, limit int) ([]models.PayoutRerun, error)
	Show(ctx context.Context, id int64) (payoutrerun.Result, error)
}

// Redeliverer resends notifications with their notify_ids
// (redeliver.Service).
type Redeliverer interface {
	Start(ctx context.Context, sel models.NotificationSelection, schedule notify.Schedule) (redeliver.Result, error)
}

// KeyRotator gives an account a new sign key (merchant.Service).
type KeyRotator interface {
	RotateKey(ctx context.Context, merchantID, accountID string, grace time.Duration) (string, error)
}

// Records is the console's way to the record (models.ConsoleRecords).
type Records interface {
	LiveConsoleSession(ctx context.Context, tokenHash string, now time.Time) (*models.ConsoleSession, *models.ConsoleUser, error)
	StartConsoleSession(ctx context.Context, row *models.ConsoleSession, endTokenHash string) error
	EndConsoleSession(ctx context.Context, tokenHash string) error
	ActiveConsoleUser(ctx context.Context, email string) (*models.ConsoleUser, error)
	RecordLoginFailure(ctx context.Context, f *models.ConsoleLoginFailure) error
	ClaimConsoleAction(ctx context.Context, a *models.ConsoleAction) (bool, *models.ConsoleAction, error)
	RecordConsoleOutcome(ctx context.Context, a *models.ConsoleAction, outcome string) error
	TakeLoginToken(ctx context.Context, key string, now time.Time, every time.Duration, burst int) (bool, error)
	PruneLoginLimits(ctx context.Context, now time.Time) error
	SearchOrders(ctx context.Context, f models.OrderSearch, limit int) ([]models.Order, string, error)
	ShopperEmailHash(email string) (string, error)
	MerchantOrder(ctx context.Context, merchantID, transactionID string) (*models.Order, error)
	HistoryOf(ctx context.Context, transactionID string) (models.OrderHistory, error)
	RecentRefunds(ctx context.Context, merchantID string, before time.Time, limit int) ([]models.Refund, error)
	RefundBlockingDispute(ctx context.Context, transactionID string) (*models.Dispute, error)
	MerchantAccounts(ctx context.Context, merchantID string) ([]models.Account, error)
	FindStuck(ctx context.Context, ordersBefore, payoutsBefore time.Time, limit, backlog int) (models.Stuck, error)
	SearchPayouts(ctx context.Context, f models.PayoutSearch, limit int) ([]models.Payout, error)
	PayoutsByID(ctx context.Context, ids []string) ([]models.Payout, error)
	MerchantBalances(ctx context.Context, mode string) ([]models.LedgerAccount, error)
	ConnectorHealthSince(ctx context.Context, changedSince, seenSince time.Time) ([]models.ConnectorHealth, error)
	// The home pages' figures (models/console_dashboard.go), of the
	// accounts of one mode.
	AccountModes(ctx context.Context, merchantID string) (live, test bool, err error)
	PaymentDays(ctx context.Context, merchantID, mode string, from, to time.Time) ([]models.DayTotal, error)
	RefundDays(ctx context.Context, merchantID, mode string, from, to time.Time) ([]models.DayTotal, error)
	DeclineReasons(ctx context.Context, merchantID, mode string, from, to time.Time, limit int) ([]models.Tally, error)
	PaymentMethods(ctx context.Context, merchantID, mode string, from, to time.Time) ([]models.Tally, error)
	PayoutStatuses(ctx context.Context, mode string, from, to time.Time) ([]models.Tally, error)
	SettlementDays(ctx context.Context, mode string, from, to time.Time) ([]models.DayTotal, error)
	BacklogAges(ctx context.Context, now time.Time) ([]models.Tally, error)
	StuckCounts(ctx context.Context, ordersBefore, payoutsBefore time.Time) (orders, payouts int64, err error)
	ConnectorOutcomes(ctx context.Context, from, to time.Time) ([]models.ConnectorOutcome, error)
}

// LedgerEntries reads an account's latest ledger entries (ledger.Ledger).
type LedgerEntries interface {
	Entries(ctx context.Context, f ledger.EntryFilter) ([]ledger.Entry, error)
}

// Server serves the console.
type Server struct {
	Records   Records
	Ledger    LedgerEntries
	Orders    OrderOps
	Reruns    PayoutReruns
	Redeliver Redeliverer
	Keys      KeyRotator
	// Recon is the settlement reconciliation finance reads and acts on.
	Recon Reconciliation
	// Disputes is the record of disputes; nil leaves the disputes page
	// failing. DisputeRateWarning is the rate, in basis points, above
	// which ops are warned (DefaultDisputeRateWarning when 0).
	Disputes           DisputeBook
	DisputeRateWarning int
	// NotifySchedule is the retry schedule of resent notifications.
	NotifySchedule notify.Schedule
	// TemporalUIURL links orders and payouts to their workflows; empty
	// leaves the links out.
	TemporalUIURL string
	// Namespace is the Temporal namespace of the links.
	Namespace string
	// SecureCookies marks the session cookie Secure: the console is served
	// over HTTPS (PAYGATE_PUBLIC_URL is https).
	SecureCookies bool
	// SignInKey signs the sign-in form's CSRF token and the trusted-browser
	// cookie; every API process of a deployment must share it (app derives
	// it from PAYGATE_FINGERPRINT_KEY). Empty: a random key of this
	// process's own.
	SignInKey []byte
	Logger    *slog.Logger
	Now       func() time.Time

	// checkPassword is password.Check; tests count its calls.
	checkPassword func(hash, pw string) (bool, error)
}

// Limits of the console.
const (
	// SessionTTL is how long a sign-in lasts.
	SessionTTL = 8 * time.Hour
	// Sign-in attempts are counted before the password is checked, in
	// token buckets (models.TakeLoginToken). An address has a hard limit:
	// AddressBurst attempts, then one every AddressEvery. An email has a
	// slow one, EmailBurst then one every EmailEvery, so guesses from
	// elsewhere delay its owner by a minute at most, never lock them out;
	// and a browser that signed in to the email before (the trusted-browser
	// cookie) has a bucket of its own that nobody else can empty.
	AddressBurst = 10
	AddressEvery = 90 * time.Second
	EmailBurst   = 5
	EmailEvery   = time.Minute
	// TrustedBrowserTTL is how long a browser stays trusted for an email.
	TrustedBrowserTTL = 90 * 24 * time.Hour
	// PageSize is how many rows a list shows.
	PageSize = 50
	// KeyGrace is how long an old sign key stays valid after a rotation.
	KeyGrace = 24 * time.Hour
)

//go:embed templates/*.html
var templateFS embed.FS

var pages = template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/*.html"))

// Handler serves /console/...; mount it there.
func (s *Server) Handler() http.Handler {
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if len(s.SignInKey) == 0 {
		s.SignInKey = make([]byte, 32)
		_, _ = rand.Read(s.SignInKey)
	}
	if s.checkPassword == nil {
		s.checkPassword = password.Check
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /console/login", s.loginPage)
	mux.HandleFunc("POST /console/login", s.login)
	mux.HandleFunc("POST /console/logout", s.signedIn(s.logout))
	mux.HandleFunc("GET /console/{$}", s.signedIn(s.home))

	mux.HandleFunc("GET /console/search", s.signedIn(s.roles(s.search, models.RoleMerchant, models.RoleOps)))
	mux.HandleFunc("POST /console/search", s.signedIn(s.roles(s.csrfChecked(s.search), models.RoleMerchant, models.RoleOps)))
	mux.HandleFunc("GET /console/orders", s.signedIn(s.roles(s.orderList, models.RoleMerchant, models.RoleOps)))
	mux.HandleFunc("POST /console/orders", s.signedIn(s.roles(s.csrfChecked(s.filterOrders), models.RoleMerchant, models.RoleOps)))
	mux.HandleFunc("GET /console/orders.csv", s.signedIn(s.roles(s.orderCSV, models.RoleMerchant, models.RoleOps)))
	mux.HandleFunc("GET /console/orders/{tx}", s.signedIn(s.roles(s.orderPage, models.RoleMerchant, models.RoleOps)))
	mux.HandleFunc("POST /console/orders/{tx}/refund", s.signedIn(s.roles(s.form(s.refund), models.RoleMerchant)))
	mux.HandleFunc("POST /console/orders/{tx}/capture", s.signedIn(s.roles(s.form(s.capture), models.RoleMerchant)))
	mux.HandleFunc("POST /console/orders/{tx}/cancel", s.signedIn(s.roles(s.form(s.cancel), models.RoleMerchant)))
	mux.HandleFunc("POST /console/orders/{tx}/review", s.signedIn(s.roles(s.form(s.review), models.RoleMerchant)))
	mux.HandleFunc("GET /console/refunds", s.signedIn(s.roles(s.refundList, models.RoleMerchant, models.RoleOps)))
	mux.HandleFunc("GET /console/keys", s.signedIn(s.roles(s.keysPage, models.RoleMerchant)))
	mux.HandleFunc("POST /console/keys/rotate", s.signedIn(s.roles(s.form(s.rotateKey), models.RoleMerchant)))

	mux.HandleFunc("GET /console/payouts", s.signedIn(s.roles(s.payoutList, models.RoleFinance, models.RoleOps)))
	mux.HandleFunc("POST /console/payouts/preview", s.signedIn(s.roles(s.rerunPreview, models.RoleFinance)))
	mux.HandleFunc("POST /console/payouts/rerun", s.signedIn(s.roles(s.form(s.rerun), models.RoleFinance)))
	mux.HandleFunc("GET /console/reruns", s.signedIn(s.roles(s.rerunList, models.RoleFinance, models.RoleOps)))
	mux.HandleFunc("GET /console/reruns/{id}", s.signedIn(s.roles(s.rerunPage, models.RoleFinance, models.RoleOps)))
	mux.HandleFunc("GET /console/balances", s.signedIn(s.roles(s.balances, models.RoleFinance, models.RoleOps)))

	mux.HandleFunc("GET /console/recon", s.signedIn(s.roles(s.reconPage, models.RoleFinance, models.RoleOps)))
	mux.HandleFunc("GET /console/recon.csv", s.signedIn(s.roles(s.reconCSV, models.RoleFinance, models.RoleOps)))
	mux.HandleFunc("GET /console/recon/exceptions", s.signedIn(s.roles(s.exceptionsPage, models.RoleFinance, models.RoleOps)))
	mux.HandleFunc("GET /console/recon/exceptions.csv", s.signedIn(s.roles(s.exceptionsCSV, models.RoleFinance, models.RoleOps)))
	mux.HandleFunc("POST /console/recon/exceptions/{id}/act", s.signedIn(s.roles(s.form(s.actOnException), models.RoleFinance)))
	mux.HandleFunc("GET /console/statement", s.signedIn(s.roles(s.statementPage, models.RoleFinance, models.RoleOps, models.RoleMerchant)))
	mux.HandleFunc("GET /console/statement.csv", s.signedIn(s.roles(s.statementCSV, models.RoleFinance, models.RoleOps, models.RoleMerchant)))

	mux.HandleFunc("GET /console/stuck", s.signedIn(s.roles(s.stuck, models.RoleOps)))
	mux.HandleFunc("GET /console/disputes", s.signedIn(s.roles(s.disputesPage, models.RoleMerchant, models.RoleOps)))
	mux.HandleFunc("POST /console/notifications/resend", s.signedIn(s.roles(s.form(s.resend), models.RoleOps)))
	return s.headers(mux)
}

// headers sets the console's security headers: no framing, no sniffing,
// scripts and styles only from the page itself, no referrer.
func (s *Server) headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isText(url.Values{"": {r.URL.Path}}) || !isText(r.URL.Query()) {
			http.Error(w, "bad address: it must be text", http.StatusBadRequest)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// isText reports whether every key and value is UTF-8 without a NUL byte.
// Postgres refuses anything else, and that refusal is the caller's mistake
// (400), not the console's trouble (503).
func isText(values url.Values) bool {
	for k, vs := range values {
		if !utf8.ValidString(k) || strings.ContainsRune(k, 0) {
			return false
		}
		for _, v := range vs {
			if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
				return false
			}
		}
	}
	return true
}

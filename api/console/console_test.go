package console

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/adapters/password"
	"github.com/paygate/paygate/internal/adapters/payoutrerun"
	"github.com/paygate/paygate/internal/adapters/redeliver"
	"github.com/paygate/paygate/internal/dev/devenv"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/models/migrations"
	"github.com/paygate/paygate/workflows"
)

// testDB is a fresh, migrated database, dropped when the test ends.
func testDB(t testing.TB) *gorm.DB {
	t.Helper()
	ctx := t.Context()
	logger := slog.New(slog.DiscardHandler)
	pg, err := devenv.EnsurePostgres(ctx, devenv.PostgresOptions{DataDir: filepath.Join("..", "..", ".data", "postgres")}, logger)
	if err != nil {
		t.Skipf("no postgres server: %v", err)
	}
	t.Cleanup(func() { _ = pg.Stop() })
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "paygate_console_" + hex.EncodeToString(b)
	if err := devenv.CreateDatabase(ctx, pg.AdminURL, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = devenv.DropDatabase(context.Background(), pg.AdminURL, name) })
	db, err := models.Open(ctx, pg.DatabaseURL(name), logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			_ = sqlDB.Close()
		}
	})
	sqlDB, _ := db.DB()
	if _, err := migrations.Up(ctx, sqlDB, nil); err != nil {
		t.Fatal(err)
	}
	return db
}

// fakeOps records the operations the console sends to order workflows.
type fakeOps struct {
	mu      sync.Mutex
	refunds []workflows.RefundRequest
	reviews []workflows.ReviewRequest
	db      *gorm.DB
}

func (f *fakeOps) Refund(ctx context.Context, workflowID string, req workflows.RefundRequest) (workflows.OperationResult, error) {
	f.mu.Lock()
	f.refunds = append(f.refunds, req)
	f.mu.Unlock()
	// As the workflow would: the refund is recorded.
	f.db.Model(&models.Order{}).Where("transaction_id = ?", req.Entry.TransactionID).
		Updates(map[string]any{"refunded_amount": gorm.Expr("refunded_amount + ?", req.RefundAmount), "payment_status": status.PartiallyRefunded})
	return workflows.OperationResult{Status: workflows.EntryDone, ResultCode: "0000", ResultMessage: "Success"}, nil
}

func (f *fakeOps) Capture(context.Context, string, workflows.CaptureRequest) (workflows.OperationResult, error) {
	return workflows.OperationResult{Status: workflows.EntryDone, ResultCode: "0000", ResultMessage: "Success"}, nil
}

func (f *fakeOps) Review(_ context.Context, _ string, req workflows.ReviewRequest) (workflows.OperationResult, error) {
	f.mu.Lock()
	f.reviews = append(f.reviews, req)
	f.mu.Unlock()
	return workflows.OperationResult{Status: workflows.EntryDone, ResultCode: "0000", ResultMessage: "Success"}, nil
}

func (f *fakeOps) Cancel(context.Context, string, workflows.CancelRequest) (workflows.OperationResult, error) {
	return workflows.OperationResult{Status: workflows.EntryDone, ResultCode: "0000", ResultMessage: "Success"}, nil
}

type fakeReruns struct{}

func (fakeReruns) Plan(context.Context, models.PayoutSelection) ([]payoutrerun.Item, error) {
	return nil, nil
}
func (fakeReruns) Run(context.Context, payoutrerun.Request, []payoutrerun.Item, payoutrerun.Progress) (payoutrerun.Result, error) {
	return payoutrerun.Result{}, nil
}
func (fakeReruns) List(context.Context, int) ([]models.PayoutRerun, error) { return nil, nil }
func (fakeReruns) Show(context.Context, int64) (payoutrerun.Result, error) {
	return payoutrerun.Result{}, nil
}

type fakeRedeliver struct {
	sent []models.NotificationSelection
}

func (f *fakeRedeliver) Start(_ context.Context, sel models.NotificationSelection, _ notify.Schedule) (redeliver.Result, error) {
	f.sent = append(f.sent, sel)
	return redeliver.Result{WorkflowID: "redeliver/x", NotifyIDs: sel.NotifyIDs}, nil
}

type fakeKeys struct{}

func (fakeKeys) RotateKey(context.Context, string, string, time.Duration) (string, error) {
	return "new-key-0123456789abcdef", nil
}

type testConsole struct {
	srv *httptest.Server
	db  *gorm.DB
	ops *fakeOps
}

const testPassword = "a long enough password"

func newTestConsole(t testing.TB) *testConsole {
	t.Helper()
	db := testDB(t)
	ops := &fakeOps{db: db}
	s := &Server{DB: db, Orders: ops, Reruns: fakeReruns{}, Redeliver: &fakeRedeliver{}, Keys: fakeKeys{},
		TemporalUIURL: "http://127.0.0.1:8233"}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	hash, err := password.Hash(testPassword)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []models.ConsoleUser{
		{Email: "shop-a@example.com", Role: models.RoleMerchant, MerchantID: "A"},
		{Email: "shop-b@example.com", Role: models.RoleMerchant, MerchantID: "B"},
		{Email: "finance@example.com", Role: models.RoleFinance},
		{Email: "ops@example.com", Role: models.RoleOps},
	} {
		u.PasswordHash, u.CreatedAt = hash, time.Now()
		if err := models.CreateConsoleUser(t.Context(), db, &u); err != nil {
			t.Fatal(err)
		}
	}
	// An order of merchant A and one of merchant B, both paid.
	for _, o := range []models.Order{
		{TransactionID: "1000000000000000001", WorkflowID: "order/A/A1/ORDER-A", MerchantID: "A", AccountID: "A1", OrderNo: "ORDER-A"},
		{TransactionID: "1000000000000000002", WorkflowID: "order/B/B1/ORDER-B", MerchantID: "B", AccountID: "B1", OrderNo: "ORDER-B"},
	} {
		o.Currency, o.Amount, o.CapturedAmount, o.PaymentStatus, o.OrderStatus = "USD", 5000, 5000, status.Paid, status.OrderSuccess
		o.CardMasked, o.ShopperEmail = "424242******4242", "ada@example.com"
		if err := db.Create(&o).Error; err != nil {
			t.Fatal(err)
		}
	}
	return &testConsole{srv: srv, db: db, ops: ops}
}

// browser is a client with its own cookie jar that does not follow
// redirects, so tests see them.
func (c *testConsole) browser(t *testing.T) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func do(t *testing.T, hc *http.Client, method, target string, form url.Values) (int, string, http.Header) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// signIn signs hc in and returns the session's CSRF token.
func (c *testConsole) signIn(t *testing.T, hc *http.Client, email string) string {
	t.Helper()
	code, _, h := do(t, hc, "POST", c.srv.URL+"/console/login", url.Values{"email": {email}, "password": {testPassword}})
	if code != http.StatusSeeOther {
		t.Fatalf("sign in as %s: %d", email, code)
	}
	_ = h
	_, page, _ := do(t, hc, "GET", c.srv.URL+"/console/keys", nil)
	if m := csrfIn.FindStringSubmatch(page); m != nil {
		return m[1]
	}
	// Roles without the keys page: any signed-in page holds the token.
	for _, p := range []string{"/console/payouts", "/console/stuck", "/console/orders"} {
		if _, page, _ = do(t, hc, "GET", c.srv.URL+p, nil); csrfIn.MatchString(page) {
			return csrfIn.FindStringSubmatch(page)[1]
		}
	}
	t.Fatal("no CSRF token on any page")
	return ""
}

var (
	csrfIn = regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`)
	txIn   = regexp.MustCompile(`<td>([0-9]{19})</td>`)
	nextIn = regexp.MustCompile(`id="next" href="([^"]+)"`)
)

func refundForm(csrf, formID, amount string) url.Values {
	return url.Values{"csrf": {csrf}, "form_id": {formID}, "amount": {amount}}
}

func TestSignInSendsEachRoleHome(t *testing.T) {
	c := newTestConsole(t)
	tests := []struct {
		email, home string
	}{
		{"shop-a@example.com", "/console/orders"},
		{"finance@example.com", "/console/payouts"},
		{"ops@example.com", "/console/stuck"},
	}
	for _, tc := range tests {
		t.Run(tc.email, func(t *testing.T) {
			hc := c.browser(t)
			c.signIn(t, hc, tc.email)
			code, _, h := do(t, hc, "GET", c.srv.URL+"/console/", nil)
			if code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), tc.home) {
				t.Errorf("home: %d to %s, want %s", code, h.Get("Location"), tc.home)
			}
		})
	}
}

func TestSignedOutIsSentToSignIn(t *testing.T) {
	c := newTestConsole(t)
	code, _, h := do(t, c.browser(t), "GET", c.srv.URL+"/console/orders", nil)
	if code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/console/login") {
		t.Errorf("%d to %q, want the sign-in page", code, h.Get("Location"))
	}
	code, _, _ = do(t, c.browser(t), "POST", c.srv.URL+"/console/orders/1000000000000000001/refund", refundForm("x", "y", "1.00"))
	if code != http.StatusUnauthorized {
		t.Errorf("a signed-out refund answered %d, want 401", code)
	}
}

// TestBruteForceIsSlowed: after five failed sign-ins for an email, even the
// right password is refused for the window.
func TestBruteForceIsSlowed(t *testing.T) {
	c := newTestConsole(t)
	hc := c.browser(t)
	for i := range LoginMaxFailures {
		code, _, _ := do(t, hc, "POST", c.srv.URL+"/console/login", url.Values{"email": {"ops@example.com"}, "password": {fmt.Sprintf("guess number %d", i)}})
		if code != http.StatusUnauthorized {
			t.Fatalf("failure %d answered %d, want 401", i+1, code)
		}
	}
	code, page, _ := do(t, hc, "POST", c.srv.URL+"/console/login", url.Values{"email": {"ops@example.com"}, "password": {testPassword}})
	if code != http.StatusTooManyRequests || !strings.Contains(page, "Too many failed sign-ins") {
		t.Errorf("the right password after 5 failures answered %d, want 429", code)
	}
}

// TestPasswordSprayingIsSlowed: failures from one address count whatever
// the email, and an unknown email is a failure like a wrong password.
func TestPasswordSprayingIsSlowed(t *testing.T) {
	c := newTestConsole(t)
	for i := range LoginMaxFailures {
		email := fmt.Sprintf("nobody%d@example.com", i)
		if code, _, _ := do(t, c.browser(t), "POST", c.srv.URL+"/console/login", url.Values{"email": {email}, "password": {testPassword}}); code != http.StatusUnauthorized {
			t.Fatalf("unknown email %d answered %d, want 401", i, code)
		}
	}
	code, _, _ := do(t, c.browser(t), "POST", c.srv.URL+"/console/login", url.Values{"email": {"finance@example.com"}, "password": {testPassword}})
	if code != http.StatusTooManyRequests {
		t.Errorf("a sign-in from the address after 5 failures answered %d, want 429", code)
	}
}

// TestSessionFixation: a session id the browser brought is never the one it
// is signed in under, and a session it had ends at the next sign-in.
func TestSessionFixation(t *testing.T) {
	c := newTestConsole(t)
	hc := c.browser(t)
	u, _ := url.Parse(c.srv.URL)
	planted := strings.Repeat("ab", 32)
	hc.Jar.SetCookies(u, []*http.Cookie{{Name: "pg_console", Value: planted, Path: "/"}})
	c.signIn(t, hc, "shop-a@example.com")
	var got string
	for _, ck := range hc.Jar.Cookies(u) {
		if ck.Name == "pg_console" {
			got = ck.Value
		}
	}
	if got == "" || got == planted {
		t.Fatalf("the session after sign-in is %q, the planted one was %q", got, planted)
	}
	// The attacker's copy of the planted id opens nothing.
	attacker := c.browser(t)
	attacker.Jar.SetCookies(u, []*http.Cookie{{Name: "pg_console", Value: planted, Path: "/"}})
	if code, _, _ := do(t, attacker, "GET", c.srv.URL+"/console/orders", nil); code != http.StatusSeeOther {
		t.Errorf("the planted session opened the orders: %d", code)
	}
	// Signing in again ends the previous session.
	old := got
	c.signIn(t, hc, "shop-a@example.com")
	thief := c.browser(t)
	thief.Jar.SetCookies(u, []*http.Cookie{{Name: "pg_console", Value: old, Path: "/"}})
	if code, _, _ := do(t, thief, "GET", c.srv.URL+"/console/orders", nil); code != http.StatusSeeOther {
		t.Errorf("the session before the second sign-in still works: %d", code)
	}
}

func TestCSRFIsRefused(t *testing.T) {
	c := newTestConsole(t)
	hc := c.browser(t)
	csrf := c.signIn(t, hc, "shop-a@example.com")
	target := c.srv.URL + "/console/orders/1000000000000000001/refund"
	tests := []struct {
		name string
		form url.Values
		want int
	}{
		{"no token", url.Values{"form_id": {"f0123456789abcdef0"}, "amount": {"1.00"}}, http.StatusForbidden},
		{"another token", refundForm(strings.Repeat("0", 64), "f0123456789abcdef1", "1.00"), http.StatusForbidden},
		{"no form id", url.Values{"csrf": {csrf}, "amount": {"1.00"}}, http.StatusBadRequest},
		{"the session's token", refundForm(csrf, "f0123456789abcdef2", "1.00"), http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if code, _, _ := do(t, hc, "POST", target, tc.form); code != tc.want {
				t.Errorf("answered %d, want %d", code, tc.want)
			}
		})
	}
	if n := len(c.ops.refunds); n != 1 {
		t.Errorf("%d refunds reached the workflow, want 1", n)
	}
	// Logging out needs the token too.
	if code, _, _ := do(t, hc, "POST", c.srv.URL+"/console/logout", url.Values{}); code != http.StatusForbidden {
		t.Errorf("logout without the token answered %d, want 403", code)
	}
}

// TestRolesAndTenants: a role cannot reach another role's pages or
// actions, and a merchant user cannot see or act on another merchant's
// order by its URL (it is not found, as if it did not exist).
func TestRolesAndTenants(t *testing.T) {
	c := newTestConsole(t)
	sessions := map[string]*http.Client{}
	csrfs := map[string]string{}
	for _, e := range []string{"shop-a@example.com", "finance@example.com", "ops@example.com"} {
		sessions[e] = c.browser(t)
		csrfs[e] = c.signIn(t, sessions[e], e)
	}
	tests := []struct {
		name   string
		who    string
		method string
		path   string
		want   int
	}{
		{"merchant opens its order", "shop-a@example.com", "GET", "/console/orders/1000000000000000001", 200},
		{"merchant opens another merchant's order", "shop-a@example.com", "GET", "/console/orders/1000000000000000002", 404},
		{"merchant refunds another merchant's order", "shop-a@example.com", "POST", "/console/orders/1000000000000000002/refund", 404},
		{"merchant opens payouts", "shop-a@example.com", "GET", "/console/payouts", 403},
		{"merchant opens balances", "shop-a@example.com", "GET", "/console/balances", 403},
		{"merchant opens stuck", "shop-a@example.com", "GET", "/console/stuck", 403},
		{"finance opens an order", "finance@example.com", "GET", "/console/orders/1000000000000000001", 403},
		{"finance refunds", "finance@example.com", "POST", "/console/orders/1000000000000000001/refund", 403},
		{"ops reads any order", "ops@example.com", "GET", "/console/orders/1000000000000000002", 200},
		{"ops refunds", "ops@example.com", "POST", "/console/orders/1000000000000000001/refund", 403},
		{"ops re-runs payouts", "ops@example.com", "POST", "/console/payouts/rerun", 403},
		{"ops rotates keys", "ops@example.com", "POST", "/console/keys/rotate", 403},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var form url.Values
			if tc.method == "POST" {
				form = refundForm(csrfs[tc.who], fmt.Sprintf("form-%02d-0123456789abcdef", i), "1.00")
			}
			if code, _, _ := do(t, sessions[tc.who], tc.method, c.srv.URL+tc.path, form); code != tc.want {
				t.Errorf("answered %d, want %d", code, tc.want)
			}
		})
	}
	if n := len(c.ops.refunds); n != 0 {
		t.Errorf("%d refunds reached a workflow, want none", n)
	}
	// The order list shows a merchant its own orders only.
	_, page, _ := do(t, sessions["shop-a@example.com"], "GET", c.srv.URL+"/console/orders", nil)
	if !strings.Contains(page, "ORDER-A") || strings.Contains(page, "ORDER-B") {
		t.Error("merchant A's list does not show exactly its own order")
	}
}

// TestDoubleClickRefundsOnce: the same form sent twice refunds once, and
// the second answer says it was already sent.
func TestDoubleClickRefundsOnce(t *testing.T) {
	c := newTestConsole(t)
	hc := c.browser(t)
	csrf := c.signIn(t, hc, "shop-a@example.com")
	target := c.srv.URL + "/console/orders/1000000000000000001/refund"
	form := refundForm(csrf, "dblclick-0123456789abcdef", "12.50")
	code1, page1, _ := do(t, hc, "POST", target, form)
	code2, page2, _ := do(t, hc, "POST", target, form)
	if code1 != 200 || !strings.Contains(page1, "0000:Success") {
		t.Fatalf("first: %d", code1)
	}
	if code2 != 200 || !strings.Contains(page2, "Already sent") || !strings.Contains(page2, "0000:Success") {
		t.Errorf("second: %d, want the first outcome under Already sent", code2)
	}
	if len(c.ops.refunds) != 1 || c.ops.refunds[0].RefundAmount != 1250 || c.ops.refunds[0].Entry.Amount != 5000 {
		t.Errorf("refunds sent: %+v, want one of 1250 on the 5000 order", c.ops.refunds)
	}
	// The order page shows it refunded.
	if _, page, _ := do(t, hc, "GET", c.srv.URL+"/console/orders/1000000000000000001", nil); !strings.Contains(page, "12.50 USD") {
		t.Error("the order page does not show the refund")
	}
}

func TestLogout(t *testing.T) {
	c := newTestConsole(t)
	hc := c.browser(t)
	csrf := c.signIn(t, hc, "ops@example.com")
	if code, _, _ := do(t, hc, "POST", c.srv.URL+"/console/logout", url.Values{"csrf": {csrf}}); code != http.StatusSeeOther {
		t.Fatalf("logout: %d", code)
	}
	if code, _, _ := do(t, hc, "GET", c.srv.URL+"/console/stuck", nil); code != http.StatusSeeOther {
		t.Errorf("after logout the console answered %d, want the sign-in redirect", code)
	}
	var n int64
	c.db.Model(&models.ConsoleSession{}).Count(&n)
	if n != 0 {
		t.Errorf("%d sessions left after logout", n)
	}
}

func TestSpanish(t *testing.T) {
	c := newTestConsole(t)
	_, page, _ := do(t, c.browser(t), "GET", c.srv.URL+"/console/login?lang=es", nil)
	if !strings.Contains(page, `lang="es"`) || !strings.Contains(page, "Iniciar sesión") || !strings.Contains(page, `<label for="password">Contraseña</label>`) {
		t.Error("the Spanish sign-in page is not in Spanish with labelled fields")
	}
}

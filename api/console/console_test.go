package console

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/dev/testdb"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/password"
	"github.com/paygate/paygate/internal/adapters/payoutrerun"
	"github.com/paygate/paygate/internal/adapters/redeliver"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// testDB is a fresh, migrated database, dropped when the test ends.
func testDB(t testing.TB) *gorm.DB { return testdb.Open(t, "paygate_console_") }

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
	s   *Server
	db  *gorm.DB
	ops *fakeOps
}

const testPassword = "a long enough password"

func newTestConsole(t testing.TB) *testConsole {
	t.Helper()
	db := testDB(t)
	ops := &fakeOps{db: db}
	s := &Server{Records: models.ConsoleRecords{DB: db}, Ledger: ledger.New(db), Orders: ops, Reruns: fakeReruns{}, Redeliver: &fakeRedeliver{}, Keys: fakeKeys{},
		TemporalUIURL: "http://127.0.0.1:8233"}
	h := s.Handler()
	// Every test request comes from 127.0.0.1; a test names another
	// address in testPeer, as if the request came from there.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if peer := r.Header.Get(testPeer); peer != "" {
			r.RemoteAddr = net.JoinHostPort(peer, "40000")
		}
		h.ServeHTTP(w, r)
	}))
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
		o.CardMasked, o.Details.ShopperEmail = "424242******4242", "ada@example.com"
		if err := db.Create(&o).Error; err != nil {
			t.Fatal(err)
		}
	}
	return &testConsole{srv: srv, s: s, db: db, ops: ops}
}

// testPeer is the header a test sets to send a request from an address.
const testPeer = "X-Test-Peer"

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

// tryLogin opens the sign-in page in hc, as a browser does, and posts the
// form from the address peer ("" for the test's own).
func (c *testConsole) tryLogin(t *testing.T, hc *http.Client, peer, email, pw string) (int, string) {
	t.Helper()
	_, page, _ := do(t, hc, "GET", c.srv.URL+"/console/login", nil)
	m := csrfIn.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no form token on the sign-in page:\n%s", page)
	}
	req, err := http.NewRequest("POST", c.srv.URL+"/console/login",
		strings.NewReader(url.Values{"csrf": {m[1]}, "email": {email}, "password": {pw}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if peer != "" {
		req.Header.Set(testPeer, peer)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// signIn signs hc in and returns the session's CSRF token.
func (c *testConsole) signIn(t *testing.T, hc *http.Client, email string) string {
	t.Helper()
	if code, _ := c.tryLogin(t, hc, "", email, testPassword); code != http.StatusSeeOther {
		t.Fatalf("sign in as %s: %d", email, code)
	}
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
		email, chart string
	}{
		{"shop-a@example.com", "chart-volume"},
		{"finance@example.com", "chart-payouts"},
		{"ops@example.com", "chart-stuck"},
	}
	for _, tc := range tests {
		t.Run(tc.email, func(t *testing.T) {
			hc := c.browser(t)
			c.signIn(t, hc, tc.email)
			code, page, _ := do(t, hc, "GET", c.srv.URL+"/console/", nil)
			if code != http.StatusOK || !strings.Contains(page, `id="`+tc.chart+`"`) {
				t.Errorf("home: %d, want 200 with %s", code, tc.chart)
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

// TestGuessesAreCountedBeforeTheyAreChecked: guesses for one email are
// counted before the password is checked, however many arrive at once:
// twenty in parallel, the right password among them, get five checks and
// fifteen refusals, and no more than one sign-in.
func TestGuessesAreCountedBeforeTheyAreChecked(t *testing.T) {
	c := newTestConsole(t)
	var checks atomic.Int64
	c.s.checkPassword = func(hash, pw string) (bool, error) {
		checks.Add(1)
		return password.Check(hash, pw)
	}
	answers := make([]int, 20)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			pw := fmt.Sprintf("guess number %d", i)
			if i == 13 {
				pw = testPassword
			}
			// Each from an address of its own, so the email's limit is
			// what holds them.
			answers[i], _ = c.tryLogin(t, c.browser(t), fmt.Sprintf("198.51.100.%d", i+1), "ops@example.com", pw)
		})
	}
	wg.Wait()
	count := map[int]int{}
	for _, a := range answers {
		count[a]++
	}
	if checks.Load() != EmailBurst || count[http.StatusTooManyRequests] != 20-EmailBurst ||
		count[http.StatusUnauthorized]+count[http.StatusSeeOther] != EmailBurst || count[http.StatusSeeOther] > 1 {
		t.Errorf("%d passwords checked, answers %v; want %d checked and %d refused", checks.Load(), count, EmailBurst, 20-EmailBurst)
	}
}

// TestAnAddressIsLimitedHard: one address gets AddressBurst attempts over
// any emails, known or not, then one every AddressEvery.
func TestAnAddressIsLimitedHard(t *testing.T) {
	c := newTestConsole(t)
	now := time.Now()
	c.s.Now = func() time.Time { return now }
	for i := range AddressBurst {
		if code, _ := c.tryLogin(t, c.browser(t), "203.0.113.9", fmt.Sprintf("nobody%d@example.com", i), testPassword); code != http.StatusUnauthorized {
			t.Fatalf("unknown email %d answered %d, want 401", i, code)
		}
	}
	if code, page := c.tryLogin(t, c.browser(t), "203.0.113.9", "finance@example.com", testPassword); code != http.StatusTooManyRequests ||
		!strings.Contains(page, "Too many sign-in attempts") {
		t.Errorf("the address's next attempt answered %d, want 429", code)
	}
	if code, _ := c.tryLogin(t, c.browser(t), "203.0.113.10", "finance@example.com", testPassword); code != http.StatusSeeOther {
		t.Errorf("the owner from another address answered %d, want a sign-in", code)
	}
	now = now.Add(AddressEvery)
	if code, _ := c.tryLogin(t, c.browser(t), "203.0.113.9", "finance@example.com", testPassword); code != http.StatusSeeOther {
		t.Errorf("the address %s later answered %d, want a sign-in", AddressEvery, code)
	}
}

// TestGuessesElsewhereDoNotLockTheOwnerOut: guesses for an email from
// other addresses leave its owner a browser that signed in before (its own
// bucket) and, from anywhere, the next attempt a minute later; the
// guesser's address spends nothing more once it is refused.
func TestGuessesElsewhereDoNotLockTheOwnerOut(t *testing.T) {
	c := newTestConsole(t)
	now := time.Now()
	c.s.Now = func() time.Time { return now }
	owner := c.browser(t)
	c.signIn(t, owner, "ops@example.com")
	for i := range EmailBurst + 3 {
		c.tryLogin(t, c.browser(t), fmt.Sprintf("192.0.2.%d", i+1), "ops@example.com", "a wrong password, long enough")
	}
	if code, _ := c.tryLogin(t, c.browser(t), "192.0.2.200", "ops@example.com", testPassword); code != http.StatusTooManyRequests {
		t.Errorf("a new browser right after the guesses answered %d, want 429", code)
	}
	if code, _ := c.tryLogin(t, owner, "192.0.2.201", "ops@example.com", testPassword); code != http.StatusSeeOther {
		t.Errorf("the owner's browser answered %d, want a sign-in", code)
	}
	now = now.Add(EmailEvery)
	if code, _ := c.tryLogin(t, c.browser(t), "192.0.2.202", "ops@example.com", testPassword); code != http.StatusSeeOther {
		t.Errorf("a new browser a minute later answered %d, want a sign-in", code)
	}
}

// TestSignInNeedsItsFormToken: a post that does not come from the sign-in
// page this browser was given (another site's form, a copied token) is
// refused and counts nothing.
func TestSignInNeedsItsFormToken(t *testing.T) {
	c := newTestConsole(t)
	_, page, _ := do(t, c.browser(t), "GET", c.srv.URL+"/console/login", nil)
	otherToken := csrfIn.FindStringSubmatch(page)[1]
	tests := []struct {
		name string
		form url.Values
	}{
		{"no token", url.Values{"email": {"ops@example.com"}, "password": {testPassword}}},
		{"another browser's token", url.Values{"csrf": {otherToken}, "email": {"ops@example.com"}, "password": {testPassword}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hc := c.browser(t)
			do(t, hc, "GET", c.srv.URL+"/console/login", nil) // this browser's own cookie
			if code, _, _ := do(t, hc, "POST", c.srv.URL+"/console/login", tt.form); code != http.StatusForbidden {
				t.Errorf("answered %d, want 403", code)
			}
		})
	}
	for range EmailBurst + 1 {
		if code, _, _ := do(t, c.browser(t), "POST", c.srv.URL+"/console/login", url.Values{"email": {"ops@example.com"}, "password": {"x"}}); code != http.StatusForbidden {
			t.Fatalf("a post without a token answered %d, want 403", code)
		}
	}
	if code, _ := c.tryLogin(t, c.browser(t), "", "ops@example.com", testPassword); code != http.StatusSeeOther {
		t.Errorf("refused posts were counted: the right one answered %d", code)
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
	// No referrer comes (Referrer-Policy: no-referrer): the way back is the order's page.
	if want := `<a href="/console/orders/1000000000000000001?lang=en">Back</a>`; !strings.Contains(page2, want) {
		t.Errorf("second: no link %s", want)
	}
	if len(c.ops.refunds) != 1 || c.ops.refunds[0].RefundAmount != 1250 || c.ops.refunds[0].Entry.Amount != 5000 {
		t.Errorf("refunds sent: %+v, want one of 1250 on the 5000 order", c.ops.refunds)
	}
	// The order page shows it refunded.
	if _, page, _ := do(t, hc, "GET", c.srv.URL+"/console/orders/1000000000000000001", nil); !strings.Contains(page, "12.50 USD") {
		t.Error("the order page does not show the refund")
	}
}

// TestRefundOfADisputedPayment: the console refuses a refund of a payment
// whose chargeback is open or lost, as the merchant API does, and nothing
// reaches the order; an open inquiry and a dispute won let it through.
func TestRefundOfADisputedPayment(t *testing.T) {
	tests := []struct {
		name, stage, status string
		want                string
		refunds             int
	}{
		{"a chargeback awaiting the merchant", "chargeback", "needs_response", "I0038:Refund not allowed while the payment is disputed: chargeback needs_response", 0},
		{"an inquiry lost", "inquiry", "lost", "I0038:Refund not allowed while the payment is disputed: inquiry lost", 0},
		{"an inquiry open", "inquiry", "needs_response", "0000:Success", 1},
		{"a chargeback won", "chargeback", "won", "0000:Success", 1},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestConsole(t)
			now := time.Now()
			if err := models.SaveDispute(t.Context(), c.db, &models.Dispute{ID: "sim-acquirer:dp_1", Connector: "sim-acquirer",
				ConnectorRef: "dp_1", WorkflowID: "dispute/sim-acquirer/dp_1", TransactionID: "1000000000000000001",
				MerchantID: "A", AccountID: "A1", OrderNo: "ORDER-A", Currency: "USD", Amount: 5000, Stage: tc.stage,
				Status: tc.status, CreatedAt: now, UpdatedAt: now}); err != nil {
				t.Fatal(err)
			}
			hc := c.browser(t)
			csrf := c.signIn(t, hc, "shop-a@example.com")
			form := refundForm(csrf, fmt.Sprintf("disputed-%02d-0123456789abcdef", i), "10.00")
			code, page, _ := do(t, hc, "POST", c.srv.URL+"/console/orders/1000000000000000001/refund", form)
			if code != http.StatusOK || !strings.Contains(page, tc.want) {
				t.Errorf("answered %d without %q", code, tc.want)
			}
			if n := len(c.ops.refunds); n != tc.refunds {
				t.Errorf("%d refunds reached the order, want %d", n, tc.refunds)
			}
		})
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

// TestSignInCookiesUnderHTTPS: under https the sign-in's cookies are
// __Host- cookies, which a browser keeps only with Secure and Path=/; the
// trusted-browser cookie is one of them.
func TestSignInCookiesUnderHTTPS(t *testing.T) {
	c := newTestConsole(t)
	c.s.SecureCookies = true
	// The test client speaks http, so the cookies travel by hand.
	resp, err := http.Get(c.srv.URL + "/console/login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var login *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == "__Host-pg_console_login" {
			login = ck
		}
	}
	if login == nil || !login.Secure || login.Path != "/" || !login.HttpOnly {
		t.Fatalf("sign-in form cookie %+v", login)
	}
	form := url.Values{"csrf": {csrfIn.FindStringSubmatch(string(page))[1]}, "email": {"ops@example.com"}, "password": {testPassword}}
	req, _ := http.NewRequest("POST", c.srv.URL+"/console/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: login.Name, Value: login.Value})
	resp, err = (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in answered %d", resp.StatusCode)
	}
	names := map[string]*http.Cookie{}
	for _, ck := range resp.Cookies() {
		names[ck.Name] = ck
	}
	for _, name := range []string{"__Host-pg_console", "__Host-pg_console_device"} {
		if ck := names[name]; ck == nil || !ck.Secure || ck.Path != "/" || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode {
			t.Errorf("%s: %+v, want Secure, HttpOnly, SameSite=Strict, Path=/", name, ck)
		}
	}
}

// TestSignInWithAControlCharacter: an email no user can have is a wrong
// sign-in (401), never a database error.
func TestSignInWithAControlCharacter(t *testing.T) {
	c := newTestConsole(t)
	for _, email := range []string{"ops@example.com\x00", "ops\x07@example.com", strings.Repeat("a", 300) + "@example.com"} {
		if code, _ := c.tryLogin(t, c.browser(t), "", email, testPassword); code != http.StatusUnauthorized {
			t.Errorf("email %q answered %d, want 401", email, code)
		}
	}
}

// TestTimelineShowsChargeAttempts: a routed order's charges, one per
// connector tried, are lines of its timeline with their outcome, latency
// and why that connector was tried.
func TestTimelineShowsChargeAttempts(t *testing.T) {
	c := newTestConsole(t)
	at := time.Now().Add(-time.Minute)
	for _, a := range []models.PaymentAttempt{
		{TransactionID: "1000000000000000001", Attempt: 1, Connector: "sim-acquirer", Outcome: "down", LatencyMS: 12, Why: "route cards", At: at},
		{TransactionID: "1000000000000000001", Attempt: 2, Connector: "sim-bank", ConnectorRef: "pay_9", Outcome: "approved", LatencyMS: 40,
			Why: "after sim-acquirer: down", At: at.Add(time.Second)},
	} {
		if err := (models.Records{DB: c.db}).RecordPaymentAttempt(t.Context(), &a); err != nil {
			t.Fatal(err)
		}
	}
	hc := c.browser(t)
	c.signIn(t, hc, "shop-a@example.com")
	code, page, _ := do(t, hc, "GET", c.srv.URL+"/console/orders/1000000000000000001", nil)
	if code != http.StatusOK {
		t.Fatalf("order page: %d", code)
	}
	for _, want := range []string{
		"<td>Charge at #1 sim-acquirer, 12 ms, route cards</td><td>down</td>",
		"<td>Charge at #2 sim-bank pay_9, 40 ms, after sim-acquirer: down</td><td>approved</td>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the timeline lacks %q", want)
		}
	}
}

// TestOpsSeeTheBreakers: the ops view lists each worker's breaker per
// connector as it last changed in the last day, and a breaker not closed
// however long ago it changed while its worker says it still holds; a
// stopped worker's breaker leaves the view a day after its last change.
func TestOpsSeeTheBreakers(t *testing.T) {
	c := newTestConsole(t)
	now := time.Now()
	tests := []struct {
		name  string
		row   models.ConnectorHealth
		shown bool
	}{
		{"opened a minute ago", models.ConnectorHealth{Connector: "sim-acquirer", Worker: "host/1", State: "open",
			ChangedAt: now.Add(-time.Minute)}, true},
		{"closed two minutes ago", models.ConnectorHealth{Connector: "sim-bank", Worker: "host/1", State: "closed",
			ChangedAt: now.Add(-2 * time.Minute)}, true},
		{"opened two days ago by a stopped worker", models.ConnectorHealth{Connector: "sim-acquirer", Worker: "gone/9", State: "open",
			ChangedAt: now.Add(-48 * time.Hour)}, false},
		{"opened three days ago, seen five minutes ago", models.ConnectorHealth{Connector: "stripe", Worker: "host/2", State: "open",
			ChangedAt: now.Add(-72 * time.Hour), SeenAt: now.Add(-5 * time.Minute)}, true},
		{"half open for two days, seen just now", models.ConnectorHealth{Connector: "sim-apm", Worker: "host/2", State: "half_open",
			ChangedAt: now.Add(-48 * time.Hour), SeenAt: now}, true},
		{"opened three days ago, last seen an hour ago", models.ConnectorHealth{Connector: "sim-rail", Worker: "host/3", State: "open",
			ChangedAt: now.Add(-72 * time.Hour), SeenAt: now.Add(-time.Hour)}, false},
		{"closed three days ago, its worker running", models.ConnectorHealth{Connector: "sim-bank", Worker: "host/2", State: "closed",
			ChangedAt: now.Add(-72 * time.Hour), SeenAt: now}, false},
	}
	for _, tc := range tests {
		if err := (models.Records{DB: c.db}).SetConnectorHealth(t.Context(), &tc.row); err != nil {
			t.Fatal(err)
		}
	}
	// An older write than the row's changes nothing.
	if err := (models.Records{DB: c.db}).SetConnectorHealth(t.Context(), &models.ConnectorHealth{Connector: "sim-acquirer",
		Worker: "host/1", State: "closed", ChangedAt: now.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	hc := c.browser(t)
	c.signIn(t, hc, "ops@example.com")
	_, page, _ := do(t, hc, "GET", c.srv.URL+"/console/stuck", nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			row := "<td>" + tc.row.Connector + "</td><td>" + tc.row.Worker + "</td><td>" + tc.row.State + "</td>"
			if strings.Contains(page, row) != tc.shown {
				t.Errorf("%s shown: %v, want %v", row, !tc.shown, tc.shown)
			}
		})
	}
}

// TestMarkConnectorHealthSeen: a worker's mark reaches its breakers that
// are not closed, no other worker's, and never moves a mark back.
func TestMarkConnectorHealthSeen(t *testing.T) {
	c := newTestConsole(t)
	records := models.Records{DB: c.db}
	then := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	for _, h := range []models.ConnectorHealth{
		{Connector: "a", Worker: "w1", State: "open", ChangedAt: then},
		{Connector: "b", Worker: "w1", State: "half_open", ChangedAt: then, SeenAt: then.Add(3 * time.Hour)},
		{Connector: "c", Worker: "w1", State: "closed", ChangedAt: then},
		{Connector: "a", Worker: "w2", State: "open", ChangedAt: then},
	} {
		if err := records.SetConnectorHealth(t.Context(), &h); err != nil {
			t.Fatal(err)
		}
	}
	if err := records.MarkConnectorHealthSeen(t.Context(), "w1", then.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Time{"a w1": then.Add(2 * time.Hour), "b w1": then.Add(3 * time.Hour), "c w1": then, "a w2": then}
	var rows []models.ConnectorHealth
	if err := c.db.Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if w := want[r.Connector+" "+r.Worker]; !r.SeenAt.Equal(w) {
			t.Errorf("%s at %s seen at %s, want %s", r.Connector, r.Worker, r.SeenAt.UTC(), w)
		}
	}
}

// TestBytesThatAreNotTextAreRefused: an address or a form with bytes that
// are not UTF-8 text, or a NUL, is the caller's mistake (400) before any of
// it reaches Postgres, which would refuse it and leave the console a 503.
// A sign-in's email is a wrong sign-in instead, counted as any other
// (TestSignInWithAControlCharacter).
func TestBytesThatAreNotTextAreRefused(t *testing.T) {
	c := newTestConsole(t)
	fin, ops := c.browser(t), c.browser(t)
	finCSRF := c.signIn(t, fin, "finance@example.com")
	opsCSRF := c.signIn(t, ops, "ops@example.com")
	tests := []struct {
		name, method, target string
		hc                   *http.Client
		form                 url.Values
		want                 int
	}{
		{"an order number in the list's filter", "GET", "/console/orders?order_no=%FF", ops, nil, http.StatusBadRequest},
		{"a transaction id in the path", "GET", "/console/orders/%FF", ops, nil, http.StatusBadRequest},
		{"a NUL in a payouts filter", "GET", "/console/payouts?merchant_id=%00", fin, nil, http.StatusBadRequest},
		{"a connector in the window", "GET", "/console/recon?connector=%FF", fin, nil, http.StatusBadRequest},
		{"an account of the balances", "GET", "/console/balances?account_id=%FF", fin, nil, http.StatusBadRequest},
		{"a key that is not text", "GET", "/console/orders?%FF=1", ops, nil, http.StatusBadRequest},
		{"before signing in", "GET", "/console/login?lang=%FF", c.browser(t), nil, http.StatusBadRequest},
		{"the header's search", "POST", "/console/search", ops, url.Values{"csrf": {opsCSRF}, "q": {"\xff\xfe"}}, http.StatusBadRequest},
		{"a re-run's preview", "POST", "/console/payouts/preview", fin, url.Values{"csrf": {finCSRF}, "id": {"payout/\x00"}}, http.StatusBadRequest},
		{"text is fine", "GET", "/console/orders?order_no=caf%C3%A9", ops, nil, http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := do(t, tc.hc, tc.method, c.srv.URL+tc.target, tc.form)
			if code != tc.want {
				t.Errorf("%s %s = %d, want %d: %.200s", tc.method, tc.target, code, tc.want, body)
			}
		})
	}
}

package console

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/reconcile"
	"github.com/paygate/paygate/models"
)

// seedRecon stores a day's reconciliation: a matched line of merchant A
// (posted), a capture of merchant A the acquirer never settled, and a
// duplicate line whose order key would be a formula in a spreadsheet.
func seedRecon(t *testing.T, c *testConsole) (day time.Time, missing, duplicate int64) {
	t.Helper()
	c.s.Recon = &reconcile.Service{DB: c.db, Ledger: ledger.New(c.db), Now: time.Now}
	day = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	items := []models.ReconItem{
		{ItemKey: "line/1", Source: models.ReconSourceLine, LineNo: 1, OrderKey: "1000000000000000001", Type: "capture",
			Gross: 5000, Fee: 175, Net: 4825, Currency: "USD", Class: "matched", MerchantID: "A", AccountID: "A1",
			Posted: "order/1000000000000000001/settled", Status: models.ReconNone},
		{ItemKey: "owed/capture/1000000000000000003", Source: models.ReconSourceOwed, OrderKey: "1000000000000000003", Type: "capture",
			Gross: 2500, Currency: "USD", Class: "missing_at_acquirer", MerchantID: "A", AccountID: "A1", Status: models.ReconOpen},
		{ItemKey: "line/2", Source: models.ReconSourceLine, LineNo: 2, OrderKey: "=HYPERLINK(1)", Type: "capture",
			Gross: 5000, Fee: 175, Net: 4825, Currency: "USD", Class: "duplicate", Detail: "already settled by line 1", Status: models.ReconOpen},
	}
	for i := range items {
		items[i].Connector, items[i].Day = "sim-acquirer", day
	}
	run := &models.ReconRun{Connector: "sim-acquirer", Day: day, Lines: 2, Owed: 2, Exceptions: 2, Posted: 1, RanAt: time.Now()}
	if err := models.SaveReconRun(t.Context(), c.db, run, items); err != nil {
		t.Fatal(err)
	}
	// Line 1's settlement in the ledger, whose fee income the statement
	// reads as the merchant's fee.
	led := ledger.New(c.db)
	if _, err := led.CreditOrder(t.Context(), ledger.OrderPosting{Reference: "order/1000000000000000001/paid", OrderKey: "1000000000000000001",
		MerchantID: "A", AccountID: "A1", Currency: "USD", Amount: 5000}); err != nil {
		t.Fatal(err)
	}
	if _, err := led.PostSettlement(t.Context(), ledger.Settlement{Kind: ledger.SettleCapture, OrderKey: "1000000000000000001",
		MerchantID: "A", AccountID: "A1", Currency: "USD", Owed: 5000, Net: 4825, Fee: 175, MerchantFee: 175,
		Line: "sim-acquirer/2026-11-20/1"}); err != nil {
		t.Fatal(err)
	}
	var saved []models.ReconItem
	if err := c.db.Order("id").Find(&saved).Error; err != nil {
		t.Fatal(err)
	}
	return day, saved[1].ID, saved[2].ID
}

// TestFinanceReconciles: finance reads each day per class, works the
// exceptions queue (every action audited with who and why) and exports
// both as CSV; ops may read but not act; merchants see only their own
// settlement statement.
func TestFinanceReconciles(t *testing.T) {
	c := newTestConsole(t)
	_, missing, duplicate := seedRecon(t, c)
	// A day whose report was refused shows why.
	if err := models.RefuseReconRun(t.Context(), c.db, "sim-bank", time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC),
		"settlement report of sim-bank 2026-11-21: the settlement report cannot be read: entry 2: line number 1 comes twice", time.Now()); err != nil {
		t.Fatal(err)
	}
	fin := c.browser(t)
	csrf := c.signIn(t, fin, "finance@example.com")
	window := "from=2026-11-20&to=2026-11-20"

	pages := []struct {
		name, path string
		want       []string
	}{
		{"the day per class", "/console/recon?" + window, []string{"<td>2026-11-20</td><td>sim-acquirer</td><td>2</td><td>2</td><td>2</td><td>1</td><td>0</td>",
			"<td>owed by our record</td><td>missing at the acquirer</td><td>USD</td><td>1</td><td>25.00</td>"}},
		{"a refused report, with why", "/console/recon?from=2026-11-21&to=2026-11-21", []string{"<td>2026-11-21</td><td>sim-bank</td><td>0</td><td>0</td><td>0</td><td>0</td><td>0</td>",
			"<td>settlement report of sim-bank 2026-11-21: the settlement report cannot be read: entry 2: line number 1 comes twice</td>"}},
		{"the totals as CSV", "/console/recon.csv?" + window, []string{"day,connector,source,class,currency,count,gross,fee,net\n",
			"2026-11-20,sim-acquirer,owed,missing_at_acquirer,USD,1,25.00,0.00,0.00\n", "2026-11-20,sim-acquirer,line,duplicate,USD,1,50.00,1.75,48.25\n"}},
		{"the queue with its actions", "/console/recon/exceptions", []string{fmt.Sprintf(`action="/console/recon/exceptions/%d/act`, missing),
			"missing at the acquirer", "already settled by line 1"}},
		{"the queue as CSV, formulas defused", "/console/recon/exceptions.csv", []string{"'=HYPERLINK(1)", ",missing_at_acquirer,open,capture,"}},
	}
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			code, body, _ := do(t, fin, "GET", c.srv.URL+p.path, nil)
			if code != 200 {
				t.Fatalf("GET %s = %d", p.path, code)
			}
			for _, w := range p.want {
				if !strings.Contains(body, w) {
					t.Errorf("GET %s lacks %q", p.path, w)
				}
			}
		})
	}

	acts := []struct {
		name       string
		id         int64
		action     string
		note       string
		wantStatus string
		wantPage   string
		busy       bool // a day of the item's connector is being reconciled
	}{
		{"a note is required", duplicate, "claim", " ", models.ReconOpen, "A note is required", false},
		{"an unknown action", duplicate, "delete", "why", models.ReconOpen, "Unknown action", false},
		{"claim the duplicate", duplicate, "claim", "asked the acquirer on ticket 42", models.ReconClaimed, "claimed", false},
		{"resolve the claim", duplicate, "resolve", "the acquirer took it back on the 22nd", models.ReconResolved, "resolved", false},
		{"act on it again", duplicate, "claim", "again", models.ReconResolved, "Not done", false},
		{"while its connector is reconciled", missing, "resolve", "settled by hand, see wire 7", models.ReconOpen,
			"Not done: a reconciliation of this connector is running (sim-acquirer", true},
		{"resolve the missing capture", missing, "resolve", "settled by hand, see wire 7", models.ReconResolved, "resolved", false},
	}
	// The queue's filters ride with the form and come back in the redirect;
	// only the filter's own keys are kept.
	filters := map[int]string{2: "connector=sim-acquirer&from=2026-11-20&to=2026-11-20&status=all&done=forged&evil=1"}
	wantBack := map[int]url.Values{2: {"connector": {"sim-acquirer"}, "from": {"2026-11-20"}, "to": {"2026-11-20"}, "status": {"all"}}}
	for i, a := range acts {
		t.Run(a.name, func(t *testing.T) {
			if a.busy {
				unlock, err := models.LockReconConnector(t.Context(), c.db, "sim-acquirer")
				if err != nil {
					t.Fatal(err)
				}
				defer unlock()
				svc := c.s.Recon.(*reconcile.Service)
				svc.ActWait = 200 * time.Millisecond
				defer func() { svc.ActWait = 0 }()
			}
			form := url.Values{"csrf": {csrf}, "form_id": {fmt.Sprintf("recon-act-%02d-0123456789abcdef", i)}, "action": {a.action}, "note": {a.note}}
			if f, ok := filters[i]; ok {
				form.Set("filters", f)
			}
			code, _, h := do(t, fin, "POST", fmt.Sprintf("%s/console/recon/exceptions/%d/act", c.srv.URL, a.id), form)
			if code != 303 {
				t.Fatalf("POST = %d", code)
			}
			if loc, _ := url.Parse(h.Get("Location")); !strings.Contains(loc.Query().Get("done"), a.wantPage) {
				t.Errorf("outcome %q, want %q", loc.Query().Get("done"), a.wantPage)
			}
			if loc, _ := url.Parse(h.Get("Location")); loc != nil {
				back := loc.Query()
				// The page shows the outcome it was sent to show, and no
				// other text put in its place.
				_, page, _ := do(t, fin, "GET", c.srv.URL+loc.String(), nil)
				if !strings.Contains(page, `<p class="notice" role="status">`+html.EscapeString(back.Get("done"))+`</p>`) {
					t.Errorf("the queue does not show the outcome %q", back.Get("done"))
				}
				forged := cloneValues(loc.Query())
				forged.Set("done", "Exception 1: resolved by the CFO")
				if _, page, _ := do(t, fin, "GET", c.srv.URL+loc.Path+"?"+forged.Encode(), nil); strings.Contains(page, "by the CFO") {
					t.Error("the queue shows a notice a link made up")
				}
				back.Del("done")
				back.Del("done_mac")
				want := url.Values{"lang": {"en"}}
				for k, v := range wantBack[i] {
					want[k] = v
				}
				if loc.Path != "/console/recon/exceptions" || back.Encode() != want.Encode() {
					t.Errorf("back to %s?%s, want /console/recon/exceptions?%s", loc.Path, back.Encode(), want.Encode())
				}
			}
			it, err := models.ReconItemByID(t.Context(), c.db, a.id)
			if err != nil || it.Status != a.wantStatus {
				t.Errorf("item %d = %s, %v; want %s", a.id, it.Status, err, a.wantStatus)
			}
		})
	}
	audit, err := models.ReconActions(t.Context(), c.db, duplicate)
	if err != nil || len(audit) != 2 || audit[0].Action != models.ReconClaimed || audit[0].Actor != "finance@example.com" ||
		audit[1].Note != "the acquirer took it back on the 22nd" {
		t.Errorf("audit of the duplicate = %+v, %v", audit, err)
	}

	ops := c.browser(t)
	opsCSRF := c.signIn(t, ops, "ops@example.com")
	if code, body, _ := do(t, ops, "GET", c.srv.URL+"/console/recon/exceptions?status=all", nil); code != 200 || strings.Contains(body, "/act?") {
		t.Errorf("ops reads the queue: %d, with action forms: %t", code, strings.Contains(body, "/act?"))
	}
	form := url.Values{"csrf": {opsCSRF}, "form_id": {"recon-ops-0123456789abcdef"}, "action": {"resolve"}, "note": {"x"}}
	if code, _, _ := do(t, ops, "POST", fmt.Sprintf("%s/console/recon/exceptions/%d/act", c.srv.URL, missing), form); code != 403 {
		t.Errorf("ops acts: %d, want 403", code)
	}

	shopA, shopB := c.browser(t), c.browser(t)
	c.signIn(t, shopA, "shop-a@example.com")
	c.signIn(t, shopB, "shop-b@example.com")
	if code, _, _ := do(t, shopA, "GET", c.srv.URL+"/console/recon", nil); code != 403 {
		t.Errorf("a merchant opens the reconciliation: %d, want 403", code)
	}
	statement := "/console/statement.csv?merchant_id=A&account_id=A1&" + window
	if _, body, _ := do(t, shopA, "GET", c.srv.URL+statement, nil); !strings.Contains(body, "2026-11-20,sim-acquirer,capture,USD,1,50.00,1.75,48.25") {
		t.Errorf("merchant A's statement = %q", body)
	}
	// Merchant B asking for A's account gets its own, which has nothing.
	if _, body, _ := do(t, shopB, "GET", c.srv.URL+statement, nil); strings.Contains(body, "sim-acquirer") {
		t.Errorf("merchant B reads A's statement: %q", body)
	}
}

// TestExportLinksKeepTheFilters: each list's export link carries the
// page's filters as they are (a link that encoded its "=" and "&" exported
// without them).
func TestExportLinksKeepTheFilters(t *testing.T) {
	c := newTestConsole(t)
	seedRecon(t, c)
	fin, ops := c.browser(t), c.browser(t)
	c.signIn(t, fin, "finance@example.com")
	c.signIn(t, ops, "ops@example.com")
	tests := []struct {
		name string
		hc   *http.Client
		page string
		link string // as the page's HTML writes it
	}{
		{"the reconciliation's totals", fin, "/console/recon?from=2026-11-20&to=2026-11-20&connector=sim-acquirer",
			`href="/console/recon.csv?connector=sim-acquirer&amp;from=2026-11-20&amp;mode=live&amp;to=2026-11-20"`},
		{"the reconciliation's exceptions", fin, "/console/recon?from=2026-11-20&to=2026-11-20&lang=en",
			`href="/console/recon/exceptions?from=2026-11-20&amp;mode=live&amp;to=2026-11-20&amp;lang=en"`},
		{"the exceptions' queue", fin, "/console/recon/exceptions?status=all&lang=en",
			`href="/console/recon/exceptions.csv?mode=live&amp;status=all"`},
		{"the statement", fin, "/console/statement?merchant_id=A&account_id=A1&from=2026-11-20&to=2026-11-20",
			`href="/console/statement.csv?account_id=A1&amp;from=2026-11-20&amp;merchant_id=A&amp;to=2026-11-20"`},
		{"the orders", ops, "/console/orders?last4=4242&lang=en", `href="/console/orders.csv?lang=en&amp;last4=4242"`},
		{"the orders from their second page: every order, not those after it", ops, "/console/orders?last4=4242&lang=en&after=1763600000000000000_2000000000000000009",
			`href="/console/orders.csv?lang=en&amp;last4=4242"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, page, _ := do(t, tc.hc, "GET", c.srv.URL+tc.page, nil)
			if code != http.StatusOK || !strings.Contains(page, tc.link) {
				t.Errorf("%d; the page lacks %s:\n%s", code, tc.link, page)
			}
		})
	}
}

// TestExceptionFilterTakesTheBoundsGiven: the queue's filter keeps only the
// bounds finance gave (a connector alone is every day of it), and a window
// given by its end alone is the week up to it, on every reconciliation page.
func TestExceptionFilterTakesTheBoundsGiven(t *testing.T) {
	s := &Server{Now: func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) }}
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		name     string
		query    string
		want     models.ReconExceptionFilter
		wantErr  string
		from, to time.Time // reconWindow's, when it has no error
	}{
		{name: "nothing: every day, open", query: "", want: models.ReconExceptionFilter{Status: "open", Limit: 10000},
			from: day(11, 22), to: day(11, 29)},
		{name: "a connector alone, as the form sends it", query: "connector=stripe&from=&to=&status=open",
			want: models.ReconExceptionFilter{Connector: "stripe", Status: "open", Limit: 10000}, from: day(11, 22), to: day(11, 29)},
		{name: "from alone", query: "from=2026-06-01&status=all",
			want: models.ReconExceptionFilter{From: day(6, 1), Status: "all", Limit: 10000}, from: day(6, 1), to: day(11, 29)},
		{name: "to alone: its week for the window", query: "to=2026-05-31",
			want: models.ReconExceptionFilter{To: day(6, 1), Status: "open", Limit: 10000}, from: day(5, 25), to: day(6, 1)},
		{name: "both", query: "from=2026-11-20&to=2026-11-20&connector=sim-acquirer&status=claimed",
			want: models.ReconExceptionFilter{Connector: "sim-acquirer", From: day(11, 20), To: day(11, 21), Status: "claimed", Limit: 10000},
			from: day(11, 20), to: day(11, 21)},
		{name: "backwards", query: "from=2026-11-20&to=2026-11-19", wantErr: "the window must run forward, 400 days at most"},
		{name: "not a day", query: "to=28/11/2026", wantErr: "to must be YYYY-MM-DD"},
		{name: "unknown status", query: "status=lost", wantErr: "unknown status"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			f, err := s.exceptionFilter(q)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || f != tc.want {
				t.Fatalf("filter %+v, %v; want %+v", f, err, tc.want)
			}
			if _, from, to, err := s.reconWindow(q); err != nil || !from.Equal(tc.from) || !to.Equal(tc.to) {
				t.Errorf("window %s..%s, %v; want %s..%s", from, to, err, tc.from, tc.to)
			}
		})
	}
}

// TestExceptionsQueueHasPages: a queue longer than a page says so with a
// link to the next, which keeps the filters; the export starts at the first.
func TestExceptionsQueueHasPages(t *testing.T) {
	c := newTestConsole(t)
	_, missing, duplicate := seedRecon(t, c)
	defer func(n int) { ExceptionsPageSize = n }(ExceptionsPageSize)
	ExceptionsPageSize = 1
	fin := c.browser(t)
	c.signIn(t, fin, "finance@example.com")
	row := regexp.MustCompile(`<tr><td>(\d+)</td>`)
	next := regexp.MustCompile(`<a id="next" href="([^"]*)">`)
	tests := []struct {
		name     string
		page     string
		wantIDs  []int64
		wantNext string
	}{
		{"the first page", "/console/recon/exceptions?connector=sim-acquirer&status=open&lang=en", []int64{missing},
			fmt.Sprintf("/console/recon/exceptions?after=%d&amp;connector=sim-acquirer&amp;lang=en&amp;mode=live&amp;status=open", missing)},
		{"the next", fmt.Sprintf("/console/recon/exceptions?after=%d&connector=sim-acquirer&lang=en&status=open", missing), []int64{duplicate}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, page, _ := do(t, fin, "GET", c.srv.URL+tc.page, nil)
			if code != http.StatusOK {
				t.Fatalf("GET = %d", code)
			}
			var ids []int64
			for _, m := range row.FindAllStringSubmatch(page, -1) {
				id, _ := strconv.ParseInt(m[1], 10, 64)
				ids = append(ids, id)
			}
			if fmt.Sprint(ids) != fmt.Sprint(tc.wantIDs) {
				t.Errorf("exceptions %v, want %v", ids, tc.wantIDs)
			}
			got := ""
			if m := next.FindStringSubmatch(page); m != nil {
				got = m[1]
			}
			if got != tc.wantNext {
				t.Errorf("next %q, want %q", got, tc.wantNext)
			}
			if want := `href="/console/recon/exceptions.csv?connector=sim-acquirer&amp;mode=live&amp;status=open"`; !strings.Contains(page, want) {
				t.Errorf("the export link is not %s", want)
			}
		})
	}
	if code, _, _ := do(t, fin, "GET", c.srv.URL+"/console/recon/exceptions?after=x", nil); code != http.StatusBadRequest {
		t.Errorf("a cursor that is not an id: %d, want 400", code)
	}
}

// TestReconciliationKeepsTestAndLiveApart: an item takes its account's mode
// when the run is saved (a line of no account here is live), and the
// totals, the queue, their exports and an action's way back show one
// mode's items at a time, live unasked; the switch keeps the window.
func TestReconciliationKeepsTestAndLiveApart(t *testing.T) {
	c := newTestConsole(t)
	c.s.Recon = &reconcile.Service{DB: c.db, Ledger: ledger.New(c.db), Now: time.Now}
	seedAccounts(t, c, map[string]string{"A1": "live", "A2": "test"})
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	items := []models.ReconItem{
		{ItemKey: "owed/capture/1", Source: models.ReconSourceOwed, OrderKey: "1", Type: "capture", Gross: 2500, Currency: "USD",
			Class: "missing_at_acquirer", MerchantID: "A", AccountID: "A1", Status: models.ReconOpen},
		{ItemKey: "owed/capture/2", Source: models.ReconSourceOwed, OrderKey: "2", Type: "capture", Gross: 700, Currency: "USD",
			Class: "missing_at_acquirer", MerchantID: "A", AccountID: "A2", Status: models.ReconOpen},
		{ItemKey: "line/9", Source: models.ReconSourceLine, LineNo: 9, OrderKey: "9", Type: "capture", Gross: 900, Fee: 30, Net: 870,
			Currency: "USD", Class: "missing_here", Status: models.ReconOpen},
	}
	for i := range items {
		items[i].Connector, items[i].Day = "sim-acquirer", day
	}
	run := &models.ReconRun{Connector: "sim-acquirer", Day: day, Lines: 1, Owed: 2, Exceptions: 3, RanAt: time.Now()}
	if err := models.SaveReconRun(t.Context(), c.db, run, items); err != nil {
		t.Fatal(err)
	}
	var saved []models.ReconItem
	if err := c.db.Order("id").Find(&saved).Error; err != nil {
		t.Fatal(err)
	}
	modes := map[string]string{}
	for _, it := range saved[len(saved)-3:] {
		modes[it.ItemKey] = it.Mode
	}
	if want := map[string]string{"owed/capture/1": "live", "owed/capture/2": "test", "line/9": "live"}; fmt.Sprint(modes) != fmt.Sprint(want) {
		t.Fatalf("modes %v, want %v", modes, want)
	}
	testItem := saved[len(saved)-2].ID
	// The next day settled only a test account's order.
	next := day.AddDate(0, 0, 1)
	onlyTest := []models.ReconItem{{Connector: "sim-acquirer", Day: next, ItemKey: "owed/capture/3", Source: models.ReconSourceOwed,
		OrderKey: "3", Type: "capture", Gross: 300, Currency: "USD", Class: "missing_at_acquirer", MerchantID: "A", AccountID: "A2",
		Status: models.ReconOpen}}
	if err := models.SaveReconRun(t.Context(), c.db, &models.ReconRun{Connector: "sim-acquirer", Day: next, Owed: 1, Exceptions: 1,
		RanAt: time.Now()}, onlyTest); err != nil {
		t.Fatal(err)
	}

	fin := c.browser(t)
	csrf := c.signIn(t, fin, "finance@example.com")
	window := "from=2026-11-20&to=2026-11-20&lang=en"
	pages := []struct {
		name, path    string
		shown, hidden []string
	}{
		{"the live totals unasked, a switch keeping the window", "/console/recon?" + window,
			[]string{"<td>USD</td><td>1</td><td>25.00</td>", "<td>USD</td><td>1</td><td>9.00</td>",
				`<a href="/console/recon?from=2026-11-20&amp;lang=en&amp;mode=test&amp;to=2026-11-20">Test accounts</a>`,
				`<input type="hidden" name="mode" value="live">`,
				`href="/console/statement?from=2026-11-20&amp;to=2026-11-20&amp;lang=en"`},
			[]string{"<td>7.00</td>"}},
		{"the test totals", "/console/recon?mode=test&" + window,
			[]string{"<td>USD</td><td>1</td><td>7.00</td>", `<a href="/console/recon?from=2026-11-20&amp;lang=en&amp;mode=live&amp;to=2026-11-20">Live accounts</a>`},
			[]string{"<td>25.00</td>", "<td>9.00</td>"}},
		{"the live totals as CSV", "/console/recon.csv?from=2026-11-20&to=2026-11-20",
			[]string{",missing_at_acquirer,USD,1,25.00,", ",missing_here,USD,1,9.00,"}, []string{"7.00"}},
		{"the test totals as CSV", "/console/recon.csv?from=2026-11-20&to=2026-11-20&mode=test",
			[]string{",missing_at_acquirer,USD,1,7.00,"}, []string{"25.00", "9.00"}},
		{"the live queue unasked", "/console/recon/exceptions?lang=en",
			[]string{"25.00 USD", "9.00 USD", `href="/console/recon/exceptions.csv?mode=live"`}, []string{"7.00 USD"}},
		{"the test queue, its filters kept by the switch", "/console/recon/exceptions?mode=test&status=open&connector=sim-acquirer&lang=en",
			[]string{"7.00 USD", `<a href="/console/recon/exceptions?connector=sim-acquirer&amp;lang=en&amp;mode=live&amp;status=open">Live accounts</a>`},
			[]string{"25.00 USD", "9.00 USD"}},
		{"the test queue as CSV", "/console/recon/exceptions.csv?mode=test", []string{",USD,7.00,", ",USD,3.00,"}, []string{"missing_here", "25.00"}},
		{"a day of test items only: those unasked, no switch", "/console/recon?from=2026-11-21&to=2026-11-21&lang=en",
			[]string{"<td>USD</td><td>1</td><td>3.00</td>", `<input type="hidden" name="mode" value="test">`}, []string{`id="modes"`}},
		{"its queue likewise", "/console/recon/exceptions?from=2026-11-21&lang=en", []string{"3.00 USD"}, []string{`id="modes"`, "25.00 USD"}},
	}
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			code, body, _ := do(t, fin, "GET", c.srv.URL+p.path, nil)
			if code != http.StatusOK {
				t.Fatalf("GET %s = %d", p.path, code)
			}
			for _, s := range p.shown {
				if !strings.Contains(body, s) {
					t.Errorf("GET %s lacks %s", p.path, s)
				}
			}
			for _, s := range p.hidden {
				if strings.Contains(body, s) {
					t.Errorf("GET %s shows %s", p.path, s)
				}
			}
		})
	}

	form := url.Values{"csrf": {csrf}, "form_id": {"recon-mode-0123456789abcdef"}, "action": {"resolve"}, "note": {"a test order"},
		"filters": {"mode=test&status=open"}}
	code, _, h := do(t, fin, "POST", fmt.Sprintf("%s/console/recon/exceptions/%d/act", c.srv.URL, testItem), form)
	loc, _ := url.Parse(h.Get("Location"))
	if code != http.StatusSeeOther || loc == nil || loc.Query().Get("mode") != "test" || loc.Query().Get("status") != "open" {
		t.Errorf("act: %d, back to %v; want the test queue of open ones", code, loc)
	}
}

// brokenExceptions is the reconciliation whose exceptions' read fails after
// its first page.
type brokenExceptions struct{ *reconcile.Service }

func (b brokenExceptions) EachException(ctx context.Context, f models.ReconExceptionFilter, fn func([]models.ReconItem) error) error {
	first := true
	return b.Service.EachException(ctx, f, func(page []models.ReconItem) error {
		if !first {
			return errors.New("the database went away")
		}
		first = false
		return fn(page)
	})
}

// TestExceptionsExportGoesPageByPage: the exceptions' CSV is written a page
// at a time (the queue was read whole into memory first), with its header
// once; a read that fails part way cuts the download, which must not end as
// if it were whole; one that fails before anything is written is an error
// page.
func TestExceptionsExportGoesPageByPage(t *testing.T) {
	c := newTestConsole(t)
	seedRecon(t, c)
	page := models.ReconExceptionPage
	models.ReconExceptionPage = 1
	t.Cleanup(func() { models.ReconExceptionPage = page })
	fin := c.browser(t)
	c.signIn(t, fin, "finance@example.com")
	get := func() (int, string, error) {
		t.Helper()
		resp, err := fin.Get(c.srv.URL + "/console/recon/exceptions.csv?status=all")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}

	code, body, err := get()
	if code != 200 || err != nil || strings.Count(body, "id,day,connector") != 1 ||
		!strings.Contains(body, ",missing_at_acquirer,open,") || !strings.Contains(body, ",duplicate,open,") {
		t.Fatalf("export in pages of one = %d, %v:\n%s", code, err, body)
	}

	c.s.Recon = brokenExceptions{c.s.Recon.(*reconcile.Service)}
	code, body, err = get()
	if code != 200 || !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(body, ",missing_at_acquirer,open,") ||
		strings.Contains(body, ",duplicate,open,") {
		t.Errorf("export cut after its first page = %d, %v:\n%s\nwant the first page and a broken download", code, err, body)
	}

	models.ReconExceptionPage = 10
	c.s.Recon = failingFirst{c.s.Recon.(brokenExceptions).Service}
	if code, body, _ := get(); code == 200 || strings.Contains(body, "id,day,connector") {
		t.Errorf("export failing at once = %d:\n%s\nwant an error page", code, body)
	}
}

// failingFirst is the reconciliation whose exceptions cannot be read at all.
type failingFirst struct{ *reconcile.Service }

func (failingFirst) EachException(context.Context, models.ReconExceptionFilter, func([]models.ReconItem) error) error {
	return errors.New("the database is away")
}

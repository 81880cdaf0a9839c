package console

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

// homeNow is the clock of the home tests: the window is 2026-11-07 to
// 2026-11-20, days in UTC.
var homeNow = time.Date(2026, 11, 20, 15, 0, 0, 0, time.UTC)

// seedHome records two weeks of a merchant's business, finance's money
// and ops' troubles, each figure chosen so the charts' numbers are known.
func seedHome(t *testing.T, c *testConsole) {
	t.Helper()
	c.s.Now = func() time.Time { return homeNow }
	day := func(d, h int) time.Time { return time.Date(2026, 11, d, h, 0, 0, 0, time.UTC) }
	n := 0
	order := func(merchant string, at time.Time, cur string, amount int64, st status.Payment, code, msg, brand, method, connector string) {
		n++
		o := models.Order{TransactionID: fmt.Sprintf("2000000000000%06d", n), WorkflowID: fmt.Sprintf("order/%s/H%d", merchant, n),
			MerchantID: merchant, AccountID: merchant + "1", OrderNo: fmt.Sprintf("HOME-%d", n), Currency: cur, Amount: amount,
			PaymentStatus: st, ResultCode: code, ResultMessage: msg, CardBrand: brand, Connector: connector, CreatedAt: at}
		o.Details.PaymentMethod = method
		o.Details.ShopperEmail = fmt.Sprintf("shopper%d@example.com", n)
		if err := c.db.Create(&o).Error; err != nil {
			t.Fatal(err)
		}
	}
	// Merchant A: the 19th, three visa payments paid and one declined; the
	// 20th, a mastercard authorised, two declined, a PIX paid in EUR; the
	// 18th, one still pending. Merchant B: one paid, in none of A's figures.
	order("A", day(19, 9), "USD", 1000, status.Paid, "0000", "Success", "visa", "", "sim-acquirer")
	order("A", day(19, 10), "USD", 2000, status.Paid, "0000", "Success", "visa", "", "sim-acquirer")
	order("A", day(19, 11), "USD", 3000, status.PartiallyRefunded, "0000", "Success", "visa", "", "sim-acquirer")
	order("A", day(19, 12), "USD", 900, status.Failed, "A0001", "Declined", "visa", "", "sim-acquirer")
	order("A", day(20, 9), "USD", 500, status.Authorised, "0000", "Success", "mastercard", "", "sim-acquirer")
	order("A", day(20, 10), "USD", 800, status.Failed, "A0002", "Insufficient funds", "mastercard", "", "sim-acquirer")
	order("A", day(20, 11), "USD", 700, status.Failed, "A0001", "Declined", "visa", "", "sim-acquirer")
	order("A", day(20, 12), "EUR", 700, status.Paid, "0000", "Success", "", "pix", "sim-apm")
	order("A", day(18, 12), "USD", 400, status.Pending, "0002", "Waiting for the shopper", "visa", "", "")
	order("B", day(19, 13), "USD", 99900, status.Paid, "0000", "Success", "visa", "", "sim-bank")
	// Ops' last 24 hours: a connector error and an order pending for an hour.
	order("B", homeNow.Add(-2*time.Hour), "USD", 100, status.Failed, "C0001", "Acquirer error", "visa", "", "sim-bank")
	order("B", homeNow.Add(-time.Hour), "USD", 100, status.Pending, "0002", "Waiting for the shopper", "visa", "", "")
	for _, r := range []models.Refund{
		{RefundReferenceID: "2000000000000000003-01", TransactionID: "2000000000000000003", MerchantID: "A", AccountID: "A1",
			OrderNo: "HOME-3", Currency: "USD", Amount: 400, Status: refund.Succeeded, ResultCode: "0000", CreatedAt: day(20, 13)},
		{RefundReferenceID: "2000000000000000003-02", TransactionID: "2000000000000000003", MerchantID: "A", AccountID: "A1",
			OrderNo: "HOME-3", Currency: "USD", Amount: 100, Status: refund.Failed, ResultCode: "A0001", CreatedAt: day(20, 14)},
	} {
		if err := c.db.Create(&r).Error; err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []models.LedgerAccount{
		{MerchantID: "A", AccountID: "A1", Currency: "USD", Kind: models.LedgerDeposit, Balance: 100000},
		{MerchantID: "B", AccountID: "B1", Currency: "USD", Kind: models.LedgerDeposit, Balance: 25000},
		{MerchantID: "A", AccountID: "A1", Currency: "USD", Kind: models.LedgerReserved, Balance: 5000},
		{MerchantID: "A", AccountID: "A1", Currency: "USD", Kind: models.LedgerPending, Balance: 2000},
		{MerchantID: "A", AccountID: "A1", Currency: "EUR", Kind: models.LedgerDeposit, Balance: 1000},
	} {
		if err := c.db.Create(&a).Error; err != nil {
			t.Fatal(err)
		}
	}
	for i, p := range []struct {
		status string
		amount int64
		at     time.Time
	}{{"COMPLETED", 10000, day(19, 9)}, {"COMPLETED", 5000, day(20, 9)}, {"FAILED", 2500, day(20, 10)}, {"NEW", 1000, homeNow.Add(-2 * time.Hour)}} {
		row := models.Payout{ID: fmt.Sprintf("payout/A/h%d", i), MerchantID: "A", AccountID: "A1", RequestID: fmt.Sprintf("req-%d", i),
			TransactionID: fmt.Sprintf("3000000000000%06d", i), ShortReferenceID: fmt.Sprintf("20261120-H%05d", i), Status: p.status,
			PaymentCurrency: "USD", PaymentAmount: p.amount, SourceCurrency: "USD", CreatedAt: p.at, UpdatedAt: p.at}
		if err := c.db.Create(&row).Error; err != nil {
			t.Fatal(err)
		}
	}
	for i, line := range []struct {
		d   int
		net int64
	}{{19, 5800}, {19, 1900}, {20, 3000}} {
		item := models.ReconItem{Connector: "sim-acquirer", Day: day(line.d, 0), ItemKey: fmt.Sprintf("line-%d", i), Source: "line",
			Type: "capture", Net: line.net, Gross: line.net, Currency: "USD", Class: "matched", Status: "none"}
		if err := c.db.Create(&item).Error; err != nil {
			t.Fatal(err)
		}
	}
	for i, age := range []time.Duration{30 * time.Minute, 3 * time.Hour, 4 * time.Hour, 50 * time.Hour} {
		row := models.Notification{NotifyID: fmt.Sprintf("n-home-%d", i), TransactionID: "2000000000000000001", MerchantID: "A",
			AccountID: "A1", OrderNo: "HOME-1", Seq: i + 1, NotifyType: "payment", URL: "https://shop.example/notify",
			Fields: map[string]string{}, Status: models.NotifyPending, CreatedAt: homeNow.Add(-age)}
		if err := c.db.Create(&row).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := c.db.Create(&models.ConnectorHealth{Connector: "sim-bank", Worker: "w1", State: "open", ChangedAt: homeNow.Add(-time.Hour)}).Error; err != nil {
		t.Fatal(err)
	}
}

// figuresOf reads a chart's table of figures: label → its texts.
func figuresOf(t *testing.T, page, chart string) map[string]string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<table id="` + chart + `-figures"><caption>.*?</caption><tbody>(.*?)</tbody>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no figures of %s", chart)
	}
	out := map[string]string{}
	for _, row := range regexp.MustCompile(`<tr><th scope="row">(.*?)</th>(.*?)</tr>`).FindAllStringSubmatch(m[1], -1) {
		cells := regexp.MustCompile(`<td>(.*?)</td>`).FindAllStringSubmatch(row[2], -1)
		var texts []string
		for _, c := range cells {
			texts = append(texts, c[1])
		}
		out[row[1]] = strings.Join(texts, " | ")
	}
	return out
}

// TestHomeOfEachRole: each role's home draws its charts from the record,
// with the figures the seeded business gives.
func TestHomeOfEachRole(t *testing.T) {
	c := newTestConsole(t)
	seedHome(t, c)
	tests := []struct {
		email  string
		charts map[string]map[string]string // chart id → label → figures (a subset)
		facts  []string
		absent []string
	}{
		{"shop-a@example.com", map[string]map[string]string{
			"chart-volume":   {"11-19": "60.00", "11-20": "5.00", "11-18": "0.00", "11-07": "0.00"},
			"chart-approval": {"11-19": "75%", "11-20": "50%", "11-18": "–"},
			"chart-declines": {"A0001 Declined": "2", "A0002 Insufficient funds": "1"},
			"chart-methods":  {"card visa": "6", "card mastercard": "2", "PIX": "1"},
			"chart-refunds":  {"11-20": "4.00", "11-19": "0.00"},
		}, []string{"Approved in the last 14 days: 7.00 EUR · 65.00 USD.", "Approval rate over the last 14 days: 62.5%."},
			[]string{"999.00", "sim-bank"}},
		{"finance@example.com", map[string]map[string]string{
			"chart-balances-usd": {"Available": "1250.00 USD", "Reserved": "50.00 USD", "Pending settlement": "20.00 USD"},
			"chart-balances-eur": {"Available": "10.00 EUR"},
			"chart-payouts":      {"COMPLETED": "2 (150.00 USD)", "FAILED": "1 (25.00 USD)", "NEW": "1 (10.00 USD)"},
			"chart-settled":      {"11-19": "77.00", "11-20": "30.00", "11-18": "0.00"},
		}, nil, nil},
		{"ops@example.com", map[string]map[string]string{
			"chart-stuck":   {"Orders pending too long": "2", "Payouts not final": "1", "Notifications waiting": "4"},
			"chart-backlog": {"under 1 h": "1", "1 to 6 h": "2", "6 to 24 h": "0", "over a day": "1"},
			"chart-connectors": {"sim-bank (open)": "0 approved | 0 declined | 1 errors",
				"sim-acquirer": "1 approved | 2 declined | 0 errors", "sim-apm": "1 approved | 0 declined | 0 errors"},
		}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.email, func(t *testing.T) {
			hc := c.browser(t)
			c.signIn(t, hc, tc.email)
			code, page, _ := do(t, hc, "GET", c.srv.URL+"/console/?lang=en", nil)
			if code != http.StatusOK {
				t.Fatalf("home: %d", code)
			}
			for chart, want := range tc.charts {
				if !strings.Contains(page, `<svg xmlns="http://www.w3.org/2000/svg" id="`+chart+`" class="chart" role="img"`) {
					t.Errorf("no %s drawn", chart)
				}
				got := figuresOf(t, page, chart)
				for label, fig := range want {
					if got[label] != fig {
						t.Errorf("%s %q: %q, want %q (all: %v)", chart, label, got[label], fig, got)
					}
				}
			}
			for _, f := range tc.facts {
				if !strings.Contains(page, f) {
					t.Errorf("the page does not say %q", f)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(page, a) {
					t.Errorf("the page shows %q, another merchant's", a)
				}
			}
			if strings.Contains(page, "<script") {
				t.Error("the home page has a script")
			}
		})
	}
}

// TestHeaderSearch: the header's box finds an order by transaction id,
// order number or shopper email, within what the role may see.
func TestHeaderSearch(t *testing.T) {
	c := newTestConsole(t)
	seedHome(t, c)
	tests := []struct {
		name, email, q string
		code           int
		location       string // where a redirect goes, "" for a page
		says           string
	}{
		{"transaction id", "shop-a@example.com", "2000000000000000002", http.StatusSeeOther, "/console/orders/2000000000000000002?lang=en", ""},
		{"order number", "shop-a@example.com", "HOME-5", http.StatusSeeOther, "/console/orders/2000000000000000005?lang=en", ""},
		{"shopper email, any case", "shop-a@example.com", " Shopper3@Example.com ", http.StatusSeeOther, "/console/orders/2000000000000000003?lang=en", ""},
		{"another merchant's order", "shop-a@example.com", "HOME-10", http.StatusOK, "", "No order matches &#34;HOME-10&#34;."},
		{"ops find any merchant's", "ops@example.com", "HOME-10", http.StatusSeeOther, "/console/orders/2000000000000000010?lang=en", ""},
		{"nothing typed", "shop-a@example.com", "", http.StatusSeeOther, "/console/orders?lang=en", ""},
		{"finance has no orders", "finance@example.com", "HOME-1", http.StatusForbidden, "", ""},
	}
	browsers := map[string]*http.Client{} // one sign-in per person: sign-ins are rate-limited
	as := func(email string) *http.Client {
		if browsers[email] == nil {
			browsers[email] = c.browser(t)
			c.signIn(t, browsers[email], email)
		}
		return browsers[email]
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, page, h := do(t, as(tc.email), "GET", c.srv.URL+"/console/search?lang=en&q="+url.QueryEscape(tc.q), nil)
			if code != tc.code || h.Get("Location") != tc.location {
				t.Fatalf("search %q: %d to %q, want %d to %q", tc.q, code, h.Get("Location"), tc.code, tc.location)
			}
			if tc.says != "" && !strings.Contains(page, tc.says) {
				t.Errorf("the page does not say %s", tc.says)
			}
		})
	}
	// An order number of 19 digits, or with an @, is found by the second
	// guess.
	for _, o := range []models.Order{
		{TransactionID: "2000000000000000901", WorkflowID: "order/A/A1/digits", OrderNo: "1234567890123456789"},
		{TransactionID: "2000000000000000902", WorkflowID: "order/A/A1/at", OrderNo: "gift@home"},
	} {
		o.MerchantID, o.AccountID, o.Currency, o.Amount, o.PaymentStatus = "A", "A1", "USD", 100, status.Paid
		if err := c.db.Create(&o).Error; err != nil {
			t.Fatal(err)
		}
		code, _, h := do(t, as("shop-a@example.com"), "GET", c.srv.URL+"/console/search?lang=en&q="+url.QueryEscape(o.OrderNo), nil)
		if want := "/console/orders/" + o.TransactionID + "?lang=en"; code != http.StatusSeeOther || h.Get("Location") != want {
			t.Errorf("search %s: %d to %s, want %s", o.OrderNo, code, h.Get("Location"), want)
		}
	}
	// Several matches: the list of them.
	for _, o := range []string{"2000000000000000001", "2000000000000000002"} {
		if err := c.db.Exec(`UPDATE orders SET shopper_email_hash = (SELECT shopper_email_hash FROM orders WHERE transaction_id = '2000000000000000001') WHERE transaction_id = ?`, o).Error; err != nil {
			t.Fatal(err)
		}
	}
	hash, err := (models.ConsoleRecords{DB: c.db}).ShopperEmailHash("shopper1@example.com")
	if err != nil {
		t.Fatal(err)
	}
	code, _, h := do(t, as("shop-a@example.com"), "GET", c.srv.URL+"/console/search?lang=en&q=shopper1@example.com", nil)
	if code != http.StatusSeeOther || h.Get("Location") != "/console/orders?lang=en&shopper="+hash {
		t.Errorf("two matches: %d to %s, want the list by the email's hash", code, h.Get("Location"))
	}
}

// TestScopeFailsClosed: a merchant user without a merchant is scoped to
// no merchant, never to all of them.
func TestScopeFailsClosed(t *testing.T) {
	tests := []struct {
		name string
		user models.ConsoleUser
		want string
	}{
		{"merchant", models.ConsoleUser{Role: models.RoleMerchant, MerchantID: "A"}, "A"},
		{"merchant without a merchant", models.ConsoleUser{Role: models.RoleMerchant}, noMerchant},
		{"ops", models.ConsoleUser{Role: models.RoleOps}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := scope(tc.user); got != tc.want {
				t.Errorf("scope %q, want %q", got, tc.want)
			}
		})
	}
}

// seedAccounts records the home tests' accounts with their modes, and a
// test account A2 of merchant A with play money in every figure: its
// payments, a decline, a refund, a balance, a settlement line and a payout.
func seedAccounts(t *testing.T, c *testConsole, modes map[string]string) {
	t.Helper()
	for id, mode := range modes {
		a := models.Account{ID: id, MerchantID: id[:1], Name: id, SignKeyID: "k", SignKeySealed: []byte("sealed"), Mode: mode,
			AllowedQueryIPs: []string{}, Currencies: []string{"USD"}, AmountLimits: map[string]int64{}}
		if err := c.db.Create(&a).Error; err != nil {
			t.Fatal(err)
		}
	}
	day := func(d, h int) time.Time { return time.Date(2026, 11, d, h, 0, 0, 0, time.UTC) }
	for i, o := range []models.Order{
		{Amount: 77700, PaymentStatus: status.Paid, ResultCode: "0000", CreatedAt: day(19, 14)},
		{Amount: 100, PaymentStatus: status.Failed, ResultCode: "A0009", ResultMessage: "Test decline", CreatedAt: day(20, 14)},
	} {
		o.TransactionID, o.WorkflowID = fmt.Sprintf("2000000000000900%03d", i), fmt.Sprintf("order/A/A2/T%d", i)
		o.MerchantID, o.AccountID, o.OrderNo, o.Currency, o.CardBrand = "A", "A2", fmt.Sprintf("TEST-%d", i), "USD", "amex"
		if err := c.db.Create(&o).Error; err != nil {
			t.Fatal(err)
		}
	}
	rows := []any{
		&models.Refund{RefundReferenceID: "2000000000000900000-01", TransactionID: "2000000000000900000", MerchantID: "A", AccountID: "A2",
			OrderNo: "TEST-0", Currency: "USD", Amount: 1000, Status: refund.Succeeded, ResultCode: "0000", CreatedAt: day(20, 15)},
		&models.LedgerAccount{MerchantID: "A", AccountID: "A2", Currency: "USD", Kind: models.LedgerDeposit, Balance: 500000},
		&models.ReconItem{Connector: "sim-acquirer", Day: day(19, 0), ItemKey: "line-test", Source: "line", Type: "capture",
			Net: 4400, Gross: 4400, Currency: "USD", Class: "matched", Status: "none", MerchantID: "A", AccountID: "A2", Mode: "test"},
		&models.Payout{ID: "payout/A/test", MerchantID: "A", AccountID: "A2", RequestID: "req-test", TransactionID: "3000000000000900000",
			ShortReferenceID: "20261120-T00000", Status: "COMPLETED", PaymentCurrency: "USD", PaymentAmount: 3300, SourceCurrency: "USD",
			Mode: "test", CreatedAt: day(20, 9), UpdatedAt: day(20, 9)},
	}
	for _, row := range rows {
		if err := c.db.Create(row).Error; err != nil {
			t.Fatal(err)
		}
	}
}

// TestHomeKeepsTestAndLiveApart: a merchant's and finance's home show the
// figures of one mode's accounts, live unless asked or unless there are
// only test accounts; a test account's play money never swells a live
// figure, and the page says whose figures it shows.
func TestHomeKeepsTestAndLiveApart(t *testing.T) {
	c := newTestConsole(t)
	seedHome(t, c)
	seedAccounts(t, c, map[string]string{"A1": "live", "A2": "test", "B1": "live"})
	live := "The figures of live accounts: test accounts&#39; payments and balances are not in them."
	test := "The figures of test accounts: play money, never settled or paid out."
	tests := []struct {
		name, email, query string
		charts             map[string]map[string]string
		says, absent       []string
		links              string // the mode switch's links, "" for none
		language           string // the language link, when the case checks it
	}{
		{name: "a merchant's live figures by default", email: "shop-a@example.com", charts: map[string]map[string]string{
			"chart-volume": {"11-19": "60.00"}, "chart-refunds": {"11-20": "4.00"},
			"chart-declines": {"A0001 Declined": "2"}, "chart-methods": {"card visa": "6"}},
			says:   []string{live, "Approved in the last 14 days: 7.00 EUR · 65.00 USD."},
			absent: []string{"777.00", "A0009", "card amex", test},
			links:  `<strong aria-current="page">Live accounts</strong> <a href="/console/?lang=en&amp;mode=test">Test accounts</a>`},
		{name: "a merchant's test figures when asked", email: "shop-a@example.com", query: "&mode=test", charts: map[string]map[string]string{
			"chart-volume": {"11-19": "777.00", "11-20": "0.00"}, "chart-refunds": {"11-20": "10.00"},
			"chart-declines": {"A0009 Test decline": "1"}, "chart-methods": {"card amex": "2"}, "chart-approval": {"11-19": "100%", "11-20": "0%"}},
			says:     []string{test, "Approved in the last 14 days: 777.00 USD.", "Approval rate over the last 14 days: 50.0%."},
			absent:   []string{"60.00", "card visa", "PIX", live},
			links:    `<a href="/console/?lang=en&amp;mode=live">Live accounts</a> <strong aria-current="page">Test accounts</strong>`,
			language: `<a href="/console/?lang=es&amp;mode=test">Español</a>`},
		{name: "an unknown mode is the default", email: "shop-a@example.com", query: "&mode=both", charts: map[string]map[string]string{
			"chart-volume": {"11-19": "60.00"}}, says: []string{live}, absent: []string{"777.00"},
			links: `<strong aria-current="page">Live accounts</strong>`},
		{name: "a merchant with live accounts only has no switch", email: "shop-b@example.com", charts: map[string]map[string]string{
			"chart-volume": {"11-19": "999.00"}}, says: []string{live}},
		{name: "finance's live figures by default", email: "finance@example.com", charts: map[string]map[string]string{
			"chart-balances-usd": {"Available": "1250.00 USD"},
			"chart-payouts":      {"COMPLETED": "2 (150.00 USD)"},
			"chart-settled":      {"11-19": "77.00"}},
			says: []string{live}, absent: []string{"6250.00", "33.00", "121.00"},
			links: `<strong aria-current="page">Live accounts</strong> <a href="/console/?lang=en&amp;mode=test">Test accounts</a>`},
		{name: "finance's test figures when asked", email: "finance@example.com", query: "&mode=test", charts: map[string]map[string]string{
			"chart-balances-usd": {"Available": "5000.00 USD", "Reserved": "0.00 USD"},
			"chart-payouts":      {"COMPLETED": "1 (33.00 USD)"},
			"chart-settled":      {"11-19": "44.00", "11-20": "0.00"}},
			says: []string{test}, absent: []string{"1250.00", "chart-balances-eur", "FAILED"},
			links: `<a href="/console/?lang=en&amp;mode=live">Live accounts</a> <strong aria-current="page">Test accounts</strong>`},
	}
	browsers := map[string]*http.Client{} // one sign-in per person: sign-ins are rate-limited
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if browsers[tc.email] == nil {
				browsers[tc.email] = c.browser(t)
				c.signIn(t, browsers[tc.email], tc.email)
			}
			code, page, _ := do(t, browsers[tc.email], "GET", c.srv.URL+"/console/?lang=en"+tc.query, nil)
			if code != http.StatusOK {
				t.Fatalf("home: %d", code)
			}
			for chart, want := range tc.charts {
				got := figuresOf(t, page, chart)
				for label, fig := range want {
					if got[label] != fig {
						t.Errorf("%s %q: %q, want %q (all: %v)", chart, label, got[label], fig, got)
					}
				}
			}
			for _, s := range tc.says {
				if !strings.Contains(page, s) {
					t.Errorf("the page does not say %q", s)
				}
			}
			for _, s := range tc.absent {
				if strings.Contains(page, s) {
					t.Errorf("the page shows %q", s)
				}
			}
			nav := regexp.MustCompile(`<nav class="modes" id="modes"[^>]*>(.*?) </nav>`).FindStringSubmatch(page)
			switch {
			case tc.links == "" && nav != nil:
				t.Errorf("a mode switch where there is one mode: %s", nav[0])
			case tc.links != "" && (nav == nil || !strings.Contains(nav[1], tc.links)):
				t.Errorf("mode switch %v, want it to hold %s", nav, tc.links)
			}
			if tc.language != "" && !strings.Contains(page, tc.language) {
				t.Errorf("the language link is not %s", tc.language)
			}
		})
	}
}

// TestHomeOfTestAccountsOnly: a merchant whose accounts are all test ones
// (the demo merchant) sees their figures unasked, without a switch.
func TestHomeOfTestAccountsOnly(t *testing.T) {
	c := newTestConsole(t)
	seedHome(t, c)
	seedAccounts(t, c, map[string]string{"A1": "test", "A2": "test", "B1": "live"})
	hc := c.browser(t)
	c.signIn(t, hc, "shop-a@example.com")
	code, page, _ := do(t, hc, "GET", c.srv.URL+"/console/?lang=en", nil)
	if code != http.StatusOK {
		t.Fatalf("home: %d", code)
	}
	if got := figuresOf(t, page, "chart-volume")["11-19"]; got != "837.00" {
		t.Errorf("volume of the 19th %q, want 837.00 (A1's 60.00 and A2's 777.00, both test accounts)", got)
	}
	if !strings.Contains(page, "The figures of test accounts") || strings.Contains(page, `id="modes"`) {
		t.Error("the page should say it shows test accounts' figures, with no switch")
	}
}

// TestBalancesKeepTestAndLiveApart: finance's balances list one mode's
// accounts at a time, live unasked, with the switch and the entries' links
// keeping the mode, and what each merchant owes beside its money.
func TestBalancesKeepTestAndLiveApart(t *testing.T) {
	c := newTestConsole(t)
	seedHome(t, c)
	seedAccounts(t, c, map[string]string{"A1": "live", "A2": "test", "B1": "live"})
	// B owes 40.00: a refund or a dispute its deposit could not cover
	// while a payout of B's held the money, given back since.
	if err := c.db.Create(&models.LedgerAccount{MerchantID: "B", AccountID: "B1", Currency: "USD", Kind: models.LedgerDebt, Balance: -4000}).Error; err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`<tr><td>([^<]*)</td><td><a href="([^"]*)">([^<]*)</a></td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td></tr>`)
	tests := []struct {
		name, query string
		rows        []string // merchant account currency pending available reserved owed
		link        string   // the first row's link to its entries
		switchTo    string   // the switch's link to the other mode
	}{
		{name: "live unasked", rows: []string{"A A1 EUR 0.00 10.00 0.00 0.00", "A A1 USD 20.00 1000.00 50.00 0.00", "B B1 USD 0.00 250.00 0.00 40.00"},
			link: "/console/balances?account_id=A1&amp;lang=en&amp;mode=live", switchTo: `<a href="/console/balances?lang=en&amp;mode=test">Test accounts</a>`},
		{name: "test when asked", query: "&mode=test", rows: []string{"A A2 USD 0.00 5000.00 0.00 0.00"},
			link: "/console/balances?account_id=A2&amp;lang=en&amp;mode=test", switchTo: `<a href="/console/balances?lang=en&amp;mode=live">Live accounts</a>`},
		{name: "an account's entries: the switch leaves the account, which is of one mode", query: "&mode=test&account_id=A2",
			rows: []string{"A A2 USD 0.00 5000.00 0.00 0.00"}, link: "/console/balances?account_id=A2&amp;lang=en&amp;mode=test",
			switchTo: `<a href="/console/balances?lang=en&amp;mode=live">Live accounts</a>`},
		{name: "an unknown mode is live", query: "&mode=all", rows: []string{"A A1 EUR 0.00 10.00 0.00 0.00", "A A1 USD 20.00 1000.00 50.00 0.00", "B B1 USD 0.00 250.00 0.00 40.00"},
			link: "/console/balances?account_id=A1&amp;lang=en&amp;mode=live", switchTo: `<a href="/console/balances?lang=en&amp;mode=test">Test accounts</a>`},
	}
	hc := c.browser(t)
	c.signIn(t, hc, "finance@example.com")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, page, _ := do(t, hc, "GET", c.srv.URL+"/console/balances?lang=en"+tc.query, nil)
			if code != http.StatusOK {
				t.Fatalf("balances: %d", code)
			}
			var got []string
			links := []string{}
			for _, m := range row.FindAllStringSubmatch(page, -1) {
				got = append(got, strings.Join([]string{m[1], m[3], m[4], m[5], m[6], m[7], m[8]}, " "))
				links = append(links, m[2])
			}
			if strings.Join(got, "\n") != strings.Join(tc.rows, "\n") {
				t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.rows, "\n"))
			}
			if len(links) == 0 || links[0] != tc.link {
				t.Errorf("entries links %v, want the first %s", links, tc.link)
			}
			if !strings.Contains(page, tc.switchTo) {
				t.Errorf("no switch link %s", tc.switchTo)
			}
		})
	}
}

// TestPayoutsKeepTestAndLiveApart: finance's payouts list one mode's
// payouts, live unasked, so a failed test payout is not among the live ones
// to re-run; the filter form and the switch keep the mode.
func TestPayoutsKeepTestAndLiveApart(t *testing.T) {
	c := newTestConsole(t)
	seedHome(t, c)
	seedAccounts(t, c, map[string]string{"A1": "live", "A2": "test", "B1": "live"})
	tests := []struct {
		name, query     string
		shown, hidden   []string
		modeInput, link string
	}{
		{name: "live unasked", shown: []string{"req-0", "req-1", "req-2", "req-3", "10.00 USD"}, hidden: []string{"req-test", "33.00 USD"},
			modeInput: `<input type="hidden" name="mode" value="live">`, link: `<a href="/console/payouts?lang=en&amp;mode=test">Test accounts</a>`},
		{name: "test when asked", query: "&mode=test", shown: []string{"req-test", "33.00 USD"}, hidden: []string{"req-0", "req-2"},
			modeInput: `<input type="hidden" name="mode" value="test">`, link: `<a href="/console/payouts?lang=en&amp;mode=live">Live accounts</a>`},
		{name: "failed live ones by status, the switch keeping the filter", query: "&mode=live&status=FAILED", shown: []string{"req-2", `id="pick-req-2"`,
			`<input type="hidden" name="filters" value="lang=en&amp;mode=live&amp;status=FAILED">`}, hidden: []string{"req-0", "req-test"},
			modeInput: `<input type="hidden" name="mode" value="live">`, link: `<a href="/console/payouts?lang=en&amp;mode=test&amp;status=FAILED">Test accounts</a>`},
		{name: "a second page: the switch starts the other mode's from its first", query: "&mode=test&before=2026-11-20T00:00:00Z",
			shown: []string{`<input type="hidden" name="mode" value="test">`}, hidden: []string{"req-0"},
			modeInput: `<input type="hidden" name="mode" value="test">`, link: `<a href="/console/payouts?lang=en&amp;mode=live">Live accounts</a>`},
	}
	hc := c.browser(t)
	c.signIn(t, hc, "finance@example.com")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, page, _ := do(t, hc, "GET", c.srv.URL+"/console/payouts?lang=en"+tc.query, nil)
			if code != http.StatusOK {
				t.Fatalf("payouts: %d", code)
			}
			for _, s := range append(tc.shown, tc.modeInput, tc.link) {
				if !strings.Contains(page, s) {
					t.Errorf("the page lacks %s", s)
				}
			}
			for _, s := range tc.hidden {
				if strings.Contains(page, ">"+s+"<") || strings.Contains(page, s+"\"") {
					t.Errorf("the page shows %s", s)
				}
			}
		})
	}
}

// TestPreviewLeadsBackToTheFilteredPayouts: the re-run preview, and its
// refusal of an empty selection, lead back to the payouts as finance had
// filtered them (the filter's own keys only, without the list's cursor).
func TestPreviewLeadsBackToTheFilteredPayouts(t *testing.T) {
	c := newTestConsole(t)
	hc := c.browser(t)
	csrf := c.signIn(t, hc, "finance@example.com")
	tests := []struct {
		name, filters string
		ids           []string
		code          int
		back          string
	}{
		{"a selection, filtered failed live ones", "lang=en&mode=live&status=FAILED&failure_type=rail&before=2026-11-20T00:00:00Z&evil=1",
			[]string{"p1"}, http.StatusOK, `href="/console/payouts?failure_type=rail&amp;lang=en&amp;mode=live&amp;status=FAILED"`},
		{"nothing selected, test ones of a merchant", "mode=test&merchant_id=A", nil, http.StatusBadRequest,
			`href="/console/payouts?lang=en&amp;merchant_id=A&amp;mode=test"`},
		{"no filters", "", []string{"p1"}, http.StatusOK, `href="/console/payouts?lang=en"`},
		{"filters that do not parse", "%zz", []string{"p1"}, http.StatusOK, `href="/console/payouts?lang=en"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			form := url.Values{"csrf": {csrf}, "filters": {tc.filters}, "id": tc.ids}
			code, page, _ := do(t, hc, "POST", c.srv.URL+"/console/payouts/preview?lang=en", form)
			if code != tc.code || !strings.Contains(page, tc.back) {
				t.Errorf("%d, want %d; the page lacks %s:\n%s", code, tc.code, tc.back, page)
			}
		})
	}
}

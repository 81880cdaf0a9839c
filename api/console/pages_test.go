package console

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/routing"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

func TestCSVExportHoldsOnlyTheMerchantsOrders(t *testing.T) {
	c := newTestConsole(t)
	// An order number a spreadsheet would read as a formula.
	c.db.Model(&models.Order{}).Where("transaction_id = ?", "1000000000000000001").Update("order_no", "=HYPERLINK(\"x\")")
	hc := c.browser(t)
	c.signIn(t, hc, "shop-a@example.com")
	code, body, h := do(t, hc, "GET", c.srv.URL+"/console/orders.csv", nil)
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/csv") {
		t.Fatalf("export: %d %s", code, h.Get("Content-Type"))
	}
	lines := strings.Split(strings.TrimSpace(body), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want the header and merchant A's one order:\n%s", len(lines), body)
	}
	if !strings.Contains(lines[1], `'=HYPERLINK`) || strings.Contains(body, "1000000000000000002") {
		t.Errorf("row %q: want the formula defused and no other merchant's order", lines[1])
	}
}

func TestOrderListFilters(t *testing.T) {
	c := newTestConsole(t)
	hc := c.browser(t)
	c.signIn(t, hc, "ops@example.com")
	tests := []struct {
		name     string
		query    string
		want     int // 200 or 400
		has, not string
	}{
		{"everything for ops", "", 200, "ORDER-A", ""},
		{"by order number", "order_no=ORDER-B", 200, "ORDER-B", "ORDER-A"},
		{"by transaction id", "transaction_id=1000000000000000001", 200, "ORDER-A", "ORDER-B"},
		{"by status with none", "status=6000", 200, "Nothing to show", "ORDER-A"},
		{"by card last 4", "last4=4242", 200, "ORDER-A", ""},
		{"a shopper that is no hash", "shopper=ada@example.com", 400, "shopper", ""},
		{"last 4 not digits", "last4=42x2", 400, "last4", ""},
		{"a bad date", "from=yesterday", 400, "from", ""},
		{"a bad cursor", "after=zz", 400, "after", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, page, _ := do(t, hc, "GET", c.srv.URL+"/console/orders?"+tc.query, nil)
			if code != tc.want || !strings.Contains(page, tc.has) || (tc.not != "" && strings.Contains(page, tc.not)) {
				t.Errorf("%d, has %q: %v, lacks %q: %v", code, tc.has, strings.Contains(page, tc.has), tc.not, !strings.Contains(page, tc.not))
			}
		})
	}
}

// TestShopperEmailStaysOutOfAddresses: a search by a shopper's email, from
// the list's filter form or the header's box, is posted, and the list it
// leads to carries the email's keyed hash: no address (the browser's
// history, a proxy's log) holds the email, and the list is the same.
func TestShopperEmailStaysOutOfAddresses(t *testing.T) {
	c := newTestConsole(t)
	seedHome(t, c)
	hash, err := (models.ConsoleRecords{DB: c.db}).ShopperEmailHash("shopper3@example.com")
	if err != nil {
		t.Fatal(err)
	}
	hc := c.browser(t)
	csrf := c.signIn(t, hc, "ops@example.com")
	list := "/console/orders?lang=en&shopper=" + hash
	tests := []struct {
		name, method, target string
		form                 url.Values
		code                 int
		location             string
	}{
		{"the filter form, the email in any case", "POST", "/console/orders",
			url.Values{"csrf": {csrf}, "lang": {"en"}, "email": {" Shopper3@Example.com "}, "status": {""}}, http.StatusSeeOther, list},
		{"the filter form keeps the other filters", "POST", "/console/orders",
			url.Values{"csrf": {csrf}, "lang": {"en"}, "email": {"shopper3@example.com"}, "last4": {"4242"}}, http.StatusSeeOther,
			"/console/orders?lang=en&last4=4242&shopper=" + hash},
		{"the filter form again, the hash kept from the page", "POST", "/console/orders",
			url.Values{"csrf": {csrf}, "lang": {"en"}, "email": {""}, "shopper": {hash}}, http.StatusSeeOther, list},
		{"the filter form without its token", "POST", "/console/orders",
			url.Values{"lang": {"en"}, "email": {"shopper3@example.com"}}, http.StatusForbidden, ""},
		{"a link of before, with the email", "GET", "/console/orders?lang=en&email=shopper3%40example.com", nil, http.StatusSeeOther, list},
		{"the header's box", "POST", "/console/search?lang=en", url.Values{"csrf": {csrf}, "q": {"shopper3@example.com"}},
			http.StatusSeeOther, "/console/orders/2000000000000000003?lang=en"},
		{"the header's box without its token", "POST", "/console/search?lang=en", url.Values{"q": {"shopper3@example.com"}},
			http.StatusForbidden, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, h := do(t, hc, tc.method, c.srv.URL+tc.target, tc.form)
			if code != tc.code || h.Get("Location") != tc.location {
				t.Errorf("%d to %q, want %d to %q", code, h.Get("Location"), tc.code, tc.location)
			}
		})
	}
	// The list the hash leads to: that shopper's one order, and no email
	// in its links or its form.
	code, page, _ := do(t, hc, "GET", c.srv.URL+list, nil)
	if code != http.StatusOK || !strings.Contains(page, ">HOME-3<") || strings.Contains(page, ">HOME-4<") {
		t.Fatalf("the list by hash: %d, has HOME-3: %v, has HOME-4: %v", code, strings.Contains(page, ">HOME-3<"), strings.Contains(page, ">HOME-4<"))
	}
	if strings.Contains(page, "shopper3") || !strings.Contains(page, `href="/console/orders.csv?lang=en&amp;shopper=`+hash) ||
		!strings.Contains(page, `<form class="filters" method="post" action="/console/orders"`) ||
		!strings.Contains(page, `<form class="search" role="search" method="post" action="/console/search?lang=en">`) {
		t.Errorf("the list shows the email, or its forms do not post, or its export does not filter by the hash:\n%s", page)
	}
	// An email no order has: the page says so, and its links filter by the
	// hash, not by the email as an order number.
	nobody, err := (models.ConsoleRecords{DB: c.db}).ShopperEmailHash("nobody@example.com")
	if err != nil {
		t.Fatal(err)
	}
	code, page, _ = do(t, hc, "POST", c.srv.URL+"/console/search?lang=en", url.Values{"csrf": {csrf}, "q": {"nobody@example.com"}})
	if code != http.StatusOK || !strings.Contains(page, "No order matches &#34;nobody@example.com&#34;.") ||
		strings.Contains(page, "order_no=nobody") || !strings.Contains(page, "shopper="+nobody) {
		t.Errorf("a search for an unknown email: %d\n%s", code, page)
	}
	code, csv, _ := do(t, hc, "GET", c.srv.URL+"/console/orders.csv?shopper="+hash, nil)
	if code != http.StatusOK || strings.Count(strings.TrimSpace(csv), "\n") != 1 || !strings.Contains(csv, "HOME-3") {
		t.Errorf("the export by hash: %d\n%s", code, csv)
	}
}

func TestPagingWalksEveryOrderOnce(t *testing.T) {
	c := newTestConsole(t)
	base := time.Now().Add(-time.Hour)
	for i := range 120 {
		o := models.Order{TransactionID: "3" + strings.Repeat("0", 14) + string(rune('0'+i/100)) + string(rune('0'+i/10%10)) + string(rune('0'+i%10)) + "0",
			WorkflowID: "wf/p/" + string(rune('a'+i%26)) + time.Duration(i).String(), MerchantID: "A", AccountID: "A1",
			OrderNo: "PAGE-" + time.Duration(i).String(), Currency: "USD", Amount: 100, PaymentStatus: status.Paid,
			CreatedAt: base.Add(time.Duration(i%7) * time.Second)} // ties on created_at
		if err := c.db.Create(&o).Error; err != nil {
			t.Fatal(err)
		}
	}
	hc := c.browser(t)
	c.signIn(t, hc, "shop-a@example.com")
	seen := map[string]bool{}
	next := c.srv.URL + "/console/orders"
	for pages := 0; next != ""; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		_, page, _ := do(t, hc, "GET", next, nil)
		for _, m := range txIn.FindAllStringSubmatch(page, -1) {
			if seen[m[1]] {
				t.Errorf("%s on two pages", m[1])
			}
			seen[m[1]] = true
		}
		next = ""
		if m := nextIn.FindStringSubmatch(page); m != nil {
			next = c.srv.URL + strings.ReplaceAll(m[1], "&amp;", "&")
		}
	}
	if len(seen) != 121 { // the 120 and ORDER-A
		t.Errorf("%d orders seen across the pages, want 121", len(seen))
	}
}

func TestKeyRotationShowsTheNewKeyOnce(t *testing.T) {
	c := newTestConsole(t)
	if err := c.db.Create(&models.Merchant{ID: "A", Name: "Shop A"}).Error; err != nil {
		t.Fatal(err)
	}
	if err := c.db.Create(&models.Account{ID: "A1", MerchantID: "A", SignKeySealed: []byte{1},
		AllowedQueryIPs: []string{}, Currencies: []string{"USD"}, AmountLimits: map[string]int64{}}).Error; err != nil {
		t.Fatal(err)
	}
	hc := c.browser(t)
	csrf := c.signIn(t, hc, "shop-a@example.com")
	form := url.Values{"csrf": {csrf}, "form_id": {"rotate-0123456789abcdef"}, "account_id": {"A1"}}
	code, page, _ := do(t, hc, "POST", c.srv.URL+"/console/keys/rotate", form)
	if code != 200 || !strings.Contains(page, "new-key-0123456789abcdef") {
		t.Fatalf("rotation: %d, new key shown: %v", code, strings.Contains(page, "new-key-0123456789abcdef"))
	}
	// Sent again, the form does nothing and never shows the key again.
	_, page, _ = do(t, hc, "POST", c.srv.URL+"/console/keys/rotate", form)
	if strings.Contains(page, "new-key-0123456789abcdef") || !strings.Contains(page, "Already sent") {
		t.Error("a repeated rotation form showed the key again or rotated again")
	}
}

func TestOpsSeesWhatIsStuck(t *testing.T) {
	c := newTestConsole(t)
	old := time.Now().Add(-time.Hour)
	o := models.Order{TransactionID: "4000000000000000001", WorkflowID: "order/A/A1/STUCK", MerchantID: "A", AccountID: "A1",
		OrderNo: "STUCK-1", Currency: "USD", Amount: 100, PaymentStatus: status.Pending, CreatedAt: old, UpdatedAt: old}
	if err := c.db.Create(&o).Error; err != nil {
		t.Fatal(err)
	}
	hc := c.browser(t)
	c.signIn(t, hc, "ops@example.com")
	code, page, _ := do(t, hc, "GET", c.srv.URL+"/console/stuck", nil)
	if code != http.StatusOK || !strings.Contains(page, "STUCK-1") || !strings.Contains(page, "/namespaces/default/workflows/order%2FA%2FA1%2FSTUCK") {
		t.Errorf("stuck page: %d, shows the stuck order with its Temporal link: %v", code, strings.Contains(page, "STUCK-1"))
	}
	// A fresh pending order is not stuck yet.
	if strings.Contains(page, "ORDER-A") {
		t.Error("a paid order is listed as stuck")
	}
}

// TestReviewButtons: a held order shows approve and reject, which send the
// review update with the decision; another decision is refused unsent.
func TestReviewButtons(t *testing.T) {
	c := newTestConsole(t)
	c.db.Model(&models.Order{}).Where("transaction_id = ?", "1000000000000000001").Update("payment_status", status.HeldForReview)
	hc := c.browser(t)
	csrf := c.signIn(t, hc, "shop-a@example.com")
	_, page, _ := do(t, hc, "GET", c.srv.URL+"/console/orders/1000000000000000001", nil)
	if !strings.Contains(page, `id="approve"`) || !strings.Contains(page, `id="reject"`) || strings.Contains(page, `id="refund"`) {
		t.Fatal("a held order does not show exactly the review buttons")
	}
	tests := []struct {
		decision string
		sent     int
		approve  bool
	}{
		{"reject", 1, false},
		{"approve", 2, true},
		{"maybe", 2, false},
	}
	for i, tc := range tests {
		t.Run(tc.decision, func(t *testing.T) {
			form := url.Values{"csrf": {csrf}, "form_id": {"review-" + tc.decision + "-0123456789abcdef"}, "decision": {tc.decision}}
			do(t, hc, "POST", c.srv.URL+"/console/orders/1000000000000000001/review", form)
			if len(c.ops.reviews) != tc.sent {
				t.Fatalf("after %d forms %d reviews sent, want %d", i+1, len(c.ops.reviews), tc.sent)
			}
			if tc.sent == i+1 && c.ops.reviews[i].Approve != tc.approve {
				t.Errorf("review sent approve=%v, want %v", c.ops.reviews[i].Approve, tc.approve)
			}
		})
	}
}

// TestKeysPageShowsRouting: the merchant's accounts page says each
// account's connector and, for a routed one, its rules in words.
func TestKeysPageShowsRouting(t *testing.T) {
	c := newTestConsole(t)
	if err := c.db.Create(&models.Merchant{ID: "A", Name: "Shop A"}).Error; err != nil {
		t.Fatal(err)
	}
	rules := routing.Rules{
		Routes: []routing.Route{{Name: "euro cards", When: routing.Condition{Currencies: []string{"EUR"}, MinAmount: 100},
			Targets: []routing.Target{{Connector: "sim-bank", Weight: 3}, {Connector: "stripe", Weight: 1}}}},
		Fallback: []string{"sim-acquirer"}, RetrySoftDeclines: true,
	}
	for _, a := range []models.Account{
		{ID: "A1", MerchantID: "A", Connector: "sim-acquirer"},
		{ID: "A2", MerchantID: "A", Connector: "sim-acquirer", Routing: rules},
	} {
		a.SignKeySealed, a.AllowedQueryIPs, a.Currencies, a.AmountLimits = []byte{1}, []string{}, []string{"USD"}, map[string]int64{}
		if err := c.db.Create(&a).Error; err != nil {
			t.Fatal(err)
		}
	}
	hc := c.browser(t)
	c.signIn(t, hc, "shop-a@example.com")
	_, page, _ := do(t, hc, "GET", c.srv.URL+"/console/keys", nil)
	for _, want := range []string{
		`<p class="note" id="routing-A1">Connector: sim-acquirer</p>`,
		`<p class="note" id="routing-A2">Connector: sim-acquirer; routing:</p><ul><li>euro cards: currencies EUR; amount ≥ 100 → sim-bank 75%, stripe 25%</li><li>fallback → sim-acquirer</li><li>at most 3 attempts, soft declines tried elsewhere</li></ul>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

// TestOtherLanguageKeepsThePage: the language link leads to the same page
// with its filters, in the other language, and never off the console.
func TestOtherLanguageKeepsThePage(t *testing.T) {
	tests := []struct {
		name, method, target, acceptLanguage, want string
	}{
		{name: "english to spanish, filters kept", target: "/console/orders?status=PAID&lang=en&account_id=A1", want: "/console/orders?account_id=A1&lang=es&status=PAID"},
		{name: "spanish to english", target: "/console/?mode=test&lang=es", want: "/console/?lang=en&mode=test"},
		{name: "no lang, the browser's spanish", target: "/console/payouts", acceptLanguage: "es-ES,es;q=0.9", want: "/console/payouts?lang=en"},
		{name: "no lang, english by default", target: "/console/", want: "/console/?lang=es"},
		{name: "the shopper's hash kept", target: "/console/orders?shopper=ab12&lang=en", want: "/console/orders?lang=es&shopper=ab12"},
		{name: "a path off the console", target: "//evil.example/x?lang=en", want: "/console/?lang=es"},
		{name: "the console's bare root", target: "/console?lang=en", want: "/console?lang=es"},
		{name: "a refund's answer: the order", method: "POST", target: "/console/orders/2000000000000000001/refund?lang=en", want: "/console/orders/2000000000000000001?lang=es"},
		{name: "a review's answer: the order", method: "POST", target: "/console/orders/2000000000000000001/review?lang=es", want: "/console/orders/2000000000000000001?lang=en"},
		{name: "a key rotation's answer: the keys", method: "POST", target: "/console/keys/rotate?lang=en", want: "/console/keys?lang=es"},
		{name: "a re-run's preview: the payouts", method: "POST", target: "/console/payouts/preview?lang=en", want: "/console/payouts?lang=es"},
		{name: "an exception's act: the queue", method: "POST", target: "/console/recon/exceptions/5/act?lang=en", want: "/console/recon/exceptions?lang=es"},
		{name: "a resend's answer: the stuck page", method: "POST", target: "/console/notifications/resend?lang=en", want: "/console/stuck?lang=es"},
		{name: "a failed sign-in: the sign-in", method: "POST", target: "/console/login?lang=en", want: "/console/login?lang=es"},
		{name: "another post: the home", method: "POST", target: "/console/search?lang=en", want: "/console/?lang=es"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			r := httptest.NewRequest(method, "http://console.test"+tc.target, nil)
			if tc.acceptLanguage != "" {
				r.Header.Set("Accept-Language", tc.acceptLanguage)
			}
			if got := otherLangURL(r, langOf(r)); got != tc.want {
				t.Errorf("otherLangURL(%s) = %s, want %s", tc.target, got, tc.want)
			}
		})
	}
}

// TestConsoleAmountsKeepTheirExponent: the console writes an amount with
// its currency's digits, three for the payouts' and ledgers' three-digit
// currencies, as the API and the CSV exports do.
func TestConsoleAmountsKeepTheirExponent(t *testing.T) {
	moneyOf := funcs["money"].(func(int64, string) string)
	decimalOf := funcs["decimal"].(func(int64, string) string)
	tests := []struct {
		name        string
		minor       int64
		currency    string
		wantMoney   string
		wantDecimal string
	}{
		{name: "two digits", minor: 12345, currency: "USD", wantMoney: "123.45 USD", wantDecimal: "123.45"},
		{name: "no digits", minor: 1200, currency: "JPY", wantMoney: "1200 JPY", wantDecimal: "1200"},
		{name: "three digits, a payout in fils", minor: 12500, currency: "BHD", wantMoney: "12.500 BHD", wantDecimal: "12.500"},
		{name: "three digits, a deposit", minor: 1234, currency: "KWD", wantMoney: "1.234 KWD", wantDecimal: "1.234"},
		{name: "negative", minor: -5, currency: "OMR", wantMoney: "-0.005 OMR", wantDecimal: "-0.005"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := moneyOf(tc.minor, tc.currency); got != tc.wantMoney {
				t.Errorf("money = %q, want %q", got, tc.wantMoney)
			}
			if got := amountText(tc.minor, tc.currency); got != tc.wantMoney {
				t.Errorf("amountText = %q, want %q", got, tc.wantMoney)
			}
			if got := decimalOf(tc.minor, tc.currency); got != tc.wantDecimal {
				t.Errorf("decimal = %q, want %q", got, tc.wantDecimal)
			}
		})
	}
}

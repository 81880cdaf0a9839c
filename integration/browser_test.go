package integration

// End-to-end tests of the hosted payment page in a real browser: a headless
// Chromium goes from a merchant's shop through the forwarding page, the
// payment page and (for a challenge card) the acquirer's ACS page back to the
// shop, as a shopper would. Each step is kept as a screenshot under
// artifacts/screenshots, and a few of them are kept for the docs under
// docs/screenshots.

import (
	"context"
	"fmt"
	"html/template"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
)

// Limits of the browser tests.
const (
	browserCaseTimeout = 90 * time.Second // one case, from the shop back to the shop
	browserLandTimeout = 30 * time.Second // from the last click to the shop's return or cancel page
	browserWaitRecord  = 20 * time.Second // for the order's record and the shop's notification
)

// The amount and the basket that the test shop sells.
const (
	shopAmount   = "59.90"
	shopCurrency = "USD"
	shopItems    = "Tea#,#T-1#,#29.95#,#2"
)

// chromiumPath finds the browser: PAYGATE_CHROMIUM, else Debian's Chromium,
// else a chromium on PATH. It returns "" when there is none.
func chromiumPath() string {
	if p := strings.TrimSpace(os.Getenv("PAYGATE_CHROMIUM")); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if lp, err := exec.LookPath(p); err == nil {
			return lp
		}
		return ""
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if lp, err := exec.LookPath(name); err == nil {
			return lp
		}
	}
	return ""
}

// startBrowser starts one headless Chromium for the test and returns its
// context; each case opens its own tab in its own browser context from it.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	bin := chromiumPath()
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no Chromium found (set PAYGATE_CHROMIUM or install chromium): CI must run the browser tests")
		}
		t.Skip("no Chromium found (set PAYGATE_CHROMIUM or install chromium)")
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter"),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("use-mock-keychain", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 1000),
	)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	// The first Do starts the browser; its life is bound to browserCtx,
	// which has no deadline.
	if err := chromedp.Do(browserCtx); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	return browserCtx
}

// testShop is a merchant's web shop: a product page whose form sends the
// shopper to the hosted payment page, the return and cancel pages the
// gateway sends the shopper back to, and the notify_url.
type testShop struct {
	srv   *httptest.Server
	creds merchant.Credentials

	mu      sync.Mutex
	notices [][]byte // the bodies posted to /notify, in order
}

// shopOrder is how the shop asks for one order: the query of /shop/{order_no}.
type shopOrder struct {
	lang    string // default_lang
	threeDS bool   // open3d=do3DS
	// currency is the order's (shopCurrency when empty); country its
	// billing_country (none when empty).
	currency, country string
}

// orderCurrency is the currency the shop asks for.
func (o shopOrder) orderCurrency() string {
	if o.currency == "" {
		return shopCurrency
	}
	return o.currency
}

func newTestShop(t *testing.T, creds merchant.Credentials) *testShop {
	t.Helper()
	s := &testShop{creds: creds}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /shop/{order_no}", s.productPage)
	mux.HandleFunc("GET /return", s.resultPage)
	mux.HandleFunc("GET /cancel", s.resultPage)
	mux.HandleFunc("POST /notify", s.notify)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// pageURL is the product page of an order.
func (s *testShop) pageURL(orderNo string, o shopOrder) string {
	q := url.Values{}
	if o.lang != "" {
		q.Set("lang", o.lang)
	}
	if o.threeDS {
		q.Set("open3d", "do3DS")
	}
	if o.currency != "" {
		q.Set("currency", o.currency)
	}
	if o.country != "" {
		q.Set("country", o.country)
	}
	u := s.srv.URL + "/shop/" + url.PathEscape(orderNo)
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// checkoutFields are the signed hosted payment fields the shop's form posts.
func (s *testShop) checkoutFields(orderNo string, o shopOrder) url.Values {
	lang := o.lang
	if lang == "" {
		lang = "en"
	}
	v := url.Values{
		"merchant_id":   {s.creds.MerchantID},
		"account_id":    {s.creds.AccountID},
		"order_no":      {orderNo},
		"currency":      {o.orderCurrency()},
		"amount":        {shopAmount},
		"return_url":    {s.srv.URL + "/return"},
		"cancel_url":    {s.srv.URL + "/cancel"},
		"notify_url":    {s.srv.URL + "/notify"},
		"items":         {shopItems},
		"first_name":    {"Ada"},
		"last_name":     {"Lovelace"},
		"shopper_email": {"ada@example.com"},
		"default_lang":  {lang},
	}
	if o.threeDS {
		v.Set("open3d", "do3DS")
	}
	if o.country != "" {
		v.Set("billing_country", o.country)
	}
	v.Set("encryption_data", signing.Sign(s.creds.SignKey, v.Get("merchant_id"), v.Get("account_id"),
		orderNo, v.Get("currency"), v.Get("amount"), v.Get("return_url")))
	return v
}

type shopField struct{ Name, Value string }

var shopPages = template.Must(template.New("shop").Parse(`{{define "head"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.}} · Tea Shop</title>
<style>
body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%;margin:1rem 0}
th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #ddd}
td.num,th.num{text-align:right}
button{font-size:1.1rem;padding:.6rem 1.2rem;background:#1a5fb4;color:#fff;border:0;border-radius:4px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}
dt{font-weight:600}dd{margin:0;word-break:break-all;font-family:monospace}
</style>
</head>
<body>
<header><strong>Tea Shop</strong></header>
{{end}}
{{define "product"}}{{template "head" "Your basket"}}<h1>Your basket</h1>
<p>Order <span id="order-no">{{.OrderNo}}</span></p>
<table>
<thead><tr><th>Item</th><th class="num">Quantity</th><th class="num">Price</th></tr></thead>
<tbody><tr><td>Tea</td><td class="num">2</td><td class="num">29.95</td></tr></tbody>
<tfoot><tr><th>Total</th><th></th><th class="num">{{.Amount}} {{.Currency}}</th></tr></tfoot>
</table>
<form id="checkout-form" method="post" action="{{.Action}}">
{{range .Fields}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{end}}<button type="submit" id="checkout">Pay with Paygate</button>
</form>
</body>
</html>
{{end}}
{{define "result"}}{{template "head" .Title}}<h1 id="result-title">{{.Title}}</h1>
<p id="result-summary">{{.Summary}}</p>
<dl id="result-query">
{{range .Fields}}<dt>{{.Name}}</dt><dd id="q-{{.Name}}">{{.Value}}</dd>
{{end}}</dl>
</body>
</html>
{{end}}`))

func (s *testShop) productPage(w http.ResponseWriter, r *http.Request) {
	orderNo := r.PathValue("order_no")
	q := r.URL.Query()
	o := shopOrder{lang: q.Get("lang"), threeDS: q.Get("open3d") == "do3DS", currency: q.Get("currency"), country: q.Get("country")}
	fields := s.checkoutFields(orderNo, o)
	var data struct {
		OrderNo, Amount, Currency, Action string
		Fields                            []shopField
	}
	data.OrderNo, data.Amount, data.Currency = orderNo, shopAmount, o.orderCurrency()
	data.Action = env.api.URL + "/v1/checkout"
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		data.Fields = append(data.Fields, shopField{k, fields.Get(k)})
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := shopPages.ExecuteTemplate(w, "product", data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// resultPage prints what the gateway sent the shopper back with.
func (s *testShop) resultPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var data struct {
		Title, Summary string
		Fields         []shopField
	}
	switch {
	case r.URL.Path == "/cancel":
		data.Title, data.Summary = "Payment cancelled", "You cancelled the payment. Your basket is kept."
	case q.Get("order_status") == "1":
		data.Title, data.Summary = "Thank you", "Your payment was received."
	default:
		data.Title, data.Summary = "Payment not completed", "The payment did not go through: "+q.Get("result_info")
	}
	for _, k := range slices.Sorted(maps.Keys(q)) {
		data.Fields = append(data.Fields, shopField{k, q.Get(k)})
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := shopPages.ExecuteTemplate(w, "result", data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

func (s *testShop) notify(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.notices = append(s.notices, body)
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// waitNotice waits for a notification of the transaction and returns its body.
func (s *testShop) waitNotice(t *testing.T, transactionID string) ([]byte, url.Values) {
	t.Helper()
	deadline := time.Now().Add(browserWaitRecord)
	for {
		s.mu.Lock()
		for _, b := range s.notices {
			if v, err := url.ParseQuery(string(b)); err == nil && v.Get("transaction_id") == transactionID {
				s.mu.Unlock()
				return b, v
			}
		}
		n := len(s.notices)
		s.mu.Unlock()
		if time.Now().After(deadline) {
			s.explainMissingNotice(t, transactionID)
			t.Fatalf("the shop got no notification for %s in %s (%d notifications for other transactions)", transactionID, browserWaitRecord, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// explainMissingNotice logs what the gateway recorded of the transaction's
// notifications, to tell "never made" from "made but not delivered".
func (s *testShop) explainMissingNotice(t *testing.T, transactionID string) {
	t.Helper()
	rows, err := models.FindNotifications(context.Background(), env.gw.DB,
		models.NotificationSelection{AccountID: s.creds.AccountID}, 1000)
	if err != nil {
		t.Logf("notifications: %v", err)
		return
	}
	n := 0
	for _, r := range rows {
		if r.TransactionID == transactionID {
			n++
			t.Logf("recorded notification %s (%s): %s, %d attempts, last HTTP %d %s",
				r.NotifyID, r.NotifyType, r.Status, r.Attempts, r.LastStatusCode, r.LastError)
		}
	}
	if n == 0 {
		t.Logf("the gateway recorded no notification for %s", transactionID)
	}
}

// shot keeps full-page screenshots of one case.
type shot struct {
	t    *testing.T
	root string            // the repository's root
	name string            // the case, as a file name
	docs map[string]string // page -> file under docs/screenshots
}

func (s shot) take(ctx context.Context, page string) {
	s.t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		s.t.Errorf("screenshot of %s: %v", page, err)
		return
	}
	s.write(filepath.Join(s.root, "artifacts", "screenshots", s.name+"-"+page+".png"), png)
	// The docs keep one picture of each page; they change only when asked,
	// so a test run leaves the tree clean.
	if doc := s.docs[page]; doc != "" && os.Getenv("PAYGATE_UPDATE_SCREENSHOTS") == "1" {
		s.write(filepath.Join(s.root, "docs", "screenshots", doc), png)
	}
}

func (s shot) write(path string, png []byte) {
	s.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		s.t.Errorf("screenshot dir: %v", err)
		return
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		s.t.Errorf("write screenshot: %v", err)
	}
}

// evalJS evaluates an expression in the page.
func evalJS[T any](ctx context.Context, expr string) (T, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr))
}

// waitJS polls an expression until check accepts its value.
func waitJS[T any](ctx context.Context, expr string, within time.Duration, check func(T) bool) (T, error) {
	deadline := time.Now().Add(within)
	var last T
	var lastErr error
	for {
		v, err := evalJS[T](ctx, expr)
		if err == nil && check(v) {
			return v, nil
		}
		if err == nil {
			last = v
		}
		lastErr = err
		if time.Now().After(deadline) || ctx.Err() != nil {
			return last, fmt.Errorf("%s: last value %v, last error %v", expr, last, lastErr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitLocation polls the tab's location until it starts with prefix.
func waitLocation(ctx context.Context, prefix string) (string, error) {
	deadline := time.Now().Add(browserLandTimeout)
	last := ""
	for {
		loc, err := chromedp.Run(ctx, chromedp.Location())
		if err == nil {
			last = loc
			if strings.HasPrefix(loc, prefix) {
				return loc, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return last, fmt.Errorf("location is %q after %s, want %s…", last, browserLandTimeout, prefix)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitPaymentStatus waits until the order's record leaves pending (1000).
func waitPaymentStatus(t *testing.T, accountID, orderNo string) int {
	t.Helper()
	deadline := time.Now().Add(browserWaitRecord)
	for {
		o := findOrder(t, accountID, orderNo)
		if o.PaymentStatus != 1000 || time.Now().After(deadline) {
			return int(o.PaymentStatus)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// browserCase is one shopper's way through the hosted payment page.
type browserCase struct {
	name     string // also the screenshots' file prefix
	lang     string
	pan      string
	threeDS  string // the one-time code typed on the ACS page; "" for no challenge
	cancel   bool   // the shopper clicks cancel-button instead of pay-button
	landsOn  string // "/return" or "/cancel"
	status   string // order_status on landing
	result   string // result_info on landing, or its prefix when prefix is set
	prefix   bool
	payment  int               // the record's payment_status
	docs     map[string]string // screenshots kept for the docs
	spanish  bool              // assert the Spanish labels
	cardLast string            // the last four digits the ACS page shows
}

// TestBrowserHostedAPM follows the interface as issue 29 reads it: "the
// payment page offers the methods the account's connectors take for the
// order's currency and country, ranked as /v1/optimise ranks them, and
// completes PIX, OXXO and iDEAL there as the direct path does". A shopper
// paying BRL from Brazil sees the card and PIX (not OXXO or iDEAL), types
// the tax id the order lacks, pays at the provider and lands on the shop
// with the signed result; the record names PIX.
func TestBrowserHostedAPM(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	browserCtx := startBrowser(t)
	shop := newTestShop(t, apmAccount(t))
	sh := shot{t: t, root: root, name: "hosted-pix"}
	ctx := openTab(t, browserCtx, sh)
	orderNo := newOrderNo(t)
	openPaymentPage(t, ctx, shop, sh, orderNo, shopOrder{currency: "BRL", country: "BR"})

	methods, err := evalJS[[]string](ctx, `Array.from(document.querySelectorAll("#methods > li")).map(function (li) { return li.dataset.method; })`)
	if err != nil || !slices.Equal(methods, []string{"CARD", "PIX"}) {
		t.Fatalf("the page offers %q (%v), want CARD then PIX (no orders yet: by name)", methods, err)
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("document-PIX"), "12345678901"),
		chromedp.Click(chromedp.ID("pay-PIX")),
		chromedp.WaitVisible(chromedp.ID("apm-pay")),
	); err != nil {
		t.Fatalf("choose PIX: %v", err)
	}
	if loc, err := chromedp.Run(ctx, chromedp.Location()); err != nil || !strings.HasPrefix(loc, env.simHTTP.URL+"/apm/") {
		t.Errorf("the shopper is at %q (%v), want the provider's page", loc, err)
	}
	sh.take(ctx, "provider")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("apm-pay"))); err != nil {
		t.Fatalf("pay at the provider: %v", err)
	}
	if _, err := waitLocation(ctx, shop.srv.URL+"/return"); err != nil {
		t.Fatalf("the shopper did not come back to the shop: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("result-query"))); err != nil {
		t.Fatalf("the shop's return page: %v", err)
	}
	for id, want := range map[string]string{"q-order_status": "1", "q-result_info": "0000:Success", "q-currency": "BRL", "q-order_no": orderNo} {
		if got, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID(id))); err != nil || strings.TrimSpace(got) != want {
			t.Errorf("#%s = %q (%v), want %s", id, got, err, want)
		}
	}
	if st := waitPaymentStatus(t, shop.creds.AccountID, orderNo); st != 3000 {
		t.Errorf("payment_status %d, want 3000", st)
	}
	if o := findOrder(t, shop.creds.AccountID, orderNo); o.Details.PaymentMethod != "PIX" || o.CardToken != "" {
		t.Errorf("record: payment_method %q card %q, want PIX and no card", o.Details.PaymentMethod, o.CardToken)
	}
}

func TestBrowserHostedCheckout(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	browserCtx := startBrowser(t)
	shop := newTestShop(t, env.auto)

	cases := []browserCase{
		{name: "approved", pan: "4242424242424242", landsOn: "/return", status: "1", result: "0000:Success", payment: 3000,
			docs: map[string]string{"payment-filled": "payment-page.png", "return": "return-page.png"}},
		{name: "declined", pan: "4000000000000002", landsOn: "/return", status: "0", result: "A0001", prefix: true, payment: 6000},
		{name: "challenge-right-code", pan: "4000000000003220", threeDS: "123456", cardLast: "3220",
			landsOn: "/return", status: "1", result: "0000:Success", payment: 3000,
			docs: map[string]string{"acs": "acs-page.png"}},
		{name: "challenge-wrong-code", pan: "4000000000003220", threeDS: "000000", cardLast: "3220",
			landsOn: "/return", status: "0", result: "A0005", prefix: true, payment: 6000},
		{name: "shopper-cancels", pan: "4242424242424242", cancel: true, landsOn: "/cancel", status: "0", result: "A0007", prefix: true, payment: 6000},
		{name: "spanish-approved", lang: "es", spanish: true, pan: "4242424242424242", landsOn: "/return", status: "1", result: "0000:Success", payment: 3000,
			docs: map[string]string{"payment-filled": "payment-page-es.png"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runBrowserCase(t, browserCtx, shop, root, tc)
		})
	}
	t.Run("invalid-card-number-stays-on-page", func(t *testing.T) {
		runBrowserValidation(t, browserCtx, shop, root)
	})
}

// openTab opens a tab in a browser context of its own and returns it with a
// deadline of browserCaseTimeout. When the case failed, the tab's last page
// is kept as <case>-failure.png.
func openTab(t *testing.T, browserCtx context.Context, sh shot) context.Context {
	t.Helper()
	failurePNG := filepath.Join(sh.root, "artifacts", "screenshots", sh.name+"-failure.png")
	_ = os.Remove(failurePNG) // from an earlier run
	tabCtx, cancelTab := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext())
	// Open the tab with no deadline, so that its life is bound to tabCtx.
	if err := chromedp.Do(tabCtx); err != nil {
		cancelTab()
		t.Fatalf("open a tab: %v", err)
	}
	ctx, cancel := context.WithTimeout(tabCtx, browserCaseTimeout)
	t.Cleanup(func() {
		if t.Failed() {
			fctx, fcancel := context.WithTimeout(tabCtx, 10*time.Second)
			if png, err := chromedp.Run(fctx, chromedp.FullScreenshot(100)); err == nil {
				sh.write(failurePNG, png)
			}
			if loc, err := chromedp.Run(fctx, chromedp.Location()); err == nil {
				t.Logf("the tab was on %s", loc)
			}
			fcancel()
		}
		cancel()
		cancelTab()
	})
	return ctx
}

// openPaymentPage goes from the shop's page to the payment page and checks
// what it shows of the order.
func openPaymentPage(t *testing.T, ctx context.Context, shop *testShop, sh shot, orderNo string, o shopOrder) {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(shop.pageURL(orderNo, o)),
		chromedp.WaitVisible(chromedp.ID("checkout")),
	); err != nil {
		t.Fatalf("shop page: %v", err)
	}
	sh.take(ctx, "shop")
	// The forwarding page posts itself on to the payment page.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("checkout")),
		chromedp.WaitVisible(chromedp.ID("card-number")),
	); err != nil {
		t.Fatalf("from the shop to the payment page: %v", err)
	}
	amount, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("amount")))
	if err != nil || strings.TrimSpace(amount) != shopAmount {
		t.Errorf("#amount = %q (%v), want %s", amount, err, shopAmount)
	}
	currency, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("currency")))
	if err != nil || strings.TrimSpace(currency) != o.orderCurrency() {
		t.Errorf("#currency = %q (%v), want %s", currency, err, o.orderCurrency())
	}
	if orderText, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("order-no"))); err != nil || strings.TrimSpace(orderText) != orderNo {
		t.Errorf("#order-no = %q (%v), want %s", orderText, err, orderNo)
	}
	if loc, err := chromedp.Run(ctx, chromedp.Location()); err != nil || !strings.HasPrefix(loc, env.api.URL+"/") {
		t.Errorf("the payment page is at %q (%v), want the gateway's %s", loc, err, env.api.URL)
	}
	if st := findOrder(t, shop.creds.AccountID, orderNo).PaymentStatus; st != 1000 {
		t.Errorf("the order is %d while the payment page is open, want 1000", st)
	}
	sh.take(ctx, "payment")
}

// fillCard types the card as a shopper would; typing the first digits
// shows the brand.
func fillCard(t *testing.T, ctx context.Context, pan string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("card-number"), "4242")); err != nil {
		t.Fatalf("type 4242: %v", err)
	}
	brand, err := waitJS[string](ctx, `document.getElementById("card-brand").dataset.brand`, 5*time.Second,
		func(s string) bool { return s != "" })
	if err != nil || brand != "visa" {
		t.Errorf("after typing 4242, #card-brand data-brand = %q (%v), want visa", brand, err)
	}
	if label, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("card-brand"))); err != nil || strings.TrimSpace(label) != "Visa" {
		t.Errorf("after typing 4242, #card-brand shows %q (%v), want Visa", label, err)
	}
	// Clear the field through its value property: chromedp.Clear sets only
	// the attribute, which a typed-in field no longer shows, and SetValue
	// refuses an empty value.
	steps := []struct {
		what string
		do   chromedp.Action[chromedp.Void]
	}{
		{"clear the card number", chromedp.Evaluate[chromedp.Void](`document.getElementById("card-number").value = ""`)},
		{"type the holder", chromedp.SendKeys(chromedp.ID("card-holder"), "Ada Lovelace")},
		{"type the card number", chromedp.SendKeys(chromedp.ID("card-number"), pan)},
		{"select the expiry month", chromedp.SetValue(chromedp.ID("expiry-month"), "12")},
		{"select the expiry year", chromedp.SetValue(chromedp.ID("expiry-year"), "2031")},
		{"type the security code", chromedp.SendKeys(chromedp.ID("security-code"), "739")},
	}
	for _, st := range steps {
		if err := chromedp.Do(ctx, st.do); err != nil {
			t.Fatalf("%s: %v", st.what, err)
		}
	}
	got, err := evalJS[[]string](ctx, `["card-holder","card-number","expiry-month","expiry-year","security-code"].map(function (id) { return document.getElementById(id).value; })`)
	want := []string{"Ada Lovelace", pan, "12", "2031", "739"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("the form holds %q (%v), want %q", got, err, want)
	}
}

func runBrowserCase(t *testing.T, browserCtx context.Context, shop *testShop, root string, tc browserCase) {
	sh := shot{t: t, root: root, name: tc.name, docs: tc.docs}
	ctx := openTab(t, browserCtx, sh)
	orderNo := newOrderNo(t)
	o := shopOrder{lang: tc.lang, threeDS: tc.threeDS != ""}
	openPaymentPage(t, ctx, shop, sh, orderNo, o)

	if tc.spanish {
		checkSpanish(t, ctx)
	}
	fillCard(t, ctx, tc.pan)
	sh.take(ctx, "payment-filled")

	if tc.cancel {
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("cancel-button"))); err != nil {
			t.Fatalf("click cancel: %v", err)
		}
	} else {
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("pay-button"))); err != nil {
			t.Fatalf("click pay: %v", err)
		}
	}
	if tc.threeDS != "" {
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("otp"))); err != nil {
			t.Fatalf("the ACS page did not open: %v", err)
		}
		loc, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil || !strings.HasPrefix(loc, env.simHTTP.URL+"/acs/") {
			t.Errorf("the challenge is at %q (%v), want the simulator's ACS", loc, err)
		}
		if strings.Contains(loc, tc.pan) {
			t.Error("the card number is in the ACS page's URL")
		}
		if acsAmount, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("amount"))); err != nil || strings.TrimSpace(acsAmount) != shopAmount+" "+shopCurrency {
			t.Errorf("the ACS page shows the amount %q (%v), want %s %s", acsAmount, err, shopAmount, shopCurrency)
		}
		if last4, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("last4"))); err != nil || strings.TrimSpace(last4) != tc.cardLast {
			t.Errorf("the ACS page shows the card ending %q (%v), want %s", last4, err, tc.cardLast)
		}
		sh.take(ctx, "acs")
		if err := chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.ID("otp"), tc.threeDS),
			chromedp.Click(chromedp.ID("verify")),
		); err != nil {
			t.Fatalf("answer the challenge: %v", err)
		}
	}

	final, err := waitLocation(ctx, shop.srv.URL+tc.landsOn)
	if err != nil {
		t.Fatalf("the shopper did not come back to the shop: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("result-query"))); err != nil {
		t.Fatalf("the shop's %s page: %v", tc.landsOn, err)
	}
	sh.take(ctx, strings.TrimPrefix(tc.landsOn, "/"))
	checkLanding(t, ctx, shop, tc, orderNo, final)
}

// checkSpanish asserts that the payment page speaks Spanish (the es texts of
// api/checkout/messages.go).
func checkSpanish(t *testing.T, ctx context.Context) {
	t.Helper()
	checks := []struct{ id, want string }{
		{"pay-button", "Pagar"},
		{"cancel-button", "Cancelar el pago"},
		{"card-title", "Datos de la tarjeta"},
	}
	for _, c := range checks {
		got, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID(c.id)))
		if err != nil || !strings.HasPrefix(strings.TrimSpace(got), c.want) {
			t.Errorf("#%s says %q (%v), want the Spanish %q", c.id, got, err, c.want)
		}
	}
	label, err := evalJS[string](ctx, `document.querySelector('label[for="card-holder"]').textContent`)
	if err != nil || strings.TrimSpace(label) != "Nombre del titular" {
		t.Errorf("the card holder's label is %q (%v), want Nombre del titular", label, err)
	}
	if lang, err := evalJS[string](ctx, `document.documentElement.lang`); err != nil || lang != "es" {
		t.Errorf("<html lang> = %q (%v), want es", lang, err)
	}
}

// checkLanding checks what the shop was told: the signed result on the
// return URL, the order's record and the notification all agree.
func checkLanding(t *testing.T, ctx context.Context, shop *testShop, tc browserCase, orderNo, final string) {
	t.Helper()
	u, err := url.Parse(final)
	if err != nil {
		t.Fatalf("landing URL %q: %v", final, err)
	}
	if strings.Contains(final, tc.pan) || strings.Contains(u.RawQuery, url.QueryEscape(tc.pan)) {
		t.Errorf("the card number is in the URL the shopper lands on: %s", final)
	}
	if page, err := evalJS[string](ctx, `document.documentElement.outerHTML`); err == nil && strings.Contains(page, tc.pan) {
		t.Error("the card number is on the shop's page")
	}
	q := u.Query()
	key := shop.creds.SignKey
	want := signing.SignUpper(key, q.Get("merchant_id"), q.Get("account_id"), q.Get("transaction_id"),
		q.Get("order_no"), q.Get("currency"), q.Get("amount"), q.Get("order_status"), q.Get("result_info"))
	if q.Get("encryption_data") == "" || q.Get("encryption_data") != want {
		t.Errorf("encryption_data on %s = %q, want %q", tc.landsOn, q.Get("encryption_data"), want)
	}
	if q.Get("merchant_id") != shop.creds.MerchantID || q.Get("account_id") != shop.creds.AccountID ||
		q.Get("order_no") != orderNo || q.Get("amount") != shopAmount || q.Get("currency") != shopCurrency {
		t.Errorf("the result names another order: %v", q)
	}
	if q.Get("order_status") != tc.status {
		t.Errorf("order_status = %q (%s), want %s", q.Get("order_status"), q.Get("result_info"), tc.status)
	}
	ri := q.Get("result_info")
	if (tc.prefix && !strings.HasPrefix(ri, tc.result)) || (!tc.prefix && ri != tc.result) {
		t.Errorf("result_info = %q, want %s", ri, tc.result)
	}
	txID := q.Get("transaction_id")
	if txID == "" {
		t.Fatalf("no transaction_id on %s: %v", tc.landsOn, q)
	}

	o := findOrder(t, shop.creds.AccountID, orderNo)
	if o.TransactionID != txID {
		t.Errorf("the record's transaction_id is %s, the return URL's %s", o.TransactionID, txID)
	}
	if st := waitPaymentStatus(t, shop.creds.AccountID, orderNo); st != tc.payment {
		t.Errorf("the record's payment_status = %d, want %d for order_status %s", st, tc.payment, q.Get("order_status"))
	}

	body, n := shop.waitNotice(t, txID)
	if n.Get("order_status") != q.Get("order_status") || n.Get("result_info") != q.Get("result_info") {
		t.Errorf("the notification says %s %q, the return URL %s %q",
			n.Get("order_status"), n.Get("result_info"), q.Get("order_status"), q.Get("result_info"))
	}
	if n.Get("order_no") != orderNo || n.Get("amount") != shopAmount || n.Get("currency") != shopCurrency {
		t.Errorf("the notification names another order: %v", n)
	}
	if err := notify.VerifyBody(key, body); err != nil {
		t.Errorf("the notification's signature: %v\n%s", err, body)
	}
	if strings.Contains(string(body), tc.pan) {
		t.Error("the card number is in the notification")
	}
}

// runBrowserValidation types a number that fails the Luhn check: the page
// says so and does not send the form. The shopper then cancels, which
// closes the order.
func runBrowserValidation(t *testing.T, browserCtx context.Context, shop *testShop, root string) {
	const badPAN = "4242424242424241"
	sh := shot{t: t, root: root, name: "invalid-card-number"}
	ctx := openTab(t, browserCtx, sh)
	orderNo := newOrderNo(t)
	openPaymentPage(t, ctx, shop, sh, orderNo, shopOrder{})
	paymentURL, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	// Count the page loads: a form post would load a new document.
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.__paygateSamePage = true`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("card-holder"), "Ada Lovelace"),
		chromedp.SendKeys(chromedp.ID("card-number"), badPAN),
		chromedp.SetValue(chromedp.ID("expiry-month"), "12"),
		chromedp.SetValue(chromedp.ID("expiry-year"), "2031"),
		chromedp.SendKeys(chromedp.ID("security-code"), "739"),
		chromedp.Click(chromedp.ID("pay-button")),
	); err != nil {
		t.Fatalf("fill and pay: %v", err)
	}
	msg, err := waitJS[string](ctx, `(function () { var e = document.getElementById("form-error"); return e && !e.hidden ? e.textContent.trim() : ""; })()`,
		5*time.Second, func(s string) bool { return s != "" })
	if err != nil {
		t.Fatalf("#form-error stays empty: %v", err)
	}
	if !strings.Contains(msg, "The card number is not valid.") {
		t.Errorf("#form-error = %q, want the invalid number message", msg)
	}
	// Give a post that should not happen time to happen.
	time.Sleep(time.Second)
	still, err := evalJS[bool](ctx, `window.__paygateSamePage === true && !!document.getElementById("card-number")`)
	if err != nil || !still {
		t.Errorf("the page was left after an invalid card number (%v)", err)
	}
	if loc, err := chromedp.Run(ctx, chromedp.Location()); err != nil || loc != paymentURL {
		t.Errorf("location %q (%v), want to stay on %s", loc, err, paymentURL)
	}
	invalid, err := evalJS[string](ctx, `document.getElementById("card-number").getAttribute("aria-invalid") || ""`)
	if err != nil || invalid != "true" {
		t.Errorf("#card-number aria-invalid = %q (%v), want true", invalid, err)
	}
	if focused, err := evalJS[string](ctx, `document.activeElement ? document.activeElement.id : ""`); err != nil || focused != "card-number" {
		t.Errorf("focus is on %q (%v), want card-number", focused, err)
	}
	if disabled, err := evalJS[bool](ctx, `document.getElementById("pay-button").disabled`); err != nil || disabled {
		t.Errorf("the pay button is disabled (%v) after a refused submit", err)
	}
	sh.take(ctx, "payment-error")
	if st := findOrder(t, shop.creds.AccountID, orderNo).PaymentStatus; st != 1000 {
		t.Errorf("the order is %d after a refused submit, want 1000", st)
	}
	if shop.hasNoticeFor(orderNo) {
		t.Error("the shop was notified of an order that was never paid")
	}

	// Leave by cancelling, so the order does not stay open.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("cancel-button"))); err != nil {
		t.Fatalf("click cancel: %v", err)
	}
	final, err := waitLocation(ctx, shop.srv.URL+"/cancel")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(final, badPAN) {
		t.Error("the card number is in the cancel URL")
	}
	if u, err := url.Parse(final); err != nil || !strings.HasPrefix(u.Query().Get("result_info"), "A0007") {
		t.Errorf("cancel result %s (%v), want A0007", final, err)
	}
}

// hasNoticeFor reports whether the shop got a notification for the order.
func (s *testShop) hasNoticeFor(orderNo string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.notices {
		if v, err := url.ParseQuery(string(b)); err == nil && v.Get("order_no") == orderNo {
			return true
		}
	}
	return false
}

package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paygate/paygate/internal/adapters/password"
	"github.com/paygate/paygate/internal/dev/railsim"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

const consolePassword = "console test password 42"

// consoleUser makes a console user of role (for merchantID when a merchant
// user) and returns its email.
func consoleUser(t *testing.T, role, merchantID string) string {
	t.Helper()
	hash, err := password.Hash(consolePassword)
	if err != nil {
		t.Fatal(err)
	}
	email := role + "-" + randomHex(4) + "@example.com"
	if err := models.CreateConsoleUser(t.Context(), env.gw.DB, &models.ConsoleUser{Email: email, Role: role, MerchantID: merchantID,
		PasswordHash: hash, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return email
}

// consoleSignIn signs the tab in, waits for the role's home page and its
// charts, then opens then.
func consoleSignIn(t *testing.T, ctx context.Context, email, then string) {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(env.api.URL+"/console/login"),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), email),
		chromedp.SendKeys(chromedp.ID("password"), consolePassword),
		chromedp.Click(chromedp.ID("sign-in")),
	); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	if loc, err := waitLocation(ctx, env.api.URL+"/console/?lang="); err != nil {
		t.Fatalf("after sign-in the tab is on %s, want the home page: %v", loc, err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("charts"))); err != nil {
		t.Fatalf("the home page shows no charts: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(env.api.URL+then)); err != nil {
		t.Fatalf("open %s: %v", then, err)
	}
	if loc, err := waitLocation(ctx, env.api.URL+then); err != nil {
		t.Fatalf("the tab is on %s, want %s: %v", loc, then, err)
	}
}

// checkHome opens the home page and checks that it draws charts (each
// named id, laid out with a size, and with bars where has says so), and
// keeps its picture.
func checkHome(t *testing.T, ctx context.Context, sh shot, has map[string]bool) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(env.api.URL+"/console/?lang=en"), chromedp.WaitVisible(chromedp.ID("charts"))); err != nil {
		t.Fatal(err)
	}
	for id, bars := range has {
		got, err := evalJS[[]float64](ctx, `(() => { const s = document.getElementById(`+"`"+id+"`"+`); if (!s) return [-1, -1, -1];
			const r = s.getBoundingClientRect(); return [r.width, r.height, s.querySelectorAll("rect.bar").length]; })()`)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if got[0] < 200 || got[1] < 50 {
			t.Errorf("chart %s is laid out %vx%v", id, got[0], got[1])
		}
		if (got[2] > 0) != bars {
			t.Errorf("chart %s has %v bars, want some: %v", id, got[2], bars)
		}
	}
	if n, err := evalJS[int](ctx, `document.scripts.length`); err != nil || n != 0 {
		t.Errorf("the home page runs %d scripts (%v)", n, err)
	}
	checkAccessible(t, ctx, "home")
	sh.take(ctx, "home")
}

func consoleSignOut(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("sign-out"))); err != nil {
		t.Fatalf("sign out: %v", err)
	}
	if loc, err := waitLocation(ctx, env.api.URL+"/console/login"); err != nil {
		t.Fatalf("after sign-out the tab is on %s: %v", loc, err)
	}
}

// checkAccessible checks the page's basics: its language is declared and
// every field a person fills in has a label a screen reader reads.
func checkAccessible(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	unlabelled, err := evalJS[[]string](ctx, `[...document.querySelectorAll("input:not([type=hidden]),select,textarea")]
		.filter(e => !(e.labels && e.labels.length) && !e.getAttribute("aria-label")).map(e => e.name || e.id)`)
	if err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	if len(unlabelled) > 0 {
		t.Errorf("%s: fields without a label: %v", page, unlabelled)
	}
	if lang, _ := evalJS[string](ctx, `document.documentElement.lang`); lang != "en" && lang != "es" {
		t.Errorf("%s: page language %q", page, lang)
	}
}

func textOf(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// TestConsoleInTheBrowser drives the back office in Chromium as each of its
// three people: a merchant refunds part of an order and sees it on the
// timeline, and cannot open another merchant's order by its URL; finance
// previews and re-runs two failed payouts and sees them complete; ops
// resends a notification.
func TestConsoleInTheBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("drives Chromium")
	}
	root, _ := filepath.Abs("..")
	browserCtx := startBrowser(t)

	t.Run("merchant", func(t *testing.T) {
		sh := shot{t: t, root: root, name: "console-merchant", docs: map[string]string{
			"orders": "console-orders.png", "order": "console-order-refunded.png", "home": "console-home-merchant.png"}}
		ctx := openTab(t, browserCtx, sh)
		creds := notifyAccount(t) // a merchant of its own
		tx, orderNo := paidOrder(t, creds, "40.00")
		other, _ := paidOrder(t, env.auto, "12.34")
		consoleSignIn(t, ctx, consoleUser(t, models.RoleMerchant, creds.MerchantID), "/console/orders")
		if got := textOf(t, ctx, "#orders"); !strings.Contains(got, orderNo) {
			t.Fatalf("the orders list lacks %s", orderNo)
		}
		checkAccessible(t, ctx, "orders")
		sh.take(ctx, "orders")
		if err := chromedp.Do(ctx,
			chromedp.Navigate(env.api.URL+"/console/orders/"+tx),
			chromedp.WaitVisible(chromedp.ID("refund-amount")),
			chromedp.SendKeys(chromedp.ID("refund-amount"), "15.00"),
			chromedp.SendKeys(chromedp.ID("refund-reason"), "damaged box"),
			chromedp.Click(chromedp.ID("refund")),
			chromedp.WaitVisible(chromedp.ID("timeline")),
		); err != nil {
			t.Fatalf("refund: %v", err)
		}
		if got := textOf(t, ctx, "[role=status]"); !strings.Contains(got, "0000") {
			t.Errorf("the refund's outcome is %q, want 0000", got)
		}
		if got := textOf(t, ctx, "#timeline"); !strings.Contains(got, "Refund") || !strings.Contains(got, "15.00 USD") ||
			!strings.Contains(got, "paid → partially refunded") {
			t.Errorf("the timeline does not show the refund and the status change: %s", got)
		}
		if got := textOf(t, ctx, "#refunded"); got != "15.00 USD" {
			t.Errorf("refunded shows %q, want 15.00 USD", got)
		}
		checkAccessible(t, ctx, "order")
		sh.take(ctx, "order")
		o := findOrder(t, creds.AccountID, orderNo)
		if o.RefundedAmount != 1500 {
			t.Errorf("the record says %d refunded, want 1500", o.RefundedAmount)
		}
		// Another merchant's order, by its URL: not found.
		if err := chromedp.Do(ctx, chromedp.Navigate(env.api.URL+"/console/orders/"+other), chromedp.WaitVisible(chromedp.ID("message"))); err != nil {
			t.Fatal(err)
		}
		if got := textOf(t, ctx, "h1"); got != "Not found" {
			t.Errorf("another merchant's order opened as %q, want Not found", got)
		}
		checkHome(t, ctx, sh, map[string]bool{"chart-volume": true, "chart-approval": true, "chart-declines": false,
			"chart-methods": true, "chart-refunds": true})
		// The header's search box finds the order by its number.
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("search"), orderNo), chromedp.Click(chromedp.ID("search-go"))); err != nil {
			t.Fatal(err)
		}
		if loc, err := waitLocation(ctx, env.api.URL+"/console/orders/"+tx); err != nil {
			t.Errorf("the search for %s landed on %s: %v", orderNo, loc, err)
		}
		consoleSignOut(t, ctx)
	})

	t.Run("finance", func(t *testing.T) {
		sh := shot{t: t, root: root, name: "console-finance", docs: map[string]string{
			"preview": "console-rerun-preview.png", "rerun": "console-rerun-done.png", "home": "console-home-finance.png"}}
		ctx := openTab(t, browserCtx, sh)
		creds := payoutAccount(t, 1_000_000)
		var rids []string
		for range 2 {
			rid := newRequestID()
			_, out := postPayout(t, "/v1/payout", payoutBody(creds, rid, "25.00", railsim.IBANFailOnce))
			if out["status"] != "FAILED" {
				out = awaitPayoutStatus(t, creds, rid)
			}
			if out["status"] != "FAILED" {
				t.Fatalf("payout %s: %v, want FAILED", rid, out)
			}
			rids = append(rids, rid)
		}
		consoleSignIn(t, ctx, consoleUser(t, models.RoleFinance, ""), "/console/payouts")
		if err := chromedp.Do(ctx, chromedp.Navigate(env.api.URL+"/console/payouts?status=FAILED&merchant_id="+creds.MerchantID),
			chromedp.WaitVisible(chromedp.ID("payouts"))); err != nil {
			t.Fatal(err)
		}
		for _, rid := range rids {
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("pick-"+rid))); err != nil {
				t.Fatalf("select %s: %v", rid, err)
			}
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("preview")), chromedp.WaitVisible(chromedp.ID("plan"))); err != nil {
			t.Fatal(err)
		}
		plan := textOf(t, ctx, "#plan")
		for _, rid := range rids {
			if !strings.Contains(plan, rid) {
				t.Errorf("the preview lacks %s", rid)
			}
		}
		if strings.Count(plan, "re-run") != 2 {
			t.Errorf("the preview does not re-run both: %s", plan)
		}
		checkAccessible(t, ctx, "preview")
		sh.take(ctx, "preview")
		// Nothing ran yet: the preview is a dry run.
		if p, err := models.FindPayout(t.Context(), env.gw.DB, workflows.PayoutWorkflowID(creds.MerchantID, rids[0])); err != nil || p.Run != 1 {
			t.Fatalf("after the preview the payout is %+v, %v; want run 1", p, err)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("run-rerun")), chromedp.WaitVisible(chromedp.ID("rerun-items"))); err != nil {
			t.Fatal(err)
		}
		// The page follows the payouts until both are completed.
		deadline := time.Now().Add(60 * time.Second)
		for {
			items := textOf(t, ctx, "#rerun-items")
			if strings.Count(items, "COMPLETED") == 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the re-run page never showed both completed: %s", items)
			}
			time.Sleep(time.Second)
			_ = chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("rerun-items")))
		}
		sh.take(ctx, "rerun")
		for _, rid := range rids {
			if k, ok := railKey(t, creds, rid); !ok || k.Completed != 1 {
				t.Errorf("rail: %s %+v, want completed once", rid, k)
			}
		}
		checkHome(t, ctx, sh, map[string]bool{"chart-balances-usd": true, "chart-payouts": true, "chart-settled": false})
		// The figures are folded under the chart: read them whole.
		got, err := evalJS[string](ctx, `document.getElementById("chart-payouts-figures").textContent`)
		if err != nil || !strings.Contains(got, "COMPLETED") {
			t.Errorf("payouts by status: %s", got)
		}
		consoleSignOut(t, ctx)
	})

	t.Run("finance reconciles", func(t *testing.T) {
		sh := shot{t: t, root: root, name: "console-recon", docs: map[string]string{
			"recon": "console-recon.png", "exceptions": "console-exceptions.png"}}
		ctx := openTab(t, browserCtx, sh)
		// A settlement day of its own: one line matched, one capture the
		// acquirer never settled.
		day := time.Date(2019, 5, 1+int(randomHex(1)[0]%28), 0, 0, 0, 0, time.UTC)
		connector := "sim-" + randomHex(3)
		run := &models.ReconRun{Connector: connector, Day: day, Lines: 1, Owed: 2, Exceptions: 1, Posted: 1, RanAt: time.Now()}
		items := []models.ReconItem{
			{ItemKey: "line/1", Source: models.ReconSourceLine, LineNo: 1, OrderKey: "5000000000000000001", Type: "capture", Gross: 10000,
				Fee: 320, Net: 9680, Currency: "USD", Class: "matched", Posted: "order/5000000000000000001/settled", Status: models.ReconNone},
			{ItemKey: "owed/capture/5000000000000000002", Source: models.ReconSourceOwed, OrderKey: "5000000000000000002", Type: "capture",
				Gross: 4591, Currency: "USD", Class: "missing_at_acquirer", Status: models.ReconOpen},
		}
		for i := range items {
			items[i].Connector, items[i].Day = connector, day
		}
		if err := models.SaveReconRun(t.Context(), env.gw.DB, run, items); err != nil {
			t.Fatal(err)
		}
		var missing models.ReconItem
		if err := env.gw.DB.Where("connector = ? AND class = ?", connector, "missing_at_acquirer").Take(&missing).Error; err != nil {
			t.Fatal(err)
		}
		email := consoleUser(t, models.RoleFinance, "")
		consoleSignIn(t, ctx, email, "/console/payouts")
		window := "connector=" + connector + "&from=" + day.Format(time.DateOnly) + "&to=" + day.Format(time.DateOnly)
		if err := chromedp.Do(ctx, chromedp.Navigate(env.api.URL+"/console/recon?"+window), chromedp.WaitVisible(chromedp.ID("recon-totals"))); err != nil {
			t.Fatal(err)
		}
		if got := textOf(t, ctx, "#recon-totals"); !strings.Contains(got, "missing at the acquirer") || !strings.Contains(got, "45.91") {
			t.Errorf("the day's classes: %s", got)
		}
		checkAccessible(t, ctx, "recon")
		sh.take(ctx, "recon")
		form := fmt.Sprintf(`form[action^="/console/recon/exceptions/%d/act"]`, missing.ID)
		if err := chromedp.Do(ctx, chromedp.Navigate(env.api.URL+"/console/recon/exceptions?"+window), chromedp.WaitVisible(chromedp.ID("exceptions")),
			chromedp.SendKeys(chromedp.ID(fmt.Sprintf("note-%d", missing.ID)), "asked the acquirer, ticket 7"),
			chromedp.SetValue(chromedp.CSS(form+" select"), "claim"),
			chromedp.Click(chromedp.ID(fmt.Sprintf("act-%d", missing.ID))),
			chromedp.WaitVisible(chromedp.CSS("[role=status]"))); err != nil {
			t.Fatal(err)
		}
		if got := textOf(t, ctx, "[role=status]"); !strings.Contains(got, "claimed") {
			t.Errorf("after the action the page says %q", got)
		}
		checkAccessible(t, ctx, "exceptions")
		sh.take(ctx, "exceptions")
		audit, err := models.ReconActions(t.Context(), env.gw.DB, missing.ID)
		if err != nil || len(audit) != 1 || audit[0].Action != models.ReconClaimed || audit[0].Actor != email || audit[0].Note != "asked the acquirer, ticket 7" {
			t.Errorf("audit %+v, %v", audit, err)
		}
	})

	t.Run("ops", func(t *testing.T) {
		sh := shot{t: t, root: root, name: "console-ops", docs: map[string]string{"stuck": "console-ops.png", "home": "console-home-ops.png"}}
		ctx := openTab(t, browserCtx, sh)
		// A notification the merchant never acknowledges stays in the
		// backlog; ops resends it.
		creds := notifyAccount(t)
		rc := newReceiver(creds.SignKey, 1.0)
		srv := newReceiverServer(t, rc)
		f := cardOrder(creds, newOrderNo(t), "4242424242424242")
		f["notify_url"] = srv.URL + "/hooks"
		if _, r := authorise(t, signCard(f, creds.SignKey)); r.OrderStatus != "1" {
			t.Fatalf("payment: %s", r.ResultInfo)
		}
		notifyID := ""
		deadline := time.Now().Add(20 * time.Second)
		for notifyID == "" && time.Now().Before(deadline) {
			var n models.Notification
			if env.gw.DB.Where("order_no = ? AND status = ?", f["order_no"], models.NotifyPending).Take(&n).Error == nil && n.Attempts > 0 {
				notifyID = n.NotifyID
			}
			time.Sleep(200 * time.Millisecond)
		}
		if notifyID == "" {
			t.Fatal("no pending notification to resend")
		}
		consoleSignIn(t, ctx, consoleUser(t, models.RoleOps, ""), "/console/stuck")
		if got := textOf(t, ctx, "#backlog"); !strings.Contains(got, notifyID) {
			t.Fatalf("the backlog lacks %s", notifyID)
		}
		checkAccessible(t, ctx, "stuck")
		sh.take(ctx, "stuck")
		checkHome(t, ctx, sh, map[string]bool{"chart-stuck": true, "chart-backlog": true, "chart-connectors": true})
		if err := chromedp.Do(ctx, chromedp.Navigate(env.api.URL+"/console/stuck"), chromedp.WaitVisible(chromedp.ID("backlog"))); err != nil {
			t.Fatal(err)
		}
		rc.setFailRate(0)
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("resend-"+notifyID)), chromedp.WaitVisible(chromedp.CSS("[role=status]"))); err != nil {
			t.Fatal(err)
		}
		if got := textOf(t, ctx, "[role=status]"); !strings.Contains(got, "resending "+notifyID) {
			t.Errorf("resend answered %q", got)
		}
		for deadline := time.Now().Add(30 * time.Second); rc.processedCount(notifyID) == 0; time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the resent notification never arrived")
			}
		}
		consoleSignOut(t, ctx)
	})
}

package console

import (
	"cmp"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/paygate/paygate/api/console/svgchart"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/routing"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

// HomeDays is the window of the home pages' charts: the last two weeks,
// today included.
const HomeDays = 14

// chartView is one chart of a home page, under its heading.
type chartView struct {
	ID    string
	Title string
	SVG   template.HTML
}

// draw makes a chart view with draw (svgchart.Columns or Rows), in lang.
func draw(lang string, how func(svgchart.Chart) template.HTML, c svgchart.Chart) chartView {
	c.Figures = t(lang, "figures")
	if c.Empty == "" {
		c.Empty = t(lang, "no_data")
	}
	return chartView{ID: strings.TrimPrefix(c.ID, "chart-"), Title: c.Title, SVG: how(c)}
}

// home is each role's first page: the shape of its work in pictures.
func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	sess := sessionOf(r.Context())
	lang := langOf(r)
	now := s.Now().UTC()
	to := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, 1)
	from := to.AddDate(0, 0, -HomeDays)
	var charts []chartView
	var facts []string
	var modes []modeLink
	var err error
	switch sess.User.Role {
	case models.RoleMerchant, models.RoleFinance:
		var mode string
		mode, modes, err = s.pageMode(r, lang, scope(sess.User), "/console/")
		if err != nil {
			break
		}
		facts = append(facts, t(lang, "fact_mode_"+mode))
		var more []string
		if sess.User.Role == models.RoleMerchant {
			charts, more, err = s.merchantHome(r, lang, scope(sess.User), mode, from, to)
		} else {
			charts, more, err = s.financeHome(r, lang, mode, from, to)
		}
		facts = append(facts, more...)
	case models.RoleOps:
		charts, facts, err = s.opsHome(r, lang, now)
	}
	if err != nil {
		s.fail(w, r, "home", err)
		return
	}
	s.render(w, r, http.StatusOK, "home", pageData{Title: t(lang, "home"), Charts: charts, Facts: facts, Modes: modes})
}

// modeLink is a home page's way to the figures of the other mode's
// accounts.
type modeLink struct {
	Label, Href string
	Current     bool
}

// pageMode picks whose figures a page (a merchant's or finance's home, the
// balances) shows: the live accounts' or the test accounts' (?mode=), never
// both at once, as a test account's payments and balances are play money.
// Unasked, it is the live accounts', or the test ones' where there are only
// those (the demo merchant). The links to switch, to path, are there when
// there are both; they keep the page's filters but not what belongs to one
// mode's rows (modeBound).
func (s *Server) pageMode(r *http.Request, lang, merchantID, path string) (string, []modeLink, error) {
	live, test, err := s.Records.AccountModes(r.Context(), merchantID)
	if err != nil {
		return "", nil, err
	}
	mode, links := chooseMode(r, lang, path, live, test)
	return mode, links, nil
}

// chooseMode is pageMode's choice where the page knows which modes its rows
// have (live, test).
func chooseMode(r *http.Request, lang, path string, live, test bool) (string, []modeLink) {
	mode := r.URL.Query().Get("mode")
	if !testmode.Valid(mode) {
		mode = testmode.Live
		if test && !live {
			mode = testmode.Test
		}
	}
	if !live || !test {
		return mode, nil
	}
	q := cloneValues(r.URL.Query())
	for _, k := range modeBound {
		q.Del(k)
	}
	q.Set("lang", lang)
	var links []modeLink
	for _, m := range []string{testmode.Live, testmode.Test} {
		q.Set("mode", m)
		links = append(links, modeLink{Label: t(lang, "mode_"+m), Href: path + "?" + q.Encode(), Current: m == mode})
	}
	return mode, links
}

// modeBound are the parameters a switch of mode drops: a list's cursor
// (before, after) points into one mode's rows, an account is of one mode,
// and an action's notice was about the rows left behind.
var modeBound = []string{"before", "after", "account_id", "done", "done_mac"}

// days are the window's days, for columns that show every day, sold or not.
func days(from, to time.Time) []time.Time {
	var out []time.Time
	for d := from; d.Before(to); d = d.AddDate(0, 0, 1) {
		out = append(out, d)
	}
	return out
}

// mainCurrency is the currency with the most of count (then by name).
func mainCurrency(rows []models.DayTotal, count func(models.DayTotal) int64) string {
	totals := map[string]int64{}
	for _, r := range rows {
		totals[r.Currency] += count(r)
	}
	best, bestN := "", int64(-1)
	for c, n := range totals {
		if n > bestN || n == bestN && c < best {
			best, bestN = c, n
		}
	}
	return best
}

func amountText(minor int64, currency string) string {
	return money.FromMinor(minor, currency).ExtendedString() + " " + currency
}

func (s *Server) merchantHome(r *http.Request, lang, merchantID, mode string, from, to time.Time) ([]chartView, []string, error) {
	ctx := r.Context()
	payments, err := s.Records.PaymentDays(ctx, merchantID, mode, from, to)
	if err != nil {
		return nil, nil, err
	}
	refunds, err := s.Records.RefundDays(ctx, merchantID, mode, from, to)
	if err != nil {
		return nil, nil, err
	}
	declines, err := s.Records.DeclineReasons(ctx, merchantID, mode, from, to, 8)
	if err != nil {
		return nil, nil, err
	}
	methods, err := s.Records.PaymentMethods(ctx, merchantID, mode, from, to)
	if err != nil {
		return nil, nil, err
	}
	cur := cmp.Or(mainCurrency(payments, func(d models.DayTotal) int64 { return d.Approved }), "USD")
	var volume, approval, refunded []svgchart.Bar
	var approved, decided int64
	perCurrency := map[string]int64{}
	for _, day := range days(from, to) {
		label := day.Format("01-02")
		var amount, ok, no int64
		for _, p := range payments {
			if p.Day.Equal(day) {
				ok, no = ok+p.Approved, no+p.Declined
				if p.Currency == cur {
					amount += p.Amount
				}
			}
		}
		volume = append(volume, svgchart.Plain(label, amount, money.FromMinor(amount, cur).ExtendedString()))
		rate, text := int64(0), "–"
		if ok+no > 0 {
			rate = ok * 10000 / (ok + no)
			text = fmt.Sprintf("%d%%", (rate+50)/100)
		}
		approval = append(approval, svgchart.Plain(label, rate, text))
		approved, decided = approved+ok, decided+ok+no
		var back int64
		for _, f := range refunds {
			if f.Day.Equal(day) && f.Currency == cur {
				back += f.Amount
			}
		}
		refunded = append(refunded, svgchart.Plain(label, back, money.FromMinor(back, cur).ExtendedString()))
	}
	for _, p := range payments {
		perCurrency[p.Currency] += p.Amount
	}
	var declineBars, methodBars []svgchart.Bar
	for _, d := range declines {
		declineBars = append(declineBars, svgchart.Bar{Label: d.Name + " " + d.Detail,
			Segments: []svgchart.Segment{{Value: d.Count, Kind: svgchart.Bad, Text: fmt.Sprint(d.Count)}}})
	}
	for _, m := range methods {
		methodBars = append(methodBars, svgchart.Plain(m.Name, m.Count, fmt.Sprint(m.Count)))
	}
	charts := []chartView{
		draw(lang, svgchart.Columns, svgchart.Chart{ID: "chart-volume", Title: fmt.Sprintf(t(lang, "ch_volume"), cur),
			Desc: t(lang, "ch_volume_desc"), Bars: volume}),
		draw(lang, svgchart.Columns, svgchart.Chart{ID: "chart-approval", Title: t(lang, "ch_approval"),
			Desc: t(lang, "ch_approval_desc"), Bars: approval}),
		draw(lang, svgchart.Rows, svgchart.Chart{ID: "chart-declines", Title: t(lang, "ch_declines"),
			Desc: t(lang, "ch_declines_desc"), Bars: declineBars}),
		draw(lang, svgchart.Rows, svgchart.Chart{ID: "chart-methods", Title: t(lang, "ch_methods"),
			Desc: t(lang, "ch_methods_desc"), Bars: methodBars}),
		draw(lang, svgchart.Columns, svgchart.Chart{ID: "chart-refunds", Title: fmt.Sprintf(t(lang, "ch_refunds"), cur),
			Desc: t(lang, "ch_refunds_desc"), Bars: refunded}),
	}
	var totals []string
	for _, c := range slices.Sorted(maps.Keys(perCurrency)) {
		totals = append(totals, amountText(perCurrency[c], c))
	}
	facts := []string{fmt.Sprintf(t(lang, "fact_approved"), HomeDays, cmp.Or(strings.Join(totals, " · "), "0")),
		fmt.Sprintf(t(lang, "fact_rate"), HomeDays, rateText(approved, decided))}
	return charts, facts, nil
}

func rateText(part, whole int64) string {
	if whole == 0 {
		return "–"
	}
	bp := part * 10000 / whole
	return fmt.Sprintf("%d.%d%%", bp/100, bp%100/10)
}

func (s *Server) financeHome(r *http.Request, lang, mode string, from, to time.Time) ([]chartView, []string, error) {
	ctx := r.Context()
	accounts, err := s.Records.MerchantBalances(ctx, mode)
	if err != nil {
		return nil, nil, err
	}
	payouts, err := s.Records.PayoutStatuses(ctx, mode, from, to)
	if err != nil {
		return nil, nil, err
	}
	settled, err := s.Records.SettlementDays(ctx, mode, from, to)
	if err != nil {
		return nil, nil, err
	}
	// Balances: one chart per currency, most money first (at most three).
	kinds := []struct {
		kind string
		key  string
		look svgchart.Kind
	}{{models.LedgerDeposit, "available", svgchart.Good}, {models.LedgerReserved, "reserved", svgchart.Warn}, {models.LedgerPending, "pending", svgchart.Muted}}
	sums := map[string]map[string]int64{}
	for _, a := range accounts {
		if sums[a.Currency] == nil {
			sums[a.Currency] = map[string]int64{}
		}
		sums[a.Currency][a.Kind] += a.Balance
	}
	currencies := slices.SortedFunc(maps.Keys(sums), func(a, b string) int {
		return cmp.Or(cmp.Compare(sums[b][models.LedgerDeposit], sums[a][models.LedgerDeposit]), cmp.Compare(a, b))
	})
	var charts []chartView
	for _, c := range currencies[:min(len(currencies), 3)] {
		var bars []svgchart.Bar
		for _, k := range kinds {
			v := sums[c][k.kind]
			bars = append(bars, svgchart.Bar{Label: t(lang, k.key), Segments: []svgchart.Segment{{Value: v, Kind: k.look, Text: amountText(v, c)}}})
		}
		charts = append(charts, draw(lang, svgchart.Rows, svgchart.Chart{ID: "chart-balances-" + strings.ToLower(c),
			Title: fmt.Sprintf(t(lang, "ch_balances"), c), Desc: t(lang, "ch_balances_desc"), Bars: bars}))
	}
	if len(currencies) == 0 {
		charts = append(charts, draw(lang, svgchart.Rows, svgchart.Chart{ID: "chart-balances", Title: t(lang, "balances"),
			Desc: t(lang, "ch_balances_desc")}))
	}
	// Payouts by status: the count, with the amounts per currency.
	type statusSum struct {
		count   int64
		amounts []string
	}
	byStatus := map[string]*statusSum{}
	for _, p := range payouts {
		if byStatus[p.Name] == nil {
			byStatus[p.Name] = &statusSum{}
		}
		byStatus[p.Name].count += p.Count
		byStatus[p.Name].amounts = append(byStatus[p.Name].amounts, amountText(p.Amount, p.Currency))
	}
	var payoutBars []svgchart.Bar
	for _, st := range []string{"NEW", "SCHEDULED", "SUBMITTED", "COMPLETED", "FAILED"} {
		sum := byStatus[st]
		if sum == nil {
			continue
		}
		look := svgchart.Muted
		switch st {
		case "COMPLETED":
			look = svgchart.Good
		case "FAILED":
			look = svgchart.Bad
		}
		payoutBars = append(payoutBars, svgchart.Bar{Label: st, Segments: []svgchart.Segment{{Value: sum.count, Kind: look,
			Text: fmt.Sprintf("%d (%s)", sum.count, strings.Join(sum.amounts, ", "))}}})
	}
	charts = append(charts, draw(lang, svgchart.Rows, svgchart.Chart{ID: "chart-payouts", Title: t(lang, "ch_payouts"),
		Desc: t(lang, "ch_payouts_desc"), Bars: payoutBars}))
	cur := cmp.Or(mainCurrency(settled, func(d models.DayTotal) int64 { return d.Count }), "USD")
	var settledBars []svgchart.Bar
	for _, day := range days(from, to) {
		var net int64
		for _, d := range settled {
			if d.Day.Equal(day) && d.Currency == cur {
				net += d.Amount
			}
		}
		settledBars = append(settledBars, svgchart.Plain(day.Format("01-02"), net, money.FromMinor(net, cur).ExtendedString()))
	}
	charts = append(charts, draw(lang, svgchart.Columns, svgchart.Chart{ID: "chart-settled",
		Title: fmt.Sprintf(t(lang, "ch_settled"), cur), Desc: t(lang, "ch_settled_desc"), Bars: settledBars}))
	return charts, nil, nil
}

func (s *Server) opsHome(r *http.Request, lang string, now time.Time) ([]chartView, []string, error) {
	ctx := r.Context()
	orders, payouts, err := s.Records.StuckCounts(ctx, now.Add(-OrderStuckAfter), now.Add(-PayoutStuckAfter))
	if err != nil {
		return nil, nil, err
	}
	ages, err := s.Records.BacklogAges(ctx, now)
	if err != nil {
		return nil, nil, err
	}
	outcomes, err := s.Records.ConnectorOutcomes(ctx, now.Add(-24*time.Hour), now.Add(time.Minute))
	if err != nil {
		return nil, nil, err
	}
	breakers, err := s.Records.ConnectorHealthSince(ctx, now.Add(-BreakersChangedWithin), now.Add(-BreakersSeenWithin))
	if err != nil {
		return nil, nil, err
	}
	var waiting int64
	ageBars := make([]svgchart.Bar, 0, 4)
	for _, bracket := range []string{"1h", "6h", "24h", "older"} {
		var n int64
		for _, a := range ages {
			if a.Name == bracket {
				n = a.Count
			}
		}
		waiting += n
		look := svgchart.Warn
		if bracket == "older" {
			look = svgchart.Bad
		}
		ageBars = append(ageBars, svgchart.Bar{Label: t(lang, "age_"+bracket), Segments: []svgchart.Segment{{Value: n, Kind: look, Text: fmt.Sprint(n)}}})
	}
	stuckBars := []svgchart.Bar{
		{Label: t(lang, "stuck_orders"), Segments: []svgchart.Segment{{Value: orders, Kind: svgchart.Bad, Text: fmt.Sprint(orders)}}},
		{Label: t(lang, "stuck_payouts"), Segments: []svgchart.Segment{{Value: payouts, Kind: svgchart.Bad, Text: fmt.Sprint(payouts)}}},
		{Label: t(lang, "waiting_notifications"), Segments: []svgchart.Segment{{Value: waiting, Kind: svgchart.Warn, Text: fmt.Sprint(waiting)}}},
	}
	open := map[string][]string{}
	for _, b := range breakers {
		if b.State != string(routing.Closed) {
			open[b.Connector] = append(open[b.Connector], b.State)
		}
	}
	var connectorBars []svgchart.Bar
	for _, o := range outcomes {
		label := o.Connector
		if states := open[o.Connector]; len(states) > 0 {
			label += " (" + strings.Join(slices.Compact(slices.Sorted(slices.Values(states))), ", ") + ")"
		}
		connectorBars = append(connectorBars, svgchart.Bar{Label: label, Segments: []svgchart.Segment{
			{Value: o.Approved, Kind: svgchart.Good, Text: fmt.Sprintf("%d %s", o.Approved, t(lang, "approved"))},
			{Value: o.Declined, Kind: svgchart.Muted, Text: fmt.Sprintf("%d %s", o.Declined, t(lang, "declined"))},
			{Value: o.Errors, Kind: svgchart.Bad, Text: fmt.Sprintf("%d %s", o.Errors, t(lang, "errors"))},
		}})
	}
	charts := []chartView{
		draw(lang, svgchart.Rows, svgchart.Chart{ID: "chart-stuck", Title: t(lang, "ch_stuck"), Desc: t(lang, "ch_stuck_desc"),
			Bars: stuckBars, Empty: t(lang, "nothing_stuck")}),
		draw(lang, svgchart.Columns, svgchart.Chart{ID: "chart-backlog", Title: t(lang, "ch_backlog"), Desc: t(lang, "ch_backlog_desc"),
			Bars: ageBars, Empty: t(lang, "no_backlog")}),
		draw(lang, svgchart.Rows, svgchart.Chart{ID: "chart-connectors", Title: t(lang, "ch_connectors"), Desc: t(lang, "ch_connectors_desc"),
			Bars: connectorBars, Legend: []svgchart.Key{{Name: t(lang, "approved"), Kind: svgchart.Good},
				{Name: t(lang, "declined"), Kind: svgchart.Muted}, {Name: t(lang, "errors"), Kind: svgchart.Bad}}}),
	}
	return charts, nil, nil
}

// search finds an order by what a person has at hand: its transaction id
// (19 digits), a shopper's email (it has an @) or else its order number,
// which is also tried when the first guess finds nothing. One match opens
// the order; several, the list of them.
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	sess := sessionOf(r.Context())
	lang := langOf(r)
	// The header's box posts (a shopper's email stays out of the address);
	// a link may still ask by GET.
	q := strings.TrimSpace(r.FormValue("q"))
	if q == "" || len(q) > 200 {
		http.Redirect(w, r, "/console/orders?lang="+lang, http.StatusSeeOther)
		return
	}
	var f orderFilter
	filter := url.Values{"lang": {lang}}
	switch {
	case len(q) == 19 && strings.Trim(q, "0123456789") == "":
		f.TransactionID = q
		filter.Set("transaction_id", q)
	case strings.Contains(q, "@"):
		h, err := s.Records.ShopperEmailHash(q)
		if err != nil {
			s.fail(w, r, "search", err)
			return
		}
		f.Shopper = h
		filter.Set("shopper", h)
	default:
		f.OrderNo = q
		filter.Set("order_no", q)
	}
	rows, _, err := s.orders(r.Context(), sess.User, f, 2)
	if err == nil && len(rows) == 0 && f.OrderNo == "" {
		// An order number may be 19 digits or hold an @ too. When it is
		// none, the page keeps the first guess's filter: a shopper's email
		// stays its hash in the page's links.
		var byNo []models.Order
		byNo, _, err = s.orders(r.Context(), sess.User, orderFilter{OrderNo: q}, 2)
		if len(byNo) > 0 {
			rows, filter = byNo, url.Values{"lang": {lang}, "order_no": {q}}
		}
	}
	if err != nil {
		s.fail(w, r, "search", err)
		return
	}
	switch len(rows) {
	case 0:
		s.render(w, r, http.StatusOK, "orders", pageData{Title: t(lang, "orders"), Query: filter,
			Notice: fmt.Sprintf(t(lang, "search_none"), q)})
	case 1:
		http.Redirect(w, r, "/console/orders/"+url.PathEscape(rows[0].TransactionID)+"?lang="+lang, http.StatusSeeOther)
	default:
		http.Redirect(w, r, "/console/orders?"+filter.Encode(), http.StatusSeeOther)
	}
}

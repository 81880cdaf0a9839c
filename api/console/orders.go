package console

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/routing"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// scope is the merchant whose rows the user may see: a merchant user its
// own, ops and finance everything ("").
func scope(u models.ConsoleUser) string {
	if u.Role == models.RoleMerchant {
		if u.MerchantID == "" {
			// A merchant user without a merchant sees nothing rather than
			// everyone's orders (user creation refuses one, but a scope
			// must not depend on that).
			return noMerchant
		}
		return u.MerchantID
	}
	return ""
}

// noMerchant is a merchant id no merchant has (ids are at most 32
// characters of the interface's kinds, and a space is none of them).
const noMerchant = " no merchant "

// orderFilter is the order list's search, from the query string.
type orderFilter struct {
	OrderNo, TransactionID, Last4, Email string
	// Shopper is a shopper's email as its keyed hash
	// (models.ConsoleRecords.ShopperEmailHash): the list's address carries
	// it in place of the email.
	Shopper  string
	Status   int
	From, To time.Time
	// After is the keyset cursor: the last row of the previous page.
	AfterAt time.Time
	AfterTx string
}

func parseOrderFilter(q url.Values) (orderFilter, error) {
	f := orderFilter{
		OrderNo: strings.TrimSpace(q.Get("order_no")), TransactionID: strings.TrimSpace(q.Get("transaction_id")),
		Last4: strings.TrimSpace(q.Get("last4")), Email: strings.ToLower(strings.TrimSpace(q.Get("email"))),
	}
	if v := q.Get("status"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return f, errors.New("status")
		}
		f.Status = n
	}
	if f.Last4 != "" && (len(f.Last4) != 4 || strings.Trim(f.Last4, "0123456789") != "") {
		return f, errors.New("last4")
	}
	if f.Shopper = q.Get("shopper"); f.Shopper != "" && (len(f.Shopper) != 64 || strings.Trim(f.Shopper, "0123456789abcdef") != "") {
		return f, errors.New("shopper")
	}
	for _, d := range []struct {
		name string
		dst  *time.Time
		add  time.Duration
	}{{"from", &f.From, 0}, {"to", &f.To, 24 * time.Hour}} {
		if v := q.Get(d.name); v != "" {
			at, err := time.Parse("2006-01-02", v)
			if err != nil {
				return f, errors.New(d.name)
			}
			*d.dst = at.Add(d.add)
		}
	}
	if v := q.Get("after"); v != "" {
		ns, tx, ok := strings.Cut(v, "_")
		n, err := strconv.ParseInt(ns, 10, 64)
		if !ok || err != nil {
			return f, errors.New("after")
		}
		f.AfterAt, f.AfterTx = time.Unix(0, n), tx
	}
	return f, nil
}

// orders returns a page of the orders f selects, newest first, and the
// cursor of the next page ("" on the last).
func (s *Server) orders(ctx context.Context, u models.ConsoleUser, f orderFilter, limit int) ([]models.Order, string, error) {
	return s.Records.SearchOrders(ctx, models.OrderSearch{MerchantID: scope(u), OrderNo: f.OrderNo, TransactionID: f.TransactionID,
		Last4: f.Last4, Email: f.Email, EmailHash: f.Shopper, Status: f.Status, From: f.From, To: f.To, AfterAt: f.AfterAt, AfterTx: f.AfterTx}, limit)
}

func (s *Server) orderList(w http.ResponseWriter, r *http.Request) {
	sess := sessionOf(r.Context())
	lang := langOf(r)
	q := r.URL.Query()
	if q.Has("email") {
		// A link from before the filter form posted: the same list, with
		// the email out of the address from here on.
		s.redirectToFilter(w, r, q)
		return
	}
	f, err := parseOrderFilter(q)
	if err != nil {
		s.render(w, r, http.StatusBadRequest, "orders", pageData{Title: t(lang, "orders"), Error: t(lang, "search") + ": " + err.Error(), Query: q})
		return
	}
	rows, next, err := s.orders(r.Context(), sess.User, f, PageSize)
	if err != nil {
		s.fail(w, r, "list orders", err)
		return
	}
	// The page's filters without its cursor: the export holds every order
	// they select, not those after the page.
	shown := cloneValues(q)
	shown.Del("after")
	d := pageData{Title: t(lang, "orders"), Orders: rows, Query: shown}
	if next != "" {
		nq := cloneValues(q)
		nq.Set("after", next)
		d.Next = "/console/orders?" + nq.Encode()
	}
	s.render(w, r, http.StatusOK, "orders", d)
}

// orderFilterFields are the order list's filters a form sends and its
// address keeps; a shopper's email is sent as email and kept as shopper.
var orderFilterFields = []string{"lang", "order_no", "transaction_id", "status", "from", "to", "last4", "shopper"}

// filterOrders takes the order list's filter form, sent by POST so that a
// shopper's email never reaches an address (the browser's history, a
// proxy's log), and redirects to the list with the email as its keyed
// hash.
func (s *Server) filterOrders(w http.ResponseWriter, r *http.Request) {
	s.redirectToFilter(w, r, r.PostForm)
}

// redirectToFilter sends the browser to the order list that the filter
// fields of form select, an email among them as its hash.
func (s *Server) redirectToFilter(w http.ResponseWriter, r *http.Request, form url.Values) {
	q := url.Values{}
	for _, k := range orderFilterFields {
		if v := strings.TrimSpace(form.Get(k)); v != "" {
			q.Set(k, v)
		}
	}
	if email := strings.TrimSpace(form.Get("email")); email != "" {
		h, err := s.Records.ShopperEmailHash(email)
		if err != nil {
			s.fail(w, r, "hash the shopper's email", err)
			return
		}
		q.Set("shopper", h)
	}
	http.Redirect(w, r, "/console/orders?"+q.Encode(), http.StatusSeeOther)
}

func cloneValues(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = slices.Clone(v)
	}
	return out
}

// orderCSV exports every order the filters select (up to a bound), as the
// list shows them.
func (s *Server) orderCSV(w http.ResponseWriter, r *http.Request) {
	sess := sessionOf(r.Context())
	f, err := parseOrderFilter(r.URL.Query())
	if err != nil {
		http.Error(w, "bad filter: "+err.Error(), http.StatusBadRequest)
		return
	}
	const maxRows = 100_000
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="orders.csv"`)
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"created_at", "merchant_id", "account_id", "order_no", "transaction_id", "currency", "amount",
		"captured", "refunded", "payment_status", "result_code", "card", "shopper_email"})
	written := 0
	for written < maxRows {
		rows, next, err := s.orders(r.Context(), sess.User, f, 1000)
		if err != nil {
			s.Logger.Error("console: export orders", "error", err)
			return
		}
		for _, o := range rows {
			_ = cw.Write([]string{o.CreatedAt.UTC().Format(time.RFC3339), o.MerchantID, o.AccountID, csvSafe(o.OrderNo), o.TransactionID,
				o.Currency, money.FromMinor(o.Amount, o.Currency).ExtendedString(), money.FromMinor(o.CapturedAmount, o.Currency).ExtendedString(),
				money.FromMinor(o.RefundedAmount, o.Currency).ExtendedString(), strconv.Itoa(int(o.PaymentStatus)), o.ResultCode,
				o.CardMasked, csvSafe(o.Details.ShopperEmail)})
			written++
		}
		if next == "" {
			break
		}
		ns, tx, _ := strings.Cut(next, "_")
		n, _ := strconv.ParseInt(ns, 10, 64)
		f.AfterAt, f.AfterTx = time.Unix(0, n), tx
	}
	cw.Flush()
}

// csvSafe keeps a merchant's text from being read as a formula by a
// spreadsheet.
func csvSafe(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

// findOrder is the order by transaction id if the user may see it; a
// merchant user asking for another merchant's order finds nothing, as if it
// did not exist.
func (s *Server) findOrder(ctx context.Context, u models.ConsoleUser, tx string) (*models.Order, error) {
	return s.Records.MerchantOrder(ctx, scope(u), tx)
}

// event is one line of an order's timeline.
type event struct {
	At      time.Time
	Kind    string // a label key
	Detail  string
	Outcome string
}

func (s *Server) timeline(ctx context.Context, o *models.Order) ([]event, error) {
	evs := []event{{At: o.CreatedAt, Kind: "ev_created", Detail: money.FromMinor(o.Amount, o.Currency).ExtendedString() + " " + o.Currency}}
	h, err := s.Records.HistoryOf(ctx, o.TransactionID)
	if err != nil {
		return nil, err
	}
	for _, c := range h.Changes {
		from := ""
		if c.FromStatus != 0 {
			from = status.Payment(c.FromStatus).Name() + " → "
		}
		evs = append(evs, event{At: c.At, Kind: "ev_status", Outcome: from + status.Payment(c.ToStatus).Name()})
	}
	if len(h.Changes) == 0 && o.PaymentStatus != status.Pending {
		// An order recorded before its changes were kept: its latest status.
		evs = append(evs, event{At: o.UpdatedAt, Kind: "ev_final", Outcome: o.PaymentStatus.Name() + " " + o.ResultCode})
	}
	for _, rf := range h.Refunds {
		evs = append(evs, event{At: rf.CreatedAt, Kind: "ev_refund",
			Detail: rf.RefundReferenceID + " " + money.FromMinor(rf.Amount, rf.Currency).ExtendedString() + " " + rf.Currency, Outcome: string(rf.Status)})
	}
	for _, a := range h.Attempts {
		out := strconv.Itoa(a.StatusCode)
		if a.Error != "" {
			out += " " + a.Error
		}
		evs = append(evs, event{At: a.At, Kind: "ev_notify", Detail: fmt.Sprintf("%s #%d", a.NotifyID, a.Attempt), Outcome: out})
	}
	for _, c := range h.Charges {
		detail := fmt.Sprintf("#%d %s", c.Attempt, c.Connector)
		if c.ConnectorRef != "" {
			detail += " " + c.ConnectorRef
		}
		out := c.Outcome
		if c.DeclineReason != "" {
			out += " (" + c.DeclineReason + ")"
		}
		evs = append(evs, event{At: c.At, Kind: "ev_charge", Detail: fmt.Sprintf("%s, %d ms, %s", detail, c.LatencyMS, c.Why), Outcome: out})
	}
	slices.SortStableFunc(evs, func(a, b event) int { return a.At.Compare(b.At) })
	return evs, nil
}

func (s *Server) workflowLink(workflowID string) string {
	if s.TemporalUIURL == "" || workflowID == "" {
		return ""
	}
	ns := s.Namespace
	if ns == "" {
		ns = "default"
	}
	return strings.TrimSuffix(s.TemporalUIURL, "/") + "/namespaces/" + url.PathEscape(ns) + "/workflows/" + url.PathEscape(workflowID)
}

func (s *Server) orderPage(w http.ResponseWriter, r *http.Request) {
	s.showOrder(w, r, http.StatusOK, "", false)
}

// showOrder renders an order with its timeline and what can be done to it,
// with an action's outcome on top: a notice when it was done, an error when
// it was refused.
func (s *Server) showOrder(w http.ResponseWriter, r *http.Request, code int, outcome string, refused bool) {
	sess := sessionOf(r.Context())
	lang := langOf(r)
	o, err := s.findOrder(r.Context(), sess.User, r.PathValue("tx"))
	if err != nil {
		s.fail(w, r, "find order", err)
		return
	}
	if o == nil {
		s.render(w, r, http.StatusNotFound, "message", pageData{Title: t(lang, "not_found"), Message: t(lang, "not_found_text")})
		return
	}
	evs, err := s.timeline(r.Context(), o)
	if err != nil {
		s.fail(w, r, "order timeline", err)
		return
	}
	d := pageData{Title: t(lang, "orders") + " " + o.OrderNo, Order: o, Timeline: evs, WorkflowLink: s.workflowLink(o.WorkflowID)}
	if refused {
		d.Error = outcome
	} else {
		d.Notice = outcome
	}
	s.render(w, r, code, "order", d)
}

func entryOf(o *models.Order) workflows.EntryRef {
	return workflows.EntryRef{TransactionID: o.TransactionID, OrderNo: o.OrderNo, Currency: o.Currency, Amount: o.Amount}
}

// operate runs one operation on the order of the URL through its workflow,
// as the API's batch entry would, and shows the order with the outcome.
func (s *Server) operate(w http.ResponseWriter, r *http.Request, act *models.ConsoleAction,
	do func(ctx context.Context, o *models.Order) (workflows.OperationResult, error)) {
	sess := sessionOf(r.Context())
	o, err := s.findOrder(r.Context(), sess.User, r.PathValue("tx"))
	if err != nil {
		s.fail(w, r, "find order", err)
		return
	}
	if o == nil {
		s.done(r.Context(), act, "not found")
		s.render(w, r, http.StatusNotFound, "message", pageData{Title: t(langOf(r), "not_found"), Message: t(langOf(r), "not_found_text")})
		return
	}
	res, err := do(r.Context(), o)
	outcome, refused := "", true
	switch {
	case err != nil:
		outcome = err.Error()
	default:
		outcome = res.ResultCode + ":" + res.ResultMessage
		refused = res.Status == workflows.EntryRefused
	}
	s.done(context.WithoutCancel(r.Context()), act, outcome)
	s.Logger.Info("console: "+act.Action, "user_id", sess.User.ID, "transaction_id", o.TransactionID, "outcome", outcome)
	s.showOrder(w, r, http.StatusOK, outcome, refused)
}

func (s *Server) refund(w http.ResponseWriter, r *http.Request, act *models.ConsoleAction) {
	s.operate(w, r, act, func(ctx context.Context, o *models.Order) (workflows.OperationResult, error) {
		amount, err := money.Parse(strings.TrimSpace(r.PostForm.Get("amount")), o.Currency)
		if err != nil || amount.Minor <= 0 {
			return workflows.OperationResult{}, fmt.Errorf("I0008:refund amount must be a positive amount in %s", o.Currency)
		}
		reason := strings.TrimSpace(r.PostForm.Get("reason"))
		if rs := []rune(reason); len(rs) > 200 {
			// Whole characters: a cut one is text Postgres refuses.
			reason = string(rs[:200])
		}
		d, err := s.Records.RefundBlockingDispute(ctx, o.TransactionID)
		if err != nil {
			return workflows.OperationResult{}, err
		}
		if d != nil {
			c := codes.RefundDisputed.With(d.Stage + " " + d.Status)
			return workflows.OperationResult{Status: workflows.EntryRefused, ResultCode: c.ID, ResultMessage: c.Message}, nil
		}
		return s.Orders.Refund(ctx, o.WorkflowID, workflows.RefundRequest{Entry: entryOf(o), RefundAmount: amount.Minor, Reason: reason})
	})
}

func (s *Server) capture(w http.ResponseWriter, r *http.Request, act *models.ConsoleAction) {
	s.operate(w, r, act, func(ctx context.Context, o *models.Order) (workflows.OperationResult, error) {
		return s.Orders.Capture(ctx, o.WorkflowID, workflows.CaptureRequest{Entry: entryOf(o)})
	})
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request, act *models.ConsoleAction) {
	s.operate(w, r, act, func(ctx context.Context, o *models.Order) (workflows.OperationResult, error) {
		return s.Orders.Cancel(ctx, o.WorkflowID, workflows.CancelRequest{Entry: entryOf(o)})
	})
}

// review approves or rejects an order held for risk review.
func (s *Server) review(w http.ResponseWriter, r *http.Request, act *models.ConsoleAction) {
	s.operate(w, r, act, func(ctx context.Context, o *models.Order) (workflows.OperationResult, error) {
		var approve bool
		switch r.PostForm.Get("decision") {
		case "approve":
			approve = true
		case "reject":
		default:
			return workflows.OperationResult{}, errors.New("I0008:decision must be approve or reject")
		}
		return s.Orders.Review(ctx, o.WorkflowID, workflows.ReviewRequest{Entry: entryOf(o), Approve: approve})
	})
}

// refundList shows the user's refunds, newest first.
func (s *Server) refundList(w http.ResponseWriter, r *http.Request) {
	sess := sessionOf(r.Context())
	lang := langOf(r)
	var before time.Time
	if v := r.URL.Query().Get("before"); v != "" {
		if at, err := time.Parse(time.RFC3339Nano, v); err == nil {
			before = at
		}
	}
	rows, err := s.Records.RecentRefunds(r.Context(), scope(sess.User), before, PageSize+1)
	if err != nil {
		s.fail(w, r, "list refunds", err)
		return
	}
	d := pageData{Title: t(lang, "refunds")}
	if len(rows) > PageSize {
		rows = rows[:PageSize]
		d.Next = "/console/refunds?lang=" + lang + "&before=" + url.QueryEscape(rows[len(rows)-1].CreatedAt.Format(time.RFC3339Nano))
	}
	d.Refunds = rows
	s.render(w, r, http.StatusOK, "refunds", d)
}

// balanceRow is one merchant account's balance in one currency.
type balanceRow struct {
	MerchantID, AccountID, Currency string
	Pending, Available, Reserved    int64
	// Owed is what the merchant owes the gateway (disputes and refunds
	// its deposit could not cover).
	Owed int64
	// Connector and Routing: the account's connector, and its routing
	// rules in words (none: every order goes to the connector).
	Connector string
	Routing   []string
}

// keysPage lists the merchant's accounts, each with a rotation button.
func (s *Server) keysPage(w http.ResponseWriter, r *http.Request) {
	s.showKeys(w, r, "")
}

func (s *Server) showKeys(w http.ResponseWriter, r *http.Request, newKey string) {
	sess := sessionOf(r.Context())
	accounts, err := s.Records.MerchantAccounts(r.Context(), sess.User.MerchantID)
	if err != nil {
		s.fail(w, r, "list accounts", err)
		return
	}
	rows := make([]balanceRow, len(accounts))
	for i, a := range accounts {
		rows[i] = balanceRow{MerchantID: a.MerchantID, AccountID: a.ID, Connector: a.Connector, Routing: routingLines(a.Routing)}
	}
	s.render(w, r, http.StatusOK, "keys", pageData{Title: t(langOf(r), "keys"), Accounts: rows, NewKey: newKey})
}

// rotateKey gives one of the merchant's accounts a new sign key, shown once.
func (s *Server) rotateKey(w http.ResponseWriter, r *http.Request, act *models.ConsoleAction) {
	sess := sessionOf(r.Context())
	accountID := r.PostForm.Get("account_id")
	key, err := s.Keys.RotateKey(r.Context(), sess.User.MerchantID, accountID, KeyGrace)
	if err != nil {
		s.done(r.Context(), act, "refused: "+err.Error())
		s.render(w, r, http.StatusBadRequest, "message", pageData{Title: t(langOf(r), "keys"), Message: err.Error()})
		return
	}
	// The key is shown once and never kept in the form's record.
	s.done(r.Context(), act, "rotated the sign key of account "+accountID)
	s.Logger.Info("console: sign key rotated", "user_id", sess.User.ID, "account_id", accountID)
	s.showKeys(w, r, key)
}

// routingLines says an account's routing rules in words, a line per route
// and one for the fallback: "euro cards: currencies EUR, card brands visa
// → sim-bank 80%, stripe 20%".
func routingLines(r routing.Rules) []string {
	var out []string
	for _, route := range r.Routes {
		var when []string
		c := route.When
		add := func(name string, values []string) {
			if len(values) > 0 {
				when = append(when, name+" "+strings.Join(values, ", "))
			}
		}
		add("currencies", c.Currencies)
		add("billing countries", c.BillingCountries)
		add("card brands", c.CardBrands)
		add("methods", c.Methods)
		for _, b := range c.BINRanges {
			when = append(when, "BINs "+b.From+"–"+b.To)
		}
		if c.MinAmount > 0 {
			when = append(when, fmt.Sprintf("amount ≥ %d", c.MinAmount))
		}
		if c.MaxAmount > 0 {
			when = append(when, fmt.Sprintf("amount ≤ %d", c.MaxAmount))
		}
		if len(when) == 0 {
			when = []string{"every payment"}
		}
		var targets []string
		total := 0
		for _, t := range route.Targets {
			total += t.Weight
		}
		for _, t := range route.Targets {
			if total > 0 {
				targets = append(targets, fmt.Sprintf("%s %d%%", t.Connector, t.Weight*100/total))
			} else {
				targets = append(targets, t.Connector)
			}
		}
		out = append(out, route.Name+": "+strings.Join(when, "; ")+" → "+strings.Join(targets, ", "))
	}
	if len(r.Fallback) > 0 {
		out = append(out, "fallback → "+strings.Join(r.Fallback, ", "))
	}
	if len(out) > 0 {
		budget := r.MaxAttempts
		if budget == 0 {
			budget = routing.DefaultMaxAttempts
		}
		line := fmt.Sprintf("at most %d attempts", budget)
		if r.RetrySoftDeclines {
			line += ", soft declines tried elsewhere"
		}
		out = append(out, line)
	}
	return out
}

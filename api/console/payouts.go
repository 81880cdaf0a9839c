package console

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/payoutrerun"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/models"
)

// planRow is one line of a re-run's preview.
type planRow struct {
	RequestID, MerchantID, Amount, Failure, Will string
}

// rerunView is a re-run batch with its payouts' outcomes and current
// statuses.
type rerunView struct {
	By, Status  string
	At          time.Time
	Done, Total int
	Running     bool
	Items       []rerunItemView
}

type rerunItemView struct {
	RequestID, Outcome, Status string
}

// entryRow is one ledger entry as the balances page shows it.
type entryRow struct {
	At                     time.Time
	Kind, Reference, Lines string
}

func (s *Server) payoutList(w http.ResponseWriter, r *http.Request) {
	lang := langOf(r)
	q := r.URL.Query()
	// One mode's payouts at a time: a test payout is play money, and a
	// failed one is not finance's to re-run beside live ones.
	mode, modes, err := s.pageMode(r, lang, "", "/console/payouts")
	if err != nil {
		s.fail(w, r, "account modes", err)
		return
	}
	search := models.PayoutSearch{Status: q.Get("status"), FailureType: q.Get("failure_type"), MerchantID: q.Get("merchant_id"), Mode: mode}
	if v := q.Get("before"); v != "" {
		if at, err := time.Parse(time.RFC3339Nano, v); err == nil {
			search.Before = at
		}
	}
	rows, err := s.Records.SearchPayouts(r.Context(), search, PageSize+1)
	if err != nil {
		s.fail(w, r, "list payouts", err)
		return
	}
	d := pageData{Title: t(lang, "payouts"), Query: q, Mode: mode, Modes: modes}
	if len(rows) > PageSize {
		rows = rows[:PageSize]
		nq := cloneValues(q)
		nq.Set("before", rows[len(rows)-1].CreatedAt.Format(time.RFC3339Nano))
		d.Next = "/console/payouts?" + nq.Encode()
	}
	d.Payouts = rows
	s.render(w, r, http.StatusOK, "payouts", d)
}

// rerunPreview shows what a re-run of the selected payouts would do; it
// changes nothing (a dry run of the selection, not recorded as a batch).
func (s *Server) rerunPreview(w http.ResponseWriter, r *http.Request) {
	sess := sessionOf(r.Context())
	lang := langOf(r)
	r.Body = http.MaxBytesReader(w, r.Body, 256<<10)
	if err := r.ParseForm(); err != nil || !isText(r.PostForm) {
		http.Error(w, "bad form: it must be text", http.StatusBadRequest)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(sess.CSRF)) != 1 {
		http.Error(w, "the form is stale or not ours (CSRF); reload the page", http.StatusForbidden)
		return
	}
	back := payoutsBack(r.PostForm.Get("filters"), lang)
	ids := r.PostForm["id"]
	if len(ids) == 0 || len(ids) > 1000 {
		s.render(w, r, http.StatusBadRequest, "message", pageData{Title: t(lang, "preview"), Message: "select 1 to 1,000 failed payouts", Back: back})
		return
	}
	items, err := s.Reruns.Plan(r.Context(), models.PayoutSelection{IDs: ids})
	if err != nil {
		s.fail(w, r, "plan re-run", err)
		return
	}
	rows := make([]planRow, 0, len(items))
	for _, it := range items {
		row := planRow{RequestID: it.PayoutID, Will: "re-run"}
		if p := it.Payout; p != nil {
			row.RequestID, row.MerchantID = p.RequestID, p.MerchantID
			row.Amount = money.FromMinor(p.PaymentAmount, p.PaymentCurrency).ExtendedString() + " " + p.PaymentCurrency
			row.Failure = p.FailureType
		}
		if !it.Rerun {
			row.Will = "skip: " + it.Reason
		}
		rows = append(rows, row)
	}
	s.render(w, r, http.StatusOK, "preview", pageData{Title: t(lang, "preview"), Plan: rows, PlanIDs: strings.Join(ids, ","), Back: back})
}

// payoutsBack is the way from a preview back to the payouts list as
// finance had filtered it: the form carries the list's filters, of which
// only the filter's own keys are taken (the cursor starts it afresh).
func payoutsBack(filters, lang string) string {
	return "/console/payouts?" + keptFilters(filters, lang, "status", "failure_type", "merchant_id", "mode").Encode()
}

// keptFilters is a list's way back from a form posted on it: of the
// filters the form carried (the list's query, encoded), only keys, and the
// language. A field that does not parse, or other keys, steer nothing.
func keptFilters(filters, lang string, keys ...string) url.Values {
	back := url.Values{}
	if kept, err := url.ParseQuery(filters); err == nil {
		for _, k := range keys {
			if v := kept.Get(k); v != "" {
				back.Set(k, v)
			}
		}
	}
	back.Set("lang", lang)
	return back
}

// rerun re-runs the previewed payouts as a recorded batch, in the
// background, and shows its progress page.
func (s *Server) rerun(w http.ResponseWriter, r *http.Request, act *models.ConsoleAction) {
	sess := sessionOf(r.Context())
	lang := langOf(r)
	ids := strings.Split(r.PostForm.Get("ids"), ",")
	sel := models.PayoutSelection{IDs: ids}
	items, err := s.Reruns.Plan(r.Context(), sel)
	if err != nil {
		s.fail(w, r, "plan re-run", err)
		return
	}
	by := sess.User.Email
	// The batch outlives the request; it is recorded, so a process that
	// dies mid-way leaves it for `paygate payout rerun -resume`. The page
	// waits only for its record, then shows its progress.
	recorded := make(chan int64, 1)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		req := payoutrerun.Request{Selection: sel, By: by, Source: "console", Recorded: func(id int64) { recorded <- id }}
		res, err := s.Reruns.Run(ctx, req, items, nil)
		if err != nil {
			s.Logger.Error("console: payout re-run", "error", err)
			return
		}
		s.Logger.Info("console: payout re-run done", "rerun_id", res.Rerun.ID, "started", res.Rerun.Started, "skipped", res.Rerun.Skipped)
	}()
	select {
	case id := <-recorded:
		s.done(r.Context(), act, fmt.Sprintf("re-run %d started", id))
		http.Redirect(w, r, "/console/reruns/"+strconv.FormatInt(id, 10)+"?lang="+lang, http.StatusSeeOther)
	case <-ended:
		// It ended without a record (its error is logged): the list
		// shows what there is.
		s.done(r.Context(), act, "re-run not started")
		http.Redirect(w, r, "/console/reruns?lang="+lang, http.StatusSeeOther)
	case <-r.Context().Done():
	}
}

func (s *Server) rerunList(w http.ResponseWriter, r *http.Request) {
	rows, err := s.Reruns.List(r.Context(), 100)
	if err != nil {
		s.fail(w, r, "list re-runs", err)
		return
	}
	s.render(w, r, http.StatusOK, "reruns", pageData{Title: t(langOf(r), "reruns"), Reruns: rows})
}

// rerunPage shows a batch's progress: each payout's outcome and its status
// now. While the batch runs, the page reloads itself.
func (s *Server) rerunPage(w http.ResponseWriter, r *http.Request) {
	lang := langOf(r)
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		s.render(w, r, http.StatusNotFound, "message", pageData{Title: t(lang, "not_found")})
		return
	}
	res, err := s.Reruns.Show(r.Context(), id)
	if err != nil {
		s.render(w, r, http.StatusNotFound, "message", pageData{Title: t(lang, "not_found"), Message: err.Error()})
		return
	}
	ids := make([]string, len(res.Items))
	for i, it := range res.Items {
		ids[i] = it.PayoutID
	}
	payouts, err := s.Records.PayoutsByID(r.Context(), ids)
	if err != nil {
		s.fail(w, r, "find payouts", err)
		return
	}
	byID := map[string]models.Payout{}
	for _, p := range payouts {
		byID[p.ID] = p
	}
	v := &rerunView{By: res.Rerun.RequestedBy, Status: res.Rerun.Status, At: res.Rerun.CreatedAt, Total: res.Rerun.Planned,
		Running: res.Rerun.Status == models.RerunRunning}
	if v.Total == 0 {
		v.Total = len(res.Items)
	}
	for _, it := range res.Items {
		p := byID[it.PayoutID]
		if it.Outcome != "" && it.Outcome != "pending" {
			v.Done++
		}
		// While the payouts run again, the page follows them to the end.
		if p.Status != "COMPLETED" && p.Status != "FAILED" && it.Outcome == "started" {
			v.Running = true
		}
		v.Items = append(v.Items, rerunItemView{RequestID: p.RequestID, Outcome: it.Outcome + " " + it.Reason, Status: p.Status})
	}
	s.render(w, r, http.StatusOK, "rerun", pageData{Title: t(lang, "rerun_of") + " " + r.PathValue("id"), Rerun: v})
}

// balances lists every merchant account's pending, available and reserved
// balances;
// with ?account_id= also that account's latest ledger entries.
func (s *Server) balances(w http.ResponseWriter, r *http.Request) {
	lang := langOf(r)
	mode, modes, err := s.pageMode(r, lang, "", "/console/balances")
	if err != nil {
		s.fail(w, r, "account modes", err)
		return
	}
	accounts, err := s.Records.MerchantBalances(r.Context(), mode)
	if err != nil {
		s.fail(w, r, "list balances", err)
		return
	}
	var rows []balanceRow
	index := map[string]int{}
	for _, a := range accounts {
		key := a.MerchantID + "/" + a.AccountID + "/" + a.Currency
		i, ok := index[key]
		if !ok {
			i = len(rows)
			index[key] = i
			rows = append(rows, balanceRow{MerchantID: a.MerchantID, AccountID: a.AccountID, Currency: a.Currency})
		}
		switch a.Kind {
		case models.LedgerPending:
			rows[i].Pending = a.Balance
		case models.LedgerDeposit:
			rows[i].Available = a.Balance
		case models.LedgerReserved:
			rows[i].Reserved = a.Balance
		case models.LedgerDebt:
			rows[i].Owed = -a.Balance
		}
	}
	d := pageData{Title: t(lang, "balances"), Accounts: rows, Mode: mode, Modes: modes}
	if acc := r.URL.Query().Get("account_id"); acc != "" {
		entries, err := s.Ledger.Entries(r.Context(), ledger.EntryFilter{AccountID: acc, Limit: 100})
		if err != nil {
			s.fail(w, r, "ledger entries", err)
			return
		}
		for _, e := range entries {
			var lines []string
			for _, l := range e.Lines {
				lines = append(lines, fmt.Sprintf("%s %s %s", l.AccountKind, money.FromMinor(l.Amount, l.Currency).ExtendedString(), l.Currency))
			}
			d.Entries = append(d.Entries, entryRow{At: e.CreatedAt, Kind: e.Kind, Reference: e.Reference, Lines: strings.Join(lines, "; ")})
		}
	}
	s.render(w, r, http.StatusOK, "balances", d)
}

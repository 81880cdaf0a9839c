package console

import (
	"context"
	"crypto/hmac"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/adapters/reconcile"
	"github.com/paygate/paygate/internal/domain/recon"
	"github.com/paygate/paygate/models"
)

// Reconciliation is the settlement reconciliation as finance sees it
// (internal/adapters/reconcile.Service).
type Reconciliation interface {
	Totals(ctx context.Context, connector, mode string, from, to time.Time) ([]models.ReconClassTotal, error)
	Modes(ctx context.Context, connector string, from, to time.Time) (live, test bool, err error)
	Runs(ctx context.Context, connector string, from, to time.Time) ([]models.ReconRun, error)
	Exceptions(ctx context.Context, f models.ReconExceptionFilter) ([]models.ReconItem, error)
	EachException(ctx context.Context, f models.ReconExceptionFilter, fn func([]models.ReconItem) error) error
	Act(ctx context.Context, id int64, action recon.Action, note, actor string) (models.ReconItem, error)
	Statement(ctx context.Context, merchantID, accountID string, from, to time.Time) ([]models.StatementLine, error)
}

// reconWindow reads ?connector=, ?from= and ?to= (settlement days,
// inclusive): the last 7 days by default, the 7 days to ?to= when only it
// is given, 400 at most.
func (s *Server) reconWindow(q url.Values) (connector string, from, to time.Time, err error) {
	today := reconcile.Day(s.Now())
	to = today
	if v := q.Get("to"); v != "" {
		if to, err = time.Parse(time.DateOnly, v); err != nil {
			return "", from, to, errors.New("to must be YYYY-MM-DD")
		}
	}
	from = to.AddDate(0, 0, -6)
	if v := q.Get("from"); v != "" {
		if from, err = time.Parse(time.DateOnly, v); err != nil {
			return "", from, to, errors.New("from must be YYYY-MM-DD")
		}
	}
	if to.Before(from) || to.Sub(from) > 400*24*time.Hour {
		return "", from, to, errors.New("the window must run forward, 400 days at most")
	}
	connector = q.Get("connector")
	if len(connector) > 32 {
		return "", from, to, errors.New("no such connector")
	}
	return connector, from, to.AddDate(0, 0, 1), nil
}

// reconPage shows each day's reconciliation per connector: the runs (the
// acquirer's report as a whole), and per class how many items of one
// mode's accounts and how much.
func (s *Server) reconPage(w http.ResponseWriter, r *http.Request) {
	lang := langOf(r)
	connector, from, to, err := s.reconWindow(r.URL.Query())
	if err != nil {
		http.Error(w, "bad filter: "+err.Error(), http.StatusBadRequest)
		return
	}
	mode, modes, err := s.reconMode(r, lang, "/console/recon", connector, from, to)
	if err != nil {
		s.fail(w, r, "account modes", err)
		return
	}
	runs, err := s.Recon.Runs(r.Context(), connector, from, to)
	if err != nil {
		s.fail(w, r, "reconciliation runs", err)
		return
	}
	totals, err := s.Recon.Totals(r.Context(), connector, mode, from, to)
	if err != nil {
		s.fail(w, r, "reconciliation totals", err)
		return
	}
	q := windowQuery(connector, from, to)
	q.Set("mode", mode)
	s.render(w, r, http.StatusOK, "recon", pageData{Title: t(lang, "recon"), ReconRuns: runs, ReconTotals: totals,
		Query: q, Mode: mode, Modes: modes, Window: windowQuery("", from, to)})
}

// reconMode picks the mode of the items a reconciliation page shows, as
// pageMode does but by the modes of the items of its connector and window
// (either bound zero for none): a line of no account here is live, so a
// deployment of test accounts only can still have live items to show.
func (s *Server) reconMode(r *http.Request, lang, path, connector string, from, to time.Time) (string, []modeLink, error) {
	live, test, err := s.Recon.Modes(r.Context(), connector, from, to)
	if err != nil {
		return "", nil, err
	}
	mode, links := chooseMode(r, lang, path, live, test)
	return mode, links, nil
}

// windowQuery is the filter as the page's links carry it.
func windowQuery(connector string, from, to time.Time) url.Values {
	q := url.Values{"from": {from.Format(time.DateOnly)}, "to": {to.AddDate(0, 0, -1).Format(time.DateOnly)}}
	if connector != "" {
		q.Set("connector", connector)
	}
	return q
}

// reconCSV exports the totals of the page's window and mode.
func (s *Server) reconCSV(w http.ResponseWriter, r *http.Request) {
	connector, from, to, err := s.reconWindow(r.URL.Query())
	if err != nil {
		http.Error(w, "bad filter: "+err.Error(), http.StatusBadRequest)
		return
	}
	mode, _, err := s.reconMode(r, langOf(r), "", connector, from, to)
	if err != nil {
		s.fail(w, r, "account modes", err)
		return
	}
	totals, err := s.Recon.Totals(r.Context(), connector, mode, from, to)
	if err != nil {
		s.fail(w, r, "reconciliation totals", err)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="reconciliation.csv"`)
	if err := reconcile.WriteTotalsCSV(w, totals); err != nil {
		s.Logger.Error("console: export reconciliation", "error", err)
	}
}

// reconStatuses are the exceptions' statuses the queue filters by.
// ExceptionsPageSize is the exceptions one page of the queue shows.
var ExceptionsPageSize = 500

var reconStatuses = []string{models.ReconOpen, models.ReconClaimed, models.ReconResolved, models.ReconWrittenOff, "all"}

// exceptionFilter reads the queue's filter: the window of settlement days
// given (all days when none), the status (open by default).
func (s *Server) exceptionFilter(q url.Values) (models.ReconExceptionFilter, error) {
	f := models.ReconExceptionFilter{Status: q.Get("status"), Limit: 10000}
	if f.Status == "" {
		f.Status = models.ReconOpen
	}
	if !slices.Contains(reconStatuses, f.Status) {
		return f, errors.New("unknown status")
	}
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return f, errors.New("after must be an exception's id")
		}
		f.AfterID = n
	}
	if q.Get("from") != "" || q.Get("to") != "" || q.Get("connector") != "" {
		c, from, to, err := s.reconWindow(q)
		if err != nil {
			return f, err
		}
		// Only the bounds given: a connector alone is every day's of it,
		// not the last week's that reconWindow would default to.
		f.Connector = c
		if q.Get("from") != "" {
			f.From = from
		}
		if q.Get("to") != "" {
			f.To = to
		}
	}
	return f, nil
}

// exceptionsPage is finance's queue of exceptions of one mode's accounts,
// each with its actions.
func (s *Server) exceptionsPage(w http.ResponseWriter, r *http.Request) {
	f, err := s.exceptionFilter(r.URL.Query())
	if err != nil {
		http.Error(w, "bad filter: "+err.Error(), http.StatusBadRequest)
		return
	}
	mode, modes, err := s.reconMode(r, langOf(r), "/console/recon/exceptions", f.Connector, f.From, f.To)
	if err != nil {
		s.fail(w, r, "account modes", err)
		return
	}
	f.Mode = mode
	f.Limit = ExceptionsPageSize + 1
	items, err := s.Recon.Exceptions(r.Context(), f)
	if err != nil {
		s.fail(w, r, "reconciliation exceptions", err)
		return
	}
	q := r.URL.Query()
	// The outcome of this session's own action, not a text a link made up.
	notice := q.Get("done")
	if !hmac.Equal([]byte(q.Get("done_mac")), []byte(s.mac("done", sessionOf(r.Context()).hash, notice))) {
		notice = ""
	}
	q.Del("lang")
	q.Del("done")
	q.Del("done_mac")
	q.Set("mode", mode)
	next := ""
	if len(items) > ExceptionsPageSize {
		items = items[:ExceptionsPageSize]
		nq := cloneValues(q)
		nq.Set("after", strconv.FormatInt(items[len(items)-1].ID, 10))
		nq.Set("lang", langOf(r))
		next = "/console/recon/exceptions?" + nq.Encode()
	}
	// The page's filters without its cursor: the export and an action's
	// way back start from the first exception they select.
	q.Del("after")
	s.render(w, r, http.StatusOK, "exceptions", pageData{Title: t(langOf(r), "exceptions"), ReconItems: items, Query: q, Next: next,
		Notice: notice, Statuses: reconStatuses, Mode: mode, Modes: modes})
}

// exceptionsCSV exports the queue as filtered.
func (s *Server) exceptionsCSV(w http.ResponseWriter, r *http.Request) {
	f, err := s.exceptionFilter(r.URL.Query())
	if err != nil {
		http.Error(w, "bad filter: "+err.Error(), http.StatusBadRequest)
		return
	}
	if f.Mode, _, err = s.reconMode(r, langOf(r), "", f.Connector, f.From, f.To); err != nil {
		s.fail(w, r, "account modes", err)
		return
	}
	// The export goes out a page at a time, each with a write deadline of
	// its own: a queue of any size is neither held whole nor cut off by
	// the server's write timeout.
	rc := http.NewResponseController(w)
	var out *reconcile.ItemsCSV
	// The file begins with the first page read, so that a read that fails
	// at once is an error page, not a download.
	begin := func() {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="exceptions.csv"`)
		out = reconcile.NewItemsCSV(w)
	}
	err = s.Recon.EachException(r.Context(), f, func(page []models.ReconItem) error {
		_ = rc.SetWriteDeadline(time.Now().Add(exportPageTime))
		if out == nil {
			begin()
		}
		if err := out.Write(page); err != nil {
			return err
		}
		// Each page goes to the browser as it is read.
		_ = rc.Flush()
		return nil
	})
	switch {
	case err != nil && out == nil:
		s.fail(w, r, "reconciliation exceptions", err)
	case err != nil:
		// Part of the file is sent: the connection is cut, so that the
		// download fails rather than end as if it were whole.
		s.Logger.Error("console: export exceptions cut short", "error", err)
		panic(http.ErrAbortHandler)
	case out == nil:
		// No exception: the header alone.
		begin()
		if err := out.Write(nil); err != nil {
			s.Logger.Error("console: export exceptions", "error", err)
		}
	}
}

// exportPageTime is how long one page of an export may take to write.
const exportPageTime = time.Minute

// actOnException resolves, writes off or claims one exception, as the
// signed-in finance user, with the note given.
func (s *Server) actOnException(w http.ResponseWriter, r *http.Request, act *models.ConsoleAction) {
	sess := sessionOf(r.Context())
	lang := langOf(r)
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	action, ok := map[string]recon.Action{"resolve": recon.Resolve, "write_off": recon.WriteOff, "claim": recon.Claim}[r.PostForm.Get("action")]
	note := strings.TrimSpace(r.PostForm.Get("note"))
	var outcome string
	switch {
	case err != nil || id <= 0:
		outcome = t(lang, "no_such_exception")
	case !ok:
		outcome = t(lang, "unknown_action")
	case note == "" || len(note) > 1000:
		outcome = t(lang, "note_required")
	default:
		it, err := s.Recon.Act(r.Context(), id, action, note, sess.User.Email)
		switch {
		case errors.Is(err, models.ErrReconItemNotFound):
			outcome = t(lang, "no_such_exception")
		case errors.Is(err, models.ErrReconItemClosed), errors.Is(err, reconcile.ErrNotAllowed), errors.Is(err, reconcile.ErrConnectorBusy):
			outcome = fmt.Sprintf("%s: %v", t(lang, "not_allowed"), err)
		case err != nil:
			s.fail(w, r, "act on exception", err)
			return
		default:
			outcome = fmt.Sprintf("%s %d: %s", t(lang, "exception"), it.ID, t(lang, "recon_"+it.Status))
		}
	}
	s.done(r.Context(), act, outcome)
	// Back to the queue as finance had filtered it: the form carries the
	// page's filters, of which only the filter's own keys are taken.
	back := keptFilters(r.PostForm.Get("filters"), lang, "connector", "mode", "from", "to", "status")
	back.Set("done", outcome)
	back.Set("done_mac", s.mac("done", sess.hash, outcome))
	http.Redirect(w, r, "/console/recon/exceptions?"+back.Encode(), http.StatusSeeOther)
}

// statementFilter reads the statement's merchant account and window; a
// merchant user sees only its own merchant's accounts.
func (s *Server) statementFilter(r *http.Request) (merchantID, accountID string, from, to time.Time, err error) {
	q := r.URL.Query()
	merchantID, accountID = q.Get("merchant_id"), q.Get("account_id")
	if u := sessionOf(r.Context()).User; u.Role == models.RoleMerchant {
		merchantID = u.MerchantID
	}
	if len(merchantID) > 32 || len(accountID) > 32 {
		return "", "", from, to, errors.New("no such account")
	}
	_, from, to, err = s.reconWindow(q)
	return merchantID, accountID, from, to, err
}

// statementPage is a merchant account's settlement statement for a window.
func (s *Server) statementPage(w http.ResponseWriter, r *http.Request) {
	merchantID, accountID, from, to, err := s.statementFilter(r)
	if err != nil {
		http.Error(w, "bad filter: "+err.Error(), http.StatusBadRequest)
		return
	}
	var lines []models.StatementLine
	if merchantID != "" && accountID != "" {
		if lines, err = s.Recon.Statement(r.Context(), merchantID, accountID, from, to); err != nil {
			s.fail(w, r, "settlement statement", err)
			return
		}
	}
	q := windowQuery("", from, to)
	q.Set("merchant_id", merchantID)
	q.Set("account_id", accountID)
	s.render(w, r, http.StatusOK, "statement", pageData{Title: t(langOf(r), "statement"), Statement: lines, Query: q})
}

// statementCSV exports a merchant account's settlement statement.
func (s *Server) statementCSV(w http.ResponseWriter, r *http.Request) {
	merchantID, accountID, from, to, err := s.statementFilter(r)
	if err == nil && (merchantID == "" || accountID == "") {
		err = errors.New("merchant_id and account_id are required")
	}
	if err != nil {
		http.Error(w, "bad filter: "+err.Error(), http.StatusBadRequest)
		return
	}
	lines, err := s.Recon.Statement(r.Context(), merchantID, accountID, from, to)
	if err != nil {
		s.fail(w, r, "settlement statement", err)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="statement.csv"`)
	if err := reconcile.WriteStatementCSV(w, lines); err != nil {
		s.Logger.Error("console: export statement", "error", err)
	}
}

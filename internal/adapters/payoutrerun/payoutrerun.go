// Package payoutrerun re-runs failed payouts for finance: it selects them
// (by id or by filter), plans what each will do (re-run, or skip with the
// reason payout.Rerun gives), records the batch, and starts each re-run as a
// new run of the payout's own workflow id, so the rail sees the same
// idempotency key and nothing is paid twice. The CLI (paygate payout rerun)
// and the admin API (POST /admin/payouts/rerun) share it.
package payoutrerun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/domain/payout"
	"github.com/paygate/paygate/models"
)

// MaxPayouts is the most payouts one batch takes.
const MaxPayouts = 5000

// DefaultConcurrency is how many re-runs are started at once.
const DefaultConcurrency = 8

// Skip reasons a plan gives.
const (
	ReasonCompleted     = "completed"
	ReasonInFlight      = "in flight"
	ReasonNotFound      = "not found"
	ReasonUnknownStatus = "unknown status"
	ReasonDoneInBatch   = "already re-run by this batch"
	// ReasonChangedSincePlan: the payout was re-run elsewhere (or its run
	// moved on) between the plan and the start.
	ReasonChangedSincePlan = "changed since the plan"
)

var (
	// ErrEmptySelection: the selection names no ids and no filter; it would
	// re-run every failed payout ever.
	ErrEmptySelection = errors.New("selection needs ids, or a time range, failure type or merchant")
	// ErrTooMany: the selection picks more than MaxPayouts payouts.
	ErrTooMany = fmt.Errorf("selection picks more than %d payouts; narrow it", MaxPayouts)
	// ErrResumeDryRun: a dry-run batch has nothing to resume.
	ErrResumeDryRun = errors.New("a dry-run batch cannot be resumed")
)

// Starter starts the next run of a stored payout's workflow and returns its
// run id; the app wires flows.StartPayoutRun.
type Starter func(ctx context.Context, p *models.Payout) (string, error)

// Item is one payout of a plan: the payout (nil when not found) and what
// the re-run does with it.
type Item struct {
	PayoutID string
	Payout   *models.Payout
	Rerun    bool
	Reason   string // why it is skipped; empty when re-run
}

// Request is one re-run batch as asked.
type Request struct {
	Selection models.PayoutSelection
	DryRun    bool
	By        string // who asks: a person's name or "admin-api"
	Source    string // "cli" or "api"
	// Resume, when not zero, continues that batch (its selection) instead of
	// starting a new one: payouts the batch already started are skipped.
	Resume int64
	// Recorded, when set, is told the batch's id as soon as its record
	// exists, before any payout is started: a caller that runs the batch
	// in the background can show its page at once.
	Recorded func(id int64)
}

// Progress is told after each payout is done, with how many of total.
type Progress func(done, total int)

// Result is a batch's record and its items.
type Result struct {
	Rerun models.PayoutRerun       `json:"rerun"`
	Items []models.PayoutRerunItem `json:"items"`
}

// Service plans and runs re-run batches.
type Service struct {
	DB          *gorm.DB
	Start       Starter
	Concurrency int
	Logger      *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// New returns a Service over the database that starts runs with start.
func New(db *gorm.DB, start Starter, logger *slog.Logger) *Service {
	return &Service{DB: db, Start: start, Concurrency: DefaultConcurrency, Logger: logger}
}

// Empty reports whether a selection names nothing.
func Empty(sel models.PayoutSelection) bool {
	return len(sel.IDs) == 0 && sel.From.IsZero() && sel.To.IsZero() && sel.FailureType == "" && sel.MerchantID == ""
}

// Check validates a selection: not empty, ids or a filter (not both), a
// known failure type, from before to.
func Check(sel models.PayoutSelection) error {
	filter := !sel.From.IsZero() || !sel.To.IsZero() || sel.FailureType != "" || sel.MerchantID != ""
	switch {
	case Empty(sel):
		return ErrEmptySelection
	case len(sel.IDs) > 0 && filter:
		return errors.New("select by ids or by filter, not both")
	case len(sel.IDs) > MaxPayouts:
		return ErrTooMany
	case !sel.From.IsZero() && !sel.To.IsZero() && !sel.From.Before(sel.To):
		return errors.New("from must be before to")
	case sel.FailureType != "" && !knownFailure(sel.FailureType):
		return fmt.Errorf("unknown failure type %q", sel.FailureType)
	}
	return nil
}

func knownFailure(f string) bool {
	for _, k := range payout.FailureTypes() {
		if string(k) == f {
			return true
		}
	}
	return false
}

// PlanPayouts decides what a re-run does with each payout: ids in the order
// given (an id matching no payout is skipped "not found"), else the found
// payouts in their order. Only a FAILED payout is re-run (payout.Rerun).
func PlanPayouts(sel models.PayoutSelection, found []models.Payout) []Item {
	var items []Item
	if len(sel.IDs) == 0 {
		for i := range found {
			items = append(items, planOne(&found[i]))
		}
		return items
	}
	seen := map[string]bool{}
	for _, id := range sel.IDs {
		matched := false
		for i := range found {
			p := &found[i]
			if p.ID != id && p.RequestID != id {
				continue
			}
			matched = true
			if !seen[p.ID] {
				seen[p.ID] = true
				items = append(items, planOne(p))
			}
		}
		if !matched && !seen[id] {
			seen[id] = true
			items = append(items, Item{PayoutID: id, Reason: ReasonNotFound})
		}
	}
	return items
}

func planOne(p *models.Payout) Item {
	it := Item{PayoutID: p.ID, Payout: p}
	_, err := payout.Rerun(payout.Status(p.Status))
	switch {
	case err == nil:
		it.Rerun = true
	case errors.Is(err, payout.ErrRerunCompleted):
		it.Reason = ReasonCompleted
	case errors.Is(err, payout.ErrRerunInFlight):
		it.Reason = ReasonInFlight + " (" + p.Status + ")"
	default:
		it.Reason = fmt.Sprintf("%s %q", ReasonUnknownStatus, p.Status)
	}
	return it
}

// Plan loads the selected payouts and plans them.
func (s *Service) Plan(ctx context.Context, sel models.PayoutSelection) ([]Item, error) {
	if err := Check(sel); err != nil {
		return nil, err
	}
	var found []models.Payout
	var err error
	if len(sel.IDs) > 0 {
		found, err = models.FindPayoutsByIDs(ctx, s.DB, sel.IDs)
	} else {
		found, err = models.FindFailedPayouts(ctx, s.DB, sel, MaxPayouts+1)
	}
	if err != nil {
		return nil, err
	}
	if len(found) > MaxPayouts {
		return nil, ErrTooMany
	}
	return PlanPayouts(sel, found), nil
}

// Resume re-plans batch id: its selection planned afresh, then the payouts
// this batch already started are skipped. A payout left "starting" (the
// command died between asking Temporal and hearing back) counts as started
// when its stored run number shows the new run began; otherwise it is
// started again, which is safe: a run still open under the workflow id is
// joined, not duplicated.
func (s *Service) Resume(ctx context.Context, id int64) (*models.PayoutRerun, []Item, error) {
	r, done, err := models.FindPayoutRerun(ctx, s.DB, id)
	if err != nil {
		return nil, nil, err
	}
	if r.DryRun {
		return nil, nil, ErrResumeDryRun
	}
	// Plan before settling: a re-run that begins in between moves its
	// payout from FAILED to its new run in one write, so the plan still
	// selects it (and ApplyDone skips it once settled) or the settling
	// sees its new run. The other order could miss it both ways, and the
	// batch would never finish.
	items, err := s.Plan(ctx, r.Selection)
	if err != nil {
		return nil, nil, err
	}
	if err := s.settleStarting(ctx, done); err != nil {
		return nil, nil, err
	}
	return r, ApplyDone(items, done), nil
}

// settleStarting records as started the rows left "starting" whose payout
// shows the new run began (its stored run number reached the row's), so a
// filter that no longer selects them still leaves the batch complete.
func (s *Service) settleStarting(ctx context.Context, done []models.PayoutRerunItem) error {
	for i := range done {
		d := &done[i]
		if d.Outcome != models.ItemStarting {
			continue
		}
		p, err := models.FindPayout(ctx, s.DB, d.PayoutID)
		if errors.Is(err, models.ErrPayoutNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if p.Run >= d.Run {
			d.Outcome, d.UpdatedAt = models.ItemStarted, s.now()
			if err := models.SavePayoutRerunItems(ctx, s.DB, []models.PayoutRerunItem{*d}); err != nil {
				return err
			}
		}
	}
	return nil
}

// ApplyDone marks as skipped the items a batch already started.
func ApplyDone(items []Item, done []models.PayoutRerunItem) []Item {
	byID := make(map[string]models.PayoutRerunItem, len(done))
	for _, d := range done {
		byID[d.PayoutID] = d
	}
	for i := range items {
		d, ok := byID[items[i].PayoutID]
		if !ok {
			continue
		}
		started := d.Outcome == models.ItemStarted ||
			(d.Outcome == models.ItemStarting && items[i].Payout != nil && items[i].Payout.Run >= d.Run)
		if started {
			items[i].Rerun, items[i].Reason = false, ReasonDoneInBatch
		}
	}
	return items
}

// Run records the batch and, unless it is a dry-run, starts the planned
// re-runs, Concurrency at a time. Each item is written "starting" before
// its start and "started" (or "error") after, so a batch cut short (ctx
// cancelled, the process killed) can be resumed with Request.Resume. The
// batch is "finished" only when every item was reached.
func (s *Service) Run(ctx context.Context, req Request, items []Item, progress Progress) (Result, error) {
	now := s.now()
	var r models.PayoutRerun
	// prior is what a resumed batch recorded before: payouts it started
	// are no longer failed, so a filter does not select them again, yet
	// they belong to the batch's totals.
	var prior []models.PayoutRerunItem
	if req.Resume != 0 {
		prev, rows, err := models.FindPayoutRerun(ctx, s.DB, req.Resume)
		if err != nil {
			return Result{}, err
		}
		r, prior = *prev, rows
	} else {
		r = models.PayoutRerun{RequestedBy: req.By, Source: req.Source, Selection: req.Selection,
			DryRun: req.DryRun, Status: models.RerunRunning, CreatedAt: now}
		if err := models.CreatePayoutRerun(ctx, s.DB, &r); err != nil {
			return Result{}, err
		}
	}
	if req.Recorded != nil {
		req.Recorded(r.ID)
	}
	rows := make([]models.PayoutRerunItem, len(items))
	var todo []int
	for i, it := range items {
		row := models.PayoutRerunItem{RerunID: r.ID, PayoutID: it.PayoutID, Outcome: models.ItemSkipped, Reason: it.Reason, UpdatedAt: now}
		if p := it.Payout; p != nil {
			row.MerchantID, row.PaymentCurrency, row.PaymentAmount, row.FailureType = p.MerchantID, p.PaymentCurrency, p.PaymentAmount, p.FailureType
		}
		if it.Rerun {
			row.Outcome, row.Run = models.ItemPlanned, it.Payout.Run+1
			todo = append(todo, i)
		}
		rows[i] = row
	}
	// A resumed batch keeps the rows of what it already started.
	save := rows
	if req.Resume != 0 {
		save = nil
		for i, it := range items {
			if it.Reason != ReasonDoneInBatch {
				save = append(save, rows[i])
			}
		}
	}
	if err := models.SavePayoutRerunItems(ctx, s.DB, save); err != nil {
		return Result{}, err
	}
	if !r.DryRun {
		s.startAll(ctx, items, rows, todo, progress)
	}
	all := mergeRows(prior, rows)
	r.Total, r.Planned, r.Started, r.Skipped, r.Errors = len(all), 0, 0, 0, 0
	reached := true
	for _, row := range all {
		switch row.Outcome {
		case models.ItemPlanned:
			r.Planned++
			if !r.DryRun {
				reached = false
			}
		case models.ItemStarted:
			r.Started++
		case models.ItemSkipped:
			r.Skipped++
		case models.ItemStarting:
			reached = false
		case models.ItemError:
			r.Errors++
		}
	}
	if reached && ctx.Err() == nil {
		t := s.now()
		r.Status, r.FinishedAt = models.RerunFinished, &t
	}
	// The totals are written even when ctx is cancelled: the batch's record
	// must say how far it got.
	if err := models.FinishPayoutRerun(context.WithoutCancel(ctx), s.DB, &r); err != nil {
		return Result{Rerun: r, Items: rows}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{Rerun: r, Items: rows}, fmt.Errorf("payout re-run %d interrupted (resume it with its id): %w", r.ID, err)
	}
	return Result{Rerun: r, Items: rows}, nil
}

// mergeRows is a batch's rows: the prior ones, replaced by this pass's
// where it wrote them (a pass does not rewrite what the batch already
// started).
func mergeRows(prior, now []models.PayoutRerunItem) []models.PayoutRerunItem {
	out := make([]models.PayoutRerunItem, 0, len(prior)+len(now))
	at := make(map[string]int, len(prior))
	for _, row := range prior {
		at[row.PayoutID] = len(out)
		out = append(out, row)
	}
	for _, row := range now {
		if row.Reason == ReasonDoneInBatch {
			continue
		}
		if i, ok := at[row.PayoutID]; ok {
			out[i] = row
			continue
		}
		at[row.PayoutID] = len(out)
		out = append(out, row)
	}
	return out
}

// startAll starts the todo items with a bounded number of workers. It stops
// taking new items when ctx is done; items it never reached stay planned.
func (s *Service) startAll(ctx context.Context, items []Item, rows []models.PayoutRerunItem, todo []int, progress Progress) {
	n := s.Concurrency
	if n < 1 {
		n = DefaultConcurrency
	}
	work := make(chan int)
	var done atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for i := range work {
				s.startOne(ctx, items[i].Payout, &rows[i])
				if progress != nil {
					progress(int(done.Add(1)), len(todo))
				}
			}
		})
	}
feed:
	for _, i := range todo {
		select {
		case <-ctx.Done():
			break feed
		case work <- i:
		}
	}
	close(work)
	wg.Wait()
}

// startOne starts one re-run and records it before and after. The payout
// is read again first: a plan can be minutes old (the CLI waits for its
// "y"), and a payout re-run elsewhere since and failed again would be
// started with that run's number, whose reservation is already released.
// One that failed again at a later run is skipped, for finance to plan
// again; one whose later run is under way (this batch's own, started
// before it was cut short, or another's) is joined by the start as before.
func (s *Service) startOne(ctx context.Context, p *models.Payout, row *models.PayoutRerunItem) {
	fresh, err := models.FindPayout(ctx, s.DB, p.ID)
	switch {
	case err != nil:
		row.Outcome, row.Reason = models.ItemError, models.CutText(err.Error(), 500)
	case fresh.Run != p.Run && fresh.Status == string(payout.StatusFailed):
		row.Outcome, row.Reason = models.ItemSkipped, fmt.Sprintf("%s: now %s at run %d, planned %s at run %d",
			ReasonChangedSincePlan, fresh.Status, fresh.Run, p.Status, p.Run)
	}
	if err != nil || row.Outcome == models.ItemSkipped {
		row.UpdatedAt = s.now()
		if err := models.SavePayoutRerunItems(context.WithoutCancel(ctx), s.DB, []models.PayoutRerunItem{*row}); err != nil {
			s.log().Error("record payout re-run item", "payout", p.ID, "error", err)
		}
		return
	}
	row.Outcome, row.UpdatedAt = models.ItemStarting, s.now()
	if err := models.SavePayoutRerunItems(ctx, s.DB, []models.PayoutRerunItem{*row}); err != nil {
		// Without the "starting" row a resumed batch could not tell this
		// start happened, so nothing is started.
		row.Outcome, row.Reason = models.ItemPlanned, ""
		s.log().Error("record payout re-run item", "payout", p.ID, "error", err)
		return
	}
	runID, err := s.Start(ctx, p)
	row.UpdatedAt = s.now()
	switch {
	case err != nil && ctx.Err() != nil:
		// Cut short: whether Temporal started it is unknown, so the row
		// stays "starting" for a resume to settle.
		return
	case err != nil:
		row.Outcome, row.Reason = models.ItemError, models.CutText(err.Error(), 500)
	default:
		row.Outcome, row.RunID = models.ItemStarted, runID
	}
	if err := models.SavePayoutRerunItems(context.WithoutCancel(ctx), s.DB, []models.PayoutRerunItem{*row}); err != nil {
		s.log().Error("record payout re-run item", "payout", p.ID, "error", err)
	}
}

// Show returns batch id and its items, ordered by payout id: what each
// payout of the batch came to (started with its run id, skipped with the
// reason, a failed start with the error, or not reached yet).
// models.ErrRerunNotFound when there is no such batch.
func (s *Service) Show(ctx context.Context, id int64) (Result, error) {
	r, items, err := models.FindPayoutRerun(ctx, s.DB, id)
	if err != nil {
		return Result{}, err
	}
	if items == nil {
		// A batch that selected nothing answers an empty list, not null.
		items = []models.PayoutRerunItem{}
	}
	return Result{Rerun: *r, Items: items}, nil
}

// List returns the newest limit batches.
func (s *Service) List(ctx context.Context, limit int) ([]models.PayoutRerun, error) {
	if limit <= 0 || limit > 1000 {
		limit = 50
	}
	return models.ListPayoutReruns(ctx, s.DB, limit)
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Service) log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

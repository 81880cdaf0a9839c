package admin

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/adapters/payoutrerun"
	"github.com/paygate/paygate/models"
)

// PayoutRerunner plans and runs finance's payout re-runs;
// *payoutrerun.Service is one.
type PayoutRerunner interface {
	Plan(ctx context.Context, sel models.PayoutSelection) ([]payoutrerun.Item, error)
	Resume(ctx context.Context, id int64) (*models.PayoutRerun, []payoutrerun.Item, error)
	Run(ctx context.Context, req payoutrerun.Request, items []payoutrerun.Item, progress payoutrerun.Progress) (payoutrerun.Result, error)
	List(ctx context.Context, limit int) ([]models.PayoutRerun, error)
	Show(ctx context.Context, id int64) (payoutrerun.Result, error)
}

type payoutRerunRequest struct {
	IDs         []string `json:"ids"`
	From        string   `json:"from"`
	To          string   `json:"to"`
	FailureType string   `json:"failure_type"`
	MerchantID  string   `json:"merchant_id"`
	DryRun      bool     `json:"dry_run"`
	By          string   `json:"by"`
	Resume      int64    `json:"resume"`
}

// rerunPayouts plans the selected payouts and, unless dry_run, re-runs the
// failed ones; it answers the batch's record and per-payout outcomes. The
// starts are bounded by the service, so 1,000 payouts answer in seconds.
func (a *API) rerunPayouts(c *gin.Context) {
	var req payoutRerunRequest
	if !a.request(c, a != nil && a.PayoutReruns != nil, 1<<20, &req) {
		return
	}
	sel, msg := req.selection()
	if msg != "" {
		c.JSON(http.StatusBadRequest, answerError{msg})
		return
	}
	by := strings.TrimSpace(req.By)
	if by == "" {
		by = "admin-api"
	}
	rr := payoutrerun.Request{Selection: sel, DryRun: req.DryRun, By: by, Source: "api", Resume: req.Resume}
	ctx := c.Request.Context()
	var items []payoutrerun.Item
	var err error
	if req.Resume != 0 {
		_, items, err = a.PayoutReruns.Resume(ctx, req.Resume)
	} else {
		if err = payoutrerun.Check(sel); err != nil {
			c.JSON(http.StatusBadRequest, answerError{err.Error()})
			return
		}
		items, err = a.PayoutReruns.Plan(ctx, sel)
	}
	switch {
	case errors.Is(err, models.ErrRerunNotFound):
		c.JSON(http.StatusNotFound, answerError{"no such re-run"})
		return
	case errors.Is(err, payoutrerun.ErrTooMany), errors.Is(err, payoutrerun.ErrResumeDryRun):
		c.JSON(http.StatusBadRequest, answerError{err.Error()})
		return
	case err != nil:
		a.logger().Error("plan payout re-run", "error", err)
		c.JSON(http.StatusServiceUnavailable, answerError{"payout re-run unavailable, try again"})
		return
	}
	// The batch goes on when the caller hangs up: its record is resumable,
	// but a batch that finishes by itself needs no resume.
	res, err := a.PayoutReruns.Run(context.WithoutCancel(ctx), rr, items, nil)
	if err != nil {
		a.logger().Error("payout re-run", "rerun", res.Rerun.ID, "error", err)
		c.JSON(http.StatusServiceUnavailable, answerError{"payout re-run failed part way, resume it: " + err.Error()})
		return
	}
	a.logger().Info("payout re-run", "rerun", res.Rerun.ID, "by", by, "dry_run", res.Rerun.DryRun,
		"total", res.Rerun.Total, "started", res.Rerun.Started, "skipped", res.Rerun.Skipped, "errors", res.Rerun.Errors)
	c.JSON(http.StatusOK, res)
}

// listPayoutReruns lists the newest recorded re-run batches (?limit=N).
func (a *API) listPayoutReruns(c *gin.Context) {
	if !a.admit(c, a != nil && a.PayoutReruns != nil) {
		return
	}
	limit := 50
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			c.JSON(http.StatusBadRequest, answerError{"limit: want 1 to 1000"})
			return
		}
		limit = n
	}
	rs, err := a.PayoutReruns.List(c.Request.Context(), limit)
	if err != nil {
		a.logger().Error("list payout re-runs", "error", err)
		c.JSON(http.StatusServiceUnavailable, answerError{"payout re-runs unavailable, try again"})
		return
	}
	if rs == nil {
		rs = []models.PayoutRerun{}
	}
	c.JSON(http.StatusOK, gin.H{"reruns": rs})
}

// showPayoutRerun answers one re-run batch and its payouts, each with what
// the batch did with it: the same record and items as the re-run's own
// answer, so a batch run from the command line can be read over HTTP.
func (a *API) showPayoutRerun(c *gin.Context) {
	if !a.admit(c, a != nil && a.PayoutReruns != nil) {
		return
	}
	// A batch id is a positive bigserial; anything else names no batch and
	// is the caller's mistake, not a lookup.
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id < 1 {
		c.JSON(http.StatusBadRequest, answerError{"id: want a re-run id (a positive integer)"})
		return
	}
	res, err := a.PayoutReruns.Show(c.Request.Context(), id)
	switch {
	case errors.Is(err, models.ErrRerunNotFound):
		c.JSON(http.StatusNotFound, answerError{"no such re-run"})
		return
	case err != nil:
		a.logger().Error("show payout re-run", "rerun", id, "error", err)
		c.JSON(http.StatusServiceUnavailable, answerError{"payout re-runs unavailable, try again"})
		return
	}
	c.JSON(http.StatusOK, res)
}

// selection validates the request's selection; the message is empty when
// it is good.
func (r *payoutRerunRequest) selection() (models.PayoutSelection, string) {
	sel := models.PayoutSelection{
		IDs:         trimAll(r.IDs),
		FailureType: strings.TrimSpace(r.FailureType),
		MerchantID:  strings.TrimSpace(r.MerchantID),
	}
	var msg string
	if sel.From, sel.To, msg = timeRange(r.From, r.To); msg != "" {
		return sel, msg
	}
	if r.Resume < 0 {
		return sel, "resume: want a re-run id"
	}
	if r.Resume != 0 {
		if !payoutrerun.Empty(sel) {
			return sel, "resume takes no selection: the batch keeps its own"
		}
		return sel, ""
	}
	if err := payoutrerun.Check(sel); err != nil {
		return sel, err.Error()
	}
	return sel, ""
}

package console

import (
	"net/http"
	"time"

	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

// How long an order or payout may stay unfinished before ops see it as
// stuck: a card payment ends within seconds, a payout within minutes.
const (
	OrderStuckAfter  = 10 * time.Minute
	PayoutStuckAfter = 30 * time.Minute
)

// stuckRow is an order or payout not final after its expected time.
type stuckRow struct {
	Kind, ID, Status, Link string
	Since                  time.Time
}

func (s *Server) stuck(w http.ResponseWriter, r *http.Request) {
	s.showStuck(w, r, "", false)
}

func (s *Server) showStuck(w http.ResponseWriter, r *http.Request, message string, failed bool) {
	lang := langOf(r)
	now := s.Now()
	db := s.DB.WithContext(r.Context())
	var orders []models.Order
	if err := db.Where("payment_status = ? AND created_at < ?", status.Pending, now.Add(-OrderStuckAfter)).
		Order("created_at").Limit(200).Find(&orders).Error; err != nil {
		s.fail(w, r, "stuck orders", err)
		return
	}
	var payouts []models.Payout
	if err := db.Where("status IN ? AND updated_at < ?", []string{"NEW", "SUBMITTED"}, now.Add(-PayoutStuckAfter)).
		Order("updated_at").Limit(200).Find(&payouts).Error; err != nil {
		s.fail(w, r, "stuck payouts", err)
		return
	}
	var rows []stuckRow
	for _, o := range orders {
		rows = append(rows, stuckRow{Kind: "order", ID: o.TransactionID + " " + o.OrderNo, Status: o.PaymentStatus.Name(), Since: o.CreatedAt, Link: s.workflowLink(o.WorkflowID)})
	}
	for _, p := range payouts {
		rows = append(rows, stuckRow{Kind: "payout", ID: p.RequestID, Status: p.Status, Since: p.UpdatedAt, Link: s.workflowLink(p.ID)})
	}
	var backlog []models.Notification
	if err := db.Where("status = ?", models.NotifyPending).Order("created_at").Limit(100).Find(&backlog).Error; err != nil {
		s.fail(w, r, "notification backlog", err)
		return
	}
	d := pageData{Title: t(lang, "stuck"), Stuck: rows, Backlog: backlog}
	if failed {
		d.Error = message
	} else {
		d.Notice = message
	}
	s.render(w, r, http.StatusOK, "stuck", d)
}

// resend delivers a notification again with its notify_id, through the
// same redelivery workflow as `paygate notify resend`.
func (s *Server) resend(w http.ResponseWriter, r *http.Request, act *models.ConsoleAction) {
	sel := models.NotificationSelection{MerchantID: r.PostForm.Get("merchant_id"), AccountID: r.PostForm.Get("account_id"),
		NotifyIDs: []string{r.PostForm.Get("notify_id")}}
	res, err := s.Redeliver.Start(r.Context(), sel, s.NotifySchedule)
	outcome := ""
	if err != nil {
		outcome = "not resent: " + err.Error()
	} else {
		outcome = "resending " + r.PostForm.Get("notify_id") + " (" + res.WorkflowID + ")"
	}
	s.done(r.Context(), act, outcome)
	s.Logger.Info("console: notification resent", "user_id", sessionOf(r.Context()).User.ID, "outcome", outcome)
	s.showStuck(w, r, outcome, err != nil)
}

package console

import (
	"net/http"
	"time"

	"github.com/paygate/paygate/models"
)

// How long an order or payout may stay unfinished before ops see it as
// stuck: a card payment ends within seconds, a payout within minutes.
const (
	OrderStuckAfter  = 10 * time.Minute
	PayoutStuckAfter = 30 * time.Minute
)

// The breakers ops see: those that changed in the last day, and those not
// closed whose worker still runs (it says so every
// models.ConnectorHealthSeenEvery), however long ago they opened. A worker
// that stopped long ago is no news.
const (
	BreakersChangedWithin = 24 * time.Hour
	BreakersSeenWithin    = 3 * models.ConnectorHealthSeenEvery
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
	stuck, err := s.Records.FindStuck(r.Context(), now.Add(-OrderStuckAfter), now.Add(-PayoutStuckAfter), 200, 100)
	if err != nil {
		s.fail(w, r, "stuck", err)
		return
	}
	var rows []stuckRow
	for _, o := range stuck.Orders {
		rows = append(rows, stuckRow{Kind: "order", ID: o.TransactionID + " " + o.OrderNo, Status: o.PaymentStatus.Name(), Since: o.CreatedAt, Link: s.workflowLink(o.WorkflowID)})
	}
	for _, p := range stuck.Payouts {
		rows = append(rows, stuckRow{Kind: "payout", ID: p.RequestID, Status: p.Status, Since: p.UpdatedAt, Link: s.workflowLink(p.ID)})
	}
	breakers, err := s.Records.ConnectorHealthSince(r.Context(), now.Add(-BreakersChangedWithin), now.Add(-BreakersSeenWithin))
	if err != nil {
		s.fail(w, r, "connector health", err)
		return
	}
	d := pageData{Title: t(lang, "stuck"), Stuck: rows, Backlog: stuck.Notifications, Breakers: breakers}
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

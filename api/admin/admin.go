package admin

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/adapters/redeliver"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/models"
)

// Redeliverer starts the redelivery of selected notifications;
// *redeliver.Service is one.
type Redeliverer interface {
	Start(ctx context.Context, sel models.NotificationSelection, schedule notify.Schedule) (redeliver.Result, error)
}

// API is the operators' API, under /admin. Without a Token it is off and
// its routes answer as if they did not exist; so does a nil *API.
type API struct {
	Token     string
	Redeliver Redeliverer
	Schedule  notify.Schedule // retry schedule of redeliveries
	// PayoutReruns runs finance's payout re-runs; nil turns those routes off.
	PayoutReruns PayoutRerunner
	// Erasures erases shoppers' personal data; nil turns that route off.
	Erasures ShopperEraser
	// Logger logs what the operators did; nil logs through slog's default.
	Logger *slog.Logger
}

// Routes puts the admin routes on r, the /admin group of the gateway's
// router. They are put there even when the API is off, so that an off API
// answers its routes as the other unknown paths are answered.
func (a *API) Routes(r gin.IRoutes) {
	r.POST("/notifications/resend", a.resendNotifications)
	r.POST("/payouts/rerun", a.rerunPayouts)
	r.GET("/payouts/reruns", a.listPayoutReruns)
	r.GET("/payouts/reruns/:id", a.showPayoutRerun)
	r.POST("/shoppers/erase", a.eraseShopper)
}

func (a *API) logger() *slog.Logger {
	if a.Logger == nil {
		return slog.Default()
	}
	return a.Logger
}

// maxBody bounds an admin request body.
const maxBody = 64 << 10

type resendRequest struct {
	MerchantID string   `json:"merchant_id"`
	AccountID  string   `json:"account_id"`
	OrderNos   []string `json:"order_nos"`
	NotifyIDs  []string `json:"notify_ids"`
	From       string   `json:"from"`
	To         string   `json:"to"`
}

type answerError struct {
	Error string `json:"error"`
}

// enabled reports whether the admin API is on.
func (a *API) enabled() bool { return a != nil && a.Token != "" && a.Redeliver != nil }

// authorised compares the bearer token in constant time.
func (a *API) authorised(header string) bool {
	token, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(a.Token)) == 1
}

// admit answers 404 when the admin API or the route is off (on) and 401
// without the token; it reports whether the request may go on.
func (a *API) admit(c *gin.Context, on bool) bool {
	if !a.enabled() || !on {
		c.String(http.StatusNotFound, "404 page not found")
		return false
	}
	if !a.authorised(c.GetHeader("Authorization")) {
		c.Header("WWW-Authenticate", `Bearer realm="paygate-admin"`)
		c.JSON(http.StatusUnauthorized, answerError{"unauthorised"})
		return false
	}
	return true
}

// request admits an admin request: 404 when the admin API or the route is
// off (on), 401 without the token; then it decodes the JSON body, at most
// limit bytes and no unknown field, into dst, answering 400 itself. It
// reports whether the handler may go on.
func (a *API) request(c *gin.Context, on bool, limit int64, dst any) bool {
	if !a.admit(c, on) {
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		c.JSON(http.StatusBadRequest, answerError{"bad request body: " + err.Error()})
		return false
	}
	if dec.More() {
		c.JSON(http.StatusBadRequest, answerError{"bad request body: trailing data"})
		return false
	}
	return true
}

// resendNotifications starts the redelivery of the selected notifications
// with their original notify_id.
func (a *API) resendNotifications(c *gin.Context) {
	var req resendRequest
	if !a.request(c, true, maxBody, &req) {
		return
	}
	sel, msg := req.selection()
	if msg != "" {
		c.JSON(http.StatusBadRequest, answerError{msg})
		return
	}
	res, err := a.Redeliver.Start(c.Request.Context(), sel, a.Schedule)
	switch {
	case errors.Is(err, redeliver.ErrNothingToResend):
		c.JSON(http.StatusNotFound, answerError{"nothing to resend"})
		return
	case errors.Is(err, redeliver.ErrEmptySelection):
		c.JSON(http.StatusBadRequest, answerError{err.Error()})
		return
	case err != nil:
		a.logger().Error("start redelivery", "error", err)
		c.JSON(http.StatusServiceUnavailable, answerError{"redelivery unavailable, try again"})
		return
	}
	a.logger().Info("redelivery started", "workflow_id", res.WorkflowID, "notifications", len(res.NotifyIDs))
	c.JSON(http.StatusAccepted, res)
}

// selection validates the request; the message is empty when it is good.
func (r *resendRequest) selection() (models.NotificationSelection, string) {
	sel := models.NotificationSelection{
		MerchantID: strings.TrimSpace(r.MerchantID),
		AccountID:  strings.TrimSpace(r.AccountID),
		OrderNos:   trimAll(r.OrderNos),
		NotifyIDs:  trimAll(r.NotifyIDs),
	}
	var msg string
	if sel.From, sel.To, msg = timeRange(r.From, r.To); msg != "" {
		return sel, msg
	}
	switch {
	case redeliver.Empty(sel):
		return sel, "select order_nos, notify_ids, or a from/to time range"
	case len(sel.OrderNos) > 0 && sel.AccountID == "":
		return sel, "order_nos need account_id"
	case !sel.From.IsZero() && !sel.To.IsZero() && !sel.From.Before(sel.To):
		return sel, "from must be before to"
	case len(sel.OrderNos) > redeliver.MaxNotifications || len(sel.NotifyIDs) > redeliver.MaxNotifications:
		return sel, "at most 1000 order_nos and 1000 notify_ids"
	}
	return sel, ""
}

// timeRange reads a selection's from and to, RFC 3339 times or empty; the
// message names the one that is wrong, "" when both are good.
func timeRange(from, to string) (time.Time, time.Time, string) {
	var f, t time.Time
	var err error
	if v := strings.TrimSpace(from); v != "" {
		if f, err = time.Parse(time.RFC3339, v); err != nil {
			return f, t, "from: want an RFC 3339 time"
		}
	}
	if v := strings.TrimSpace(to); v != "" {
		if t, err = time.Parse(time.RFC3339, v); err != nil {
			return f, t, "to: want an RFC 3339 time"
		}
	}
	return f, t, ""
}

// trimAll trims the strings and drops the empty ones.
func trimAll(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

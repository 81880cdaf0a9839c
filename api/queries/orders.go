package queries

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/models"
)

// maxQueryOrders is the most orders one query may name or return.
const maxQueryOrders = 100

type retrievalRequest struct {
	MerchantID     string `json:"merchant_id"`
	AccountID      string `json:"account_id"`
	EncryptionData string `json:"encryption_data"`
	Orders         string `json:"orders"`
	Trades         string `json:"trades"`
	StartTime      string `json:"start_time"`
	EndTime        string `json:"end_time"`
	Cursor         string `json:"cursor"`
}

func (r *retrievalRequest) Trim() {
	r.MerchantID, r.AccountID = strings.TrimSpace(r.MerchantID), strings.TrimSpace(r.AccountID)
	r.EncryptionData = strings.TrimSpace(r.EncryptionData)
}

func (r *retrievalRequest) Echo() api.Echo {
	return api.Echo{MerchantID: r.MerchantID, AccountID: r.AccountID}
}

func (r *retrievalRequest) Signature() string { return r.EncryptionData }

// SignedValues are the query recipe's: the ids alone (docs/design.md §3).
func (r *retrievalRequest) SignedValues() []string { return []string{r.MerchantID, r.AccountID} }

// retrievalTrans answers the orders a query names (orders, trades); with
// neither, a page of the orders of a time window; with no window either,
// the orders as they last changed, from a cursor on (or the latest 100).
func (h *Handler) retrievalTrans(c *gin.Context) {
	var req retrievalRequest
	m, ok := h.Gate.AcceptMerchant(c, api.QueryAnswers, &req)
	if !ok || !m.FromQueryAddress() {
		return
	}
	sel, code := req.selection()
	if code != nil {
		m.Refuse(*code)
		return
	}
	list, next, err := h.queryOrders(c.Request.Context(), &req, sel)
	if err != nil {
		h.Gate.Logger.Error("query orders", "account_id", req.AccountID, "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	c.Set(api.ContextResultCode, codes.OK.ID)
	c.JSON(http.StatusOK, api.QueryAnswer{
		MerchantID: req.MerchantID, AccountID: req.AccountID,
		ReturnStatus: "1", ReturnMessage: "OK", OrdersList: list, NextCursor: next,
	})
}

// querySelection is what a query asks for: the orders it names; or, when
// it names none, a page of the orders created in [from, to); or, with no
// window either, the orders in the order they last changed (changes), after
// the change a cursor names or the latest 100.
type querySelection struct {
	orderNos, trades []string
	from, to         time.Time
	changes          bool
	after            *models.OrderChange
}

func (q querySelection) named() bool { return len(q.orderNos)+len(q.trades) > 0 }

// selection reads what the query asks for, or the code that refuses it.
func (r *retrievalRequest) selection() (querySelection, *codes.Code) {
	fail := func(c codes.Code) (querySelection, *codes.Code) { return querySelection{}, &c }
	sel := querySelection{orderNos: splitList(r.Orders), trades: splitList(r.Trades)}
	if len(sel.orderNos)+len(sel.trades) > maxQueryOrders {
		return fail(codes.TooManyOrders.With("at most 100 orders and trades together"))
	}
	if sel.named() {
		return sel, nil
	}
	if strings.TrimSpace(r.StartTime) == "" && strings.TrimSpace(r.EndTime) == "" {
		// Interface, Query transactions: the request names merchant_id,
		// account_id and encryption_data only, "used to synchronise order
		// status into a merchant's system".
		sel.changes = true
		if c := strings.TrimSpace(r.Cursor); c != "" {
			after, ok := parseChangeCursor(c)
			if !ok {
				return fail(codes.InvalidField.With("cursor: pass back next_cursor as it came"))
			}
			sel.after = &after
		}
		return sel, nil
	}
	if strings.TrimSpace(r.StartTime) == "" || strings.TrimSpace(r.EndTime) == "" {
		return fail(codes.MissingField.With("start_time and end_time together (yyyyMMddHHmmss)"))
	}
	from, to, ok := parseWindow(r.StartTime, r.EndTime)
	if !ok {
		return fail(codes.InvalidField.With("start_time and end_time (yyyyMMddHHmmss, start before end)"))
	}
	sel.from, sel.to = from, to
	return sel, nil
}

// changeCursor names the place after an order's last change: "c", the
// change's time in microseconds since 1970 (UTC), "-", the transaction id.
func changeCursor(o models.Order) string {
	return "c" + strconv.FormatInt(o.UpdatedAt.UnixMicro(), 10) + "-" + o.TransactionID
}

func parseChangeCursor(c string) (models.OrderChange, bool) {
	rest, ok := strings.CutPrefix(c, "c")
	micros, tx, ok2 := strings.Cut(rest, "-")
	n, err := strconv.ParseInt(micros, 10, 64)
	if !ok || !ok2 || err != nil || n < 0 || len(tx) != 19 || strings.Trim(tx, "0123456789") != "" {
		return models.OrderChange{}, false
	}
	return models.OrderChange{At: time.UnixMicro(n).UTC(), TransactionID: tx}, true
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseWindow reads the 14-digit UTC times of a paged query.
func parseWindow(start, end string) (time.Time, time.Time, bool) {
	from, err1 := time.Parse("20060102150405", strings.TrimSpace(start))
	to, err2 := time.Parse("20060102150405", strings.TrimSpace(end))
	if err1 != nil || err2 != nil || !from.Before(to) {
		return time.Time{}, time.Time{}, false
	}
	return from, to, true
}

package payments

import (
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/models"
)

// PageOrder finds the order of a checkout page (pageOrderKey says how) for the edge's page policy.
func (h *Handler) PageOrder(c *gin.Context, body []byte) *models.Order {
	if h.Gate.Records == nil {
		return nil
	}
	session, accountID, orderNo := pageOrderKey(c, body)
	switch {
	case session != "":
		if o, ok := h.sessionOrder(c, session); ok {
			return o
		}
	case accountID != "" && orderNo != "":
		if o, err := h.Gate.Records.FindOrderByNo(c.Request.Context(), accountID, orderNo); err == nil {
			return o
		}
	}
	return nil
}

// pageOrderKey says how to find the order of a checkout page, only from
// what proves itself: the hosted session posted with the card or cancel
// form (signed by us, checked by sessionOrder), or the account and
// order_no of a checkout request whose signature the handler accepted.
// Nothing is looked up for anyone else, so the header never tells a
// stranger the addresses of another's order.
func pageOrderKey(c *gin.Context, body []byte) (session, accountID, orderNo string) {
	if token := c.Request.PostForm.Get("session"); token != "" {
		return token, "", ""
	}
	if !api.Authenticated(c) || len(body) == 0 {
		return "", "", ""
	}
	req := api.RequestFields(body)
	return "", strings.TrimSpace(req["account_id"]), strings.TrimSpace(req["order_no"])
}

var _ api.PageOrders = (*Handler)(nil)

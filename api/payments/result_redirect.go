package payments

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// The shopper comes back to the merchant's return_url (or cancel_url) with
// the order's payment result in the query string, signed like every payment
// result; never with card data.

// resultFields are the signed payment result a shopper brings back to the
// merchant (docs/design.md §3, payment-result recipe). The merchant proved the key
// when it placed the order, so the result is signed with the account's key.
func (h *Handler) resultFields(o *models.Order, res *workflows.PaymentResult) (url.Values, error) {
	account, err := h.Gate.Accounts.Load(context.Background(), o.MerchantID, o.AccountID)
	if err != nil {
		return nil, fmt.Errorf("load account %s: %w", o.AccountID, err)
	}
	result := signing.PaymentResult{
		MerchantID: o.MerchantID, AccountID: o.AccountID, TransactionID: o.TransactionID, OrderNo: o.OrderNo,
		Currency: o.Currency, Amount: money.FromMinor(o.Amount, o.Currency).String(),
		OrderStatus: res.OrderStatus.String(), ResultInfo: res.Code().String(),
	}
	v := url.Values{}
	result.Each(v.Set)
	v.Set("encryption_data", signing.SignPaymentResult(account.SignKey(), result))
	return v, nil
}

// redirectWithResult sends the browser to target with the signed result in
// the query string; it never holds card data.
func (h *Handler) redirectWithResult(c *gin.Context, target string, o *models.Order, res *workflows.PaymentResult) {
	v, err := h.resultFields(o, res)
	if err != nil {
		h.Gate.Logger.Error("sign payment result", "transaction_id", o.TransactionID, "error", err)
		h.Gate.ShopperMessage(c, http.StatusServiceUnavailable, o.Details.DefaultLang, "payment_failed", codes.SystemError)
		return
	}
	u, err := url.Parse(target)
	if err != nil {
		h.Gate.ShopperMessage(c, http.StatusOK, o.Details.DefaultLang, "payment_failed", res.Code())
		return
	}
	q := u.Query()
	for k, vals := range v {
		q[k] = vals
	}
	u.RawQuery = q.Encode()
	c.Set(api.ContextResultCode, res.ResultCode)
	c.Redirect(http.StatusSeeOther, u.String())
}

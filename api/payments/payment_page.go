package payments

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/checkout"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

// paymentPage answers the shopper's browser, posting the forwarding page
// back, with our payment page for the order the signed request made.
func (h *Handler) paymentPage(m *api.Merchant, req *checkoutRequest) {
	c := m.GinContext()
	o, err := h.Gate.Records.FindOrderByNo(c.Request.Context(), req.AccountID, req.OrderNo)
	if err != nil {
		m.Refuse(codes.OrderNotFound)
		return
	}
	h.renderPayment(m.GinContext(), o, m.Account(), "")
}

// renderPayment answers the payment page of o, with errorText when the
// shopper's card was refused; an order that no longer waits for a card
// gets a message instead.
func (h *Handler) renderPayment(c *gin.Context, o *models.Order, account *merchant.Account, errorText string) {
	lang := o.Details.DefaultLang
	switch {
	case o.PaymentStatus == status.Expired:
		h.Gate.ShopperMessage(c, http.StatusOK, lang, "session_expired", codes.SessionExpired)
		return
	case o.PaymentStatus != status.Pending || o.CardToken != "" || o.Details.PaymentMethod != "":
		h.Gate.ShopperMessage(c, http.StatusOK, lang, "payment_failed", codes.InvalidState.With("the order is not waiting for a payment"))
		return
	}
	c.Set(api.ContextResultCode, codes.AwaitingShopper.ID)
	api.StartPage(c, http.StatusOK)
	err := checkout.RenderPaymentPage(c.Writer, checkout.PaymentPageData{
		Lang:         lang,
		Session:      h.sessionFor(o.TransactionID),
		MerchantName: account.Name,
		OrderNo:      o.OrderNo,
		Amount:       money.FromMinor(o.Amount, o.Currency).String(),
		Currency:     o.Currency,
		Items:        checkout.ParseItems(o.Details.Items),
		PayAction:    "/v1/checkout/pay",
		CancelAction: "/v1/checkout/cancel",
		Error:        errorText,
		Brands:       []string{"visa", "mastercard", "amex"},
		Methods:      h.pageMethods(c.Request.Context(), account, o),
		APMAction:    "/v1/checkout/apm",
	})
	if err != nil {
		h.Gate.Logger.Error("render payment page", "error", err)
	}
}

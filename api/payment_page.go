package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api/checkout"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

// paymentPage answers the shopper's browser, posting the forwarding page
// back, with our payment page for the order the signed request made.
func (s *Server) paymentPage(m *Merchant, req *checkoutRequest) {
	o, err := s.Records.FindOrderByNo(m.c.Request.Context(), req.AccountID, req.OrderNo)
	if err != nil {
		m.Refuse(codes.OrderNotFound)
		return
	}
	s.renderPayment(m.c, o, m.account.Name, "")
}

// renderPayment answers the payment page of o, with errorText when the
// shopper's card was refused; an order that no longer waits for a card
// gets a message instead.
func (s *Server) renderPayment(c *gin.Context, o *models.Order, merchantName, errorText string) {
	lang := o.Details.DefaultLang
	switch {
	case o.PaymentStatus == status.Expired:
		s.shopperMessage(c, http.StatusOK, lang, "session_expired", codes.SessionExpired)
		return
	case o.PaymentStatus != status.Pending || o.CardToken != "":
		s.shopperMessage(c, http.StatusOK, lang, "payment_failed", codes.InvalidState.With("the order is not waiting for a payment"))
		return
	}
	c.Set(ContextResultCode, codes.AwaitingShopper.ID)
	startPage(c, http.StatusOK)
	err := checkout.RenderPaymentPage(c.Writer, checkout.PaymentPageData{
		Lang:         lang,
		Session:      s.sessionFor(o.TransactionID),
		MerchantName: merchantName,
		OrderNo:      o.OrderNo,
		Amount:       money.FromMinor(o.Amount, o.Currency).String(),
		Currency:     o.Currency,
		Items:        checkout.ParseItems(o.Details.Items),
		PayAction:    "/v1/checkout/pay",
		CancelAction: "/v1/checkout/cancel",
		Error:        errorText,
		Brands:       []string{"visa", "mastercard", "amex"},
	})
	if err != nil {
		s.Logger.Error("render payment page", "error", err)
	}
}

// startPage sets the status and headers of a page for the shopper's
// browser: HTML, never cached (it may hold a session or a result).
func startPage(c *gin.Context, httpStatus int) {
	c.Status(httpStatus)
	c.Header("Content-Type", "text/html; charset=utf-8")
	c.Header("Cache-Control", "no-store")
}

// shopperMessage renders a short page for the shopper.
func (s *Server) shopperMessage(c *gin.Context, httpStatus int, lang, titleKey string, code codes.Code) {
	c.Set(ContextResultCode, code.ID)
	startPage(c, httpStatus)
	if err := checkout.RenderMessage(c.Writer, lang, checkout.Message(lang, titleKey), code.String()); err != nil {
		s.Logger.Error("render page", "error", err)
	}
}

package payments

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/checkout"
	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/adapters/vault"
	"github.com/paygate/paygate/internal/domain/card"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// checkoutPay takes the card the shopper typed on the payment page. The
// card travels only in this POST's body and goes straight to the vault.
func (h *Handler) checkoutPay(c *gin.Context) {
	ctx := c.Request.Context()
	o, ok := h.sessionForm(c)
	if !ok {
		return
	}
	f := c.Request.PostForm
	lang := o.Details.DefaultLang
	account, err := h.Gate.Accounts.Load(ctx, o.MerchantID, o.AccountID)
	if err != nil {
		h.Gate.ShopperMessage(c, http.StatusServiceUnavailable, lang, "payment_failed", codes.SystemError)
		return
	}
	pan := strings.ReplaceAll(strings.TrimSpace(f.Get("card_number")), " ", "")
	month, year := strings.TrimSpace(f.Get("expiry_month")), strings.TrimSpace(f.Get("expiry_year"))
	cvv, holder := strings.TrimSpace(f.Get("security_code")), strings.TrimSpace(f.Get("card_holder"))
	var problem string
	switch {
	case holder == "":
		problem = "missing_holder"
	case card.ValidateNumber(pan) != nil:
		problem = "invalid_number"
	case errors.Is(card.CheckExpiry(month, year, h.Gate.Now()), card.ErrExpired):
		problem = "expired_card"
	case card.CheckExpiry(month, year, h.Gate.Now()) != nil:
		problem = "invalid_expiry"
	case card.ValidateCVV(cvv, card.Brand(pan)) != nil:
		problem = "invalid_cvv"
	case account.Mode != testmode.Test && testmode.IsTestCard(pan):
		problem = "test_card_live"
	}
	if problem != "" {
		h.renderPayment(c, o, account, checkout.Message(lang, problem))
		return
	}
	// Each submit seals the card under a scope of its own, so that a
	// refused submit can forget its entry without touching the one another
	// submit of the same card (a double click) gave the order.
	nonce := make([]byte, 8)
	if _, err := rand.Read(nonce); err != nil {
		h.Gate.ShopperMessage(c, http.StatusServiceUnavailable, lang, "payment_failed", codes.SystemError)
		return
	}
	scope := o.WorkflowID + "/checkout/" + hex.EncodeToString(nonce)
	token, created, err := h.Vault.Tokenize(ctx, scope, vault.Card{Number: pan, ExpiryMonth: month, ExpiryYear: year, CVV: cvv})
	if err != nil {
		h.Gate.Logger.Error("tokenize card", "transaction_id", o.TransactionID, "error", err)
		h.Gate.ShopperMessage(c, http.StatusServiceUnavailable, lang, "payment_failed", codes.SystemError)
		return
	}
	res, err := h.Shopper.Pay(ctx, o.WorkflowID, workflows.PayRequest{Card: h.cardRef(token, pan)})
	if err != nil {
		if payRefused(err) {
			// The order did not take this card (a second submit, an order
			// no longer waiting): the entry this submit sealed has no use.
			// Any other error may hide a card the order did take.
			h.forgetToken(c, token, created)
		}
		h.Gate.Logger.Warn("checkout pay", "transaction_id", o.TransactionID, "error", err)
		h.renderPayment(c, o, account, checkout.Message(lang, "payment_failed"))
		return
	}
	if res.OrderStatus == status.OrderPending && res.IssuerURL != "" {
		// 3-D Secure challenge: the ACS sends the shopper back to us.
		c.Set(api.ContextResultCode, res.ResultCode)
		c.Redirect(http.StatusSeeOther, res.IssuerURL)
		return
	}
	h.redirectWithResult(c, o.Details.ReturnURL, o, &res)
}

// checkoutCancel ends a checkout the shopper left and sends them to the
// merchant's cancel_url (or return_url).
func (h *Handler) checkoutCancel(c *gin.Context) {
	o, ok := h.sessionForm(c)
	if !ok {
		return
	}
	res, err := h.Shopper.CancelCheckout(c.Request.Context(), o.WorkflowID)
	if err != nil {
		h.Gate.ShopperMessage(c, http.StatusOK, o.Details.DefaultLang, "payment_failed", codes.InvalidState.With("the order is not waiting for the shopper"))
		return
	}
	target := o.Details.CancelURL
	if target == "" || res.PaymentStatus == status.Paid {
		// A shopper who paid at the APM provider before cancelling here
		// has paid: they go where a payment goes.
		target = o.Details.ReturnURL
	}
	h.redirectWithResult(c, target, o, &res)
}

// sessionForm reads the form of the payment page (card or cancel) and the
// order its session names; it answers the refusal itself. The session,
// signed by us, is the form's only proof: the shopper has no key.
func (h *Handler) sessionForm(c *gin.Context) (*models.Order, bool) {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, api.MaxBodyBytes)
	if err := c.Request.ParseForm(); err != nil {
		h.Gate.ShopperMessage(c, http.StatusBadRequest, "en", "payment_failed", codes.MalformedRequest)
		return nil, false
	}
	o, ok := h.sessionOrder(c, c.Request.PostForm.Get("session"))
	if !ok {
		h.Gate.ShopperMessage(c, http.StatusForbidden, "en", "payment_failed", codes.BadSignature)
		return nil, false
	}
	return o, true
}

// payRefused reports whether the pay update was refused before the order
// took the card: its validator said no, or the order is gone.
func payRefused(err error) bool {
	var appErr *temporal.ApplicationError
	return errors.Is(err, flows.ErrOrderClosed) || errors.As(err, &appErr) && appErr.Type() == workflows.ErrTypeEntryRefused
}

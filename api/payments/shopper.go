package payments

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// ShopperFlows runs the shopper's side of orders.
type ShopperFlows interface {
	SignalThreeDS(ctx context.Context, workflowID string, r workflows.ThreeDSResult) error
	SignalAPM(ctx context.Context, workflowID string, r workflows.APMResult) error
	State(ctx context.Context, workflowID string) (workflows.OrderState, error)
	Pay(ctx context.Context, workflowID string, req workflows.PayRequest) (workflows.PaymentResult, error)
	PayAPM(ctx context.Context, workflowID string, req workflows.PayAPMRequest) (workflows.PaymentResult, error)
	CancelCheckout(ctx context.Context, workflowID string) (workflows.PaymentResult, error)
}

// threeDSCallback receives the ACS's answer from the shopper's browser (a
// POSTed form, or a GET whose query holds it, as Stripe sends). It
// checks the ACS's signature, then only wakes the order with the
// authentication's id: the order asks the ACS for the outcome and never
// records the status, ECI or CAVV posted here. The shopper is then sent on
// with the order's result.
func (h *Handler) threeDSCallback(c *gin.Context) {
	ctx := c.Request.Context()
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, api.MaxBodyBytes)
	if err := c.Request.ParseForm(); err != nil {
		if bodyOverLimit(err) {
			h.Gate.ShopperMessage(c, http.StatusRequestEntityTooLarge, "en", "payment_failed", codes.RequestTooLarge)
			return
		}
		h.Gate.ShopperMessage(c, http.StatusBadRequest, "en", "payment_failed", codes.MalformedRequest)
		return
	}
	read := func(r CallbackReader) (connector.ThreeDSCallback, error) {
		// A POSTed ACS form, or the query of a return by GET (Stripe's).
		return r.ReadThreeDSResult(c.Request.Form)
	}
	cb, err := readByAConnector(h, read)
	if errors.Is(err, connector.ErrCallbackMalformed) {
		h.Gate.ShopperMessage(c, http.StatusBadRequest, "en", "payment_failed", codes.MalformedRequest)
		return
	}
	if err != nil {
		h.Gate.ShopperMessage(c, http.StatusForbidden, "en", "payment_failed", codes.BadSignature)
		return
	}
	o, err := h.Gate.Records.FindOrderByID(ctx, cb.Reference)
	if err != nil {
		h.Gate.ShopperMessage(c, http.StatusNotFound, "en", "payment_failed", codes.OrderNotFound)
		return
	}
	if !readByOrdersConnector(h, o, cb, read) {
		h.Gate.ShopperMessage(c, http.StatusForbidden, "en", "payment_failed", codes.BadSignature)
		return
	}
	if err := h.Shopper.SignalThreeDS(ctx, o.WorkflowID, workflows.ThreeDSResult{AuthenticationID: cb.AuthenticationID}); err != nil {
		h.Gate.Logger.Error("signal 3-D Secure callback", "transaction_id", o.TransactionID, "error", err)
		h.Gate.ShopperMessage(c, http.StatusServiceUnavailable, o.Details.DefaultLang, "payment_failed", codes.SystemError)
		return
	}
	h.sendShopperOn(c, o)
}

// apmCallback receives the APM provider's server-to-server callback. It
// checks the provider's signature, then only wakes the order with the
// payment's id: the order asks the provider for the payment's status and
// never records the status posted here.
func (h *Handler) apmCallback(c *gin.Context) {
	ctx := c.Request.Context()
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, api.MaxBodyBytes))
	if err != nil {
		if bodyOverLimit(err) {
			c.JSON(http.StatusRequestEntityTooLarge, gin.H{"error": "body too large"})
			return
		}
		c.JSON(http.StatusBadRequest, gin.H{"error": "unreadable body"})
		return
	}
	read := func(r CallbackReader) (connector.APMCallback, error) {
		return r.ReadAPMCallback(body, c.Request.Header)
	}
	cb, err := readByAConnector(h, read)
	if errors.Is(err, connector.ErrCallbackMalformed) {
		c.JSON(http.StatusBadRequest, gin.H{"error": "malformed callback"})
		return
	}
	if err != nil {
		h.Gate.Logger.Warn("APM callback with a bad signature", "client_ip", c.ClientIP())
		c.JSON(http.StatusUnauthorized, gin.H{"error": "bad signature"})
		return
	}
	o, ok := callbackOrder(c, h, cb.Reference)
	if !ok {
		return
	}
	if !readByOrdersConnector(h, o, cb, read) {
		c.JSON(http.StatusUnauthorized, gin.H{"error": "bad signature"})
		return
	}
	if err := h.Shopper.SignalAPM(ctx, o.WorkflowID, workflows.APMResult{PaymentID: cb.PaymentID}); err != nil {
		h.Gate.Logger.Error("signal APM callback", "transaction_id", o.TransactionID, "error", err)
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "try again"})
		return
	}
	c.JSON(http.StatusOK, gin.H{"ok": true})
}

// webhook receives an event a connector's provider posts
// (POST /v1/webhooks/{connector}). It checks the connector's signature and
// only wakes an order of that connector still waiting for its shopper, as
// the shopper's return would; the order then asks the provider. Events of
// nothing the gateway waits for are acknowledged and left, so that the
// provider does not send them again.
func (h *Handler) webhook(c *gin.Context) {
	ctx := c.Request.Context()
	name := c.Param("connector")
	var wr WebhookReader
	if h.Callbacks != nil {
		if r, err := h.Callbacks.Get(name); err == nil {
			wr, _ = r.(WebhookReader)
		}
	}
	if wr == nil || name == "" {
		c.JSON(http.StatusNotFound, gin.H{"error": "no webhooks for this connector"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, api.MaxBodyBytes))
	if err != nil {
		c.JSON(http.StatusBadRequest, gin.H{"error": "unreadable body"})
		return
	}
	if dr, ok := wr.(disputeWebhookReader); ok {
		if handled := h.disputeWebhook(c, name, dr, body); handled {
			return
		}
	}
	cb, err := wr.ReadWebhook(body, c.Request.Header)
	switch {
	case errors.Is(err, connector.ErrCallbackIrrelevant):
		c.JSON(http.StatusOK, gin.H{"ok": true, "ignored": "nothing waits for it"})
		return
	case errors.Is(err, connector.ErrCallbackMalformed):
		c.JSON(http.StatusBadRequest, gin.H{"error": "malformed event"})
		return
	case err != nil:
		h.Gate.Logger.Warn("webhook with a bad signature", "connector", name, "client_ip", c.ClientIP())
		c.JSON(http.StatusUnauthorized, gin.H{"error": "bad signature"})
		return
	}
	o, err := h.Gate.Records.FindOrderByID(ctx, cb.Reference)
	if err != nil || o.Connector != name || o.PaymentStatus != status.Pending {
		// Not an order of this connector waiting for its shopper: the
		// order asks the provider itself whenever it needs to.
		c.JSON(http.StatusOK, gin.H{"ok": true, "ignored": "no order waits for it"})
		return
	}
	if err := h.Shopper.SignalThreeDS(ctx, o.WorkflowID, workflows.ThreeDSResult{AuthenticationID: cb.AuthenticationID}); err != nil {
		h.Gate.Logger.Error("signal webhook", "connector", name, "transaction_id", o.TransactionID, "error", err)
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "try again"})
		return
	}
	c.JSON(http.StatusOK, gin.H{"ok": true})
}

// bodyOverLimit reports whether err is a body over its http.MaxBytesReader limit.
func bodyOverLimit(err error) bool {
	var e *http.MaxBytesError
	return errors.As(err, &e)
}

// finalState waits (a bounded time) until the order no longer waits for
// its shopper.
func (h *Handler) finalState(ctx context.Context, workflowID string) (workflows.OrderState, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := h.Shopper.State(ctx, workflowID)
		if err == nil && st.PaymentStatus != status.Pending && st.Result != nil {
			return st, nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("the order is still pending")
			}
			return st, err
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// sendShopperOn waits for the order's final result and sends the shopper
// to the merchant's return_url with the signed result, or shows it.
func (h *Handler) sendShopperOn(c *gin.Context, o *models.Order) {
	lang := o.Details.DefaultLang
	st, err := h.finalState(c.Request.Context(), o.WorkflowID)
	if err != nil || st.Result == nil {
		h.Gate.Logger.Warn("order result not final yet", "transaction_id", o.TransactionID, "error", err)
		h.Gate.ShopperMessage(c, http.StatusOK, lang, "processing", codes.AwaitingShopper)
		return
	}
	target := o.Details.ReturnURL
	if target == "" {
		title := "payment_failed"
		if st.Result.OrderStatus == status.OrderSuccess {
			title = "pay_title"
		}
		h.Gate.ShopperMessage(c, http.StatusOK, lang, title, st.Result.Code())
		return
	}
	h.redirectWithResult(c, target, o, st.Result)
}

package payments

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/status"
)

// DisputeFlows wakes a dispute's workflow, starting it on the first word.
type DisputeFlows interface {
	Word(ctx context.Context, connector, disputeID string) error
}

// disputeCallbackReader is a connector whose acquirer calls back about
// disputes.
type disputeCallbackReader interface {
	ReadDisputeCallback(body []byte, header http.Header) (connector.DisputeCallback, error)
}

// disputeCallback receives an acquirer's dispute callback
// (POST /v1/disputes/callback). It checks the acquirer's signature, finds
// the order the dispute is of, checks that order's connector signed it,
// and only wakes the dispute's workflow, which asks the acquirer: what the
// callback says is never recorded.
func (h *Handler) disputeCallback(c *gin.Context) {
	ctx := c.Request.Context()
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, api.MaxBodyBytes))
	if err != nil {
		c.JSON(http.StatusBadRequest, gin.H{"error": "unreadable body"})
		return
	}
	read := func(r CallbackReader) (connector.DisputeCallback, error) {
		dr, ok := r.(disputeCallbackReader)
		if !ok {
			return connector.DisputeCallback{}, connector.ErrCallbackUnsigned
		}
		return dr.ReadDisputeCallback(body, c.Request.Header)
	}
	cb, err := readByAConnector(h, read)
	if errors.Is(err, connector.ErrCallbackMalformed) {
		c.JSON(http.StatusBadRequest, gin.H{"error": "malformed callback"})
		return
	}
	if err != nil {
		h.Gate.Logger.Warn("dispute callback with a bad signature", "client_ip", c.ClientIP())
		c.JSON(http.StatusUnauthorized, gin.H{"error": "bad signature"})
		return
	}
	o, ok := callbackOrder(c, h, cb.Reference)
	if !ok {
		return
	}
	if o.Connector == "" && o.PaymentStatus == status.Pending {
		// The acquirer disputes a charge whose outcome the order has not
		// recorded yet (a worker that died mid-charge, its successor not
		// there yet): asked again later, the order will name its connector.
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "the order's charge is not recorded yet; try again"})
		return
	}
	if !readByOrdersConnector(h, o, cb, read) || o.Connector == "" {
		h.Gate.Logger.Warn("dispute callback not signed by the order's connector", "transaction_id", o.TransactionID,
			"connector", o.Connector, "dispute_id", cb.DisputeID)
		c.JSON(http.StatusUnauthorized, gin.H{"error": "bad signature"})
		return
	}
	if h.Disputes == nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "disputes are not configured"})
		return
	}
	if err := h.Disputes.Word(ctx, o.Connector, cb.DisputeID); err != nil {
		h.Gate.Logger.Error("wake dispute", "transaction_id", o.TransactionID, "dispute_id", cb.DisputeID, "error", err)
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "try again"})
		return
	}
	c.JSON(http.StatusOK, gin.H{"ok": true})
}

// disputeWebhookReader is a connector whose provider's webhook events may
// name disputes (Stripe's charge.dispute.* events).
type disputeWebhookReader interface {
	ReadDisputeWebhook(body []byte, header http.Header) (connector.DisputeCallback, error)
}

// disputeWebhook wakes the dispute a provider's webhook event names,
// answering it, and reports whether the event was one; any other event
// (connector.ErrCallbackIrrelevant, or one the reader refuses) is left to
// the order webhook, which checks it again.
func (h *Handler) disputeWebhook(c *gin.Context, name string, dr disputeWebhookReader, body []byte) bool {
	cb, err := dr.ReadDisputeWebhook(body, c.Request.Header)
	if err != nil {
		return false
	}
	if h.Disputes == nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "disputes are not configured"})
		return true
	}
	if err := h.Disputes.Word(c.Request.Context(), name, cb.DisputeID); err != nil {
		h.Gate.Logger.Error("wake dispute", "connector", name, "dispute_id", cb.DisputeID, "error", err)
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "try again"})
		return true
	}
	c.JSON(http.StatusOK, gin.H{"ok": true})
	return true
}

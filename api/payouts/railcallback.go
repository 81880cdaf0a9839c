package payouts

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/adapters/rail"
	"github.com/paygate/paygate/models"
)

// RailWaker wakes a payout whose rail says its transfer moved.
type RailWaker interface {
	TransferMoved(ctx context.Context, payoutID string) error
}

// railCallback handles POST /v1/payout/rail-callback: the rail's signed
// word that a transfer moved. The transfer's idempotency key is the
// payout's workflow id; only a recorded payout is woken.
func (h *Handler) railCallback(c *gin.Context) {
	if h.Rail == nil || h.RailSecret == "" {
		c.JSON(http.StatusNotFound, gin.H{"error": "rail callbacks are not configured"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, api.MaxBodyBytes))
	if err != nil {
		c.JSON(http.StatusBadRequest, gin.H{"error": "unreadable body"})
		return
	}
	cb, err := rail.ReadCallback(h.RailSecret, body, c.GetHeader(rail.SignatureHeader))
	if errors.Is(err, rail.ErrCallbackUnsigned) {
		h.Gate.Logger.Warn("rail callback with a bad signature", "client_ip", c.ClientIP())
		c.JSON(http.StatusUnauthorized, gin.H{"error": "bad signature"})
		return
	}
	if err != nil {
		c.JSON(http.StatusBadRequest, gin.H{"error": "malformed callback"})
		return
	}
	ctx := c.Request.Context()
	if h.Gate.Records == nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "try again"})
		return
	}
	if _, err := h.Gate.Records.FindPayout(ctx, cb.IdempotencyKey); errors.Is(err, models.ErrPayoutNotFound) {
		c.JSON(http.StatusNotFound, gin.H{"error": "unknown payout"})
		return
	} else if err != nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "try again"})
		return
	}
	switch err := h.Rail.TransferMoved(ctx, cb.IdempotencyKey); {
	case errors.Is(err, flows.ErrPayoutNotRunning):
		// The payout ended already (it polled the outcome first).
		c.JSON(http.StatusOK, gin.H{"ok": true})
	case err != nil:
		h.Gate.Logger.Error("wake payout", "payout", cb.IdempotencyKey, "error", err)
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "try again"})
	default:
		c.JSON(http.StatusOK, gin.H{"ok": true})
	}
}

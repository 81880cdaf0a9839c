package payouts

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/models"
)

// RailWaker wakes a payout whose rail says its transfer moved.
type RailWaker interface {
	TransferMoved(ctx context.Context, payoutID string) error
}

// railSignatureHeader carries the rail's signature of a callback: the hex
// HMAC-SHA256 of the body under the rail's secret.
const railSignatureHeader = "X-Rail-Signature"

// railCallback is what the rail posts when a transfer moves. It is a rumour:
// it only wakes the payout, which asks the rail what became of the transfer.
type railCallback struct {
	TransferID     string `json:"transfer_id"`
	IdempotencyKey string `json:"idempotency_key"`
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
	mac := hmac.New(sha256.New, []byte(h.RailSecret))
	mac.Write(body)
	got, err := hex.DecodeString(c.GetHeader(railSignatureHeader))
	if err != nil || !hmac.Equal(got, mac.Sum(nil)) {
		h.Gate.Logger.Warn("rail callback with a bad signature", "client_ip", c.ClientIP())
		c.JSON(http.StatusUnauthorized, gin.H{"error": "bad signature"})
		return
	}
	var cb railCallback
	if err := json.Unmarshal(body, &cb); err != nil || !strings.HasPrefix(cb.IdempotencyKey, "payout/") || cb.TransferID == "" {
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

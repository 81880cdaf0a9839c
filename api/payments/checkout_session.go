package payments

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/models"
)

// sessionFor signs a hosted payment session: the page can name only the
// order it was made for.
func (h *Handler) sessionFor(transactionID string) string {
	m := hmac.New(sha256.New, h.Gate.SessionKey)
	m.Write([]byte("checkout-session|" + transactionID))
	return transactionID + "." + hex.EncodeToString(m.Sum(nil))[:32]
}

// sessionOrder finds the order a session token names, once its signature
// holds.
func (h *Handler) sessionOrder(c *gin.Context, token string) (*models.Order, bool) {
	txID, _, ok := strings.Cut(token, ".")
	if !ok || !hmac.Equal([]byte(h.sessionFor(txID)), []byte(token)) {
		return nil, false
	}
	o, err := h.Gate.Records.FindOrderByID(c.Request.Context(), txID)
	return o, err == nil
}

package api

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
func (s *Server) sessionFor(transactionID string) string {
	m := hmac.New(sha256.New, s.SessionKey)
	m.Write([]byte("checkout-session|" + transactionID))
	return transactionID + "." + hex.EncodeToString(m.Sum(nil))[:32]
}

// sessionOrder finds the order a session token names, once its signature
// holds.
func (s *Server) sessionOrder(c *gin.Context, token string) (*models.Order, bool) {
	txID, _, ok := strings.Cut(token, ".")
	if !ok || !hmac.Equal([]byte(s.sessionFor(txID)), []byte(token)) {
		return nil, false
	}
	o, err := s.Records.FindOrderByID(c.Request.Context(), txID)
	return o, err == nil
}

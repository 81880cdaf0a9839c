package admin

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/adapters/erasure"
	"github.com/paygate/paygate/models"
)

// ShopperEraser erases a shopper's personal data; *erasure.Service is one.
type ShopperEraser interface {
	Erase(ctx context.Context, req models.ErasureRequest) (models.PersonalDataErasure, error)
}

type eraseRequest struct {
	MerchantID    string `json:"merchant_id"`
	Email         string `json:"email"`
	TransactionID string `json:"transaction_id"`
	By            string `json:"by"`
	Reason        string `json:"reason"`
}

// ErasureAnswer is what POST /admin/shoppers/erase answers: the audit
// record's id and what the erasure reached.
type ErasureAnswer struct {
	ErasureID   uint `json:"erasure_id"`
	Orders      int  `json:"orders"`
	Payouts     int  `json:"payouts"`
	StoredCards int  `json:"stored_cards"`
	VaultCards  int  `json:"vault_cards"`
	// Open counts records found but still in progress, left as they are:
	// erase again once they are over.
	Open int `json:"open"`
}

// eraseShopper erases the personal data of a shopper's orders and payouts,
// by email or by transaction id, and answers what it reached.
func (a *API) eraseShopper(c *gin.Context) {
	var body eraseRequest
	if !a.request(c, a != nil && a.Erasures != nil, maxBody, &body) {
		return
	}
	req, msg := body.erasure()
	if msg != "" {
		c.JSON(http.StatusBadRequest, answerError{msg})
		return
	}
	rec, err := a.Erasures.Erase(context.WithoutCancel(c.Request.Context()), req)
	if errors.Is(err, models.ErrNothingToErase) {
		c.JSON(http.StatusBadRequest, answerError{err.Error()})
		return
	}
	if err != nil {
		a.logger().Error("erase personal data", "by", req.RequestedBy, "error", err)
		c.JSON(http.StatusServiceUnavailable, answerError{"erasure unavailable, try again"})
		return
	}
	// The log names the erasure, never the email.
	a.logger().Info("personal data erased", "erasure", rec.ID, "by", req.RequestedBy, "merchant_id", req.MerchantID,
		"transaction_id", req.TransactionID, "orders", rec.Orders, "payouts", rec.Payouts,
		"stored_cards", rec.StoredCards, "vault_cards", rec.VaultCards, "open", rec.Open)
	c.JSON(http.StatusOK, ErasureAnswer{ErasureID: rec.ID, Orders: rec.Orders, Payouts: rec.Payouts,
		StoredCards: rec.StoredCards, VaultCards: rec.VaultCards, Open: rec.Open})
}

// erasure validates the request; the message is empty when it is good.
func (r *eraseRequest) erasure() (models.ErasureRequest, string) {
	req := models.ErasureRequest{
		MerchantID:    strings.TrimSpace(r.MerchantID),
		Email:         strings.TrimSpace(r.Email),
		TransactionID: strings.TrimSpace(r.TransactionID),
		RequestedBy:   "admin-api:" + strings.TrimSpace(r.By),
		Reason:        strings.TrimSpace(r.Reason),
	}
	if err := erasure.Check(req, strings.TrimSpace(r.By)); err != nil {
		return req, err.Error()
	}
	return req, ""
}

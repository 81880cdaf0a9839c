package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/order"
)

// authoriseRequest is a direct payment request: the order plus the card.
// The card fields stay here and go only into the vault.
type authoriseRequest struct {
	order.Details
	Card            order.Text `json:"card"`
	ExpirationMonth order.Text `json:"expiration_month"`
	ExpirationYear  order.Text `json:"expiration_year"`
	SecurityCode    order.Text `json:"security_code"`
	EncryptionData  string     `json:"encryption_data"`
}

// isAPM reports whether the request pays with an alternative payment
// method: payment_method and no card.
func (r *authoriseRequest) isAPM() bool { return r.PaymentMethod != "" && r.Card == "" }

// SignedValues are the fields of the request's recipe, in order: "authorise,
// APM" for an APM request, else "authorise, card".
func (r *authoriseRequest) SignedValues() []string {
	if r.isAPM() {
		return []string{r.MerchantID, r.AccountID, r.OrderNo, r.Currency, r.Amount.String(), r.PaymentMethod, r.ReturnURL}
	}
	return []string{r.MerchantID, r.AccountID, r.OrderNo, r.Currency, r.Amount.String(), r.FirstName,
		r.LastName, r.Card.String(), r.ExpirationYear.String(), r.ExpirationMonth.String(),
		r.SecurityCode.String(), r.ShopperEmail}
}

// Trim removes surrounding white space from the fields that are checked and
// signed, so that " 12.34" and "12.34" are the same order.
func (r *authoriseRequest) Trim() {
	for _, p := range []*string{&r.MerchantID, &r.AccountID, &r.OrderNo, &r.Currency, &r.FirstName,
		&r.LastName, &r.ShopperEmail, &r.PaymentMethod, &r.NotifyURL, &r.ShopperIP,
		&r.BillingCountry, &r.DeliveryCountry, &r.EncryptionData} {
		*p = strings.TrimSpace(*p)
	}
	TrimTexts(&r.Amount, &r.Card, &r.ExpirationMonth, &r.ExpirationYear, &r.SecurityCode)
}

// Echo is what a refusal repeats: the ids, order_no, amount and currency
// (failed keeps the last three only when they are well-formed).
func (r *authoriseRequest) Echo() Echo {
	return Echo{MerchantID: r.MerchantID, AccountID: r.AccountID, OrderNo: r.OrderNo,
		Amount: r.Amount.String(), Currency: r.Currency}
}

func (r *authoriseRequest) Signature() string { return r.EncryptionData }

// RequiresEncryptionData: encryption_data is a required field of a payment.
func (r *authoriseRequest) RequiresEncryptionData() {}

// authorise serves /v1/authorise: a direct card payment or an APM payment,
// answered with the XML respon.
func (s *Server) authorise(c *gin.Context) {
	var req authoriseRequest
	m, ok := s.AcceptMerchant(c, xmlAnswers, &req)
	if !ok {
		return
	}
	if req.isAPM() {
		s.authoriseAPM(m, &req)
		return
	}
	s.authoriseCard(m, &req)
}

// answerFromRecord answers a repeated request for an order whose workflow has
// closed: the record holds the first answer.
func (s *Server) answerFromRecord(m *Merchant, req *authoriseRequest, fingerprint, token string, created bool) {
	o, err := s.Records.FindOrderByNo(m.c.Request.Context(), req.AccountID, req.OrderNo)
	if err != nil {
		s.Logger.Error("load closed order", "order_no", req.OrderNo, "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	if o.CardToken != token {
		s.forgetToken(m.c, token, created)
	}
	if o.RequestFingerprint != fingerprint {
		m.Refuse(codes.DuplicateOrder)
		return
	}
	r := orderRespon(o)
	if o.RecurringID != "" {
		if sub, err := s.Records.FindSubscriptionByID(m.c.Request.Context(), o.RecurringID); err == nil {
			r.setRecurringFrom(sub)
		}
	}
	r.sign(m.key)
	renderXML(m.c, http.StatusOK, r, o.ResultCode)
}

// forgetToken removes a vault entry this request made and no order uses.
func (s *Server) forgetToken(c *gin.Context, token string, created bool) {
	if !created {
		return
	}
	if err := s.Vault.Delete(c.Request.Context(), token); err != nil {
		s.Logger.Warn("delete unused card token", "error", err)
	}
}

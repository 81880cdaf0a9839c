package payments

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api"
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
	api.TrimTexts(&r.Amount, &r.Card, &r.ExpirationMonth, &r.ExpirationYear, &r.SecurityCode)
}

// api.Echo is what a refusal repeats: the ids, order_no, amount and currency
// (failed keeps the last three only when they are well-formed).
func (r *authoriseRequest) Echo() api.Echo {
	return api.Echo{MerchantID: r.MerchantID, AccountID: r.AccountID, OrderNo: r.OrderNo,
		Amount: r.Amount.String(), Currency: r.Currency}
}

func (r *authoriseRequest) Signature() string { return r.EncryptionData }

// RequiresEncryptionData: encryption_data is a required field of a payment.
func (r *authoriseRequest) RequiresEncryptionData() {}

// authorise serves /v1/authorise: a direct card payment or an APM payment,
// answered with the XML respon.
func (h *Handler) authorise(c *gin.Context) {
	var req authoriseRequest
	m, ok := h.Gate.AcceptMerchant(c, api.XMLAnswers, &req)
	if !ok {
		return
	}
	if req.isAPM() {
		h.authoriseAPM(m, &req)
		return
	}
	h.authoriseCard(m, &req)
}

// answerFromRecord answers a repeated request for an order whose workflow has
// closed: the record holds the first answer.
func (h *Handler) answerFromRecord(m *api.Merchant, req *authoriseRequest, fingerprint, token string, created bool) {
	c := m.GinContext()
	o, err := h.Gate.Records.FindOrderByNo(c.Request.Context(), req.AccountID, req.OrderNo)
	if err != nil {
		h.Gate.Logger.Error("load closed order", "order_no", req.OrderNo, "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	if o.CardToken != token {
		h.forgetToken(m.GinContext(), token, created)
	}
	if o.RequestFingerprint != fingerprint {
		m.Refuse(codes.DuplicateOrder)
		return
	}
	r := api.OrderRespon(o)
	if o.RecurringID != "" {
		if sub, err := h.Gate.Records.FindSubscriptionByID(c.Request.Context(), o.RecurringID); err == nil {
			r.SetRecurringFrom(sub)
		}
	}
	r.Sign(m.Key())
	api.RenderXML(m.GinContext(), http.StatusOK, r, o.ResultCode)
}

// forgetToken removes a vault entry this request made and no order uses.
func (h *Handler) forgetToken(c *gin.Context, token string, created bool) {
	if !created {
		return
	}
	if err := h.Vault.Delete(c.Request.Context(), token); err != nil {
		h.Gate.Logger.Warn("delete unused card token", "error", err)
	}
}

// A payment request requires encryption_data, and a charge of a stored
// card moves money (storedcard.go).
var (
	_ api.EncryptionDataRequired = (*authoriseRequest)(nil)
	_ api.MoneyMover             = (*authoriseRequest)(nil)
)

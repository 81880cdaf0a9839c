package payments

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/checkout"
	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/order"
)

// checkoutRequest is a hosted payment request: the order without a card.
type checkoutRequest struct {
	order.Details
	EncryptionData string `json:"encryption_data"`
	SignInfo       string `json:"signInfo"`
}

// SignedValues are the fields of the checkout recipe (docs/design.md §3).
func (r *checkoutRequest) SignedValues() []string {
	return []string{r.MerchantID, r.AccountID, r.OrderNo, r.Currency, r.Amount.String(), r.ReturnURL}
}

func (r *checkoutRequest) Trim() {
	for _, p := range []*string{&r.MerchantID, &r.AccountID, &r.OrderNo, &r.Currency, &r.ReturnURL,
		&r.CancelURL, &r.NotifyURL, &r.EncryptionData, &r.SignInfo, &r.DefaultLang} {
		*p = strings.TrimSpace(*p)
	}
	api.TrimTexts(&r.Amount)
}

// api.Echo is what a refusal repeats: the page is in the order's language.
func (r *checkoutRequest) Echo() api.Echo {
	return api.Echo{MerchantID: r.MerchantID, AccountID: r.AccountID, Lang: r.DefaultLang}
}

// Signature is the merchant's encryption_data or, on the shopper's
// browser's post of the forwarding page, the same Signature as signInfo.
func (r *checkoutRequest) Signature() string {
	if r.EncryptionData != "" {
		return r.EncryptionData
	}
	return r.SignInfo
}

// fromBrowser reports whether the request is the shopper's browser posting
// the forwarding page back (signInfo, no encryption_data). The browser
// cannot send the strong signature's header, so a request that does is the
// merchant's.
func (r *checkoutRequest) fromBrowser(c *gin.Context) bool {
	return r.EncryptionData == "" && !api.StrongHeaderSent(c)
}

// checkoutGateway is what the forwarding page says of our side; its
// connector_code is the order's connector, from the workflow's answer.
var checkoutGateway = checkout.Gateway{PmID: "card", Descriptor: "PAYGATE", RRTimezone: "UTC"}

// checkoutPage handles both posts to /v1/checkout: the merchant's (signed
// with encryption_data: records the order and answers the forwarding page)
// and the shopper's browser's (carrying signInfo: answers the payment page).
func (h *Handler) checkoutPage(c *gin.Context) {
	var req checkoutRequest
	m, ok := h.Gate.AcceptMerchant(c, api.PageAnswers, &req)
	if !ok {
		return
	}
	if req.fromBrowser(c) {
		h.paymentPage(m, &req)
		return
	}
	h.startCheckout(m, &req)
}

// startCheckout records a hosted order and answers the forwarding page.
func (h *Handler) startCheckout(m *api.Merchant, req *checkoutRequest) {
	c := m.GinContext()
	amount, ok := h.admitOrder(m, func(a *merchant.Account) (money.Amount, *codes.Code) { return validateCheckout(req, a) })
	if !ok {
		return
	}
	// A hosted payment may start a subscription, as a direct one does
	// (interface, Payment order): it starts once the shopper has paid, on
	// the card the page kept.
	terms, code := h.subscriptionTerms(req.Subscription, amount)
	if code != nil {
		m.Refuse(*code)
		return
	}
	in := h.orderInput(m.Account(), newOrder{details: req.Details, amount: amount, kind: order.KindCheckout, subscription: terms})
	res, err := h.placeOrder(c.Request.Context(), in)
	switch {
	case errors.Is(err, flows.ErrOrderMismatch):
		m.Refuse(codes.DuplicateOrder)
		return
	case errors.Is(err, flows.ErrOrderClosed):
		m.Refuse(codes.InvalidState.With("the order is already closed"))
		return
	case err != nil:
		h.Gate.Logger.Error("start checkout", "order_no", req.OrderNo, "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	gw := checkoutGateway
	gw.ConnectorCode = res.Connector
	signInfo := req.EncryptionData
	if api.StrongHeaderSent(c) {
		// Signed strongly: the header proved the key (encryption_data,
		// if any, was not looked at), and the browser cannot send one. It
		// carries our own proof instead.
		signInfo = h.Gate.ForwardProof(req.SignedValues()...)
	}
	fields := checkout.ForwardingFields(api.RequestFields(m.Body()), gw, signInfo, c.ClientIP())
	c.Set(api.ContextResultCode, res.ResultCode)
	api.StartPage(c, http.StatusOK)
	if err := checkout.RenderForwarding(c.Writer, checkout.ForwardingData{Action: h.Gate.PublicURL + "/v1/checkout", Fields: fields}); err != nil {
		h.Gate.Logger.Error("render forwarding page", "error", err)
	}
}

// validateCheckout checks a signed hosted payment request and returns its
// amount, or the result code that refuses it.
func validateCheckout(req *checkoutRequest, account *merchant.Account) (money.Amount, *codes.Code) {
	fail := func(c codes.Code) (money.Amount, *codes.Code) { return money.Amount{}, &c }
	if missing := firstEmpty(map[string]string{"order_no": req.OrderNo, "currency": req.Currency, "amount": req.Amount.String()}); missing != "" {
		return fail(codes.MissingField.With(missing))
	}
	amount, code := validateRedirectOrder(&req.Details, account)
	if code != nil {
		return amount, code
	}
	if name := overlong(&req.Details); name != "" {
		return fail(codes.InvalidField.With(name + " is too long"))
	}
	return amount, nil
}

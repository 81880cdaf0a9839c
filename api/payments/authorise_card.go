package payments

import (
	"cmp"
	"errors"
	"net/http"
	"net/mail"
	"net/netip"
	"strings"
	"time"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/adapters/vault"
	"github.com/paygate/paygate/internal/domain/card"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/country"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/subscription"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/workflows"
)

// authoriseCard places a direct card payment. The card goes into the vault
// and only its token, masked number and fingerprint to the order's workflow.
func (h *Handler) authoriseCard(m *api.Merchant, req *authoriseRequest) {
	c := m.GinContext()
	ctx := c.Request.Context()
	amount, ok := h.admitOrder(m, func(a *merchant.Account) (money.Amount, *codes.Code) {
		return validateCardOrder(req, a, h.Gate.Now)
	})
	if !ok {
		return
	}
	terms, code := h.subscriptionTerms(req.Subscription, amount)
	if code != nil {
		m.Refuse(*code)
		return
	}
	opts, code := h.readCardOptions(&req.Details, m.Account())
	if code != nil {
		m.Refuse(*code)
		return
	}
	if req.paysWithToken() {
		h.authoriseStoredCard(m, req, amount, terms)
		return
	}
	pan := req.Card.String()
	token, created, err := h.Vault.Tokenize(ctx, workflows.OrderWorkflowID(req.MerchantID, req.AccountID, req.OrderNo), vault.Card{
		Number:      pan,
		ExpiryMonth: req.ExpirationMonth.String(),
		ExpiryYear:  req.ExpirationYear.String(),
		CVV:         req.SecurityCode.String(),
	})
	if err != nil {
		h.Gate.Logger.Error("tokenize card", "order_no", req.OrderNo, "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	in := h.orderInput(m.Account(), newOrder{details: req.Details, amount: amount, kind: order.KindCard,
		card: h.cardRef(token, pan), subscription: terms, options: opts})
	res, err := h.placeOrder(ctx, in)
	switch {
	case errors.Is(err, flows.ErrOrderMismatch):
		h.forgetToken(m.GinContext(), token, created)
		m.Refuse(codes.DuplicateOrder)
		return
	case errors.Is(err, flows.ErrOrderClosed):
		h.answerFromRecord(m, req, in.RequestFingerprint, token, created)
		return
	case err != nil:
		h.Gate.Logger.Error("authorise order", "order_no", req.OrderNo, "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	if res.CardToken != token {
		h.forgetToken(m.GinContext(), token, created)
	}
	h.answerPayment(m, req, res)
}

// answerPayment renders a direct payment's result, signed with the key the
// request proved.
func (h *Handler) answerPayment(m *api.Merchant, req *authoriseRequest, res workflows.PaymentResult) {
	r := api.ResultRespon(res)
	r.Note, r.Custom = req.Note, req.Custom
	r.Sign(m.Key())
	api.RenderXML(m.GinContext(), http.StatusOK, r, res.ResultCode)
}

// cardRef is what an order's workflow learns of a card in the vault under
// token: never the number itself.
func (h *Handler) cardRef(token, pan string) workflows.CardRef {
	return workflows.CardRef{Token: token, Masked: card.Mask(pan), Brand: card.Brand(pan), Fingerprint: h.Vault.Fingerprint(pan)}
}

// admitOrder checks that the account may take orders on its connector
// (modeRefusal) and that validate passes the order, and returns the order's
// amount; it answers a refusal itself.
func (h *Handler) admitOrder(m *api.Merchant, validate func(*merchant.Account) (money.Amount, *codes.Code)) (money.Amount, bool) {
	if code := h.modeRefusal(m.Account()); code != nil {
		m.Refuse(*code)
		return money.Amount{}, false
	}
	amount, code := validate(m.Account())
	if code != nil {
		m.Refuse(*code)
		return money.Amount{}, false
	}
	return amount, true
}

// modeRefusal keeps test and live apart at the door of every kind of
// order: a test account reaches simulated connectors only (I0028), and
// where the deployment forbids simulators to live accounts, a live account
// reaches none (I0030).
func (h *Handler) modeRefusal(account *merchant.Account) *codes.Code {
	// A routed account's orders may reach every connector its rules name.
	for _, name := range append([]string{cmp.Or(account.Connector, connector.DefaultName)}, account.Routing.Connectors()...) {
		test := testmode.Simulated(name)
		if h.TestConnector != nil {
			test = h.TestConnector(name)
		}
		switch {
		case account.Mode == testmode.Test && !test:
			return &codes.TestAccountConnector
		case account.Mode != testmode.Test && test && h.ForbidLiveSimulators:
			return &codes.LiveAccountSimulator
		}
	}
	return nil
}

// validateCardOrder checks a signed direct card payment and returns its
// amount, or the result code that refuses it.
func validateCardOrder(req *authoriseRequest, account *merchant.Account, now func() time.Time) (money.Amount, *codes.Code) {
	fail := func(c codes.Code) (money.Amount, *codes.Code) { return money.Amount{}, &c }
	stored := req.paysWithToken()
	if !stored && (req.PaymentMethod != "" && req.Card != "" || req.PaymentMethod == "" && req.Card == "") {
		return fail(codes.PaymentTypeConflict)
	}
	if req.PaymentMethod != "" {
		return fail(codes.UnsupportedMethod.With(req.PaymentMethod))
	}
	if stored && (req.ExpirationMonth != "" || req.ExpirationYear != "" || req.SecurityCode != "") {
		return fail(codes.InvalidField.With("a payment with token_id leaves card, expiration and security_code empty"))
	}
	required := map[string]string{
		"order_no": req.OrderNo, "currency": req.Currency, "amount": req.Amount.String(),
		"first_name": req.FirstName, "last_name": req.LastName, "shopper_email": req.ShopperEmail,
	}
	if !stored {
		required["expiration_month"] = req.ExpirationMonth.String()
		required["expiration_year"] = req.ExpirationYear.String()
		required["security_code"] = req.SecurityCode.String()
	}
	if missing := firstEmpty(required); missing != "" {
		return fail(codes.MissingField.With(missing))
	}
	if len(req.OrderNo) > order.MaxOrderNo || !order.Printable(req.OrderNo) {
		return fail(codes.InvalidField.With("order_no must be 1 to 64 printable characters without spaces"))
	}
	if subscription.IsChargeOrderNo(req.OrderNo) {
		return fail(codes.InvalidField.With(reservedOrderNo))
	}
	if !money.KnownCurrency(req.Currency) {
		return fail(codes.UnsupportedCurrency.With("unknown currency " + req.Currency))
	}
	if !account.AllowsCurrency(req.Currency) {
		return fail(codes.UnsupportedCurrency.With(req.Currency))
	}
	amount, err := money.Parse(req.Amount.String(), req.Currency)
	if err != nil {
		return fail(codes.InvalidAmount.With("amount must be a positive decimal with at most two fraction digits"))
	}
	if amount.Minor <= 0 {
		return fail(codes.InvalidAmount.With("amount must be greater than zero"))
	}
	for _, part := range []struct {
		name  string
		value order.Text
	}{
		{"item_total", req.ItemTotal}, {"shipping", req.Shipping}, {"handling", req.Handling},
		{"tax_total", req.TaxTotal}, {"insurance", req.Insurance}, {"shipping_discount", req.ShippingDiscount},
		{"discount", req.Discount},
	} {
		if part.value == "" {
			continue
		}
		if _, err := money.Parse(part.value.String(), req.Currency); err != nil {
			return fail(codes.InvalidAmount.With(part.name))
		}
	}
	if !stored {
		pan := req.Card.String()
		// Each refusal names its field and the rule, never the value: these
		// are card data.
		if err := card.ValidateNumber(pan); err != nil {
			return fail(codes.InvalidCardNumber.With("card must be 12 to 19 digits, not starting with 0, that pass the Luhn check"))
		}
		switch err := card.CheckExpiry(req.ExpirationMonth.String(), req.ExpirationYear.String(), now()); {
		case errors.Is(err, card.ErrExpired):
			return fail(codes.InvalidExpiry.With("expiration_month and expiration_year: the card has expired"))
		case err != nil:
			return fail(codes.InvalidExpiry.With("expiration_month must be 1 to 12 and expiration_year 4 digits (or 2), at most 20 years ahead"))
		}
		if err := card.ValidateCVV(req.SecurityCode.String(), card.Brand(pan)); err != nil {
			return fail(codes.InvalidCVV.With("security_code must be 3 digits (4 for American Express)"))
		}
		if account.Mode != testmode.Test && testmode.IsTestCard(pan) {
			return fail(codes.TestCardOnLive)
		}
	}
	if len(req.FirstName) > order.MaxNameField || len(req.LastName) > order.MaxNameField {
		return fail(codes.InvalidField.With("first_name and last_name must be at most 100 characters"))
	}
	// Names hold no digits. The card recipe concatenates amount, first_name,
	// last_name and card without separators, so a digit allowed here could
	// move between fields under the same signature (12.34 + Ada = 12.3 + 4Ada).
	if strings.ContainsAny(req.FirstName, "0123456789") {
		return fail(codes.InvalidField.With("first_name must not contain digits"))
	}
	if strings.ContainsAny(req.LastName, "0123456789") {
		return fail(codes.InvalidField.With("last_name must not contain digits"))
	}
	if addr, err := mail.ParseAddress(req.ShopperEmail); err != nil || addr.Address != req.ShopperEmail || len(req.ShopperEmail) > order.MaxEmail {
		return fail(codes.InvalidField.With("shopper_email"))
	}
	if req.NotifyURL != "" && !validURL(req.NotifyURL) {
		return fail(codes.InvalidField.With("notify_url must be an http or https URL without user info"))
	}
	if req.ShopperIP != "" {
		if _, err := netip.ParseAddr(req.ShopperIP); err != nil {
			return fail(codes.InvalidField.With("shopper_ip"))
		}
	}
	if req.BillingCountry != "" && !country.Known(req.BillingCountry) {
		return fail(codes.InvalidField.With("billing_country must be an ISO 3166 two-letter code"))
	}
	if req.DeliveryCountry != "" && !country.Known(req.DeliveryCountry) {
		return fail(codes.InvalidField.With("delivery_country must be an ISO 3166 two-letter code"))
	}
	if name := overlong(&req.Details); name != "" {
		return fail(codes.InvalidField.With(name + " is too long"))
	}
	return amount, nil
}

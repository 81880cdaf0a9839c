package payments

import (
	"errors"
	"net/http"
	"strings"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/apm"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/workflows"
)

// authoriseAPM places an alternative-payment-method order; the request
// proved the key with the APM recipe, and that key signs the answer.
func (h *Handler) authoriseAPM(m *api.Merchant, req *authoriseRequest) {
	c := m.GinContext()
	amount, ok := h.admitOrder(m, func(a *merchant.Account) (money.Amount, *codes.Code) { return validateAPMOrder(req, a) })
	if !ok {
		return
	}
	shopper := req.apmShopper()
	method, _ := apm.Lookup(req.PaymentMethod)
	in := h.orderInput(m.Account(), newOrder{details: req.Details, amount: amount, kind: order.KindAPM,
		apm: &workflows.APMOrder{
			Method: method.Name, Country: shopper.country, BankCode: req.BankCode, ReturnURL: req.ReturnURL,
			Name: strings.TrimSpace(req.FirstName + " " + req.LastName), Email: shopper.email, Document: shopper.document,
		}})
	res, err := h.placeOrder(c.Request.Context(), in)
	switch {
	case errors.Is(err, flows.ErrOrderMismatch):
		m.Refuse(codes.DuplicateOrder)
		return
	case errors.Is(err, flows.ErrOrderClosed):
		h.answerFromRecord(m, req, in.RequestFingerprint, "", false)
		return
	case err != nil:
		h.Gate.Logger.Error("authorise APM order", "order_no", req.OrderNo, "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	r := api.ResultRespon(res)
	r.Sign(m.Key())
	api.RenderXML(m.GinContext(), http.StatusOK, r.APMShape(), res.ResultCode)
}

// apmShopper is who pays an APM order, as its provider needs it.
type apmShopper struct {
	country  string // billing_country, else person.address_country
	document string // person.document_number
	email    string // person.email, else shopper_email
}

func (r *authoriseRequest) apmShopper() apmShopper {
	sh := apmShopper{country: r.BillingCountry, email: r.ShopperEmail}
	if p := r.Person; p != nil {
		if sh.country == "" {
			sh.country = p.AddressCountry
		}
		sh.document = p.DocumentNumber
		if p.Email != "" {
			sh.email = p.Email
		}
	}
	return sh
}

// validateAPMOrder checks an APM order: the common fields, then the method's
// own currencies, countries and shopper data.
func validateAPMOrder(req *authoriseRequest, account *merchant.Account) (money.Amount, *codes.Code) {
	fail := func(c codes.Code) (money.Amount, *codes.Code) { return money.Amount{}, &c }
	if missing := firstEmpty(map[string]string{
		"order_no": req.OrderNo, "currency": req.Currency, "amount": req.Amount.String(),
		"first_name": req.FirstName, "last_name": req.LastName, "shopper_email": req.ShopperEmail,
	}); missing != "" {
		return fail(codes.MissingField.With(missing))
	}
	amount, code := validateRedirectOrder(&req.Details, account)
	if code != nil {
		return amount, code
	}
	if p := req.Person; p != nil && len(p.Email) > order.MaxEmail {
		return fail(codes.InvalidField.With("person.email"))
	}
	shopper := req.apmShopper()
	_, known, problem := apm.Check(apm.Order{Method: req.PaymentMethod, Currency: req.Currency, Country: shopper.country,
		Document: shopper.document, BankCode: req.BankCode})
	if !known {
		return fail(codes.UnsupportedMethod.With(req.PaymentMethod))
	}
	if problem.Field == "currency" {
		return fail(codes.UnsupportedCurrency.With(problem.Reason))
	}
	if problem.Field != "" {
		return fail(codes.InvalidField.With(problem.Field + ": " + problem.Reason))
	}
	if name := overlong(&req.Details); name != "" {
		return fail(codes.InvalidField.With(name + " is too long"))
	}
	return amount, nil
}

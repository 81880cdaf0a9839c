package payments

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/checkout"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/apm"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/optimise"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// idealBanks are the banks the payment page offers an iDEAL shopper whose
// order names none (bank_code), by BIC.
var idealBanks = []string{"ABNANL2A", "INGBNL2A", "RABONL2U", "SNSBNL2A", "TRIONL2U"}

// placeholderDocument stands in, when the page decides what to offer, for
// the tax id a shopper will type: only the method's other conditions are
// checked then.
const placeholderDocument = "00000000000"

// orderShopper is who pays a hosted order with an APM: the country, tax id
// and email its provider needs, from the order as the merchant sent it.
func orderShopper(o *models.Order) apmShopper {
	d := o.Details
	sh := apmShopper{country: d.BillingCountry, email: d.ShopperEmail}
	if p := d.Person; p != nil {
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

// pageMethods are the ways to pay the payment page offers for o, best
// first as /v1/optimise ranks them for the order's currency and country:
// the card form, and each APM one of the account's connectors takes that
// the order can be paid with. An order that keeps its card (a subscription,
// token_flag) is paid by card only; so is every order when the methods
// cannot be ranked (logged). nil means the card alone.
func (h *Handler) pageMethods(ctx context.Context, account *merchant.Account, o *models.Order) []checkout.PageMethod {
	if o.Details.Subscription != nil || strings.EqualFold(o.Details.TokenFlag, "YES") {
		return nil
	}
	sh := orderShopper(o)
	ranking, err := h.Gate.RankMethods(ctx, account, o.Currency, sh.country, h.Gate.Now())
	if err != nil {
		h.Gate.Logger.Warn("payment page: methods not ranked, card only", "transaction_id", o.TransactionID, "error", err)
		return nil
	}
	var out []checkout.PageMethod
	apms := 0
	for _, r := range ranking.Methods {
		if r.Method == optimise.CardMethod {
			if !slices.ContainsFunc(out, checkout.PageMethod.IsCard) {
				out = append(out, checkout.PageMethod{Name: optimise.CardMethod})
			}
			continue
		}
		m, ok := apm.Lookup(r.Method)
		if !ok {
			continue
		}
		pm := checkout.PageMethod{Name: m.Name, AskDocument: m.NeedsDocument && sh.document == ""}
		if m.NeedsBankCode && o.Details.BankCode == "" {
			pm.Banks = idealBanks
		}
		document, bank := sh.document, o.Details.BankCode
		if pm.AskDocument {
			document = placeholderDocument
		}
		if pm.Banks != nil {
			bank = pm.Banks[0]
		}
		if _, _, problem := apm.Check(apm.Order{Method: m.Name, Currency: o.Currency, Country: sh.country,
			Document: document, BankCode: bank}); problem.Field != "" {
			continue
		}
		out = append(out, pm)
		apms++
	}
	if apms == 0 {
		return nil
	}
	if !slices.ContainsFunc(out, checkout.PageMethod.IsCard) {
		// The card form is always there; it goes last when no connector
		// ranks it.
		out = append(out, checkout.PageMethod{Name: optimise.CardMethod})
	}
	return out
}

// checkoutAPM takes the APM the shopper chose on the payment page and
// starts it, as a direct APM order does: the shopper goes on to the
// provider, which sends them back to checkoutAPMReturn.
func (h *Handler) checkoutAPM(c *gin.Context) {
	ctx := c.Request.Context()
	o, ok := h.sessionForm(c)
	if !ok {
		return
	}
	f := c.Request.PostForm
	lang := o.Details.DefaultLang
	account, err := h.Gate.Accounts.Load(ctx, o.MerchantID, o.AccountID)
	if err != nil {
		h.Gate.ShopperMessage(c, http.StatusServiceUnavailable, lang, "payment_failed", codes.SystemError)
		return
	}
	if o.PaymentStatus != status.Pending || o.CardToken != "" || o.Details.PaymentMethod != "" {
		h.renderPayment(c, o, account, "")
		return
	}
	name := strings.ToUpper(strings.TrimSpace(f.Get("payment_method")))
	methods := h.pageMethods(ctx, account, o)
	i := slices.IndexFunc(methods, func(m checkout.PageMethod) bool { return !m.IsCard() && m.Name == name })
	if i < 0 {
		h.renderPayment(c, o, account, checkout.Message(lang, "method_unavailable"))
		return
	}
	method := methods[i]
	sh := orderShopper(o)
	if method.AskDocument {
		sh.document = strings.TrimSpace(f.Get("document_number"))
	}
	bank := o.Details.BankCode
	if method.Banks != nil {
		bank = strings.TrimSpace(f.Get("bank_code"))
		if !slices.Contains(method.Banks, bank) {
			h.renderPayment(c, o, account, checkout.Message(lang, "missing_bank"))
			return
		}
	}
	if _, _, problem := apm.Check(apm.Order{Method: name, Currency: o.Currency, Country: sh.country,
		Document: sh.document, BankCode: bank}); problem.Field != "" {
		key := "method_unavailable"
		if problem.Field == "person.document_number" {
			key = "invalid_document"
		}
		h.renderPayment(c, o, account, checkout.Message(lang, key))
		return
	}
	session := c.Request.PostForm.Get("session")
	res, err := h.Shopper.PayAPM(ctx, o.WorkflowID, workflows.PayAPMRequest{APM: workflows.APMOrder{
		Method: name, Country: sh.country, BankCode: bank, Document: sh.document, Email: sh.email,
		Name:      strings.TrimSpace(o.Details.FirstName + " " + o.Details.LastName),
		ReturnURL: h.Gate.PublicURL + "/v1/checkout/apm/return?session=" + url.QueryEscape(session),
	}})
	if err != nil {
		h.Gate.Logger.Warn("checkout APM", "transaction_id", o.TransactionID, "method", name, "error", err)
		if !payRefused(err) {
			h.Gate.ShopperMessage(c, http.StatusServiceUnavailable, lang, "payment_failed", codes.SystemError)
			return
		}
		h.renderPayment(c, o, account, checkout.Message(lang, "payment_failed"))
		return
	}
	if res.OrderStatus == status.OrderPending && res.IssuerURL != "" {
		c.Set(api.ContextResultCode, res.ResultCode)
		c.Redirect(http.StatusSeeOther, res.IssuerURL)
		return
	}
	h.redirectWithResult(c, o.Details.ReturnURL, o, &res)
}

// checkoutAPMReturn is where the APM provider sends the shopper back: once
// the order has its result (the provider's callback woke it, and it asked
// the provider), the shopper goes on to the merchant's return_url with the
// signed result, as after a card.
func (h *Handler) checkoutAPMReturn(c *gin.Context) {
	o, ok := h.sessionOrder(c, c.Query("session"))
	if !ok {
		h.Gate.ShopperMessage(c, http.StatusForbidden, "en", "payment_failed", codes.BadSignature)
		return
	}
	h.sendShopperOn(c, o)
}

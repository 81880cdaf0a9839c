package api

import (
	"encoding/xml"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/apm"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/workflows"
)

// apmRespon is the XML answer of an APM payment: where to send the shopper.
type apmRespon struct {
	XMLName        xml.Name `xml:"respon"`
	MerchantID     string   `xml:"merchant_id"`
	AccountID      string   `xml:"account_id"`
	OrderNo        string   `xml:"order_no"`
	Amount         string   `xml:"amount"`
	Currency       string   `xml:"currency"`
	IssuerURL      string   `xml:"issuer_url"`
	TransactionID  string   `xml:"transaction_id"`
	OrderStatus    string   `xml:"order_status"`
	ResultInfo     string   `xml:"result_info"`
	EncryptionData string   `xml:"encryption_data"`
}

// authoriseAPM starts an alternative-payment-method order; the request's
// signature has been checked with the APM recipe and proved key, which
// signs the answer.
func (s *Server) authoriseAPM(c *gin.Context, req *authoriseRequest, account *merchant.Account, key string) {
	reply := func(code codes.Code) {
		r := failed(req.MerchantID, req.AccountID, req.OrderNo, req.Amount.String(), req.Currency, code)
		r.sign(key)
		renderXML(c, http.StatusOK, r, code.ID)
	}
	amount, code := validateAPMOrder(req, account)
	if code != nil {
		reply(*code)
		return
	}
	person := req.Person
	country := req.BillingCountry
	if country == "" && person != nil {
		country = person.AddressCountry
	}
	document, email := "", req.ShopperEmail
	if person != nil {
		document = person.DocumentNumber
		if person.Email != "" {
			email = person.Email
		}
	}
	m, _ := apm.Lookup(req.PaymentMethod)
	in := workflows.OrderInput{
		TransactionID:  s.IDs.Next(),
		MerchantID:     req.MerchantID,
		AccountID:      req.AccountID,
		OrderNo:        req.OrderNo,
		Amount:         amount.Minor,
		Currency:       amount.Currency,
		CaptureMode:    account.CaptureMode,
		Details:        req.Details,
		Windows:        windowsOf(account),
		NotifySchedule: s.NotifySchedule.WithDefaults(),
		Kind:           workflows.KindAPM,
		PublicURL:      s.PublicURL,
		APM: &workflows.APMOrder{
			Method: m.Name, Country: country, BankCode: req.BankCode, ReturnURL: req.ReturnURL,
			Name: strings.TrimSpace(req.FirstName + " " + req.LastName), Email: email, Document: document,
		},
	}
	in.RequestFingerprint = requestFingerprint(in.Details, "")
	res, err := s.Orders.Authorise(c.Request.Context(), in)
	switch {
	case errors.Is(err, ErrOrderMismatch):
		reply(codes.DuplicateOrder)
		return
	case errors.Is(err, ErrOrderClosed) || err == nil && res.ExistingTransactionID != "":
		s.answerFromRecord(c, req, in.RequestFingerprint, "", false, key)
		return
	case err != nil:
		s.Logger.Error("authorise APM order", "order_no", req.OrderNo, "error", err)
		reply(codes.SystemError)
		return
	}
	r := &apmRespon{
		MerchantID: res.MerchantID, AccountID: res.AccountID, OrderNo: res.OrderNo,
		Amount: money.FromMinor(res.Amount, res.Currency).String(), Currency: res.Currency,
		IssuerURL: res.IssuerURL, TransactionID: res.TransactionID,
		OrderStatus: res.OrderStatus.String(), ResultInfo: res.Code().String(),
	}
	r.EncryptionData = signing.SignUpper(key, r.MerchantID, r.AccountID, r.TransactionID, r.OrderNo, r.Currency,
		r.Amount, r.OrderStatus, r.ResultInfo)
	c.Set(ctxResultCode, res.ResultCode)
	body, err := xml.Marshal(r)
	if err != nil {
		c.String(http.StatusServiceUnavailable, codes.SystemError.String())
		return
	}
	c.Data(http.StatusOK, "application/xml; charset=utf-8", append([]byte(xml.Header), body...))
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
	country := req.BillingCountry
	document := ""
	if p := req.Person; p != nil {
		if country == "" {
			country = p.AddressCountry
		}
		document = p.DocumentNumber
		if p.Email != "" && len(p.Email) > maxEmail {
			return fail(codes.InvalidField.With("person.email"))
		}
	}
	_, known, problem := apm.Check(apm.Order{Method: req.PaymentMethod, Currency: req.Currency, Country: country,
		Document: document, BankCode: req.BankCode})
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

package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api/checkout"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/adapters/vault"
	"github.com/paygate/paygate/internal/domain/card"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// checkoutRequest is a hosted payment request: the order without a card.
type checkoutRequest struct {
	order.Details
	EncryptionData string `json:"encryption_data"`
	SignInfo       string `json:"signInfo"`
}

// signedValues are the fields of the checkout recipe (DESIGN §3).
func (r *checkoutRequest) signedValues() []string {
	return []string{r.MerchantID, r.AccountID, r.OrderNo, r.Currency, r.Amount.String(), r.ReturnURL}
}

// checkoutGateway is what the forwarding page says of our side.
var checkoutGateway = checkout.Gateway{ConnectorCode: "sim-acquirer", PmID: "card", Descriptor: "PAYGATE", RRTimezone: "UTC"}

// checkoutPage handles both posts to /v1/checkout: the merchant's (signed
// with encryption_data: records the order and answers the forwarding page)
// and the shopper's browser's (carrying signInfo: answers the payment page).
func (s *Server) checkoutPage(c *gin.Context) {
	ctx := c.Request.Context()
	body, err := readBody(c.Request.Body)
	if err != nil {
		s.shopperMessage(c, http.StatusRequestEntityTooLarge, "en", "payment_failed", codes.RequestTooLarge)
		return
	}
	var req checkoutRequest
	if code := decodeBody(body, &req); code != nil {
		s.shopperMessage(c, http.StatusOK, "en", "payment_failed", *code)
		return
	}
	for _, p := range []*string{&req.MerchantID, &req.AccountID, &req.OrderNo, &req.Currency, &req.ReturnURL,
		&req.CancelURL, &req.NotifyURL, &req.EncryptionData, &req.SignInfo, &req.DefaultLang} {
		*p = strings.TrimSpace(*p)
	}
	req.Amount = order.Text(strings.TrimSpace(req.Amount.String()))
	lang := req.DefaultLang
	if req.MerchantID == "" || req.AccountID == "" {
		s.shopperMessage(c, http.StatusOK, lang, "payment_failed", codes.MissingField.With("merchant_id, account_id"))
		return
	}
	account, err := s.Accounts.Load(ctx, req.MerchantID, req.AccountID)
	if errors.Is(err, merchant.ErrUnknownAccount) {
		s.shopperMessage(c, http.StatusOK, lang, "payment_failed", codes.UnknownMerchant)
		return
	}
	if err != nil {
		s.shopperMessage(c, http.StatusServiceUnavailable, lang, "payment_failed", codes.SystemError)
		return
	}
	sig := req.EncryptionData
	if sig == "" {
		sig = req.SignInfo
	}
	if sig == "" && !hasStrongSignature(c) {
		s.shopperMessage(c, http.StatusOK, lang, "payment_failed", codes.BadSignature)
		return
	}
	if _, ok := s.authenticate(c, account, sig, req.signedValues()...); !ok {
		s.shopperMessage(c, http.StatusOK, lang, "payment_failed", codes.BadSignature)
		return
	}
	// The shopper's browser cannot send the strong signature's header, so a
	// request that does is the merchant's.
	if req.EncryptionData == "" && !hasStrongSignature(c) {
		s.paymentPage(c, &req, account)
		return
	}
	s.startCheckout(c, body, &req, account)
}

// startCheckout records a hosted order and answers the forwarding page.
func (s *Server) startCheckout(c *gin.Context, body []byte, req *checkoutRequest, account *merchant.Account) {
	lang := req.DefaultLang
	amount, code := validateCheckout(req, account)
	if code != nil {
		s.shopperMessage(c, http.StatusOK, lang, "payment_failed", *code)
		return
	}
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
		Kind:           workflows.KindCheckout,
		ThreeDS:        strings.EqualFold(req.Open3D, "do3DS"),
		PublicURL:      s.PublicURL,
	}
	in.RequestFingerprint = requestFingerprint(in.Details, "")
	res, err := s.Orders.Authorise(c.Request.Context(), in)
	switch {
	case errors.Is(err, ErrOrderMismatch):
		s.shopperMessage(c, http.StatusOK, lang, "payment_failed", codes.DuplicateOrder)
		return
	case errors.Is(err, ErrOrderClosed) || err == nil && res.ExistingTransactionID != "":
		s.shopperMessage(c, http.StatusOK, lang, "payment_failed", codes.InvalidState.With("the order is already closed"))
		return
	case err != nil:
		s.Logger.Error("start checkout", "order_no", req.OrderNo, "error", err)
		s.shopperMessage(c, http.StatusServiceUnavailable, lang, "payment_failed", codes.SystemError)
		return
	}
	fields := checkout.ForwardingFields(requestMap(body), checkoutGateway, req.EncryptionData, c.ClientIP())
	c.Set(ctxResultCode, res.ResultCode)
	c.Header("Content-Type", "text/html; charset=utf-8")
	c.Header("Cache-Control", "no-store")
	c.Status(http.StatusOK)
	if err := checkout.RenderForwarding(c.Writer, checkout.ForwardingData{Action: s.PublicURL + "/v1/checkout", Fields: fields}); err != nil {
		s.Logger.Error("render forwarding page", "error", err)
	}
}

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

// validateRedirectOrder checks what every order that sends the shopper away
// and back has: order_no, currency, amount and the http(s) return_url,
// cancel_url and notify_url.
func validateRedirectOrder(d *order.Details, account *merchant.Account) (money.Amount, *codes.Code) {
	fail := func(c codes.Code) (money.Amount, *codes.Code) { return money.Amount{}, &c }
	if d.ReturnURL == "" {
		return fail(codes.MissingField.With("return_url"))
	}
	if len(d.OrderNo) > maxOrderNo || !printable(d.OrderNo) {
		return fail(codes.InvalidField.With("order_no must be 1 to 64 printable characters without spaces"))
	}
	if !money.KnownCurrency(d.Currency) || !account.AllowsCurrency(d.Currency) {
		return fail(codes.UnsupportedCurrency.With(d.Currency))
	}
	amount, err := money.Parse(d.Amount.String(), d.Currency)
	if err != nil || amount.Minor <= 0 {
		return fail(codes.InvalidAmount.With("amount must be a positive decimal with at most two fraction digits"))
	}
	for _, u := range []struct{ name, value string }{
		{"return_url", d.ReturnURL}, {"cancel_url", d.CancelURL}, {"notify_url", d.NotifyURL},
	} {
		if u.value != "" && !validURL(u.value) {
			return fail(codes.InvalidField.With(u.name + " must be an http or https URL"))
		}
	}
	return amount, nil
}

// requestMap is the request's fields as text, for the forwarding page.
func requestMap(body []byte) map[string]string {
	out := map[string]string{}
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "{") {
		var raw map[string]json.RawMessage
		if json.Unmarshal([]byte(trimmed), &raw) != nil {
			return out
		}
		for k, v := range raw {
			var s string
			if json.Unmarshal(v, &s) == nil {
				out[k] = s
			} else {
				out[k] = string(v)
			}
		}
		return out
	}
	values, err := url.ParseQuery(trimmed)
	if err != nil {
		return out
	}
	for k, v := range values {
		if len(v) > 0 {
			out[k] = v[0]
		}
	}
	return out
}

// paymentPage answers the shopper's browser with our payment page.
func (s *Server) paymentPage(c *gin.Context, req *checkoutRequest, account *merchant.Account) {
	o, err := models.FindOrderByNo(c.Request.Context(), s.DB, req.AccountID, req.OrderNo)
	if err != nil {
		s.shopperMessage(c, http.StatusOK, req.DefaultLang, "payment_failed", codes.OrderNotFound)
		return
	}
	s.renderPayment(c, o, account.Name, "")
}

func (s *Server) renderPayment(c *gin.Context, o *models.Order, merchantName, errorText string) {
	lang := o.Details.DefaultLang
	switch {
	case o.PaymentStatus == int(status.Expired):
		s.shopperMessage(c, http.StatusOK, lang, "session_expired", codes.SessionExpired)
		return
	case o.PaymentStatus != int(status.Pending) || o.CardToken != "":
		s.shopperMessage(c, http.StatusOK, lang, "payment_failed", codes.InvalidState.With("the order is not waiting for a payment"))
		return
	}
	c.Set(ctxResultCode, codes.AwaitingShopper.ID)
	c.Header("Content-Type", "text/html; charset=utf-8")
	c.Header("Cache-Control", "no-store")
	c.Status(http.StatusOK)
	err := checkout.RenderPaymentPage(c.Writer, checkout.PaymentPageData{
		Lang:         lang,
		Session:      s.sessionFor(o.TransactionID),
		MerchantName: merchantName,
		OrderNo:      o.OrderNo,
		Amount:       money.FromMinor(o.Amount, o.Currency).String(),
		Currency:     o.Currency,
		Items:        checkout.ParseItems(o.Details.Items),
		PayAction:    "/v1/checkout/pay",
		CancelAction: "/v1/checkout/cancel",
		Error:        errorText,
		Brands:       []string{"visa", "mastercard", "amex"},
	})
	if err != nil {
		s.Logger.Error("render payment page", "error", err)
	}
}

// sessionFor signs a hosted payment session: the page can name only the
// order it was made for.
func (s *Server) sessionFor(transactionID string) string {
	m := hmac.New(sha256.New, s.SessionKey)
	m.Write([]byte("checkout-session|" + transactionID))
	return transactionID + "." + hex.EncodeToString(m.Sum(nil))[:32]
}

func (s *Server) sessionOrder(c *gin.Context, token string) (*models.Order, bool) {
	txID, _, ok := strings.Cut(token, ".")
	if !ok || !hmac.Equal([]byte(s.sessionFor(txID)), []byte(token)) {
		return nil, false
	}
	o, err := models.FindOrderByID(c.Request.Context(), s.DB, txID)
	return o, err == nil
}

// checkoutPay takes the card the shopper typed on the payment page. The
// card travels only in this POST's body and goes straight to the vault.
func (s *Server) checkoutPay(c *gin.Context) {
	ctx := c.Request.Context()
	if _, err := readLimitedForm(c); err != nil {
		s.shopperMessage(c, http.StatusBadRequest, "en", "payment_failed", codes.MalformedRequest)
		return
	}
	f := c.Request.PostForm
	o, ok := s.sessionOrder(c, f.Get("session"))
	if !ok {
		s.shopperMessage(c, http.StatusForbidden, "en", "payment_failed", codes.BadSignature)
		return
	}
	lang := o.Details.DefaultLang
	account, err := s.Accounts.Load(ctx, o.MerchantID, o.AccountID)
	if err != nil {
		s.shopperMessage(c, http.StatusServiceUnavailable, lang, "payment_failed", codes.SystemError)
		return
	}
	pan := strings.ReplaceAll(strings.TrimSpace(f.Get("card_number")), " ", "")
	month, year := strings.TrimSpace(f.Get("expiry_month")), strings.TrimSpace(f.Get("expiry_year"))
	cvv, holder := strings.TrimSpace(f.Get("security_code")), strings.TrimSpace(f.Get("card_holder"))
	var problem string
	switch {
	case holder == "":
		problem = "missing_holder"
	case card.ValidateNumber(pan) != nil:
		problem = "invalid_number"
	case errors.Is(card.CheckExpiry(month, year, s.Now()), card.ErrExpired):
		problem = "expired_card"
	case card.CheckExpiry(month, year, s.Now()) != nil:
		problem = "invalid_expiry"
	case card.ValidateCVV(cvv, card.Brand(pan)) != nil:
		problem = "invalid_cvv"
	}
	if problem != "" {
		s.renderPayment(c, o, account.Name, checkout.Message(lang, problem))
		return
	}
	token, _, err := s.Vault.Tokenize(ctx, o.WorkflowID+"/checkout", vault.Card{Number: pan, ExpiryMonth: month, ExpiryYear: year, CVV: cvv})
	if err != nil {
		s.Logger.Error("tokenize card", "transaction_id", o.TransactionID, "error", err)
		s.shopperMessage(c, http.StatusServiceUnavailable, lang, "payment_failed", codes.SystemError)
		return
	}
	res, err := s.Shopper.Pay(ctx, o.WorkflowID, workflows.PayRequest{Card: workflows.CardRef{
		Token: token, Masked: card.Mask(pan), Brand: card.Brand(pan), Fingerprint: s.Vault.Fingerprint(pan),
	}})
	if err != nil {
		s.Logger.Warn("checkout pay", "transaction_id", o.TransactionID, "error", err)
		s.renderPayment(c, o, account.Name, checkout.Message(lang, "payment_failed"))
		return
	}
	if res.OrderStatus == status.OrderPending && res.IssuerURL != "" {
		// 3-D Secure challenge: the ACS sends the shopper back to us.
		c.Set(ctxResultCode, res.ResultCode)
		c.Redirect(http.StatusSeeOther, res.IssuerURL)
		return
	}
	s.redirectWithResult(c, o.Details.ReturnURL, o, &res)
}

// checkoutCancel ends a checkout the shopper left and sends them to the
// merchant's cancel_url (or return_url).
func (s *Server) checkoutCancel(c *gin.Context) {
	if _, err := readLimitedForm(c); err != nil {
		s.shopperMessage(c, http.StatusBadRequest, "en", "payment_failed", codes.MalformedRequest)
		return
	}
	o, ok := s.sessionOrder(c, c.Request.PostForm.Get("session"))
	if !ok {
		s.shopperMessage(c, http.StatusForbidden, "en", "payment_failed", codes.BadSignature)
		return
	}
	res, err := s.Shopper.CancelCheckout(c.Request.Context(), o.WorkflowID)
	if err != nil {
		s.shopperMessage(c, http.StatusOK, o.Details.DefaultLang, "payment_failed", codes.InvalidState.With("the order is not waiting for the shopper"))
		return
	}
	target := o.Details.CancelURL
	if target == "" {
		target = o.Details.ReturnURL
	}
	s.redirectWithResult(c, target, o, &res)
}

// readLimitedForm parses a form body of at most MaxBodyBytes.
func readLimitedForm(c *gin.Context) (url.Values, error) {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, MaxBodyBytes)
	if err := c.Request.ParseForm(); err != nil {
		return nil, err
	}
	return c.Request.PostForm, nil
}

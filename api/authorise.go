package api

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/mail"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/adapters/vault"
	"github.com/paygate/paygate/internal/domain/card"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/country"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
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

// signedValues are the fields of the request's recipe, in order: "authorise,
// APM" for a request with payment_method and no card, else "authorise, card".
func (r *authoriseRequest) signedValues() []string {
	if r.PaymentMethod != "" && r.Card == "" {
		return []string{r.MerchantID, r.AccountID, r.OrderNo, r.Currency, r.Amount.String(), r.PaymentMethod, r.ReturnURL}
	}
	return []string{r.MerchantID, r.AccountID, r.OrderNo, r.Currency, r.Amount.String(), r.FirstName,
		r.LastName, r.Card.String(), r.ExpirationYear.String(), r.ExpirationMonth.String(),
		r.SecurityCode.String(), r.ShopperEmail}
}

// trim removes surrounding white space from the fields that are checked and
// signed, so that " 12.34" and "12.34" are the same order.
func (r *authoriseRequest) trim() {
	for _, p := range []*string{&r.MerchantID, &r.AccountID, &r.OrderNo, &r.Currency, &r.FirstName,
		&r.LastName, &r.ShopperEmail, &r.PaymentMethod, &r.NotifyURL, &r.ShopperIP,
		&r.BillingCountry, &r.DeliveryCountry, &r.EncryptionData} {
		*p = strings.TrimSpace(*p)
	}
	for _, p := range []*order.Text{&r.Amount, &r.Card, &r.ExpirationMonth, &r.ExpirationYear, &r.SecurityCode} {
		*p = order.Text(strings.TrimSpace(string(*p)))
	}
}

func (s *Server) authorise(c *gin.Context) {
	ctx := c.Request.Context()
	body, err := readBody(c.Request.Body)
	if errors.Is(err, errTooLarge) {
		renderXML(c, http.StatusRequestEntityTooLarge, failed("", "", "", "", "", codes.RequestTooLarge), codes.RequestTooLarge.ID)
		return
	}
	if err != nil {
		renderXML(c, http.StatusBadRequest, failed("", "", "", "", "", codes.MalformedRequest.With("body could not be read")), codes.MalformedRequest.ID)
		return
	}
	var req authoriseRequest
	if code := decodeBody(body, &req); code != nil {
		renderXML(c, http.StatusOK, failed("", "", "", "", "", *code), code.ID)
		return
	}
	req.trim()
	reply := func(code codes.Code, key string) {
		r := failed(req.MerchantID, req.AccountID, req.OrderNo, req.Amount.String(), req.Currency, code)
		r.sign(key)
		renderXML(c, http.StatusOK, r, code.ID)
	}
	if missing := firstEmpty(map[string]string{"merchant_id": req.MerchantID, "account_id": req.AccountID}); missing != "" {
		reply(codes.MissingField.With(missing), "")
		return
	}
	account, err := s.Accounts.Load(ctx, req.MerchantID, req.AccountID)
	if errors.Is(err, merchant.ErrUnknownAccount) {
		reply(codes.UnknownMerchant, "")
		return
	}
	if err != nil {
		s.Logger.Error("load account", "account_id", req.AccountID, "error", err)
		reply(codes.SystemError, "")
		return
	}
	// Until the request proves the key its answers go unsigned: a signed
	// refusal over values the caller chose would be a signing oracle.
	if req.EncryptionData == "" && !hasStrongSignature(c) {
		reply(codes.MissingField.With("encryption_data"), "")
		return
	}
	key, ok := s.authenticate(c, account, req.EncryptionData, req.signedValues()...)
	if !ok {
		reply(codes.BadSignature, "")
		return
	}
	if req.PaymentMethod != "" && req.Card == "" {
		s.authoriseAPM(c, &req, account, key)
		return
	}
	amount, code := validateCardOrder(&req, account, s.Now)
	if code != nil {
		reply(*code, key)
		return
	}

	wfID := workflows.OrderWorkflowID(req.MerchantID, req.AccountID, req.OrderNo)
	token, created, err := s.Vault.Tokenize(ctx, wfID, vault.Card{
		Number:      req.Card.String(),
		ExpiryMonth: req.ExpirationMonth.String(),
		ExpiryYear:  req.ExpirationYear.String(),
		CVV:         req.SecurityCode.String(),
	})
	if err != nil {
		s.Logger.Error("tokenize card", "order_no", req.OrderNo, "error", err)
		reply(codes.SystemError, key)
		return
	}
	pan := req.Card.String()
	in := workflows.OrderInput{
		TransactionID: s.IDs.Next(),
		MerchantID:    req.MerchantID,
		AccountID:     req.AccountID,
		OrderNo:       req.OrderNo,
		Amount:        amount.Minor,
		Currency:      amount.Currency,
		CaptureMode:   account.CaptureMode,
		Card: workflows.CardRef{
			Token:       token,
			Masked:      card.Mask(pan),
			Brand:       card.Brand(pan),
			Fingerprint: s.Vault.Fingerprint(pan),
		},
		Details:        req.Details,
		Windows:        windowsOf(account),
		NotifySchedule: s.NotifySchedule.WithDefaults(),
		ThreeDS:        strings.EqualFold(req.Open3D, "do3DS"),
		PublicURL:      s.PublicURL,
	}
	in.RequestFingerprint = requestFingerprint(in.Details, token)
	res, err := s.Orders.Authorise(ctx, in)
	switch {
	case errors.Is(err, ErrOrderMismatch):
		s.forgetToken(c, token, created)
		reply(codes.DuplicateOrder, key)
		return
	case errors.Is(err, ErrOrderClosed) || err == nil && res.ExistingTransactionID != "":
		s.answerFromRecord(c, &req, in.RequestFingerprint, token, created, key)
		return
	case err != nil:
		s.Logger.Error("authorise order", "order_no", req.OrderNo, "error", err)
		reply(codes.SystemError, key)
		return
	}
	if res.CardToken != token {
		s.forgetToken(c, token, created)
	}
	r := resultRespon(res)
	r.Note = req.Note
	r.sign(key)
	renderXML(c, http.StatusOK, r, res.ResultCode)
}

// windowsOf reads an account's order deadlines.
func windowsOf(account *merchant.Account) workflows.Windows {
	return workflows.Windows{
		Review:        time.Duration(account.ReviewWindowSeconds) * time.Second,
		Authorisation: time.Duration(account.AuthorisationWindowSeconds) * time.Second,
		Refund:        time.Duration(account.RefundWindowSeconds) * time.Second,
	}.WithDefaults()
}

// answerFromRecord answers a repeated request for an order whose workflow has
// closed: the record holds the first answer.
func (s *Server) answerFromRecord(c *gin.Context, req *authoriseRequest, fingerprint, token string, created bool, key string) {
	o, err := models.FindOrderByNo(c.Request.Context(), s.DB, req.AccountID, req.OrderNo)
	if err != nil {
		s.Logger.Error("load closed order", "order_no", req.OrderNo, "error", err)
		r := failed(req.MerchantID, req.AccountID, req.OrderNo, req.Amount.String(), req.Currency, codes.SystemError)
		r.sign(key)
		renderXML(c, http.StatusOK, r, codes.SystemError.ID)
		return
	}
	if o.CardToken != token {
		s.forgetToken(c, token, created)
	}
	if o.RequestFingerprint != fingerprint {
		r := failed(req.MerchantID, req.AccountID, req.OrderNo, req.Amount.String(), req.Currency, codes.DuplicateOrder)
		r.sign(key)
		renderXML(c, http.StatusOK, r, codes.DuplicateOrder.ID)
		return
	}
	r := orderRespon(o)
	r.sign(key)
	renderXML(c, http.StatusOK, r, o.ResultCode)
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

func resultRespon(res workflows.PaymentResult) *respon {
	r := &respon{
		MerchantID:    res.MerchantID,
		AccountID:     res.AccountID,
		OrderNo:       res.OrderNo,
		Amount:        money.FromMinor(res.Amount, res.Currency).String(),
		Currency:      res.Currency,
		TransactionID: res.TransactionID,
		Card:          res.CardMasked,
		OrderStatus:   res.OrderStatus.String(),
		ResultInfo:    res.Code().String(),
		Connector:     res.Connector,
		ThreeDSResult: res.ThreeDSResult,
		IssuerURL:     res.IssuerURL,
		RiskAction:    res.Risk.Action,
		RiskScore:     strconv.Itoa(res.Risk.Score),
	}
	for _, reason := range res.Risk.Reasons {
		r.RiskReasons.Reasons = append(r.RiskReasons.Reasons, riskReason{Name: reason.Name, Status: reason.Status})
	}
	return r
}

func orderRespon(o *models.Order) *respon {
	r := &respon{
		MerchantID:    o.MerchantID,
		AccountID:     o.AccountID,
		OrderNo:       o.OrderNo,
		Amount:        money.FromMinor(o.Amount, o.Currency).String(),
		Currency:      o.Currency,
		TransactionID: o.TransactionID,
		Card:          o.CardMasked,
		OrderStatus:   strconv.Itoa(o.OrderStatus),
		ResultInfo:    codes.Code{ID: o.ResultCode, Message: o.ResultMessage}.String(),
		Note:          o.Details.Note,
		Connector:     o.Connector,
		ThreeDSResult: o.ThreeDSResult,
		RiskAction:    o.RiskAction,
		RiskScore:     strconv.Itoa(o.RiskScore),
	}
	for _, reason := range o.RiskReasons {
		r.RiskReasons.Reasons = append(r.RiskReasons.Reasons, riskReason{Name: reason.Name, Status: reason.Status})
	}
	return r
}

// requestFingerprint identifies a request's content. The card token already
// stands for the card data, scoped to the order.
func requestFingerprint(d order.Details, token string) string {
	b, _ := json.Marshal(d)
	sum := sha256.Sum256(append(append(b, '|'), token...))
	return hex.EncodeToString(sum[:])
}

func firstEmpty(fields map[string]string) string {
	// Report in a fixed order so the answer does not depend on map order.
	for _, name := range []string{"merchant_id", "account_id", "order_no", "currency", "amount", "card",
		"expiration_month", "expiration_year", "security_code", "first_name", "last_name", "shopper_email"} {
		if v, ok := fields[name]; ok && v == "" {
			return name
		}
	}
	return ""
}

// Field limits. The interface does not give them; these fit every real
// value and keep records bounded.
const (
	maxOrderNo   = 64
	maxNameField = 100
	maxEmail     = 200
	maxURL       = 1024
	maxFreeText  = 2048
)

// validateCardOrder checks a signed direct card payment and returns its
// amount, or the result code that refuses it.
func validateCardOrder(req *authoriseRequest, account *merchant.Account, now func() time.Time) (money.Amount, *codes.Code) {
	fail := func(c codes.Code) (money.Amount, *codes.Code) { return money.Amount{}, &c }
	if req.PaymentMethod != "" && req.Card != "" || req.PaymentMethod == "" && req.Card == "" {
		return fail(codes.PaymentTypeConflict)
	}
	if req.PaymentMethod != "" {
		return fail(codes.UnsupportedMethod.With(req.PaymentMethod))
	}
	if missing := firstEmpty(map[string]string{
		"order_no": req.OrderNo, "currency": req.Currency, "amount": req.Amount.String(),
		"expiration_month": req.ExpirationMonth.String(), "expiration_year": req.ExpirationYear.String(),
		"security_code": req.SecurityCode.String(), "first_name": req.FirstName, "last_name": req.LastName,
		"shopper_email": req.ShopperEmail,
	}); missing != "" {
		return fail(codes.MissingField.With(missing))
	}
	if len(req.OrderNo) > maxOrderNo || !printable(req.OrderNo) {
		return fail(codes.InvalidField.With("order_no must be 1 to 64 printable characters without spaces"))
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
	pan := req.Card.String()
	if err := card.ValidateNumber(pan); err != nil {
		return fail(codes.InvalidCardNumber)
	}
	if err := card.CheckExpiry(req.ExpirationMonth.String(), req.ExpirationYear.String(), now()); err != nil {
		return fail(codes.InvalidExpiry)
	}
	if err := card.ValidateCVV(req.SecurityCode.String(), card.Brand(pan)); err != nil {
		return fail(codes.InvalidCVV)
	}
	if len(req.FirstName) > maxNameField || len(req.LastName) > maxNameField {
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
	if addr, err := mail.ParseAddress(req.ShopperEmail); err != nil || addr.Address != req.ShopperEmail || len(req.ShopperEmail) > maxEmail {
		return fail(codes.InvalidField.With("shopper_email"))
	}
	if req.NotifyURL != "" && !validURL(req.NotifyURL) {
		return fail(codes.InvalidField.With("notify_url must be an http or https URL"))
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

func printable(s string) bool {
	for _, r := range s {
		if r <= ' ' || r > '~' {
			return false
		}
	}
	return s != ""
}

func validURL(s string) bool {
	if len(s) > maxURL {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// overlong names the first free-text field longer than the limit.
func overlong(d *order.Details) string {
	b, _ := json.Marshal(d)
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(b, &fields)
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		// Measure the text itself, not its JSON form, where "&" or "<" take six bytes.
		var text string
		if raw := fields[name]; len(raw) > maxFreeText+2 && raw[0] == '"' && json.Unmarshal(raw, &text) == nil && len(text) > maxFreeText {
			return name
		}
	}
	return ""
}

// Package methods is the optimise capability of the merchant API: POST
// /v1/optimise ranks the payment methods the account's connector takes by
// how the account's own orders fared with each.
package methods

import (
	"errors"
	"net/http"
	"net/mail"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/country"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/optimise"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/signing"
)

// Handler serves the optimise route.
type Handler struct {
	// Gate is the merchant API: its authenticated-request step, and the
	// connector offers, order tallies, record, clock and logger it holds.
	Gate *api.Server
}

// New is the optimise capability of gate.
func New(gate *api.Server) *Handler { return &Handler{Gate: gate} }

// Routes puts the optimise route on the merchant API's /v1 group.
func (h *Handler) Routes(v1 gin.IRoutes) {
	v1.POST("/optimise", h.optimise)
}

// The optimise request requires encryption_data.
var _ api.EncryptionDataRequired = (*optimiseRequest)(nil)

// maxRequestID bounds request_id: the merchant's name for one optimise
// request, echoed and signed, never stored.
const maxRequestID = 64

// optimiseRequest is the body of POST /v1/optimise.
type optimiseRequest struct {
	MerchantID     order.Text `json:"merchant_id"`
	AccountID      order.Text `json:"account_id"`
	RequestID      order.Text `json:"request_id"`
	Currency       order.Text `json:"currency"`
	Amount         order.Text `json:"amount"`
	ShopperEmail   order.Text `json:"shopper_email"`
	Country        order.Text `json:"country"`
	EncryptionData order.Text `json:"encryption_data"`
}

func (r *optimiseRequest) Trim() {
	api.TrimTexts(&r.MerchantID, &r.AccountID, &r.RequestID, &r.Currency, &r.Amount, &r.ShopperEmail, &r.Country,
		&r.EncryptionData)
}

func (r *optimiseRequest) Echo() api.Echo {
	return api.Echo{MerchantID: r.MerchantID.String(), AccountID: r.AccountID.String()}
}

func (r *optimiseRequest) Signature() string { return r.EncryptionData.String() }

func (r *optimiseRequest) SignedValues() []string { return r.recipe().Values() }

func (r *optimiseRequest) RequiresEncryptionData() {}

func (r *optimiseRequest) recipe() signing.OptimiseRequest {
	return signing.OptimiseRequest{MerchantID: r.MerchantID.String(), AccountID: r.AccountID.String(),
		RequestID: r.RequestID.String(), Currency: r.Currency.String(), Amount: r.Amount.String(),
		ShopperEmail: r.ShopperEmail.String()}
}

// optimiseQuestion is a validated optimise request.
type optimiseQuestion struct {
	requestID string
	amount    money.Amount
	country   string // "" when the request names none
}

// validateOptimise checks the request's values in the recipe's order, then
// country, and answers the code that refuses the first one wrong.
func validateOptimise(r *optimiseRequest, account *merchant.Account) (optimiseQuestion, *codes.Code) {
	fail := func(c codes.Code) (optimiseQuestion, *codes.Code) { return optimiseQuestion{}, &c }
	for _, f := range []struct {
		name  string
		value order.Text
	}{{"request_id", r.RequestID}, {"currency", r.Currency}, {"amount", r.Amount}, {"shopper_email", r.ShopperEmail}} {
		if f.value == "" {
			return fail(codes.MissingField.With(f.name))
		}
	}
	rid, cur, email, ctry := r.RequestID.String(), r.Currency.String(), r.ShopperEmail.String(), r.Country.String()
	if len(rid) > maxRequestID || !order.Printable(rid) {
		return fail(codes.InvalidField.With("request_id must be 1 to 64 printable characters without spaces"))
	}
	if !money.KnownCurrency(cur) || !account.AllowsCurrency(cur) {
		return fail(codes.UnsupportedCurrency.With(cur))
	}
	amount, err := money.Parse(r.Amount.String(), cur)
	if err != nil || amount.Minor <= 0 {
		return fail(codes.InvalidAmount.With("amount must be a positive decimal with at most two fraction digits"))
	}
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email || len(email) > order.MaxEmail {
		return fail(codes.InvalidField.With("shopper_email"))
	}
	if ctry != "" && !country.Known(ctry) {
		return fail(codes.InvalidField.With("country must be an ISO 3166-1 alpha-2 code in upper case"))
	}
	return optimiseQuestion{requestID: rid, amount: amount, country: ctry}, nil
}

// optimise handles POST /v1/optimise.
func (h *Handler) optimise(c *gin.Context) {
	var req optimiseRequest
	m, ok := h.Gate.AcceptMerchant(c, api.OptimiseAnswers, &req)
	if !ok {
		return
	}
	q, code := validateOptimise(&req, m.Account())
	if code != nil {
		m.Refuse(*code)
		return
	}
	cur := q.amount.Currency
	// The rules every order of the account meets before any method is
	// tried: an amount over the limit or a blocked country is refused
	// whatever the shopper pays with, so no method is worth proposing.
	verdict := risk.Evaluate(m.Account().Risk, risk.Facts{Amount: q.amount.Minor, Currency: cur,
		AmountLimit: m.Account().AmountLimits[cur], BillingCountry: q.country})
	if verdict.Action == risk.Reject {
		m.Refuse(risk.CodeFor(verdict.Rule))
		return
	}
	ranking, err := h.Gate.RankMethods(c.Request.Context(), m.Account(), cur, q.country, h.Gate.Now())
	if errors.Is(err, api.ErrNoRanking) {
		h.Gate.Logger.Error("optimise: cannot rank", "account_id", m.Account().ID, "error", err)
		code := codes.SystemError
		if h.Gate.Offers != nil && h.Gate.Tallies == nil && h.Gate.Records == nil {
			code = code.With("optimise is not configured")
		}
		m.Refuse(code)
		return
	}
	if err != nil {
		h.Gate.Logger.Error("optimise: count orders by method", "account_id", m.Account().ID, "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	ranked, connectors, counts := ranking.Methods, ranking.Connectors, ranking.Tallies
	a := api.OptimiseAnswer{
		MerchantID: m.Account().MerchantID, AccountID: m.Account().ID, RequestID: q.requestID,
		Currency: cur, Amount: q.amount.String(), Country: q.country, WindowDays: optimise.WindowDays,
		PaymentMethods: make([]api.OptimisedMethod, 0, len(ranked)), ResultInfo: codes.OK.String(),
	}
	signed := signing.OptimiseResult{MerchantID: a.MerchantID, AccountID: a.AccountID, RequestID: a.RequestID,
		Currency: a.Currency, Amount: a.Amount, ResultInfo: a.ResultInfo}
	for _, r := range ranked {
		om := api.OptimisedMethod{Rank: r.Rank, PaymentMethod: r.Method, Brand: r.Brand, SuccessRate: r.Rate(),
			Succeeded: r.Succeeded, SampleSize: r.Sample}
		a.PaymentMethods = append(a.PaymentMethods, om)
		signed.Methods = append(signed.Methods, signing.OptimiseMethod{PaymentMethod: om.PaymentMethod,
			Brand: om.Brand, SuccessRate: om.SuccessRate, SampleSize: strconv.FormatInt(om.SampleSize, 10)})
	}
	if !m.Account().Routing.Empty() {
		for _, r := range optimise.RankConnectors(connectors, counts) {
			oc := api.OptimisedConnector{Rank: r.Rank, Connector: r.Connector, SuccessRate: r.Rated().Rate(),
				Succeeded: r.Succeeded, SampleSize: r.Sample}
			a.Connectors = append(a.Connectors, oc)
			signed.Connectors = append(signed.Connectors, signing.OptimiseConnector{Connector: oc.Connector,
				SuccessRate: oc.SuccessRate, SampleSize: strconv.FormatInt(oc.SampleSize, 10)})
		}
	}
	a.EncryptionData = signing.SignOptimiseResult(m.Key(), signed)
	c.Set(api.ContextResultCode, codes.OK.ID)
	c.JSON(http.StatusOK, a)
}

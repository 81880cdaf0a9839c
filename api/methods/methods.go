// Package methods is the optimise capability of the merchant API: POST
// /v1/optimise ranks the payment methods the account's connector takes by
// how the account's own orders fared with each.
package methods

import (
	"net/http"
	"net/mail"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/country"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/optimise"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
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
	connectors := append([]string{m.Account().Connector}, m.Account().Routing.Connectors()...)
	offer, ok := h.connectorOffer(m.Account(), connectors)
	if !ok {
		m.Refuse(codes.SystemError)
		return
	}
	tallies := h.Gate.Tallies
	if tallies == nil && h.Gate.Records != nil {
		tallies = h.Gate.Records
	}
	if tallies == nil {
		m.Refuse(codes.SystemError.With("optimise is not configured"))
		return
	}
	counts, err := tallies.MethodTallies(c.Request.Context(), models.MethodTallyQuery{
		AccountID: m.Account().ID, Currency: cur, Since: h.Gate.Now().Add(-optimise.Window),
	})
	if err != nil {
		h.Gate.Logger.Error("optimise: count orders by method", "account_id", m.Account().ID, "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	ranked := optimise.Rank(optimise.Candidates(offer, cur, q.country), counts)
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

// connectorOffer is what the account's connectors take together (its own,
// and a routed account's every other); false (logged) when the deployment
// does not run one of them or nothing tells.
func (h *Handler) connectorOffer(account *merchant.Account, names []string) (connector.Offer, bool) {
	if h.Gate.Offers == nil {
		h.Gate.Logger.Error("optimise: no connector offers configured")
		return connector.Offer{}, false
	}
	var offers []connector.Offer
	for _, name := range names {
		c, err := h.Gate.Offers.Get(name)
		if err != nil {
			h.Gate.Logger.Error("optimise: a connector of the account is not configured", "account_id", account.ID,
				"connector", name, "error", err)
			return connector.Offer{}, false
		}
		offers = append(offers, c.Offer())
	}
	return connector.Merge(offers...), true
}

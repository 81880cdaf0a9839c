package api

import (
	"context"
	"net/http"
	"net/mail"
	"strconv"

	"github.com/gin-gonic/gin"

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

// POST /v1/optimise: the authenticated-request step (optimise recipe of
// docs/design.md §3), the request's values, the account's risk rules that do not
// depend on the card (amount limit, blocked country), then the methods the
// account's connector takes for the currency and country, ranked by how
// the account's own orders of the last optimise.Window fared with each
// (internal/domain/optimise). It reads and never writes. A refusal is never
// signed; the answer is signed with the optimise-result recipe, over the
// validated values and the ranking, for a caller who proved the key.

// ConnectorOffer is a connector that says what it takes.
type ConnectorOffer interface {
	Offer() connector.Offer
}

// ConnectorOffers finds what a configured connector takes by the name
// accounts give it; an empty name is the default connector
// (internal/adapters/connectors.Registry).
type ConnectorOffers interface {
	Get(name string) (ConnectorOffer, error)
}

// MethodTallies counts how an account's orders fared by payment method.
type MethodTallies interface {
	MethodTallies(ctx context.Context, q models.MethodTallyQuery) ([]optimise.Tally, error)
}

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
	trimTexts(&r.MerchantID, &r.AccountID, &r.RequestID, &r.Currency, &r.Amount, &r.ShopperEmail, &r.Country,
		&r.EncryptionData)
}

func (r *optimiseRequest) Echo() Echo {
	return Echo{MerchantID: r.MerchantID.String(), AccountID: r.AccountID.String()}
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
	if len(rid) > maxRequestID || !printable(rid) {
		return fail(codes.InvalidField.With("request_id must be 1 to 64 printable characters without spaces"))
	}
	if !money.KnownCurrency(cur) || !account.AllowsCurrency(cur) {
		return fail(codes.UnsupportedCurrency.With(cur))
	}
	amount, err := money.Parse(r.Amount.String(), cur)
	if err != nil || amount.Minor <= 0 {
		return fail(codes.InvalidAmount.With("amount must be a positive decimal with at most two fraction digits"))
	}
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email || len(email) > maxEmail {
		return fail(codes.InvalidField.With("shopper_email"))
	}
	if ctry != "" && !country.Known(ctry) {
		return fail(codes.InvalidField.With("country must be an ISO 3166-1 alpha-2 code in upper case"))
	}
	return optimiseQuestion{requestID: rid, amount: amount, country: ctry}, nil
}

// optimiseAnswer is the JSON of POST /v1/optimise.
type optimiseAnswer struct {
	MerchantID string `json:"merchant_id"`
	AccountID  string `json:"account_id"`
	RequestID  string `json:"request_id,omitempty"`
	Currency   string `json:"currency,omitempty"`
	Amount     string `json:"amount,omitempty"`
	Country    string `json:"country,omitempty"`
	// WindowDays is how many days back the account's orders were counted.
	WindowDays     int               `json:"window_days,omitempty"`
	PaymentMethods []optimisedMethod `json:"payment_methods"`
	ResultInfo     string            `json:"result_info"`
	EncryptionData string            `json:"encryption_data"`
}

// optimisedMethod is one ranked method of the answer.
type optimisedMethod struct {
	Rank          int    `json:"rank"`
	PaymentMethod string `json:"payment_method"`
	Brand         string `json:"brand"`
	// SuccessRate is Succeeded/SampleSize as a four-digit decimal fraction;
	// "" when SampleSize is 0.
	SuccessRate string `json:"success_rate"`
	Succeeded   int64  `json:"succeeded"`
	SampleSize  int64  `json:"sample_size"`
}

// optimiseAnswers is the JSON of /v1/optimise refusals: the ids, no
// method, the result code, never signed.
var optimiseAnswers = AnswerFormat{Render: func(_ *Server, c *gin.Context, r Refusal) {
	c.Set(ContextResultCode, r.Code.ID)
	c.JSON(r.HTTPStatus, optimiseAnswer{MerchantID: r.Echo.MerchantID, AccountID: r.Echo.AccountID,
		PaymentMethods: []optimisedMethod{}, ResultInfo: r.Code.String()})
}}

// optimise handles POST /v1/optimise.
func (s *Server) optimise(c *gin.Context) {
	var req optimiseRequest
	m, ok := s.AcceptMerchant(c, optimiseAnswers, &req)
	if !ok {
		return
	}
	q, code := validateOptimise(&req, m.account)
	if code != nil {
		m.Refuse(*code)
		return
	}
	cur := q.amount.Currency
	// The rules every order of the account meets before any method is
	// tried: an amount over the limit or a blocked country is refused
	// whatever the shopper pays with, so no method is worth proposing.
	verdict := risk.Evaluate(m.account.Risk, risk.Facts{Amount: q.amount.Minor, Currency: cur,
		AmountLimit: m.account.AmountLimits[cur], BillingCountry: q.country})
	if verdict.Action == risk.Reject {
		m.Refuse(risk.CodeFor(verdict.Rule))
		return
	}
	offer, ok := s.connectorOffer(m.account)
	if !ok {
		m.Refuse(codes.SystemError)
		return
	}
	tallies := s.Tallies
	if tallies == nil && s.Records != nil {
		tallies = s.Records
	}
	if tallies == nil {
		m.Refuse(codes.SystemError.With("optimise is not configured"))
		return
	}
	counts, err := tallies.MethodTallies(c.Request.Context(), models.MethodTallyQuery{
		AccountID: m.account.ID, Currency: cur, Since: s.Now().Add(-optimise.Window),
	})
	if err != nil {
		s.Logger.Error("optimise: count orders by method", "account_id", m.account.ID, "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	ranked := optimise.Rank(optimise.Candidates(offer, cur, q.country), counts)
	a := optimiseAnswer{
		MerchantID: m.account.MerchantID, AccountID: m.account.ID, RequestID: q.requestID,
		Currency: cur, Amount: q.amount.String(), Country: q.country, WindowDays: optimise.WindowDays,
		PaymentMethods: make([]optimisedMethod, 0, len(ranked)), ResultInfo: codes.OK.String(),
	}
	signed := signing.OptimiseResult{MerchantID: a.MerchantID, AccountID: a.AccountID, RequestID: a.RequestID,
		Currency: a.Currency, Amount: a.Amount, ResultInfo: a.ResultInfo}
	for _, r := range ranked {
		om := optimisedMethod{Rank: r.Rank, PaymentMethod: r.Method, Brand: r.Brand, SuccessRate: r.Rate(),
			Succeeded: r.Succeeded, SampleSize: r.Sample}
		a.PaymentMethods = append(a.PaymentMethods, om)
		signed.Methods = append(signed.Methods, signing.OptimiseMethod{PaymentMethod: om.PaymentMethod,
			Brand: om.Brand, SuccessRate: om.SuccessRate, SampleSize: strconv.FormatInt(om.SampleSize, 10)})
	}
	a.EncryptionData = signing.SignOptimiseResult(m.key, signed)
	c.Set(ContextResultCode, codes.OK.ID)
	c.JSON(http.StatusOK, a)
}

// connectorOffer is what the account's connector takes; false (logged)
// when the deployment does not run it or nothing tells.
func (s *Server) connectorOffer(account *merchant.Account) (connector.Offer, bool) {
	if s.Offers == nil {
		s.Logger.Error("optimise: no connector offers configured")
		return connector.Offer{}, false
	}
	c, err := s.Offers.Get(account.Connector)
	if err != nil {
		s.Logger.Error("optimise: the account's connector is not configured", "account_id", account.ID,
			"connector", account.Connector, "error", err)
		return connector.Offer{}, false
	}
	return c.Offer(), true
}

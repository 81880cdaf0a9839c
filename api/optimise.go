package api

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paygate/paygate/api/apidoc"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/adapters/merchant"

	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/optimise"
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

// OptimiseAnswer is the JSON of POST /v1/optimise.
type OptimiseAnswer struct {
	MerchantID string `json:"merchant_id"`
	AccountID  string `json:"account_id"`
	RequestID  string `json:"request_id,omitempty"`
	Currency   string `json:"currency,omitempty"`
	Amount     string `json:"amount,omitempty"`
	Country    string `json:"country,omitempty"`
	// WindowDays is how many days back the account's orders were counted.
	WindowDays     int               `json:"window_days,omitempty"`
	PaymentMethods []OptimisedMethod `json:"payment_methods"`
	// Connectors rank a routed account's connectors by how its orders
	// fared at each, over every method; absent for an account with one.
	Connectors     []OptimisedConnector `json:"connectors,omitempty"`
	ResultInfo     string               `json:"result_info"`
	EncryptionData string               `json:"encryption_data"`
}

// OptimisedMethod is one ranked method of the answer.
type OptimisedMethod struct {
	Rank          int    `json:"rank"`
	PaymentMethod string `json:"payment_method"`
	Brand         string `json:"brand"`
	// SuccessRate is Succeeded/SampleSize as a four-digit decimal fraction;
	// "" when SampleSize is 0.
	SuccessRate string `json:"success_rate"`
	Succeeded   int64  `json:"succeeded"`
	SampleSize  int64  `json:"sample_size"`
}

// OptimisedConnector is one ranked connector of a routed account's answer.
type OptimisedConnector struct {
	Rank        int    `json:"rank"`
	Connector   string `json:"connector"`
	SuccessRate string `json:"success_rate"`
	Succeeded   int64  `json:"succeeded"`
	SampleSize  int64  `json:"sample_size"`
}

// OptimiseAnswers is the JSON of /v1/optimise refusals: the ids, no
// method, the result code, never signed.
var OptimiseAnswers = AnswerFormat{Render: func(_ *Server, c *gin.Context, r Refusal) {
	c.Set(ContextResultCode, r.Code.ID)
	c.JSON(r.HTTPStatus, OptimiseAnswer{MerchantID: r.Echo.MerchantID, AccountID: r.Echo.AccountID,
		PaymentMethods: []OptimisedMethod{}, ResultInfo: r.Code.String()})
}, docMedia: apidoc.JSON, docRefusal: OptimiseAnswer{}}

// ErrNoRanking: the deployment cannot rank payment methods (no connector
// offers or order tallies configured, or a connector of the account is not
// run here).
var ErrNoRanking = errors.New("payment methods cannot be ranked")

// MethodRanking is the account's payment methods for a currency and
// country, best first, and the tallies they were ranked by.
type MethodRanking struct {
	Connectors []string
	Methods    []optimise.Ranked
	Tallies    []optimise.Tally
}

// RankMethods ranks the payment methods the account's connectors (its own
// and those its routing names) take for currency and country by how the
// account's own orders in that currency fared since now less
// optimise.Window: what /v1/optimise answers and the payment page offers.
func (s *Server) RankMethods(ctx context.Context, account *merchant.Account, currency, country string, now time.Time) (MethodRanking, error) {
	if s.Offers == nil {
		return MethodRanking{}, fmt.Errorf("%w: no connector offers", ErrNoRanking)
	}
	tallies := s.Tallies
	if tallies == nil && s.Records != nil {
		tallies = s.Records
	}
	if tallies == nil {
		return MethodRanking{}, fmt.Errorf("%w: no order tallies", ErrNoRanking)
	}
	names := append([]string{account.Connector}, account.Routing.Connectors()...)
	offers := make([]connector.Offer, 0, len(names))
	for _, name := range names {
		c, err := s.Offers.Get(name)
		if err != nil {
			return MethodRanking{}, fmt.Errorf("%w: connector %q: %v", ErrNoRanking, name, err)
		}
		offers = append(offers, c.Offer())
	}
	counts, err := tallies.MethodTallies(ctx, models.MethodTallyQuery{
		AccountID: account.ID, Currency: currency, Since: now.Add(-optimise.Window),
	})
	if err != nil {
		return MethodRanking{}, err
	}
	ranked := optimise.Rank(optimise.Candidates(connector.Merge(offers...), currency, country), counts)
	return MethodRanking{Connectors: names, Methods: ranked, Tallies: counts}, nil
}

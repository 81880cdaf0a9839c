package payments

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/optimise"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// apmOffers: every connector takes cards and the three APMs.
type apmOffers struct{}

func (apmOffers) Get(string) (api.ConnectorOffer, error) { return apmOffers{}, nil }
func (apmOffers) Offer() connector.Offer {
	return connector.Offer{CardBrands: []string{"visa"}, APMs: []string{"PIX", "OXXO", "IDEAL"}}
}

// noTallies: the account has no orders yet.
type noTallies struct{}

func (noTallies) MethodTallies(context.Context, models.MethodTallyQuery) ([]optimise.Tally, error) {
	return nil, nil
}

// hostedOrders holds one hosted order waiting for its shopper, as edit
// shapes it.
type hostedOrders struct {
	api.Records
	order models.Order
}

func (r hostedOrders) FindOrderByID(_ context.Context, tx string) (*models.Order, error) {
	if tx != r.order.TransactionID {
		return nil, models.ErrNotFound
	}
	o := r.order
	return &o, nil
}

// payingShopper keeps the APMs the page sent to the order.
type payingShopper struct {
	ShopperFlows
	paid []workflows.PayAPMRequest
}

func (s *payingShopper) PayAPM(_ context.Context, _ string, req workflows.PayAPMRequest) (workflows.PaymentResult, error) {
	s.paid = append(s.paid, req)
	return workflows.PaymentResult{OrderStatus: status.OrderPending, IssuerURL: "http://provider/apm/ap_1",
		ResultCode: "0002"}, nil
}

// TestCheckoutAPM follows the interface as issue 29 reads it: the payment
// page "completes PIX, OXXO and iDEAL there as the direct path does". What
// the shopper chooses is checked as a direct APM order is, and a refusal
// says why on the page; a good choice goes to the order and on to the
// provider.
func TestCheckoutAPM(t *testing.T) {
	brl := models.Order{TransactionID: txID, WorkflowID: "order/h", MerchantID: merchantID, AccountID: accountID,
		OrderNo: "ORD-H", Currency: "BRL", Amount: 10000, PaymentStatus: status.Pending,
		Details: order.Details{ReturnURL: "https://shop.example/return", BillingCountry: "BR", FirstName: "Ana", LastName: "Souza",
			ShopperEmail: "ana@example.com"}}
	subscribed := brl
	subscribed.Details.Subscription = &order.Subscription{ContractName: "Gold"}
	tests := []struct {
		name    string
		order   models.Order
		form    url.Values
		status  int
		page    string // what the answer holds
		paid    int
		session string
	}{
		{"PIX with the tax id", brl, url.Values{"payment_method": {"pix"}, "document_number": {"12345678901"}},
			http.StatusSeeOther, "http://provider/apm/ap_1", 1, ""},
		{"PIX with a short tax id", brl, url.Values{"payment_method": {"PIX"}, "document_number": {"123"}},
			http.StatusOK, "The tax id must be 11 digits.", 0, ""},
		{"OXXO for a Brazilian order in BRL", brl, url.Values{"payment_method": {"OXXO"}},
			http.StatusOK, "This payment method cannot be used for this order.", 0, ""},
		{"an order that keeps its card", subscribed, url.Values{"payment_method": {"PIX"}, "document_number": {"12345678901"}},
			http.StatusOK, "This payment method cannot be used for this order.", 0, ""},
		{"a forged session", brl, url.Values{"payment_method": {"PIX"}, "document_number": {"12345678901"}},
			http.StatusForbidden, "I0013", 0, txID + ".forged"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := handler(func(a *models.Account) { a.Currencies = []string{"BRL"} })
			shopper := &payingShopper{}
			h.Shopper, h.Gate.Records, h.Gate.Offers, h.Gate.Tallies = shopper, hostedOrders{order: tc.order}, apmOffers{}, noTallies{}
			h.Gate.PublicURL = "https://gw.example"
			body := map[string]string{"session": h.sessionFor(txID)}
			if tc.session != "" {
				body["session"] = tc.session
			}
			for k := range tc.form {
				body[k] = tc.form.Get(k)
			}
			rec := post(t, h.Gate.Handler(), "/v1/checkout/apm", body)
			got := rec.Body.String() + rec.Header().Get("Location")
			if rec.Code != tc.status || !strings.Contains(got, tc.page) || len(shopper.paid) != tc.paid {
				t.Fatalf("answer %d, %d APMs sent; want %d with %q, %d:\n%s", rec.Code, len(shopper.paid), tc.status, tc.page, tc.paid, got)
			}
			if tc.paid == 0 {
				return
			}
			want := workflows.APMOrder{Method: "PIX", Country: "BR", Document: "12345678901", Email: "ana@example.com", Name: "Ana Souza",
				ReturnURL: "https://gw.example/v1/checkout/apm/return?session=" + url.QueryEscape(h.sessionFor(txID))}
			if shopper.paid[0].APM != want {
				t.Errorf("sent %+v, want %+v", shopper.paid[0].APM, want)
			}
		})
	}
}

// TestPaymentPageMethods: the page lists the card and the APMs that fit
// the order, best first; an order in USD is offered the card alone.
func TestPaymentPageMethods(t *testing.T) {
	base := models.Order{TransactionID: txID, Currency: "BRL", PaymentStatus: status.Pending,
		Details: order.Details{BillingCountry: "BR"}}
	dutch := base
	dutch.Currency, dutch.Details.BillingCountry = "EUR", "NL"
	usd := base
	usd.Currency = "USD"
	tests := []struct {
		name  string
		order models.Order
		want  string
	}{
		{"BRL from Brazil: card, then PIX asking the tax id", base, "CARD;PIX doc"},
		{"EUR from the Netherlands: card, then iDEAL asking the bank", dutch, "CARD;IDEAL banks"},
		{"USD: the card alone", usd, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := handler(nil)
			h.Gate.Offers, h.Gate.Tallies = apmOffers{}, noTallies{}
			h.Gate.Handler() // fills the gate's clock and logger
			account, err := h.Gate.Accounts.Load(t.Context(), merchantID, accountID)
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, m := range h.pageMethods(t.Context(), account, &tc.order) {
				p := m.Name
				if m.AskDocument {
					p += " doc"
				}
				if m.Banks != nil {
					p += " banks"
				}
				parts = append(parts, p)
			}
			if got := strings.Join(parts, ";"); got != tc.want {
				t.Errorf("methods %q, want %q", got, tc.want)
			}
		})
	}
}

// cancellingShopper answers the shopper's cancel with result.
type cancellingShopper struct {
	ShopperFlows
	result workflows.PaymentResult
}

func (s *cancellingShopper) CancelCheckout(context.Context, string) (workflows.PaymentResult, error) {
	return s.result, nil
}

// TestCheckoutCancel: the shopper who cancels goes to the merchant's
// cancel_url with the signed result, or to return_url when the order has
// none, or when the provider says the shopper paid the APM they chose
// before cancelling: a paid order goes where a payment goes.
func TestCheckoutCancel(t *testing.T) {
	hosted := models.Order{TransactionID: txID, WorkflowID: "order/h", MerchantID: merchantID, AccountID: accountID,
		OrderNo: "ORD-H", Currency: "BRL", Amount: 10000, PaymentStatus: status.Pending,
		Details: order.Details{ReturnURL: "https://shop.example/return", CancelURL: "https://shop.example/cancel"}}
	noCancelURL := hosted
	noCancelURL.Details.CancelURL = ""
	failed := workflows.PaymentResult{PaymentStatus: status.Failed, OrderStatus: status.OrderFailure, ResultCode: "A0007"}
	paid := workflows.PaymentResult{PaymentStatus: status.Paid, OrderStatus: status.OrderSuccess, ResultCode: "0000"}
	tests := []struct {
		name   string
		order  models.Order
		result workflows.PaymentResult
		want   string
	}{
		{"cancelled: to cancel_url", hosted, failed, "https://shop.example/cancel?"},
		{"cancelled, no cancel_url: to return_url", noCancelURL, failed, "https://shop.example/return?"},
		{"paid at the provider first: to return_url", hosted, paid, "https://shop.example/return?"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := handler(func(a *models.Account) { a.Currencies = []string{"BRL"} })
			h.Shopper, h.Gate.Records = &cancellingShopper{result: tc.result}, hostedOrders{order: tc.order}
			rec := post(t, h.Gate.Handler(), "/v1/checkout/cancel", map[string]string{"session": h.sessionFor(txID)})
			if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || !strings.HasPrefix(loc, tc.want) {
				t.Errorf("answer %d to %q, want %d to %s…", rec.Code, loc, http.StatusSeeOther, tc.want)
			}
		})
	}
}

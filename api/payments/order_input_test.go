package payments

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/routing"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// TestOrderInput pins the one builder of workflow inputs: every kind of
// order carries the same account settings, and 3-D Secure is asked only
// for cards.
func TestOrderInput(t *testing.T) {
	h := handler(nil)
	account, err := h.Gate.Accounts.Load(t.Context(), merchantID, accountID)
	if err != nil {
		t.Fatal(err)
	}
	card := workflows.CardRef{Token: "tok_1", Masked: "424242******4242", Brand: "visa", Fingerprint: "fp"}
	cases := []struct {
		name        string
		kind        order.Kind
		open3D      string
		card        workflows.CardRef
		apm         *workflows.APMOrder
		wantThreeDS bool
	}{
		{"card", order.KindCard, "", card, nil, false},
		{"card with 3-D Secure", order.KindCard, "do3DS", card, nil, true},
		{"hosted with 3-D Secure, any case", order.KindCheckout, "DO3DS", workflows.CardRef{}, nil, true},
		{"hosted, other open3d", order.KindCheckout, "no", workflows.CardRef{}, nil, false},
		{"APM ignores open3d", order.KindAPM, "do3DS", workflows.CardRef{}, &workflows.APMOrder{Method: "PIX"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := order.Details{MerchantID: merchantID, AccountID: accountID, OrderNo: "ORD-1", Open3D: tc.open3D}
			amount := money.Amount{Minor: 1234, Currency: "USD"}
			in := h.orderInput(account, newOrder{details: d, amount: amount, kind: tc.kind, card: tc.card, apm: tc.apm})
			if in.TransactionID != txID || in.MerchantID != merchantID || in.AccountID != accountID || in.OrderNo != "ORD-1" {
				t.Errorf("ids = %s %s %s %s", in.TransactionID, in.MerchantID, in.AccountID, in.OrderNo)
			}
			if in.Amount != 1234 || in.Currency != "USD" {
				t.Errorf("amount = %d %s, want 1234 USD", in.Amount, in.Currency)
			}
			if in.Kind != tc.kind || in.Card != tc.card || in.APM != tc.apm {
				t.Errorf("kind, card, apm = %q %+v %v", in.Kind, in.Card, in.APM)
			}
			if in.ThreeDS != tc.wantThreeDS {
				t.Errorf("ThreeDS = %v, want %v", in.ThreeDS, tc.wantThreeDS)
			}
			if in.CaptureMode != account.CaptureMode || in.Windows != windowsOf(account) {
				t.Errorf("account settings not carried: %v %+v", in.CaptureMode, in.Windows)
			}
			if want := account.RiskSettings("USD"); in.Risk == nil || !reflect.DeepEqual(*in.Risk, want) {
				t.Errorf("risk settings = %+v, want the account's %+v", in.Risk, want)
			}
			if in.RequestFingerprint != requestFingerprint(d, tc.card.Token) {
				t.Errorf("RequestFingerprint is not over the details and the card token")
			}
			// A new order starts at the current shape and key scheme.
			if in.Shape != workflows.CurrentOrderShape || in.Keys != workflows.CurrentOrderKeys {
				t.Errorf("shape %d, keys %d; want %d, %d", in.Shape, in.Keys, workflows.CurrentOrderShape, workflows.CurrentOrderKeys)
			}
		})
	}
}

// TestRequestFingerprint: the fingerprint of a request changes with any of
// its details and with the card token, and with nothing else.
func TestRequestFingerprint(t *testing.T) {
	d := order.Details{MerchantID: merchantID, AccountID: accountID, OrderNo: "ORD-1", Currency: "USD", Amount: "12.34"}
	base := requestFingerprint(d, "tok_1")
	other := d
	other.Amount = "12.35"
	tests := []struct {
		name  string
		got   string
		equal bool
	}{
		{"the same request", requestFingerprint(d, "tok_1"), true},
		{"another amount", requestFingerprint(other, "tok_1"), false},
		{"another card", requestFingerprint(d, "tok_2"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if (tc.got == base) != tc.equal {
				t.Errorf("fingerprint %s against %s: equal %v, want %v", tc.got, base, tc.got == base, tc.equal)
			}
		})
	}
}

// TestOrderInputRoute: an account with routing rules has its order's route
// planned from them, the first connector the order's; an account without
// has none, and its order goes to its connector alone.
func TestOrderInputRoute(t *testing.T) {
	rules := routing.Rules{
		Routes: []routing.Route{
			{Name: "visa", When: routing.Condition{CardBrands: []string{"visa"}}, Targets: []routing.Target{{Connector: "stripe"}, {Connector: "sim-bank"}}},
			{Name: "bins", When: routing.Condition{BINRanges: []routing.BINRange{{From: "5555", To: "5555"}}}, Targets: []routing.Target{{Connector: "sim-bank"}}},
			{Name: "pix", When: routing.Condition{Methods: []string{"PIX"}}, Targets: []routing.Target{{Connector: "sim-acquirer"}}},
		},
		Fallback: []string{"sim-acquirer"},
	}
	visa := workflows.CardRef{Token: "tok_1", Masked: "424242******4242", Brand: "visa"}
	master := workflows.CardRef{Token: "tok_2", Masked: "555555******4444", Brand: "mastercard"}
	tests := []struct {
		name          string
		rules         routing.Rules
		o             newOrder
		wantConnector string
		wantRoute     []string // nil: no route
	}{
		{"no rules", routing.Rules{}, newOrder{kind: order.KindCard, card: visa}, "sim-acquirer", nil},
		{"a visa card", rules, newOrder{kind: order.KindCard, card: visa}, "stripe", []string{"stripe", "sim-bank", "sim-acquirer"}},
		{"a card by its BIN", rules, newOrder{kind: order.KindCard, card: master}, "sim-bank", []string{"sim-bank", "sim-acquirer"}},
		{"a PIX payment", rules, newOrder{kind: order.KindAPM, apm: &workflows.APMOrder{Method: "PIX"}}, "sim-acquirer", []string{"sim-acquirer"}},
		{"a hosted order, its card not known yet", rules, newOrder{kind: order.KindCheckout}, "sim-acquirer", []string{"sim-acquirer"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := handler(func(a *models.Account) { a.Connector, a.Routing = "sim-acquirer", tc.rules })
			account, err := h.Gate.Accounts.Load(t.Context(), merchantID, accountID)
			if err != nil {
				t.Fatal(err)
			}
			tc.o.details = order.Details{MerchantID: merchantID, AccountID: accountID, OrderNo: "ORD-1"}
			tc.o.amount = money.Amount{Minor: 1000, Currency: "USD"}
			in := h.orderInput(account, tc.o)
			var route []string
			if in.Route != nil {
				route = in.Route.Connectors
			}
			if in.Connector != tc.wantConnector || !slices.Equal(route, tc.wantRoute) {
				t.Errorf("connector %s, route %v; want %s, %v", in.Connector, route, tc.wantConnector, tc.wantRoute)
			}
		})
	}
}

// TestOrderInputRiskSettings: an order carries its account's risk settings
// unless their lists are too long to keep in its history; then the check
// reads them from the account.
func TestOrderInputRiskSettings(t *testing.T) {
	h := handler(nil)
	account, err := h.Gate.Accounts.Load(t.Context(), merchantID, accountID)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		bins    int
		carried bool
	}{
		{"no lists", 0, true},
		{"lists at the bound", risk.MaxCarriedListEntries, true},
		{"lists past the bound", risk.MaxCarriedListEntries + 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := *account
			a.Risk.BlockedBINs = nil
			for i := range tc.bins {
				a.Risk.BlockedBINs = append(a.Risk.BlockedBINs, fmt.Sprintf("4%05d", i))
			}
			d := order.Details{MerchantID: merchantID, AccountID: accountID, OrderNo: "ORD-1"}
			in := h.orderInput(&a, newOrder{details: d, amount: money.Amount{Minor: 1234, Currency: "USD"}, kind: order.KindCard})
			if got := in.Risk != nil; got != tc.carried {
				t.Fatalf("carried = %v, want %v", got, tc.carried)
			}
			if tc.carried && !reflect.DeepEqual(*in.Risk, a.RiskSettings("USD")) {
				t.Errorf("risk settings = %+v, want the account's", *in.Risk)
			}
		})
	}
}

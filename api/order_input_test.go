package api

import (
	"testing"

	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/workflows"
)

// TestOrderInput pins the one builder of workflow inputs: every kind of
// order carries the same account settings, and 3-D Secure is asked only
// for cards.
func TestOrderInput(t *testing.T) {
	env := newTestEnv(t)
	account, err := env.accounts.Load(t.Context(), testMerchantID, testAccountID)
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
			d := order.Details{MerchantID: testMerchantID, AccountID: testAccountID, OrderNo: "ORD-1", Open3D: tc.open3D}
			amount := money.Amount{Minor: 1234, Currency: "USD"}
			in := env.srv.orderInput(account, newOrder{details: d, amount: amount, kind: tc.kind, card: tc.card, apm: tc.apm})
			if in.TransactionID != testTxID || in.MerchantID != testMerchantID || in.AccountID != testAccountID || in.OrderNo != "ORD-1" {
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
			if in.RequestFingerprint != requestFingerprint(d, tc.card.Token) {
				t.Errorf("RequestFingerprint is not over the details and the card token")
			}
		})
	}
}

package integration

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/dev/railsim"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

var modeAccountSeq = 0

// modeAccount makes an account of the test's own in mode, with the default
// risk rules: what `merchant create` makes.
func modeAccount(t *testing.T, mode string) merchant.Credentials {
	t.Helper()
	modeAccountSeq++
	creds, err := env.gw.Accounts.Create(context.Background(), merchant.NewAccount{
		MerchantID: "50002", AccountID: fmt.Sprintf("50002%s%03d", mode[:1], modeAccountSeq), Mode: mode,
		CaptureMode: models.CaptureAuto, AllowedQueryIPs: []string{"127.0.0.1"}, Currencies: []string{"USD"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return creds
}

// readmeOrder is the README's first payment, field for field, on creds:
// card 4242424242424242, Ada Lovelace, ada@example.com, 12.34 USD.
func readmeOrder(creds merchant.Credentials, orderNo string) map[string]string {
	f := cardOrder(creds, orderNo, "4242424242424242")
	delete(f, "shopper_ip")
	delete(f, "billing_country")
	delete(f, "note")
	f["notify_url"] = "https://shop.example/notify"
	return signCard(f, creds.SignKey)
}

// authoriseMode posts a payment and returns the answer with its mode header.
func authoriseMode(t *testing.T, f map[string]string) (respon, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, env.api.URL+"/v1/authorise", strings.NewReader(form(f)))
	req.Header.Set("Content-Type", formType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r respon
	if err := xml.Unmarshal(b, &r); err != nil {
		t.Fatalf("answer is not XML (%d): %s", resp.StatusCode, b)
	}
	return r, resp.Header.Get(api.HeaderMode)
}

// TestFiftyREADMEPaymentsOnATestAccount: the README's payment sent fifty
// times (a new order_no each) on a test account with the default risk
// rules is approved every time: the test card, the example.com email and
// the loopback address never count towards velocity.
func TestFiftyREADMEPaymentsOnATestAccount(t *testing.T) {
	creds := modeAccount(t, testmode.Test)
	for i := range 50 {
		r, mode := authoriseMode(t, readmeOrder(creds, fmt.Sprintf("README-%s-%02d", randomHex(3), i)))
		if r.OrderStatus != "1" || r.ResultInfo != "0000:Success" || mode != testmode.Test {
			t.Fatalf("payment %d: order_status %s %s, mode %q; want 1 0000:Success, test", i+1, r.OrderStatus, r.ResultInfo, mode)
		}
	}
}

// TestRiskTestValues: on a test account each risk test email reaches its
// documented outcome.
func TestRiskTestValues(t *testing.T) {
	creds := modeAccount(t, testmode.Test)
	tests := []struct {
		name        string
		email       string
		wantStatus  []string // order_status of the first, second, ... payment
		wantResults []string
	}{
		{"held for review", testmode.EmailReview, []string{"-2", "-2"}, []string{"R0000", "R0000"}},
		{"rejected", testmode.EmailReject, []string{"0", "0"}, []string{"R0008", "R0008"}},
		{"velocity on the second use", testmode.EmailVelocity, []string{"1", "0"}, []string{"0000", "R0004"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.wantStatus {
				f := cardOrder(creds, newOrderNo(t), "4242424242424242")
				f["shopper_email"] = tc.email
				r, _ := authoriseMode(t, signCard(f, creds.SignKey))
				if r.OrderStatus != tc.wantStatus[i] || !strings.HasPrefix(r.ResultInfo, tc.wantResults[i]+":") {
					t.Errorf("payment %d: order_status %s %s, want %s %s", i+1, r.OrderStatus, r.ResultInfo, tc.wantStatus[i], tc.wantResults[i])
				}
				if tc.email != testmode.EmailVelocity && !hasHit(r, risk.RuleTestValue) {
					t.Errorf("payment %d: risk reasons %v lack the test value", i+1, r.RiskReasons.Reasons)
				}
			}
		})
	}
	// On a live account the same emails are nobody's test: a payment with
	// a real card is approved.
	live := modeAccount(t, testmode.Live)
	f := cardOrder(live, newOrderNo(t), "4242424242424267")
	f["shopper_email"] = testmode.EmailReject
	if r, _ := authoriseMode(t, signCard(f, live.SignKey)); r.OrderStatus != "1" {
		t.Errorf("reject@paygate.test on a live account: %s %s, want approved", r.OrderStatus, r.ResultInfo)
	}
}

func hasHit(r respon, rule string) bool {
	for _, reason := range r.RiskReasons.Reasons {
		if reason.Name == rule && reason.Status != risk.Accept {
			return true
		}
	}
	return false
}

// TestLiveAndTestKeepApart: a live account refuses every simulator test
// card before anything is recorded, takes other cards, and its velocity
// counts as for any shopper; its answers say live.
func TestLiveAndTestKeepApart(t *testing.T) {
	live := modeAccount(t, testmode.Live)
	for _, pan := range testmode.Cards {
		orderNo := newOrderNo(t)
		r, mode := authoriseMode(t, signCard(cardOrder(live, orderNo, pan), live.SignKey))
		if r.ResultInfo != "I0027:Test card on a live account" || mode != testmode.Live {
			t.Errorf("%s on a live account: %s, mode %q; want I0027, live", pan, r.ResultInfo, mode)
		}
		if n := countOrders(t, live.AccountID, orderNo); n != 0 {
			t.Errorf("%s: %d orders recorded, want none", pan, n)
		}
	}
	// Another spelling of a test card (a zero in front keeps its Luhn
	// sum) is no card at all: refused before anything is recorded.
	for _, pan := range []string{"04242424242424242", "0004000000000000002"} {
		orderNo := newOrderNo(t)
		r, _ := authoriseMode(t, signCard(cardOrder(live, orderNo, pan), live.SignKey))
		if r.ResultInfo != "I0005:Invalid card number: card must be 12 to 19 digits, not starting with 0, that pass the Luhn check" {
			t.Errorf("%s on a live account: %s, want I0005", pan, r.ResultInfo)
		}
		if n := countOrders(t, live.AccountID, orderNo); n != 0 {
			t.Errorf("%s: %d orders recorded, want none", pan, n)
		}
	}
	// The same shopper paying six times in ten minutes with a real card:
	// the sixth is held, as the default card velocity says.
	for i := range 6 {
		f := readmeOrder(live, newOrderNo(t))
		f["card"] = "4242424242424267"
		r, _ := authoriseMode(t, signCard(f, live.SignKey))
		want := "1"
		if i == 5 {
			want = "-2"
		}
		if r.OrderStatus != want {
			t.Errorf("live payment %d: order_status %s %s, want %s", i+1, r.OrderStatus, r.ResultInfo, want)
		}
	}
}

// TestPayoutsKeepToTheirAccountsRail: a test account's payout is paid by
// the simulated rail and never reaches the live one (RAIL_URL), however
// much test money it holds; a live account's payout goes to the live rail.
func TestPayoutsKeepToTheirAccountsRail(t *testing.T) {
	t.Parallel()
	keyOn := func(r *railsim.Server, creds merchant.Credentials, requestID string) bool {
		t.Helper()
		st, err := r.Stats()
		if err != nil {
			t.Fatal(err)
		}
		_, ok := st.ByKey[workflows.PayoutWorkflowID(creds.MerchantID, requestID)]
		return ok
	}

	test := payoutAccount(t, 5_000) // 50.00 of test money
	rid := newRequestID()
	if status, out := postPayout(t, "/v1/payout", payoutBody(test, rid, "40.00", ibanCompletes)); status != 200 || out["request_id"] != rid {
		t.Fatalf("test payout: %d %v", status, out)
	}
	if out := awaitPayoutStatus(t, test, rid); out["status"] != "COMPLETED" {
		t.Errorf("test payout: %v", out)
	}
	if !keyOn(env.rail, test, rid) || keyOn(env.liveRail, test, rid) {
		t.Errorf("a test account's payout: on the simulated rail %v, on the live rail %v; want only the simulated",
			keyOn(env.rail, test, rid), keyOn(env.liveRail, test, rid))
	}
	var mode string
	if err := env.gw.DB.Model(&models.Payout{}).Where("merchant_id = ? AND request_id = ?", test.MerchantID, rid).
		Select("mode").Scan(&mode).Error; err != nil || mode != testmode.Test {
		t.Errorf("recorded mode %q (%v), want test", mode, err)
	}

	live := modeAccount(t, testmode.Live)
	if _, err := ledger.New(env.gw.DB).TopUp(t.Context(), ledger.TopUp{Reference: "topup/" + live.AccountID, MerchantID: live.MerchantID,
		AccountID: live.AccountID, Currency: "USD", Amount: 5_000}); err != nil {
		t.Fatal(err)
	}
	liveID := newRequestID()
	body := jsonBody(t, payoutBody(live, liveID, "40.00", ibanCompletes))
	a := postWith(t, "/v1/payout", "application/json", body,
		signing.StrongHeader, strongHeader(t, live.SignKey, "/v1/payout", time.Now(), "it-"+randomHex(12), body))
	if a.field(t, "request_id") != liveID {
		t.Fatalf("live payout: %s", a.body)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !keyOn(env.liveRail, live, liveID) {
		if time.Now().After(deadline) {
			t.Fatal("the live account's payout never reached the live rail")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if keyOn(env.rail, live, liveID) {
		t.Error("the live account's payout reached the simulated rail")
	}
}

package integration

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/models"
)

var riskAccountSeq atomic.Int64

// riskAccount creates an account of the test's own, so its risk settings and
// its velocity counts belong to that test alone. It is live, and signs
// compatibly by its own choice: the risk tests review and capture with
// encryption_data as the interface's samples do.
func riskAccount(t *testing.T, cfg risk.Config, limits map[string]int64) merchant.Credentials {
	t.Helper()
	creds, err := env.gw.Accounts.Create(context.Background(), merchant.NewAccount{
		SigningScheme:   merchant.SigningCompatible,
		MerchantID:      "30001",
		AccountID:       fmt.Sprintf("30001%03d", riskAccountSeq.Add(1)),
		CaptureMode:     models.CaptureAuto,
		AllowedQueryIPs: []string{"127.0.0.1"},
		Currencies:      []string{"USD"},
		AmountLimits:    limits,
		Risk:            cfg,
	})
	if err != nil {
		t.Fatal(err)
	}
	return creds
}

// riskOrder is a card order of 12.34 USD by a shopper of the test's own:
// its own email and IP, billed in the card's country (US for the usual test
// cards) unless the test says otherwise.
func riskOrder(t *testing.T, creds merchant.Credentials, pan string, change func(f map[string]string)) map[string]string {
	f := cardOrder(creds, newOrderNo(t), pan)
	f["shopper_email"] = "risk-" + randomHex(4) + "@example.com"
	f["shopper_ip"] = "198.51.100.7"
	f["billing_country"] = "US"
	if change != nil {
		change(f)
	}
	return signCard(f, creds.SignKey)
}

// hits are the reasons of a risk result that are not ACCEPT, by rule name.
func hits(r respon) map[string]string {
	out := map[string]string{}
	for _, reason := range r.RiskReasons.Reasons {
		if reason.Status != risk.Accept {
			out[reason.Name] = reason.Status
		}
	}
	return out
}

// checkReasonsInOrder checks that the answer lists every rule once, in
// Rules() order.
func checkReasonsInOrder(t *testing.T, r respon) {
	t.Helper()
	var names []string
	for _, reason := range r.RiskReasons.Reasons {
		names = append(names, reason.Name)
	}
	if !reflect.DeepEqual(names, risk.Rules()) {
		t.Errorf("risk_reasons = %v, want %v", names, risk.Rules())
	}
}

// checkRejected checks that a rejected order was answered and recorded as
// failed, and that the card was never sent to the acquirer.
func checkRejected(t *testing.T, creds merchant.Credentials, f map[string]string, r respon, resultInfo string) {
	t.Helper()
	if r.OrderStatus != "0" || r.ResultInfo != resultInfo {
		t.Errorf("order_status, result_info = %q, %q; want %q, %q", r.OrderStatus, r.ResultInfo, "0", resultInfo)
	}
	checkResultSignature(t, r, creds.SignKey)
	o := findOrder(t, creds.AccountID, f["order_no"])
	if o.PaymentStatus != 6000 || o.OrderStatus != 0 || o.ResultCode != resultInfo[:5] || o.RiskAction != risk.Reject {
		t.Errorf("record: payment_status %d order_status %d result_code %s risk_action %s; want 6000 0 %s REJECT",
			o.PaymentStatus, o.OrderStatus, o.ResultCode, o.RiskAction, resultInfo[:5])
	}
	if n := chargesFor(r.TransactionID); n != 0 {
		t.Errorf("simulator charges = %d, want 0", n)
	}
}

// checkPaid checks that an order went through: answered, recorded as paid
// and charged once.
func checkPaid(t *testing.T, creds merchant.Credentials, f map[string]string, r respon) {
	t.Helper()
	if r.OrderStatus != "1" || r.ResultInfo != "0000:Success" {
		t.Errorf("order_status, result_info = %q, %q; want 1, 0000:Success", r.OrderStatus, r.ResultInfo)
	}
	if o := findOrder(t, creds.AccountID, f["order_no"]); o.PaymentStatus != 3000 {
		t.Errorf("record: payment_status %d, want 3000", o.PaymentStatus)
	}
	if n := chargesFor(r.TransactionID); n != 1 {
		t.Errorf("simulator charges = %d, want 1", n)
	}
}

// TestRiskRejects sends one order per rule that rejects on its own, each to
// an account configured for it.
func TestRiskRejects(t *testing.T) {
	t.Parallel()
	const blockedPAN = "4000056655665556" // on the block list, used by no other test
	blocked := models.BlockedCard{Fingerprint: env.gw.Vault.Fingerprint(blockedPAN), Reason: "integration test"}
	if err := env.gw.DB.Where(&models.BlockedCard{Fingerprint: blocked.Fingerprint}).FirstOrCreate(&blocked).Error; err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		cfg        risk.Config
		limits     map[string]int64
		pan        string
		change     func(f map[string]string)
		resultInfo string
		score      string
		hits       map[string]string
	}{
		{
			name:       "amount over the account limit",
			limits:     map[string]int64{"USD": 5000},
			pan:        "4242424242424267",
			change:     func(f map[string]string) { f["amount"] = "50.01" },
			resultInfo: "R0001:Amount exceeds the account limit",
			score:      "100",
			hits:       map[string]string{risk.RuleAmountLimit: risk.Reject},
		},
		{
			name:       "blocked card",
			pan:        blockedPAN,
			resultInfo: "R0002:Card is blocked",
			score:      "100",
			hits:       map[string]string{risk.RuleBlockedCard: risk.Reject},
		},
		{
			name:       "blocked BIN",
			cfg:        risk.Config{BlockedBINs: []string{"555555"}},
			pan:        "5555555555554469",
			resultInfo: "R0005:Card range is blocked",
			score:      "100",
			hits:       map[string]string{risk.RuleBlockedBIN: risk.Reject},
		},
		{
			name:       "blocked billing country, which also differs from the card's",
			cfg:        risk.Config{BlockedCountries: []string{"BR"}},
			pan:        "4242424242424267",
			change:     func(f map[string]string) { f["billing_country"] = "BR" },
			resultInfo: "R0006:Billing or card country is blocked",
			score:      "130",
			hits:       map[string]string{risk.RuleBlockedCountry: risk.Reject, risk.RuleCountryMismatch: risk.Review},
		},
		{
			name:       "blocked card country, no billing country",
			cfg:        risk.Config{BlockedCountries: []string{"GB"}},
			pan:        "4008260000000004",
			change:     func(f map[string]string) { delete(f, "billing_country") },
			resultInfo: "R0006:Billing or card country is blocked",
			score:      "100",
			hits:       map[string]string{risk.RuleBlockedCountry: risk.Reject},
		},
		{
			name:       "country mismatch weighted to reject",
			cfg:        risk.Config{CountryMismatchScore: 100},
			pan:        "4242424242424267",
			change:     func(f map[string]string) { f["billing_country"] = "GB" },
			resultInfo: "R0007:Billing country does not match the card's country",
			score:      "100",
			hits:       map[string]string{risk.RuleCountryMismatch: risk.Reject},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			creds := riskAccount(t, tc.cfg, tc.limits)
			f := riskOrder(t, creds, tc.pan, tc.change)
			status, r := authorise(t, f)
			if status != http.StatusOK {
				t.Fatalf("HTTP status = %d", status)
			}
			checkRejected(t, creds, f, r, tc.resultInfo)
			if r.RiskAction != risk.Reject || r.RiskScore != tc.score || !reflect.DeepEqual(hits(r), tc.hits) {
				t.Errorf("risk = %s %s %v; want REJECT %s %v", r.RiskAction, r.RiskScore, hits(r), tc.score, tc.hits)
			}
			checkReasonsInOrder(t, r)

			// The query shows the same verdict.
			_, q := query(t, creds, map[string]string{"orders": f["order_no"]})
			if len(q.OrdersList) != 1 {
				t.Fatalf("query found %d orders, want 1", len(q.OrdersList))
			}
			got := q.OrdersList[0]
			rejected := map[string]bool{}
			for _, c := range got.FraudCheckResult {
				if c.Status == risk.Reject {
					rejected[c.CheckItems] = true
				}
			}
			if got.AntifraudProvider == "" || len(got.FraudCheckResult) != len(risk.Rules()) || got.PaymentStatus != "6000" {
				t.Errorf("query: antifraud_provider %q, %d fraud checks, payment_status %s", got.AntifraudProvider, len(got.FraudCheckResult), got.PaymentStatus)
			}
			for rule, st := range tc.hits {
				if st == risk.Reject && !rejected[rule] {
					t.Errorf("query fraud_check_result %v does not reject %s", got.FraudCheckResult, rule)
				}
			}
		})
	}
}

// TestRiskVelocity sends orders that share a card, an email or an IP to an
// account whose velocity limit for that value is 2 per 10 minutes, weighted
// to reject: the first two pass, the third is rejected, and an order that
// shares nothing still passes.
func TestRiskVelocity(t *testing.T) {
	t.Parallel()
	tight := risk.Velocity{Max: 2, Window: risk.Duration(10 * time.Minute), Score: 100}
	// Cards that are not the simulators' test cards: the risk accounts are
	// live accounts, whose velocity counts every card, email and address.
	cards := []string{"4242424242424267", "5555555555554469", "4012888888881881"}
	tests := []struct {
		name  string
		cfg   risk.Config
		rule  string
		order func(i int) (pan string, change func(f map[string]string)) // the i-th order sharing the value
	}{
		{
			name: "same card",
			cfg:  risk.Config{CardVelocity: tight},
			rule: risk.RuleCardVelocity,
			order: func(i int) (string, func(map[string]string)) {
				return "4242424242424267", nil
			},
		},
		{
			name: "same email",
			cfg:  risk.Config{EmailVelocity: tight},
			rule: risk.RuleEmailVelocity,
			order: func(i int) (string, func(map[string]string)) {
				return cards[i], func(f map[string]string) { f["shopper_email"] = "velocity@example.com" }
			},
		},
		{
			name: "same IP",
			cfg:  risk.Config{IPVelocity: tight},
			rule: risk.RuleIPVelocity,
			order: func(i int) (string, func(map[string]string)) {
				return cards[i], func(f map[string]string) { f["shopper_ip"] = "203.0.113.99" }
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			creds := riskAccount(t, tc.cfg, nil)
			for i := range 3 {
				pan, change := tc.order(i)
				f := riskOrder(t, creds, pan, change)
				status, r := authorise(t, f)
				if status != http.StatusOK {
					t.Fatalf("order %d: HTTP status = %d", i+1, status)
				}
				if i < 2 {
					// The order being checked is not one of the earlier
					// ones: the first sees 0 others, the second 1.
					checkPaid(t, creds, f, r)
					if r.RiskAction != risk.Accept || r.RiskScore != "0" {
						t.Errorf("order %d: risk = %s %s, want ACCEPT 0", i+1, r.RiskAction, r.RiskScore)
					}
					continue
				}
				checkRejected(t, creds, f, r, "R0004:Too many payments with the same card, email, IP address or device")
				if want := map[string]string{tc.rule: risk.Reject}; r.RiskScore != "100" || !reflect.DeepEqual(hits(r), want) {
					t.Errorf("order 3: risk = %s %s %v; want REJECT 100 %v", r.RiskAction, r.RiskScore, hits(r), want)
				}
				checkReasonsInOrder(t, r)
			}
			// Another shopper with another card on the same account passes.
			f := riskOrder(t, creds, "5555555555554469", nil)
			if _, r := authorise(t, f); r.ResultInfo != "0000:Success" || r.RiskScore != "0" {
				t.Errorf("unrelated order: %s, risk score %s; want 0000:Success, 0", r.ResultInfo, r.RiskScore)
			}
		})
	}
}

// TestRiskScoresWithoutStopping checks that a rule that hits with less than
// the review score shows in the answer but does not stop the payment.
func TestRiskScoresWithoutStopping(t *testing.T) {
	t.Parallel()
	creds := riskAccount(t, risk.Config{}, nil)
	f := riskOrder(t, creds, "4242424242424267", func(f map[string]string) { f["billing_country"] = "GB" })
	_, r := authorise(t, f)
	checkPaid(t, creds, f, r)
	if want := map[string]string{risk.RuleCountryMismatch: risk.Review}; r.RiskAction != risk.Accept || r.RiskScore != "30" || !reflect.DeepEqual(hits(r), want) {
		t.Errorf("risk = %s %s %v; want ACCEPT 30 %v", r.RiskAction, r.RiskScore, hits(r), want)
	}
	checkReasonsInOrder(t, r)
	if o := findOrder(t, creds.AccountID, f["order_no"]); o.RiskAction != risk.Accept || o.RiskScore != 30 || len(o.RiskReasons) != len(risk.Rules()) {
		t.Errorf("record: risk %s %d with %d reasons", o.RiskAction, o.RiskScore, len(o.RiskReasons))
	}
}

// TestRiskReviewHoldsTheOrder sends an order whose score reaches the review
// threshold: it is held (payment_status 2100, order_status -2) and the card
// is not charged.
func TestRiskReviewHoldsTheOrder(t *testing.T) {
	t.Parallel()
	creds := riskAccount(t, risk.Config{CountryMismatchScore: 60}, nil)
	f := riskOrder(t, creds, "4242424242424267", func(f map[string]string) { f["billing_country"] = "GB" })
	status, r := authorise(t, f)
	if status != http.StatusOK {
		t.Fatalf("HTTP status = %d", status)
	}
	if r.OrderStatus != "-2" {
		t.Errorf("order_status = %q (%s), want -2", r.OrderStatus, r.ResultInfo)
	}
	if want := map[string]string{risk.RuleCountryMismatch: risk.Review}; r.RiskAction != risk.Review || r.RiskScore != "60" || !reflect.DeepEqual(hits(r), want) {
		t.Errorf("risk = %s %s %v; want REVIEW 60 %v", r.RiskAction, r.RiskScore, hits(r), want)
	}
	checkResultSignature(t, r, creds.SignKey)
	if o := findOrder(t, creds.AccountID, f["order_no"]); o.PaymentStatus != 2100 || o.OrderStatus != -2 || o.RiskAction != risk.Review {
		t.Errorf("record: payment_status %d order_status %d risk_action %s; want 2100 -2 REVIEW", o.PaymentStatus, o.OrderStatus, o.RiskAction)
	}
	if n := chargesFor(r.TransactionID); n != 0 {
		t.Errorf("simulator charges = %d, want 0", n)
	}
}

var velocitySeq atomic.Int64

// TestCountVelocity checks the velocity query against rows written
// directly: the window, the account, the value, the excluded order and the
// blocked-card list.
func TestCountVelocity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	account := fmt.Sprintf("VELOCITY%03d", velocitySeq.Add(1))
	now := time.Now()
	insert := func(txID, accountID, card, email, ip string, age time.Duration) {
		t.Helper()
		// Every order with an email comes from one device (issue 29).
		device := ""
		if email != "" {
			device = "dev-" + strings.ToLower(strings.TrimSpace(email))
		}
		err := env.gw.DB.Create(&models.Order{
			TransactionID: txID, WorkflowID: "velocity/" + accountID + "/" + txID, MerchantID: "30002",
			AccountID: accountID, OrderNo: "V-" + txID, Currency: "USD", Amount: 100,
			PaymentStatus: 6000, OrderStatus: 0, ResultCode: "A0001", ResultMessage: "Declined", CaptureMode: models.CaptureAuto,
			CardFingerprint: card, RequestFingerprint: "x",
			Details: order.Details{ShopperEmail: email, ShopperIP: ip, DeviceFingerprint: device}, CreatedAt: now.Add(-age),
		}).Error
		if err != nil {
			t.Fatal(err)
		}
	}
	id := func(n int) string { return fmt.Sprintf("9%03d%015d", velocitySeq.Load(), n) }
	insert(id(1), account, "card-a", "a@example.com", "192.0.2.1", time.Minute)     // the order being checked
	insert(id(2), account, "card-a", "a@example.com", "192.0.2.1", 2*time.Minute)   // everything, recent
	insert(id(3), account, "card-a", "b@example.com", "192.0.2.2", 9*time.Minute)   // card only
	insert(id(4), account, "card-a", "a@example.com", "192.0.2.1", 11*time.Minute)  // card too old; email, IP within the hour
	insert(id(5), account, "card-b", " A@Example.com", "192.0.2.1", 30*time.Minute) // email in other case and spacing, IP
	insert(id(6), account, "card-b", "a@example.com", "192.0.2.1", 2*time.Hour)     // too old for all
	insert(id(7), account+"X", "card-a", "a@example.com", "192.0.2.1", time.Minute) // another account
	insert(id(8), account, "", "", "", time.Minute)                                 // no values
	blocked := "blocked-" + account
	if err := env.gw.DB.Create(&models.BlockedCard{Fingerprint: blocked, Reason: "test"}).Error; err != nil {
		t.Fatal(err)
	}

	tenMin, hour := now.Add(-10*time.Minute), now.Add(-time.Hour)
	tests := []struct {
		name string
		q    models.VelocityQuery
		want models.VelocityCounts
	}{
		{
			name: "each value in its window, the checked order left out",
			q: models.VelocityQuery{AccountID: account, ExcludeTransactionID: id(1),
				Card:  models.VelocityWindow{Value: "card-a", Since: tenMin},
				Email: models.VelocityWindow{Value: "a@example.com", Since: hour},
				IP:    models.VelocityWindow{Value: "192.0.2.1", Since: hour}},
			want: models.VelocityCounts{Card: 2, Email: 3, IP: 3},
		},
		{
			name: "by device, in its window",
			q: models.VelocityQuery{AccountID: account, ExcludeTransactionID: id(1),
				Device: models.VelocityWindow{Value: "dev-a@example.com", Since: hour}},
			want: models.VelocityCounts{Device: 3},
		},
		{
			name: "nothing left out",
			q: models.VelocityQuery{AccountID: account,
				Card: models.VelocityWindow{Value: "card-a", Since: tenMin}},
			want: models.VelocityCounts{Card: 3},
		},
		{
			name: "a longer window",
			q: models.VelocityQuery{AccountID: account, ExcludeTransactionID: id(1),
				Card: models.VelocityWindow{Value: "card-a", Since: now.Add(-3 * time.Hour)},
				IP:   models.VelocityWindow{Value: "192.0.2.1", Since: now.Add(-3 * time.Hour)}},
			want: models.VelocityCounts{Card: 3, IP: 4},
		},
		{
			name: "no values asks nothing",
			q:    models.VelocityQuery{AccountID: account, ExcludeTransactionID: id(1)},
			want: models.VelocityCounts{},
		},
		{
			name: "an unknown value",
			q: models.VelocityQuery{AccountID: account, ExcludeTransactionID: id(1),
				Email: models.VelocityWindow{Value: "c@example.com", Since: hour}},
			want: models.VelocityCounts{},
		},
		{
			name: "a blocked card, asked alone",
			q:    models.VelocityQuery{AccountID: account, ExcludeTransactionID: id(1), Blocklist: blocked},
			want: models.VelocityCounts{CardBlocked: true},
		},
		{
			name: "a card not on the list, with its velocity",
			q: models.VelocityQuery{AccountID: account, ExcludeTransactionID: id(1), Blocklist: "card-a",
				Card: models.VelocityWindow{Value: "card-a", Since: tenMin}},
			want: models.VelocityCounts{Card: 2},
		},
		{
			name: "a blocked card beside every count",
			q: models.VelocityQuery{AccountID: account, ExcludeTransactionID: id(1), Blocklist: blocked,
				Card:   models.VelocityWindow{Value: "card-a", Since: tenMin},
				Email:  models.VelocityWindow{Value: "a@example.com", Since: hour},
				IP:     models.VelocityWindow{Value: "192.0.2.1", Since: hour},
				Device: models.VelocityWindow{Value: "dev-a@example.com", Since: hour}},
			want: models.VelocityCounts{Card: 2, Email: 3, IP: 3, Device: 3, CardBlocked: true},
		},
		{
			name: "another account sees only its own",
			q: models.VelocityQuery{AccountID: account + "X", ExcludeTransactionID: id(1),
				Card: models.VelocityWindow{Value: "card-a", Since: hour}},
			want: models.VelocityCounts{Card: 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := models.CountVelocity(ctx, env.gw.DB, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("CountVelocity = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestRiskCheckTakesTheOrdersSettings: the risk check judges by the
// settings the order carries (the account's when the order was made), and
// reads the account's of this moment only for an order that carries none
// (one made before orders carried them).
func TestRiskCheckTakesTheOrdersSettings(t *testing.T) {
	t.Parallel()
	// The account as it is now: 50.00 USD at most, BIN 555555 blocked.
	creds := riskAccount(t, risk.Config{BlockedBINs: []string{"555555"}}, map[string]int64{"USD": 5000})
	acts, err := env.gw.Activities()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		amount   int64
		bin      string
		settings *risk.Settings
		want     string   // the verdict's action
		hits     []string // the rules that hit
	}{
		{"no settings carried: the account's limit", 6000, "424242", nil, risk.Reject, []string{risk.RuleAmountLimit}},
		{"no settings carried: the account's blocked BIN", 1000, "555555", nil, risk.Reject, []string{risk.RuleBlockedBIN}},
		{"no settings carried, within them", 1000, "424242", nil, risk.Accept, nil},
		{"the order's higher limit", 6000, "424242", &risk.Settings{AmountLimit: 10000}, risk.Accept, nil},
		{"the order's settings block no BIN", 1000, "555555", &risk.Settings{}, risk.Accept, nil},
		{"the order's own blocked BIN", 1000, "411111", &risk.Settings{Config: risk.Config{BlockedBINs: []string{"411111"}}}, risk.Reject, []string{risk.RuleBlockedBIN}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := acts.CheckRisk(t.Context(), activities.RiskInput{
				TransactionID: fmt.Sprintf("1888888888888888%03d", i), MerchantID: creds.MerchantID, AccountID: creds.AccountID,
				Amount: tc.amount, Currency: "USD", CardFingerprint: "risk-settings-" + randomHex(6),
				CardBIN: tc.bin, CardMasked: tc.bin + "******4444", BillingCountry: "US", Settings: tc.settings,
			})
			if err != nil {
				t.Fatal(err)
			}
			var hit []string
			for _, r := range res.Reasons {
				if r.Status != risk.Accept {
					hit = append(hit, r.Name)
				}
			}
			if res.Action != tc.want || !slices.Equal(hit, tc.hits) {
				t.Errorf("verdict = %s, hits %v; want %s, %v", res.Action, hit, tc.want, tc.hits)
			}
		})
	}
}

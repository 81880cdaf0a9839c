package console

import (
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/password"
	"github.com/paygate/paygate/models"
)

// TestDisputesPage follows issue 30: "the same in the console with the
// deadline shown; ops see disputes near their deadline and the dispute rate
// per merchant (with a warning above a configurable threshold)". A merchant
// sees its own disputes only; ops see every merchant's and the rates.
func TestDisputesPage(t *testing.T) {
	c := newTestConsole(t)
	c.s.Disputes = models.Records{DB: c.db}
	now := time.Now().UTC()
	soon, later := now.Add(20*time.Hour), now.Add(5*24*time.Hour)
	for _, d := range []models.Dispute{
		{ID: "sim-acquirer:dp_a", MerchantID: "A", AccountID: "A1", TransactionID: "1000000000000000001", OrderNo: "ORDER-A",
			Status: "needs_response", EvidenceDue: &soon},
		{ID: "sim-acquirer:dp_b", MerchantID: "B", AccountID: "B1", TransactionID: "1000000000000000002", OrderNo: "ORDER-B",
			Status: "needs_response", EvidenceDue: &later},
	} {
		d.Connector, d.ConnectorRef, d.WorkflowID, d.Currency, d.Amount, d.Fee = "sim-acquirer", d.ID, "dispute/"+d.ID, "USD", 5000, 1500
		d.Stage, d.Reason, d.CreatedAt, d.UpdatedAt = "chargeback", "fraudulent", now, now
		if err := models.SaveDispute(t.Context(), c.db, &d); err != nil {
			t.Fatal(err)
		}
	}
	// A merchant user without a merchant (user creation refuses one; a row
	// written by hand is not) sees no merchant's disputes.
	hash, err := password.Hash(testPassword)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.db.Create(&models.ConsoleUser{Email: "shop-none@example.com", Role: models.RoleMerchant, PasswordHash: hash, CreatedAt: now}).Error; err != nil {
		t.Fatal(err)
	}
	// Merchant A has 1 payment and 1 dispute: 100%, warned at the default
	// threshold; with a 10000 bp threshold nobody is.
	tests := []struct {
		name, who string
		warnBP    int
		want      []string
		not       []string
	}{
		{"a merchant sees its own, the deadline near", "shop-a@example.com", 0,
			[]string{"sim-acquirer:dp_a", "ORDER-A", "50.00 USD", "15.00", "due within 48 hours"},
			[]string{"sim-acquirer:dp_b", "dispute-rates"}},
		{"a merchant user without a merchant sees none", "shop-none@example.com", 0, nil,
			[]string{"sim-acquirer:dp_a", "sim-acquirer:dp_b", "dispute-rates"}},
		{"ops see every merchant's, nearest deadline first, and the rates", "ops@example.com", 0,
			[]string{"sim-acquirer:dp_a", "sim-acquirer:dp_b", `id="dispute-rates"`, "<td>A</td><td>1</td><td>1</td><td>100.00% <strong>above the warning threshold"},
			nil},
		{"a threshold above every rate warns nobody", "ops@example.com", 10000,
			[]string{`id="dispute-rates"`, "<td>A</td><td>1</td><td>1</td><td>100.00%</td>"}, []string{"above the warning threshold"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c.s.DisputeRateWarning = tc.warnBP
			hc := c.browser(t)
			c.signIn(t, hc, tc.who)
			code, body, _ := do(t, hc, "GET", c.srv.URL+"/console/disputes", nil)
			if code != 200 {
				t.Fatalf("GET /console/disputes = %d", code)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("the page lacks %q", w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(body, w) {
					t.Errorf("the page shows %q", w)
				}
			}
			if i, j := strings.Index(body, "dp_a"), strings.Index(body, "dp_b"); tc.who == "ops@example.com" && (i < 0 || j < 0 || i > j) {
				t.Errorf("the nearest deadline is not first")
			}
		})
	}
}

// TestDisputesKeepTestAndLiveApart: the disputes page and the dispute
// rates are of one mode's accounts, live unasked: the dispute test card
// disputes every capture, and a test account's disputes once raised its
// merchant's live rate over the warning.
func TestDisputesKeepTestAndLiveApart(t *testing.T) {
	c := newTestConsole(t)
	c.s.Disputes = models.Records{DB: c.db}
	seedAccounts(t, c, map[string]string{"A1": "live", "A2": "test", "B1": "live"})
	now := time.Now().UTC()
	due := now.Add(5 * 24 * time.Hour)
	for _, d := range []models.Dispute{
		{ID: "sim-acquirer:dp_live", AccountID: "A1", TransactionID: "1000000000000000001", OrderNo: "ORDER-A"},
		{ID: "sim-acquirer:dp_test", AccountID: "A2", TransactionID: "2000000000000900000", OrderNo: "TEST-0"},
	} {
		d.MerchantID, d.Status, d.EvidenceDue = "A", "needs_response", &due
		d.Connector, d.ConnectorRef, d.WorkflowID, d.Currency, d.Amount, d.Fee = "sim-acquirer", d.ID, "dispute/"+d.ID, "USD", 5000, 1500
		d.Stage, d.Reason, d.CreatedAt, d.UpdatedAt = "chargeback", "fraudulent", now, now
		if err := models.SaveDispute(t.Context(), c.db, &d); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, who, query string
		want, not        []string
	}{
		{"ops, live unasked: A's one live payment and its one dispute", "ops@example.com", "",
			[]string{"sim-acquirer:dp_live", "<td>A</td><td>1</td><td>1</td>", `<a href="/console/disputes?lang=en&amp;mode=test">Test accounts</a>`},
			[]string{"sim-acquirer:dp_test", "<td>A</td><td>2</td><td>2</td>"}},
		{"ops, the test accounts'", "ops@example.com", "&mode=test",
			[]string{"sim-acquirer:dp_test", "<td>A</td><td>1</td><td>1</td>"}, []string{"sim-acquirer:dp_live", "<td>B</td>"}},
		{"the merchant, live unasked", "shop-a@example.com", "", []string{"sim-acquirer:dp_live"}, []string{"sim-acquirer:dp_test"}},
		{"the merchant's test disputes", "shop-a@example.com", "&mode=test", []string{"sim-acquirer:dp_test"}, []string{"sim-acquirer:dp_live"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hc := c.browser(t)
			c.signIn(t, hc, tc.who)
			code, body, _ := do(t, hc, "GET", c.srv.URL+"/console/disputes?lang=en"+tc.query, nil)
			if code != 200 {
				t.Fatalf("GET /console/disputes = %d", code)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("the page lacks %s", w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(body, w) {
					t.Errorf("the page shows %s", w)
				}
			}
		})
	}
}

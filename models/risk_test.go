package models_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

// TestVelocityReadsOnlyTheWindow: the velocity check's statement reads each
// value's index, not the account's orders, on a table the planner has no
// statistics for (a new database; the stores these tests and `make run` use
// run without autovacuum) and one it has. Before migration 0027 the check
// read every order of the account on every payment, so a payment cost more
// with each order the account had taken.
func TestVelocityReadsOnlyTheWindow(t *testing.T) {
	db := protectedDB(t)
	ctx := t.Context()
	// Three thousand orders of one account, each with its own card, email,
	// address and device, most of them older than any window.
	err := db.Exec(`INSERT INTO orders (transaction_id, workflow_id, merchant_id, account_id, order_no, currency, amount,
		payment_status, order_status, result_code, result_message, capture_mode, request_fingerprint, details,
		card_fingerprint, shopper_email_hash, shopper_ip_hash, device_fingerprint_hash, created_at, updated_at)
		SELECT '5' || lpad(i::text, 18, '0'), 'order/plan/' || i, 'M1', 'A1', 'PLAN-' || i, 'USD', 100,
			0, 0, '', '', 'auto', '', '{}', 'card-' || i, 'email-' || i, 'ip-' || i, 'device-' || i,
			now() - i * interval '1 minute', now()
		FROM generate_series(1, 3000) AS i`).Error
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&models.BlockedCard{Fingerprint: "card-7", Reason: "test"}).Error; err != nil {
		t.Fatal(err)
	}
	hour := time.Now().Add(-time.Hour)
	q := models.VelocityQuery{AccountID: "A1", ExcludeTransactionID: "1", Blocklist: "card-7",
		Card:   models.VelocityWindow{Value: "card-5", Since: hour},
		Email:  models.VelocityWindow{Value: "someone@example.com", Since: hour},
		IP:     models.VelocityWindow{Value: "192.0.2.9", Since: hour},
		Device: models.VelocityWindow{Value: "device-x", Since: hour}}

	for _, stats := range []string{"without statistics", "with statistics"} {
		t.Run(stats, func(t *testing.T) {
			if stats == "with statistics" {
				if err := db.Exec("ANALYZE orders").Error; err != nil {
					t.Fatal(err)
				}
			}
			var sql string
			var vars []any
			sess := db.Session(&gorm.Session{NewDB: true})
			// The statement as gorm sends it, caught after it ran.
			cb := "test:velocity-plan-" + strings.ReplaceAll(stats, " ", "-")
			if err := sess.Callback().Row().After("gorm:row").Register(cb, func(tx *gorm.DB) {
				sql, vars = tx.Statement.SQL.String(), tx.Statement.Vars
			}); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = sess.Callback().Row().Remove(cb) }()
			got, err := models.CountVelocity(ctx, sess, q)
			if err != nil {
				t.Fatal(err)
			}
			if want := (models.VelocityCounts{Card: 1, CardBlocked: true}); got != want {
				t.Errorf("counts = %+v, want %+v", got, want)
			}
			var plan string
			if err := db.Raw("EXPLAIN (FORMAT JSON) "+sql, vars...).Row().Scan(&plan); err != nil {
				t.Fatal(err)
			}
			var nodes []any
			if err := json.Unmarshal([]byte(plan), &nodes); err != nil {
				t.Fatal(err)
			}
			read := map[string]bool{}
			var walk func(any)
			walk = func(n any) {
				switch v := n.(type) {
				case map[string]any:
					if name, ok := v["Index Name"].(string); ok {
						read[name] = true
					}
					if rel, ok := v["Relation Name"].(string); ok && v["Node Type"] == "Seq Scan" {
						read["seq scan of "+rel] = true
					}
					for _, c := range v {
						walk(c)
					}
				case []any:
					for _, c := range v {
						walk(c)
					}
				}
			}
			walk(nodes)
			for _, want := range []string{"idx_orders_card_fingerprint", "idx_orders_shopper_email_hash",
				"idx_orders_shopper_ip_hash", "idx_orders_device_fingerprint_hash"} {
				if !read[want] {
					t.Errorf("the plan does not read %s: it reads %v", want, read)
				}
			}
			for _, never := range []string{"idx_orders_account_updated", "idx_orders_account_order_no", "seq scan of orders"} {
				if read[never] {
					t.Errorf("the plan reads %s (every order of the account): %v", never, read)
				}
			}
		})
	}
}

// TestAccountRiskSettings: an order takes the account's rules, its limit in
// the order's currency (none when the account sets none for it) and its
// mode.
func TestAccountRiskSettings(t *testing.T) {
	cfg := risk.Config{BlockedBINs: []string{"411111"}, ReviewScore: 70}
	account := models.Account{Mode: testmode.Live, Risk: cfg, AmountLimits: map[string]int64{"USD": 5000}}
	test := account
	test.Mode = testmode.Test
	tests := []struct {
		name     string
		account  models.Account
		currency string
		want     risk.Settings
	}{
		{"a live account's limit in the currency", account, "USD", risk.Settings{Config: cfg, AmountLimit: 5000}},
		{"no limit in another currency", account, "EUR", risk.Settings{Config: cfg}},
		{"a test account", test, "USD", risk.Settings{Config: cfg, AmountLimit: 5000, Test: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.account.RiskSettings(tc.currency); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("RiskSettings(%s) = %+v, want %+v", tc.currency, got, tc.want)
			}
		})
	}
}

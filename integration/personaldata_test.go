package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// shopperMarkers are the shoppers' emails and names the suite sends (the
// domains of every shopper email it uses, in any case, and its shoppers'
// family names, as written): none may be found in clear in the database
// when it has run.
var (
	shopperDomains = []string{"@example.com", "@example.org", "@paygate.test"}
	shopperNames   = []string{"Lovelace", "Hopperton"}
)

// staffTables hold the console's users, their sign-ins, the finance
// re-runs they asked for and what finance did with the reconciliation's
// exceptions (who acted): staff, not shoppers.
var staffTables = map[string]bool{
	"console_users": true, "console_sessions": true, "console_login_failures": true,
	"console_login_limits": true, "console_actions": true, "payout_reruns": true,
	"recon_actions": true, "recon_items": true,
}

// databaseLeaks reads every row of every table of the gateway's database,
// bytea columns decoded, and lists each shopper marker found in clear.
func databaseLeaks(ctx context.Context) ([]string, error) {
	db := env.gw.DB.WithContext(ctx)
	var tables []string
	err := db.Raw(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`).
		Scan(&tables).Error
	if err != nil {
		return nil, err
	}
	var problems []string
	scan := func(where string, content []byte) {
		for _, d := range shopperDomains {
			if bytes.Contains(bytes.ToLower(content), []byte(d)) {
				problems = append(problems, fmt.Sprintf("%s holds an email %q in clear", where, d))
			}
		}
		for _, n := range shopperNames {
			if bytes.Contains(content, []byte(n)) {
				problems = append(problems, fmt.Sprintf("%s holds the name %q in clear", where, n))
			}
		}
	}
	for _, table := range tables {
		if staffTables[table] {
			continue
		}
		rows, err := db.Raw(`SELECT row_to_json(t)::text FROM "` + table + `" t`).Rows()
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var row string
			if err := rows.Scan(&row); err != nil {
				rows.Close()
				return nil, err
			}
			scan("a row of "+table, []byte(row))
		}
		rows.Close()
		var byteaColumns []string
		err = db.Raw(`SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = ? AND data_type = 'bytea'`, table).
			Scan(&byteaColumns).Error
		if err != nil {
			return nil, err
		}
		for _, col := range byteaColumns {
			rows, err := db.Raw(`SELECT "` + col + `" FROM "` + table + `" WHERE "` + col + `" IS NOT NULL`).Rows()
			if err != nil {
				return nil, err
			}
			for rows.Next() {
				var b []byte
				if err := rows.Scan(&b); err != nil {
					rows.Close()
					return nil, err
				}
				scan(table+"."+col, b)
			}
			rows.Close()
		}
	}
	return problems, nil
}

// adminErase asks the admin API to erase and returns the status and answer.
func adminErase(t *testing.T, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, env.api.URL+"/admin/shoppers/erase", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var ans map[string]any
	_ = json.Unmarshal(b, &ans)
	return resp.StatusCode, ans
}

// TestShopperDataSealedAndErased: a paid order's shopper is stored sealed,
// read back whole, and erased by the admin API by email, the books kept and
// the erasure recorded.
func TestShopperDataSealedAndErased(t *testing.T) {
	ctx := context.Background()
	creds := env.auto
	orderNo := newOrderNo(t)
	email := "erase-" + randomHex(4) + "@example.org"
	f := cardOrder(creds, orderNo, "4242424242424242")
	f["shopper_email"] = email
	if code, r := authorise(t, signCard(f, creds.SignKey)); code != http.StatusOK || r.OrderStatus != "1" {
		t.Fatalf("authorise: HTTP %d %+v", code, r)
	}
	o, err := models.FindOrderByNo(ctx, env.gw.DB, creds.AccountID, orderNo)
	if err != nil {
		t.Fatal(err)
	}
	if o.Details.ShopperEmail != email || o.Details.LastName != "Lovelace" || o.Details.ShopperIP != "203.0.113.7" {
		t.Errorf("read back %+v", o.Details)
	}
	var raw string
	if err := env.gw.DB.Raw(`SELECT row_to_json(o)::text FROM orders o WHERE transaction_id = ?`, o.TransactionID).Row().Scan(&raw); err != nil {
		t.Fatal(err)
	}
	for _, clear := range []string{email, "Lovelace", "203.0.113.7"} {
		if strings.Contains(raw, clear) {
			t.Errorf("the order's row holds %q in clear", clear)
		}
	}

	tests := []struct {
		name       string
		body       string
		wantHTTP   int
		wantOrders float64
	}{
		{"without who asks", `{"email":"` + email + `"}`, http.StatusBadRequest, 0},
		{"by email, other case", `{"email":"` + strings.ToUpper(email) + `","merchant_id":"` + creds.MerchantID + `","by":"integration","reason":"shopper asked"}`, http.StatusOK, 1},
		{"again: nothing left", `{"email":"` + email + `","by":"integration"}`, http.StatusOK, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, ans := adminErase(t, tc.body)
			if code != tc.wantHTTP {
				t.Fatalf("HTTP %d %v, want %d", code, ans, tc.wantHTTP)
			}
			if code == http.StatusOK && (ans["orders"] != tc.wantOrders || ans["open"] != float64(0) || ans["erasure_id"] == float64(0)) {
				t.Errorf("answer %v, want %v orders erased", ans, tc.wantOrders)
			}
		})
	}
	after, err := models.FindOrderByNo(ctx, env.gw.DB, creds.AccountID, orderNo)
	if err != nil {
		t.Fatal(err)
	}
	if after.Details.ShopperEmail != "" || after.Details.LastName != "" || after.Amount != 1234 || after.PaymentStatus != o.PaymentStatus ||
		after.CardMasked != o.CardMasked || after.PersonalErasedAt == nil || after.Details.OrderNo != orderNo {
		t.Errorf("after erasure: %+v", after)
	}
	var n int64
	env.gw.DB.Model(&models.PersonalDataErasure{}).Where("requested_by = ? AND orders = 1 AND merchant_id = ?", "admin-api:integration", creds.MerchantID).Count(&n)
	if n != 1 {
		t.Errorf("%d erasure records, want 1", n)
	}
}

// TestPersonalDataWorkflow: the worker's schedule exists (and making it
// again changes nothing), and a run seals an order written in clear before
// 0015 and erases a closed one past the retention period.
func TestPersonalDataWorkflow(t *testing.T) {
	ctx := context.Background()
	for range 2 {
		if err := env.gw.EnsurePersonalDataSchedule(ctx); err != nil {
			t.Fatal(err)
		}
	}
	desc, err := env.temporal.ScheduleClient().GetHandle(ctx, workflows.PersonalDataScheduleID).Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if iv := desc.Schedule.Spec.Intervals; len(iv) != 1 || iv[0].Every != 24*time.Hour {
		t.Errorf("schedule intervals = %+v, want every 24h", iv)
	}

	creds := env.auto
	legacy := func(orderNo string, age time.Duration) {
		d := order.Details{MerchantID: creds.MerchantID, AccountID: creds.AccountID, OrderNo: orderNo, Currency: "USD", Amount: "1.00",
			ShopperEmail: "legacy@example.com", LastName: "Hopperton", BillingCountry: "US"}
		details, _ := json.Marshal(d)
		err := env.gw.DB.Exec(`INSERT INTO orders (transaction_id, workflow_id, merchant_id, account_id, order_no, currency, amount,
			payment_status, order_status, result_code, result_message, capture_mode, request_fingerprint, details,
			shopper_email, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, 'USD', 100, 6000, 0, 'A0001', 'Declined', 'auto', 'fp', ?, 'legacy@example.com', ?, ?)`,
			unusedTransactionID(t), "legacy/"+orderNo, creds.MerchantID, creds.AccountID, orderNo, string(details),
			time.Now().Add(-age), time.Now().Add(-age)).Error
		if err != nil {
			t.Fatal(err)
		}
	}
	recent, old := newOrderNo(t), newOrderNo(t)
	legacy(recent, time.Hour)
	legacy(old, 40*24*time.Hour)

	run, err := env.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "personal-data-test-" + randomHex(4), TaskQueue: workflows.TaskQueue},
		workflows.PersonalDataWorkflowType, workflows.PersonalDataInput{RetentionDays: 30, Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	var res workflows.PersonalDataResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		orderNo string
		erased  bool
	}{{recent, false}, {old, true}} {
		o, err := models.FindOrderByNo(ctx, env.gw.DB, creds.AccountID, c.orderNo)
		if err != nil {
			t.Fatal(err)
		}
		if o.LegacyShopperEmail != "" || o.StoredDetails.ShopperEmail != "" || o.StoredDetails.LastName != "" {
			t.Errorf("%s still holds personal data in clear: %+v", c.orderNo, o)
		}
		if erased := o.PersonalErasedAt != nil; erased != c.erased || (!erased && o.Details.ShopperEmail != "legacy@example.com") {
			t.Errorf("%s: erased %v, want %v; details %+v", c.orderNo, erased, c.erased, o.Details)
		}
	}
}

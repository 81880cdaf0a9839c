package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
	"go.temporal.io/api/workflowservice/v1"
)

type queryResponse struct {
	MerchantID    string `json:"merchant_id"`
	AccountID     string `json:"account_id"`
	ReturnStatus  string `json:"return_status"`
	ReturnMessage string `json:"return_message"`
	NextCursor    string `json:"next_cursor"`
	OrdersList    []struct {
		Amount              string            `json:"amount"`
		Currency            string            `json:"currency"`
		OrderNo             string            `json:"order_no"`
		TransactionID       string            `json:"transaction_id"`
		ReferenceNo         string            `json:"reference_no"`
		DeliveryInformation map[string]string `json:"delivery_information"`
		AntifraudProvider   string            `json:"antifraud_provider"`
		FraudCheckResult    []struct {
			CheckItems string `json:"check_items"`
			Status     string `json:"status"`
		} `json:"fraud_check_result"`
		Is3DS              string            `json:"is3ds"`
		PaymentStatus      string            `json:"payment_status"`
		QueryResult        string            `json:"query_result"`
		ShopperEmail       string            `json:"shopper_email"`
		ShopperPhone       string            `json:"shopper_phone"`
		SubscriptionResult map[string]string `json:"subscription_result"`
		TransactionDate    string            `json:"transaction_date"`
	} `json:"orders_list"`
}

func query(t *testing.T, creds merchant.Credentials, extra map[string]string) (int, queryResponse) {
	t.Helper()
	f := map[string]string{
		"merchant_id":     creds.MerchantID,
		"account_id":      creds.AccountID,
		"encryption_data": signing.Sign(creds.SignKey, creds.MerchantID, creds.AccountID),
	}
	for k, v := range extra {
		f[k] = v
	}
	status, b := post(t, "/v1/retrievalTrans", formType, form(f))
	var r queryResponse
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("query answer is not JSON (%d): %s", status, b)
	}
	return status, r
}

func TestRetrievalTrans(t *testing.T) {
	t.Parallel()
	creds := env.auto
	paid, declined := newOrderNo(t), newOrderNo(t)
	f := cardOrder(creds, paid, "4242424242424242")
	f["delivery_city"], f["delivery_country"], f["shopper_phone"] = "London", "GB", "+44 20 7946 0000"
	_, rPaid := authorise(t, signCard(f, creds.SignKey))
	_, rDeclined := authorise(t, signCard(cardOrder(creds, declined, "4000000000009995"), creds.SignKey))
	if rPaid.ResultInfo != "0000:Success" || rDeclined.OrderStatus != "0" {
		t.Fatalf("setup payments: %s / %s", rPaid.ResultInfo, rDeclined.ResultInfo)
	}

	t.Run("by order numbers, one unknown", func(t *testing.T) {
		status, r := query(t, creds, map[string]string{"orders": paid + "," + declined + ",NO-SUCH-ORDER"})
		if status != http.StatusOK || r.ReturnStatus != "1" || r.ReturnMessage != "OK" || len(r.OrdersList) != 3 {
			t.Fatalf("HTTP %d, %s %s, %d orders", status, r.ReturnStatus, r.ReturnMessage, len(r.OrdersList))
		}
		byNo := map[string]int{}
		for i, o := range r.OrdersList {
			byNo[o.OrderNo] = i
		}
		p := r.OrdersList[byNo[paid]]
		if p.PaymentStatus != "3000" || p.QueryResult != "1" || p.Amount != "12.34" || p.Currency != "USD" ||
			p.TransactionID != rPaid.TransactionID || p.ShopperEmail != "ada@example.com" ||
			p.ShopperPhone != "+44 20 7946 0000" || p.Is3DS != "0" || p.AntifraudProvider != "paygate-risk" ||
			!strings.HasPrefix(p.ReferenceNo, "ch_") || p.DeliveryInformation["delivery_city"] != "London" ||
			p.DeliveryInformation["delivery_country"] != "GB" || len(p.FraudCheckResult) != len(risk.Rules()) ||
			p.FraudCheckResult[0].Status != "ACCEPT" || len(p.TransactionDate) != 14 {
			t.Errorf("paid order: %+v", p)
		}
		if _, err := time.Parse("20060102150405", p.TransactionDate); err != nil {
			t.Errorf("transaction_date %q: %v", p.TransactionDate, err)
		}
		if d := r.OrdersList[byNo[declined]]; d.PaymentStatus != "6000" || d.QueryResult != "1" {
			t.Errorf("declined order: %+v", d)
		}
		if u := r.OrdersList[byNo["NO-SUCH-ORDER"]]; u.QueryResult != "0" || u.PaymentStatus != "" {
			t.Errorf("unknown order: %+v", u)
		}
	})
	t.Run("by transaction ids", func(t *testing.T) {
		_, r := query(t, creds, map[string]string{"trades": rDeclined.TransactionID})
		if r.ReturnStatus != "1" || len(r.OrdersList) != 1 || r.OrdersList[0].OrderNo != declined || r.OrdersList[0].PaymentStatus != "6000" {
			t.Errorf("%+v", r)
		}
	})
	t.Run("another account cannot see the order", func(t *testing.T) {
		_, r := query(t, env.manual, map[string]string{"orders": paid})
		if r.ReturnStatus != "1" || len(r.OrdersList) != 1 || r.OrdersList[0].QueryResult != "0" {
			t.Errorf("%+v", r)
		}
	})
	t.Run("by time window", func(t *testing.T) {
		now := time.Now().UTC()
		_, r := query(t, creds, map[string]string{
			"start_time": now.Add(-time.Hour).Format("20060102150405"),
			"end_time":   now.Add(time.Hour).Format("20060102150405"),
		})
		found := 0
		for _, o := range r.OrdersList {
			if o.OrderNo == paid || o.OrderNo == declined {
				found++
			}
		}
		if r.ReturnStatus != "1" || found != 2 {
			t.Errorf("return_status %s, found %d of 2 in %d orders", r.ReturnStatus, found, len(r.OrdersList))
		}
	})
}

func TestRetrievalTransRefusals(t *testing.T) {
	t.Parallel()
	closed, err := env.gw.Accounts.Create(context.Background(), merchant.NewAccount{Mode: testmode.Test,
		MerchantID: "10087", CaptureMode: models.CaptureAuto, Currencies: []string{"USD"},
	})
	if err != nil {
		t.Fatal(err)
	}
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprintf("O-%d", i)
	}
	tests := []struct {
		name    string
		creds   merchant.Credentials
		extra   map[string]string
		message string
	}{
		{"bad signature", env.auto, map[string]string{"encryption_data": strings.Repeat("0", 64), "orders": "x"}, "I0013:Signature verification failed"},
		{"IP not registered", closed, map[string]string{"orders": "x"}, "I0014:Caller IP address not registered for queries: 127.0.0.1"},
		{"101 orders", env.auto, map[string]string{"orders": strings.Join(many, ",")}, "I0015:Too many orders in one request: at most 100 orders and trades together"},
		{"a window without its end", env.auto, map[string]string{"start_time": "20260101000000"}, "I0001:Missing required field: start_time and end_time together (yyyyMMddHHmmss)"},
		{"a cursor not ours", env.auto, map[string]string{"cursor": "c12-34"}, "I0008:Invalid field value: cursor: pass back next_cursor as it came"},
		{"unknown account", merchant.Credentials{MerchantID: "1", AccountID: "2", SignKey: "k"}, map[string]string{"orders": "x"}, "I0002:Unknown or inactive merchant account"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, r := query(t, tc.creds, tc.extra)
			if status != http.StatusOK || r.ReturnStatus != "0" || r.ReturnMessage != tc.message || len(r.OrdersList) != 0 {
				t.Errorf("HTTP %d %q %q (%d orders), want 200 0 %q", status, r.ReturnStatus, r.ReturnMessage, len(r.OrdersList), tc.message)
			}
		})
	}
}

// TestRetrievalTransChanges follows the interface's Query transactions:
// with merchant_id, account_id and encryption_data alone it answers the
// orders "to synchronise order status into a merchant's system": the
// account's latest changed orders, oldest change first, with a cursor; the
// cursor passed back answers only what changed since, and where nothing
// did, the same cursor again.
func TestRetrievalTransChanges(t *testing.T) {
	t.Parallel()
	creds, err := env.gw.Accounts.Create(context.Background(), merchant.NewAccount{Mode: testmode.Test,
		MerchantID: "10088", CaptureMode: models.CaptureAuto, Currencies: []string{"USD"}, AllowedQueryIPs: []string{"127.0.0.1"},
		Risk: quietRisk,
	})
	if err != nil {
		t.Fatal(err)
	}
	var txs, nos []string
	for _, amount := range []string{"10.00", "11.00", "12.00"} {
		tx, no := paidOrder(t, creds, amount)
		txs, nos = append(txs, tx), append(nos, no)
	}
	// The orders' records are written beside the answers; wait until the
	// three are paid there.
	var first queryResponse
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, first = query(t, creds, nil)
		if len(first.OrdersList) == 3 && first.OrdersList[0].PaymentStatus == "3000" && first.OrdersList[1].PaymentStatus == "3000" &&
			first.OrdersList[2].PaymentStatus == "3000" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the changes query answered %+v", first)
		}
		time.Sleep(100 * time.Millisecond)
	}
	got := []string{first.OrdersList[0].TransactionID, first.OrdersList[1].TransactionID, first.OrdersList[2].TransactionID}
	// The records are written beside the answers, so two orders made a
	// moment apart may have changed last in either order.
	slices.Sort(got)
	if strings.Join(got, ",") != strings.Join(txs, ",") || first.ReturnStatus != "1" || first.NextCursor == "" {
		t.Fatalf("changed orders %v (cursor %q), want %v", got, first.NextCursor, txs)
	}
	_, none := query(t, creds, map[string]string{"cursor": first.NextCursor})
	if none.ReturnStatus != "1" || len(none.OrdersList) != 0 || none.NextCursor != first.NextCursor {
		t.Errorf("nothing changed: %d orders, cursor %q; want none and %q", len(none.OrdersList), none.NextCursor, first.NextCursor)
	}
	_, r := batch(t, creds, "/v1/refund", "refund_orders", []batchEntry{with(ref(txs[0], nos[0], "10.00"), "refund_amount", "1.00")})
	if r.ReturnStatus != "1" {
		t.Fatalf("refund: %+v", r)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		_, since := query(t, creds, map[string]string{"cursor": first.NextCursor})
		if len(since.OrdersList) == 1 && since.OrdersList[0].TransactionID == txs[0] && since.NextCursor != first.NextCursor {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the refund the changes since answered %+v", since)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestOrdersFindableBySearchAttributes is what ops do in the Temporal UI:
// find an order by its business keys.
func TestOrdersFindableBySearchAttributes(t *testing.T) {
	t.Parallel()
	creds := env.auto
	orderNo := newOrderNo(t)
	_, r := authorise(t, signCard(cardOrder(creds, orderNo, "4242424242424242"), creds.SignKey))
	q := fmt.Sprintf("MerchantId = '%s' AND AccountId = '%s' AND OrderNo = '%s' AND TransactionId = '%s' AND PaymentStatus = 3000",
		creds.MerchantID, creds.AccountID, orderNo, r.TransactionID)
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := env.temporal.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", Query: q})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Executions) == 1 {
			if got := resp.Executions[0].Execution.WorkflowId; got != workflows.OrderWorkflowID(creds.MerchantID, creds.AccountID, orderNo) {
				t.Errorf("found workflow %s", got)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no workflow found by %s (got %d)", q, len(resp.Executions))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

package integration

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/paygate/paygate/activities"
)

func TestDuplicateOrders(t *testing.T) {
	t.Parallel()
	creds := env.auto
	orderNo := newOrderNo(t)
	first := signCard(cardOrder(creds, orderNo, "4242424242424242"), creds.SignKey)
	_, r1 := authorise(t, first)
	if r1.ResultInfo != "0000:Success" {
		t.Fatalf("first request: %s", r1.ResultInfo)
	}

	changedAmount := signCard(cardOrder(creds, orderNo, "4242424242424242"), creds.SignKey)
	changedAmount["amount"] = "99.99"
	signCard(changedAmount, creds.SignKey)
	changedCard := signCard(cardOrder(creds, orderNo, "5555555555554444"), creds.SignKey)
	changedNote := cardOrder(creds, orderNo, "4242424242424242")
	changedNote["note"] = "another note"
	signCard(changedNote, creds.SignKey)

	tests := []struct {
		name       string
		fields     map[string]string
		resultInfo string
		sameTxn    bool
	}{
		{"same content answers the first result", first, "0000:Success", true},
		{"same content again", first, "0000:Success", true},
		{"different amount is refused", changedAmount, "I0009:Duplicate order_no with different content", false},
		{"different card is refused", changedCard, "I0009:Duplicate order_no with different content", false},
		{"different note is refused", changedNote, "I0009:Duplicate order_no with different content", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, r := authorise(t, tc.fields)
			if status != http.StatusOK || r.ResultInfo != tc.resultInfo {
				t.Fatalf("HTTP %d, result_info %q; want 200, %q", status, r.ResultInfo, tc.resultInfo)
			}
			if tc.sameTxn && r.TransactionID != r1.TransactionID {
				t.Errorf("transaction_id = %s, want the first one %s", r.TransactionID, r1.TransactionID)
			}
			if !tc.sameTxn && r.TransactionID != "" {
				t.Errorf("refusal carries transaction_id %s", r.TransactionID)
			}
			checkResultSignature(t, r, creds.SignKey)
		})
	}
	if n := chargesFor(r1.TransactionID); n != 1 {
		t.Errorf("simulator charges = %d, want 1", n)
	}
	o := findOrder(t, creds.AccountID, orderNo)
	if o.Amount != 1234 || o.CardMasked != "424242******4242" {
		t.Errorf("record changed: amount %d card %s", o.Amount, o.CardMasked)
	}
}

func TestConcurrentDuplicatesChargeOnce(t *testing.T) {
	t.Parallel()
	for _, pan := range []string{"4242424242424242", "4000000000000341"} {
		t.Run(pan, func(t *testing.T) {
			creds := env.auto
			orderNo := newOrderNo(t)
			fields := signCard(cardOrder(creds, orderNo, pan), creds.SignKey)
			const n = 20
			results := make([]respon, n)
			statuses := make([]int, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					statuses[i], results[i] = authorise(t, fields)
				}()
			}
			wg.Wait()
			for i := range n {
				if statuses[i] != http.StatusOK || results[i].ResultInfo != "0000:Success" {
					t.Errorf("request %d: HTTP %d %s", i, statuses[i], results[i].ResultInfo)
				}
				if results[i].TransactionID != results[0].TransactionID {
					t.Errorf("request %d: transaction_id %s, want %s", i, results[i].TransactionID, results[0].TransactionID)
				}
			}
			if got := chargesFor(results[0].TransactionID); got != 1 {
				t.Errorf("simulator charges = %d, want exactly 1", got)
			}
		})
	}
}

// TestRecordOrderFindsAnOlderOrder covers an order_no whose first workflow
// Temporal no longer keeps (retention): a new workflow's RecordOrder must
// find the older order in Postgres and report it instead of writing, while a
// retry of the same transaction stays a no-op. The workflow unit tests show
// what the workflow then does, the API unit tests what the API answers.
func TestRecordOrderFindsAnOlderOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	creds := env.auto
	orderNo := newOrderNo(t)
	_, first := authorise(t, signCard(cardOrder(creds, orderNo, "4242424242424242"), creds.SignKey))
	if first.ResultInfo != "0000:Success" {
		t.Fatalf("first: %s", first.ResultInfo)
	}
	acts, err := env.gw.Activities()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		transactionID string
		want          string
	}{
		{"a new transaction for the same order_no", "1999999999999999999", first.TransactionID},
		{"a retry of the first transaction", first.TransactionID, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := acts.RecordOrder(ctx, activities.RecordOrderInput{
				TransactionID: tc.transactionID, WorkflowID: "order/stale/" + tc.transactionID,
				MerchantID: creds.MerchantID, AccountID: creds.AccountID, OrderNo: orderNo,
				Currency: "USD", Amount: 1, PaymentStatus: 1000, CaptureMode: "auto", RequestFingerprint: "x",
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExistingTransactionID != tc.want {
				t.Errorf("ExistingTransactionID = %q, want %q", res.ExistingTransactionID, tc.want)
			}
		})
	}
	o := findOrder(t, creds.AccountID, orderNo)
	if o.TransactionID != first.TransactionID || o.Amount != 1234 || o.PaymentStatus != 3000 {
		t.Errorf("the first order changed: %s %d %d", o.TransactionID, o.Amount, o.PaymentStatus)
	}
}

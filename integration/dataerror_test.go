package integration

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/adapters/vault"
	"github.com/paygate/paygate/internal/domain/card"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// The API refuses control characters and oversize fields at the door, so
// these tests hand the workflow an order the way the API does after its
// checks (card sealed in the vault, Update-with-Start through
// flows.TemporalOrders) with a value Postgres refuses: the defence behind the
// door must end the order cleanly all the same.

// unusedTransactionID is a 19-digit transaction id no other order has.
func unusedTransactionID(t *testing.T) string {
	t.Helper()
	n, err := rand.Int(rand.Reader, big.NewInt(1e17))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("99%017d", n)
}

// startOrder seals a card and starts the order's workflow as the API does.
func startOrder(t *testing.T, creds merchant.Credentials, orderNo, transactionID string, details order.Details) (workflows.OrderInput, string) {
	t.Helper()
	ctx := context.Background()
	const pan = "4242424242424242"
	wfID := workflows.OrderWorkflowID(creds.MerchantID, creds.AccountID, orderNo)
	token, _, err := env.gw.Vault.Tokenize(ctx, wfID, vault.Card{Number: pan, ExpiryMonth: "12", ExpiryYear: "2031", CVV: "739"})
	if err != nil {
		t.Fatal(err)
	}
	details.MerchantID, details.AccountID, details.OrderNo, details.Currency, details.Amount =
		creds.MerchantID, creds.AccountID, orderNo, "USD", "12.34"
	in := workflows.OrderInput{
		TransactionID: transactionID,
		MerchantID:    creds.MerchantID,
		AccountID:     creds.AccountID,
		OrderNo:       orderNo,
		Amount:        1234,
		Currency:      "USD",
		CaptureMode:   models.CaptureAuto,
		Card: workflows.CardRef{Token: token, Masked: card.Mask(pan), Brand: card.Brand(pan),
			Fingerprint: env.gw.Vault.Fingerprint(pan)},
		RequestFingerprint: "fp-" + orderNo,
		Details:            details,
		NotifySchedule:     env.cfg.NotifySchedule,
		PublicURL:          env.gw.Config.Edge.PublicURL,
	}
	return in, token
}

// workflowCompleted waits for the order's workflow to close and checks that
// it completed (not failed).
func workflowCompleted(t *testing.T, wfID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var res workflows.PaymentResult
	if err := env.temporal.GetWorkflow(ctx, wfID, "").Get(ctx, &res); err != nil {
		t.Fatalf("workflow %s: %v", wfID, err)
	}
	d, err := env.temporal.DescribeWorkflowExecution(ctx, wfID, "")
	if err != nil {
		t.Fatal(err)
	}
	if st := d.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Errorf("workflow %s is %v, want completed", wfID, st)
	}
}

func cardGone(t *testing.T, token string) {
	t.Helper()
	if _, err := env.gw.Vault.Detokenize(context.Background(), token); !errors.Is(err, vault.ErrUnknownToken) {
		t.Errorf("the card is still in the vault (err %v), want it removed", err)
	}
}

// TestRecordRefusedEndsTheOrder: values Postgres refuses end the order at
// once with S0002 (6000, order_status 0), the workflow completes, the card
// is removed from the vault, and the record keeps the order's keys so that
// a repeated request gets the same final answer.
func TestRecordRefusedEndsTheOrder(t *testing.T) {
	// Shoppers' personal fields are sealed (a NUL byte in one is sealed
	// like any other), and the text columns hold only what the API made or
	// checked, so what Postgres can still refuse is a merchant's field kept
	// in clear in the details (jsonb).
	tests := []struct {
		name    string
		details order.Details
		edit    func(in *workflows.OrderInput)
	}{
		{"NUL byte in the items (jsonb)", order.Details{Items: "a\x00b", ShopperEmail: "ada@example.com"}, nil},
		{"NUL byte in a cart item's name (jsonb)", order.Details{ShopperEmail: "ada@example.com",
			CartItems: []order.CartItem{{BasicItemData: order.BasicItemData{Name: "tea\x00pot"}}}}, nil},
	}
	orders := &flows.TemporalOrders{Client: env.temporal}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			creds := env.auto
			orderNo := newOrderNo(t)
			details := tc.details
			details.NotifyURL = env.sink.URL + "/notify"
			in, token := startOrder(t, creds, orderNo, unusedTransactionID(t), details)
			if tc.edit != nil {
				tc.edit(&in)
			}
			res, err := orders.Authorise(ctx, in)
			if err != nil {
				t.Fatalf("authorise: %v", err)
			}
			if res.ResultCode != codes.RecordRejected.ID || res.PaymentStatus != status.Failed ||
				res.OrderStatus != status.OrderFailure || res.TransactionID != in.TransactionID || res.CardToken != "" {
				t.Errorf("answer = %+v, want S0002, 6000, order_status 0", res)
			}
			wfID := workflows.OrderWorkflowID(creds.MerchantID, creds.AccountID, orderNo)
			workflowCompleted(t, wfID)
			cardGone(t, token)

			o, err := models.FindOrderByNo(ctx, env.gw.DB, creds.AccountID, orderNo)
			if err != nil {
				t.Fatalf("the order's keys were not recorded: %v", err)
			}
			if o.TransactionID != in.TransactionID || o.PaymentStatus != status.Failed || o.OrderStatus != status.OrderFailure ||
				o.ResultCode != codes.RecordRejected.ID || o.RequestFingerprint != in.RequestFingerprint || o.CardToken != "" ||
				o.Details.ShopperEmail != "" || o.ShopperEmailHash != "" || o.Details.Note != "" {
				t.Errorf("record = %+v", o)
			}
			// A repeat finds the workflow closed; the API then answers from
			// the record, which holds the same final answer.
			if _, err := orders.Authorise(ctx, in); !errors.Is(err, flows.ErrOrderClosed) {
				t.Errorf("repeat: %v, want the order closed (answered from the record)", err)
			}
			var n models.Notification
			if err := env.gw.DB.Where("transaction_id = ?", in.TransactionID).Take(&n).Error; err != nil {
				t.Errorf("payment notification: %v", err)
			} else if n.Fields["result_info"] != codes.RecordRejected.String() {
				t.Errorf("notification result_info = %q", n.Fields["result_info"])
			}
			if !strings.Contains(env.logs.String(), "order cannot be recorded") {
				t.Error("the refused record is not logged")
			}
		})
	}
}

// TestTransactionIDConflictEndsTheOrder: an order given another order's
// transaction id ends at once with S0003 instead of retrying the insert for
// ever; the other order is untouched.
func TestTransactionIDConflictEndsTheOrder(t *testing.T) {
	ctx := context.Background()
	creds := env.auto
	_, paid := authorise(t, signCard(cardOrder(creds, newOrderNo(t), "4242424242424242"), creds.SignKey))
	if paid.ResultInfo != codes.OK.String() {
		t.Fatalf("first order: %s", paid.ResultInfo)
	}
	before, err := models.FindOrderByNo(ctx, env.gw.DB, creds.AccountID, paid.OrderNo)
	if err != nil {
		t.Fatal(err)
	}

	orderNo := newOrderNo(t)
	in, token := startOrder(t, creds, orderNo, paid.TransactionID, order.Details{ShopperEmail: "ada@example.com"})
	res, err := (&flows.TemporalOrders{Client: env.temporal}).Authorise(ctx, in)
	if err != nil {
		t.Fatalf("authorise: %v", err)
	}
	if res.ResultCode != codes.TransactionIDConflict.ID || res.PaymentStatus != status.Failed ||
		res.OrderStatus != status.OrderFailure || res.TransactionID != "" {
		t.Errorf("answer = %+v, want S0003, 6000, order_status 0 and no transaction id", res)
	}
	workflowCompleted(t, workflows.OrderWorkflowID(creds.MerchantID, creds.AccountID, orderNo))
	cardGone(t, token)
	if _, err := models.FindOrderByNo(ctx, env.gw.DB, creds.AccountID, orderNo); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("an order was recorded under another order's transaction id (err %v)", err)
	}
	after, err := models.FindOrderByNo(ctx, env.gw.DB, creds.AccountID, paid.OrderNo)
	if err != nil {
		t.Fatal(err)
	}
	if after.PaymentStatus != before.PaymentStatus || after.WorkflowID != before.WorkflowID || after.StateVersion != before.StateVersion {
		t.Errorf("the other order changed: %+v → %+v", before, after)
	}
	if logs := env.logs.String(); !strings.Contains(logs, "order cannot be recorded") || !strings.Contains(logs, codes.TransactionIDConflict.ID) {
		t.Error("the conflict is not logged with its code")
	}
}

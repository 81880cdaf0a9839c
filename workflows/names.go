// Package workflows holds the Temporal workflows: one per payment order.
package workflows

import "go.temporal.io/sdk/temporal"

// Task queues, workflow types, updates and queries. Clients and workers use
// these names and nothing else.
const (
	TaskQueue = "paygate"

	OrderWorkflowType = "Order"

	// PayoutWorkflowType runs one payout: price, reserve, submit to the
	// rail, settle or release, notify. Its id is PayoutWorkflowID.
	PayoutWorkflowType = "Payout"
	// QueryPayoutState returns the payout's current state for ops.
	QueryPayoutState = "payout-state"

	// UpdateAuthorise answers a direct payment request: the first request
	// starts the order with it, repeats attach to the same order.
	UpdateAuthorise = "authorise"

	// QueryOrderState returns the order's current state for ops.
	QueryOrderState = "order-state"
)

// Error types carried by application errors the workflows return.
const (
	ErrTypeOrderMismatch = "OrderMismatch"
)

// Search attributes that make an order findable in the Temporal UI.
var (
	SearchMerchantID    = temporal.NewSearchAttributeKeyKeyword("MerchantId")
	SearchAccountID     = temporal.NewSearchAttributeKeyKeyword("AccountId")
	SearchOrderNo       = temporal.NewSearchAttributeKeyKeyword("OrderNo")
	SearchTransactionID = temporal.NewSearchAttributeKeyKeyword("TransactionId")
	SearchPaymentStatus = temporal.NewSearchAttributeKeyInt64("PaymentStatus")

	// Payouts are found by MerchantId and AccountId too, and by these.
	SearchRequestID    = temporal.NewSearchAttributeKeyKeyword("RequestId")
	SearchPayoutStatus = temporal.NewSearchAttributeKeyKeyword("PayoutStatus")
	SearchFailureType  = temporal.NewSearchAttributeKeyKeyword("FailureType")
)

// SearchAttributeTypes lists the custom search attributes with the type names
// the Temporal CLI and operator API use.
var SearchAttributeTypes = map[string]string{
	"MerchantId":    "Keyword",
	"AccountId":     "Keyword",
	"OrderNo":       "Keyword",
	"TransactionId": "Keyword",
	"PaymentStatus": "Int",
	"RequestId":     "Keyword",
	"PayoutStatus":  "Keyword",
	"FailureType":   "Keyword",
}

// OrderWorkflowID is the id of an order's workflow. It makes a second order
// with the same order_no impossible.
func OrderWorkflowID(merchantID, accountID, orderNo string) string {
	return "order/" + merchantID + "/" + accountID + "/" + orderNo
}

// PayoutWorkflowID is the id of a payout's workflow (DESIGN §1). It makes a
// second payout under one request_id impossible, and it is the payout's
// idempotency key at the rail.
func PayoutWorkflowID(merchantID, requestID string) string {
	return "payout/" + merchantID + "/" + requestID
}

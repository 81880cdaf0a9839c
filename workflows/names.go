// Package workflows holds the Temporal workflows: one per payment order.
package workflows

import "go.temporal.io/sdk/temporal"

// Task queues, workflow types, updates and queries. Clients and workers use
// these names and nothing else.
const (
	TaskQueue = "paygate"

	OrderWorkflowType = "Order"

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
)

// SearchAttributeTypes lists the custom search attributes with the type names
// the Temporal CLI and operator API use.
var SearchAttributeTypes = map[string]string{
	"MerchantId":    "Keyword",
	"AccountId":     "Keyword",
	"OrderNo":       "Keyword",
	"TransactionId": "Keyword",
	"PaymentStatus": "Int",
}

// OrderWorkflowID is the id of an order's workflow. It makes a second order
// with the same order_no impossible.
func OrderWorkflowID(merchantID, accountID, orderNo string) string {
	return "order/" + merchantID + "/" + accountID + "/" + orderNo
}

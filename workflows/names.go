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

	// SubscriptionWorkflowType charges a subscription's billing cycles,
	// each as an order of its own. Its id is SubscriptionWorkflowID.
	SubscriptionWorkflowType = "Subscription"
	// UpdateCancelSubscription cancels a subscription; it is answered once
	// no charge can follow.
	UpdateCancelSubscription = "cancel-subscription"
	// UpdatePauseSubscription, UpdateResumeSubscription and
	// UpdateAmendSubscription pause, resume and amend a subscription; each
	// is answered once the change is recorded, with the subscription's
	// state.
	UpdatePauseSubscription  = "pause-subscription"
	UpdateResumeSubscription = "resume-subscription"
	UpdateAmendSubscription  = "amend-subscription"
	// DisputeWorkflowType follows one dispute from the acquirer's first
	// word to its outcome. Its id is DisputeWorkflowID.
	DisputeWorkflowType = "Dispute"
	// SignalDisputeWord wakes a dispute: its acquirer says it moved, and
	// the dispute asks the acquirer.
	SignalDisputeWord = "dispute-word"
	// UpdateDisputeEvidence sends the merchant's recorded evidence;
	// UpdateAcceptDispute gives the dispute up. Each is answered with the
	// dispute's state.
	UpdateDisputeEvidence = "dispute-evidence"
	UpdateAcceptDispute   = "accept-dispute"
	// QueryDisputeState returns the dispute's state for ops.
	QueryDisputeState = "dispute-state"
	// SignalPayoutTransferMoved wakes a payout whose rail said its
	// transfer moved; the payout then asks the rail.
	SignalPayoutTransferMoved = "payout-transfer-moved"
	// SignalSubscriptionCharge carries a charge order's result to its
	// subscription.
	SignalSubscriptionCharge = "subscription-charge"
	// QuerySubscriptionState returns the subscription's state for ops.
	QuerySubscriptionState = "subscription-state"

	// PersonalDataWorkflowType seals personal data older versions left in
	// clear and erases it past the retention period. The schedule
	// PersonalDataScheduleID starts it daily, as PersonalDataWorkflowID.
	PersonalDataWorkflowType = "PersonalData"
	PersonalDataScheduleID   = "paygate-personal-data"
	PersonalDataWorkflowID   = "personal-data"

	// ReconcileDayWorkflowType reconciles one connector's settlement day
	// and posts its money to the ledger; its id is ReconDayWorkflowID, so a
	// day runs once at a time and a re-run is the same workflow again.
	ReconcileDayWorkflowType = "ReconcileSettlementDay"
	// ReconcileDueWorkflowType reconciles a connector's days that are due:
	// today's report and any missed day of the backfill window. The
	// schedule ReconScheduleID(connector) starts it daily.
	ReconcileDueWorkflowType = "ReconcileSettlementsDue"

	// ScheduledPayoutsWorkflowType pays out, daily, the available balance of
	// the accounts whose payout schedule is due; the schedule
	// ScheduledPayoutsScheduleID starts it.
	ScheduledPayoutsWorkflowType = "ScheduledPayouts"
	ScheduledPayoutsScheduleID   = "paygate-scheduled-payouts"
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
	// SearchConnector is the connector a direct order is charged at: its
	// first when it starts, the one that answered when a routed order went
	// on to another.
	SearchConnector = temporal.NewSearchAttributeKeyKeyword("Connector")

	// Subscriptions are found by MerchantId and AccountId too, and by these.
	SearchRecurringID        = temporal.NewSearchAttributeKeyKeyword("RecurringId")
	SearchSubscriptionStatus = temporal.NewSearchAttributeKeyInt64("SubscriptionStatus")

	// Payouts are found by MerchantId and AccountId too, and by these.
	SearchRequestID    = temporal.NewSearchAttributeKeyKeyword("RequestId")
	SearchPayoutStatus = temporal.NewSearchAttributeKeyKeyword("PayoutStatus")
	SearchFailureType  = temporal.NewSearchAttributeKeyKeyword("FailureType")

	// Disputes are found by MerchantId, AccountId and TransactionId too,
	// and by these.
	SearchDisputeID = temporal.NewSearchAttributeKeyKeyword("DisputeId")
	// DisputeStatus is dispute.Status.Code: a namespace takes only ten
	// keyword attributes, and DisputeId is the tenth.
	SearchDisputeStatus = temporal.NewSearchAttributeKeyInt64("DisputeStatus")
)

// SearchAttributeTypes lists the custom search attributes with the type names
// the Temporal CLI and operator API use.
var SearchAttributeTypes = map[string]string{
	"MerchantId":    "Keyword",
	"AccountId":     "Keyword",
	"OrderNo":       "Keyword",
	"TransactionId": "Keyword",
	"PaymentStatus": "Int",
	"Connector":     "Keyword",
	"RequestId":     "Keyword",
	"PayoutStatus":  "Keyword",
	"FailureType":   "Keyword",
	"RecurringId":   "Keyword",
	// SubscriptionStatus is recurring_status: 1 active, 0 cancelled, and
	// the rest (internal/domain/subscription).
	"SubscriptionStatus": "Int",
	"DisputeId":          "Keyword",
	"DisputeStatus":      "Int",
}

// OrderWorkflowID is the id of an order's workflow. It makes a second order
// with the same order_no impossible.
func OrderWorkflowID(merchantID, accountID, orderNo string) string {
	return "order/" + merchantID + "/" + accountID + "/" + orderNo
}

// SubscriptionWorkflowID is the id of a subscription's workflow (docs/design.md §1).
func SubscriptionWorkflowID(merchantID, recurringID string) string {
	return "subscription/" + merchantID + "/" + recurringID
}

// RecurringID is the recurring_id of the subscription a first payment
// starts: one subscription per first payment, named after it.
func RecurringID(firstTransactionID string) string { return "R" + firstTransactionID }

// PayoutWorkflowID is the id of a payout's workflow (docs/design.md §1). It makes a
// second payout under one request_id impossible, and it is the payout's
// idempotency key at the rail.
func PayoutWorkflowID(merchantID, requestID string) string {
	return "payout/" + merchantID + "/" + requestID
}

// DisputeWorkflowID is the id of a dispute's workflow: one per connector
// and the connector's dispute id.
func DisputeWorkflowID(connector, disputeID string) string {
	return "dispute/" + connector + "/" + disputeID
}

// Package codes holds every result code the gateway answers with, in one table.
//
// A result is rendered as "<code>:<message>" in result_info, refund_message and
// notifications. The families follow the interface: 0000 success, I request and
// account errors, R risk, C connector, S system, E communication, A declines.
package codes

import "strings"

// Code is one entry of the result code table.
type Code struct {
	ID      string
	Message string
}

// String renders the code as the interface's "<code>:<message>".
func (c Code) String() string { return c.ID + ":" + c.Message }

// With returns the code with a detail appended to its message, such as the
// name of the offending field.
func (c Code) With(detail string) Code {
	if detail == "" {
		return c
	}
	return Code{ID: c.ID, Message: c.Message + ": " + detail}
}

// Is reports whether c is the table entry other, ignoring any detail.
func (c Code) Is(other Code) bool { return c.ID == other.ID }

// Success reports whether the code is the success code.
func (c Code) Success() bool { return c.ID == OK.ID }

// Parse splits a "<code>:<message>" string back into a Code.
func Parse(s string) Code {
	id, msg, _ := strings.Cut(s, ":")
	return Code{ID: id, Message: msg}
}

// The result code table. Keep docs/result-codes.md in step: a test compares them.
var (
	OK = Code{"0000", "Success"}
	// RefundPending is the refund_message of a refund the acquirer has not settled yet.
	RefundPending = Code{"0001", "Pending at the acquirer"}
	// AwaitingShopper is the result of an order waiting for its shopper
	// (hosted page, 3-D Secure challenge, APM provider): order_status -1.
	AwaitingShopper = Code{"0002", "Waiting for the shopper"}

	MissingField        = Code{"I0001", "Missing required field"}
	UnknownMerchant     = Code{"I0002", "Unknown or inactive merchant account"}
	InvalidAmount       = Code{"I0003", "Invalid amount"}
	UnsupportedCurrency = Code{"I0004", "Currency not supported for this account"}
	InvalidCardNumber   = Code{"I0005", "Invalid card number"}
	InvalidExpiry       = Code{"I0006", "Invalid or expired card expiry date"}
	InvalidCVV          = Code{"I0007", "Invalid security code"}
	InvalidField        = Code{"I0008", "Invalid field value"}
	DuplicateOrder      = Code{"I0009", "Duplicate order_no with different content"}
	MalformedRequest    = Code{"I0010", "Malformed request body"}
	RequestTooLarge     = Code{"I0011", "Request body too large"}
	PaymentTypeConflict = Code{"I0012", "Give either card or payment_method, not both or neither"}
	BadSignature        = Code{"I0013", "Signature verification failed"}
	IPNotAllowed        = Code{"I0014", "Caller IP address not registered for queries"}
	TooManyOrders       = Code{"I0015", "Too many orders in one request"}
	OrderNotFound       = Code{"I0016", "Order not found"}
	UnsupportedMethod   = Code{"I0017", "Payment method not supported"}
	InvalidState        = Code{"I0018", "Operation not allowed in the order's current state"}
	OrderMismatch       = Code{"I0019", "Entry does not match the order"}
	// IdempotencyConflict refuses a request whose Idempotency-Key the account
	// already used on the same operation with other content.
	IdempotencyConflict = Code{"I0020", "Idempotency-Key reused with different content"}
	// RequestInProgress refuses a request while the same request (same
	// Idempotency-Key, or the same signed batch) is still being answered.
	RequestInProgress = Code{"I0021", "The same request is still in progress"}
	// PayoutMismatch refuses a payout whose request_id the merchant already
	// used for a payout with other content: nothing is paid a second time.
	PayoutMismatch = Code{"I0022", "Duplicate request_id with different content"}
	// PayoutNotFound answers a payout query for a request_id with no payout.
	PayoutNotFound = Code{"I0023", "Payout not found"}
	// TokenNotFound refuses a token_id the account does not hold (another
	// account's token is not found either).
	TokenNotFound = Code{"I0024", "Unknown card token"}
	// TokenDeleted refuses a token_id the merchant deleted.
	TokenDeleted = Code{"I0025", "Card token deleted"}
	// SubscriptionNotFound answers a recurring_id the account has no
	// subscription under.
	SubscriptionNotFound = Code{"I0026", "Subscription not found"}
	// TestCardOnLive refuses a simulator test card on a live account.
	TestCardOnLive = Code{"I0027", "Test card on a live account"}
	// TestAccountConnector refuses a test account's order routed to a
	// connector that is not a simulator.
	TestAccountConnector = Code{"I0028", "Test account on a live connector"}
	// CompatibleRefundLimit refuses a refund signed with encryption_data
	// past the account's daily limit for such refunds.
	CompatibleRefundLimit = Code{"I0029", "Daily limit of refunds signed with encryption_data reached"}
	// LiveAccountSimulator refuses a live account's order routed to a
	// simulated connector where the deployment forbids that.
	LiveAccountSimulator = Code{"I0030", "Simulator not allowed for a live account"}
	// RefundNotFound answers, in a refund query, a transaction id with no
	// refund or a refund_reference_id the account has no refund under.
	RefundNotFound = Code{"I0031", "Refund not found"}
	// TooManyRefunds refuses a refund past an order's 99th: the interface's
	// refund_reference_id has two digits after the transaction id.
	TooManyRefunds = Code{"I0032", "An order takes at most 99 refunds"}
	// ConnectorCannot refuses a payment that carries what a connector it
	// may be charged at does not take (the merchant's own 3-D Secure
	// result, installments).
	ConnectorCannot = Code{"I0033", "The connector does not take this payment's options"}
	// SubscriptionEnded refuses a pause, resume or amendment of a
	// subscription that has ended (cancelled, finished or suspended).
	SubscriptionEnded = Code{"I0034", "Subscription has ended"}
	// PendingNotCancellable refuses the cancel of a pending order whose
	// connector cannot call off what it holds (an APM payment its provider
	// cannot cancel): the order ends as the shopper or its window ends it.
	PendingNotCancellable = Code{"I0035", "The connector cannot cancel this payment while it is pending"}
	// DisputeNotFound: the account has no dispute with that dispute_id.
	DisputeNotFound = Code{"I0036", "Dispute not found"}
	// DisputeNotAnswerable refuses evidence or an acceptance of a dispute
	// that does not wait for the merchant's answer.
	DisputeNotAnswerable = Code{"I0037", "The dispute does not wait for an answer"}
	// RefundDisputed refuses a refund of a payment whose dispute has taken
	// its money back or is deciding a chargeback (dispute.BlocksRefund).
	RefundDisputed = Code{"I0038", "Refund not allowed while the payment is disputed"}
	// EarlierRequestUnanswered refuses a request identical to one that was
	// being answered when its process died: what it did is not known, and
	// running it again could refund twice.
	EarlierRequestUnanswered = Code{"I0039", "An identical request ended without an answer"}
	// EvidenceRefused: the acquirer refused a dispute answer's evidence
	// (its files' type, size or pages); the dispute still waits for an
	// answer, and the refused pieces are not kept.
	EvidenceRefused = Code{"I0040", "The acquirer refused the evidence"}

	RiskReview          = Code{"R0000", "Held for risk review"}
	RiskAmountLimit     = Code{"R0001", "Amount exceeds the account limit"}
	RiskBlockedCard     = Code{"R0002", "Card is blocked"}
	RiskRejected        = Code{"R0003", "Rejected by risk rules"}
	RiskVelocity        = Code{"R0004", "Too many payments with the same card, email, IP address or device"}
	RiskBlockedBIN      = Code{"R0005", "Card range is blocked"}
	RiskBlockedCountry  = Code{"R0006", "Billing or card country is blocked"}
	RiskCountryMismatch = Code{"R0007", "Billing country does not match the card's country"}
	RiskTestValue       = Code{"R0008", "Rejected by a risk test value"}

	ConnectorError      = Code{"C0001", "Acquirer error"}
	ThreeDSNotAvailable = Code{"C0002", "Card requires 3-D Secure, which is not available for this payment"}

	SystemError = Code{"S0001", "Temporary system error, try again"}
	// RecordRejected ends an order whose record the database refused for
	// its values: nothing was charged and the order is final (6000).
	RecordRejected = Code{"S0002", "Order data could not be recorded"}
	// TransactionIDConflict ends an order whose transaction id is already
	// another order's: nothing was charged and the order is final (6000).
	TransactionIDConflict = Code{"S0003", "Transaction id already in use"}

	AcquirerTimeout = Code{"E0001", "Acquirer did not answer in time"}

	Declined          = Code{"A0001", "Declined"}
	InsufficientFunds = Code{"A0002", "Insufficient funds"}
	ExpiredCard       = Code{"A0003", "Expired card"}
	WrongCVV          = Code{"A0004", "Incorrect security code"}
	ThreeDSFailed     = Code{"A0005", "3-D Secure authentication failed"}
	// AuthorisationExpired is the result of an authorisation voided because
	// it was not captured within the account's window.
	AuthorisationExpired = Code{"A0006", "Authorisation expired before capture"}
	ShopperCancelled     = Code{"A0007", "Cancelled by the shopper"}
	SessionExpired       = Code{"A0008", "The shopper did not complete the payment in time"}
	// MerchantCancelled ends a pending order its merchant cancelled
	// before the shopper paid.
	MerchantCancelled = Code{"A0009", "Cancelled by the merchant before payment"}
)

// All lists the table in order, for documentation and tests.
func All() []Code {
	return []Code{
		OK, RefundPending, AwaitingShopper,
		MissingField, UnknownMerchant, InvalidAmount, UnsupportedCurrency, InvalidCardNumber,
		InvalidExpiry, InvalidCVV, InvalidField, DuplicateOrder, MalformedRequest, RequestTooLarge,
		PaymentTypeConflict, BadSignature, IPNotAllowed, TooManyOrders, OrderNotFound,
		UnsupportedMethod, InvalidState, OrderMismatch, IdempotencyConflict, RequestInProgress, PayoutMismatch, PayoutNotFound,
		TokenNotFound, TokenDeleted, SubscriptionNotFound, TestCardOnLive, TestAccountConnector, CompatibleRefundLimit, LiveAccountSimulator,
		RefundNotFound, TooManyRefunds, ConnectorCannot, SubscriptionEnded, PendingNotCancellable,
		DisputeNotFound, DisputeNotAnswerable, RefundDisputed, EarlierRequestUnanswered, EvidenceRefused,
		RiskReview, RiskAmountLimit, RiskBlockedCard, RiskRejected, RiskVelocity, RiskBlockedBIN, RiskBlockedCountry,
		RiskCountryMismatch, RiskTestValue,
		ConnectorError, ThreeDSNotAvailable,
		SystemError, RecordRejected, TransactionIDConflict,
		AcquirerTimeout,
		Declined, InsufficientFunds, ExpiredCard, WrongCVV, ThreeDSFailed, AuthorisationExpired, ShopperCancelled, SessionExpired,
		MerchantCancelled,
	}
}

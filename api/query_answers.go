package api

// The answers of the two queries (api/queries). They are here, with the
// other answer formats, because the edge answers a query's refusal (and a
// replayed query) in the same shape.

// QueryAnswer is the answer of POST /v1/retrievalTrans.
type QueryAnswer struct {
	MerchantID    string         `json:"merchant_id"`
	AccountID     string         `json:"account_id"`
	ReturnStatus  string         `json:"return_status"`
	ReturnMessage string         `json:"return_message"`
	OrdersList    []QueriedOrder `json:"orders_list"`
	NextCursor    string         `json:"next_cursor,omitempty"`
}

// QueriedOrder is one order of a query's answer.
type QueriedOrder struct {
	Amount              string              `json:"amount"`
	Currency            string              `json:"currency"`
	OrderNo             string              `json:"order_no"`
	TransactionID       string              `json:"transaction_id"`
	ReferenceNo         string              `json:"reference_no"`
	Website             string              `json:"website"`
	DeliveryInformation DeliveryInformation `json:"delivery_information"`
	AntifraudProvider   string              `json:"antifraud_provider"`
	FraudCheckResult    []FraudCheck        `json:"fraud_check_result"`
	Is3DS               string              `json:"is3ds"`
	PaymentStatus       string              `json:"payment_status"`
	QueryResult         string              `json:"query_result"`
	ResultInfo          string              `json:"result_info"`
	Card                string              `json:"card"`
	ShopperEmail        string              `json:"shopper_email"`
	ShopperPhone        string              `json:"shopper_phone"`
	SubscriptionResult  SubscriptionResult  `json:"subscription_result"`
	TransactionDate     string              `json:"transaction_date"`
	// The order's latest notification: pending, delivered or failed, ""
	// when it has none.
	NotifyStatus   string `json:"notify_status"`
	NotifyAttempts int    `json:"notify_attempts"`
	NotifyID       string `json:"notify_id"`
}

// DeliveryInformation is an order's delivery_information.
type DeliveryInformation struct {
	DeliveryAddress    string `json:"delivery_address"`
	DeliveryCity       string `json:"delivery_city"`
	DeliveryCountry    string `json:"delivery_country"`
	DeliveryFirstName  string `json:"delivery_firstname"`
	DeliveryLastName   string `json:"delivery_lastname"`
	DeliveryPostalCode string `json:"delivery_postal_code"`
	DeliveryState      string `json:"delivery_state"`
}

// FraudCheck is one rule of an order's fraud_check_result.
type FraudCheck struct {
	CheckItems string `json:"check_items"`
	Status     string `json:"status"`
}

// SubscriptionResult is the subscription_result of an order that started
// a subscription.
type SubscriptionResult struct {
	ContractName             string `json:"contract_name"`
	RecurringDeductionPeriod string `json:"recurring_deduction_period"`
	RecurringDeductionTime   string `json:"recurring_deduction_time"`
	RecurringID              string `json:"recurring_id"`
	RecurringStatus          string `json:"recurring_status"`
}

// RefundQueryAnswer is the answer of POST /v1/retrievalRefund.
type RefundQueryAnswer struct {
	MerchantID    string          `json:"merchant_id"`
	AccountID     string          `json:"account_id"`
	ReturnStatus  string          `json:"return_status"`
	ReturnMessage string          `json:"return_message"`
	RefundList    []QueriedRefund `json:"refund_list"`
}

// QueriedRefund is one refund of a refund query's answer.
type QueriedRefund struct {
	TransactionID     string `json:"transaction_id"`
	OrderNo           string `json:"order_no"`
	Currency          string `json:"currency"`
	RefundAmount      string `json:"refund_amount"`
	RefundReason      string `json:"refund_reason"`
	RefundStatus      string `json:"refund_status"`
	RefundMessage     string `json:"refund_message"`
	RefundReference   string `json:"refund_reference"`
	RefundReferenceID string `json:"refund_reference_id"`
	RefundDate        string `json:"refund_date"`
	SettledDate       string `json:"settled_date"`
	// QueryResult is 1 for a refund found, 0 for an id the query named
	// and nothing was found under, as the order query answers.
	QueryResult string `json:"query_result"`
}

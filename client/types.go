package client

import (
	"encoding/json"
	"encoding/xml"
)

// The requests and answers of the gateway's merchant operations, field for
// field as GET /openapi.json describes them (TestClientTypesFollowTheDocument
// keeps them so). Request values are strings, as the interface sends them:
// amounts are decimal strings in the currency's major unit ("12.34"), so no
// float ever carries money. merchant_id, account_id and encryption_data are
// the client's to fill, so requests do not have them.

// Order is a payment order: what Authorise and Checkout share.
type Order struct {
	OrderNo              string                  `json:"order_no"`
	Currency             string                  `json:"currency"`
	Amount               string                  `json:"amount"`
	ItemTotal            string                  `json:"item_total,omitempty"`
	Shipping             string                  `json:"shipping,omitempty"`
	Handling             string                  `json:"handling,omitempty"`
	TaxTotal             string                  `json:"tax_total,omitempty"`
	Insurance            string                  `json:"insurance,omitempty"`
	ShippingDiscount     string                  `json:"shipping_discount,omitempty"`
	Discount             string                  `json:"discount,omitempty"`
	Website              string                  `json:"website,omitempty"`
	Items                string                  `json:"items,omitempty"`
	Note                 string                  `json:"note,omitempty"`
	Custom               string                  `json:"custom,omitempty"`
	ShopperID            string                  `json:"shopper_id,omitempty"`
	ShopperEmail         string                  `json:"shopper_email,omitempty"`
	ShopperIP            string                  `json:"shopper_ip,omitempty"`
	ShopperPhone         string                  `json:"shopper_phone,omitempty"`
	ShopperLevel         string                  `json:"shopper_level,omitempty"`
	FirstName            string                  `json:"first_name,omitempty"`
	LastName             string                  `json:"last_name,omitempty"`
	Document             string                  `json:"document,omitempty"`
	BirthDate            string                  `json:"birth_date,omitempty"`
	Open3D               string                  `json:"open3d,omitempty"`
	TokenFlag            string                  `json:"token_flag,omitempty"`
	TokenID              string                  `json:"token_id,omitempty"`
	PaymentMethod        string                  `json:"payment_method,omitempty"`
	BankCode             string                  `json:"bank_code,omitempty"`
	Person               *Person                 `json:"person,omitempty"`
	NotifyURL            string                  `json:"notify_url,omitempty"`
	ReturnURL            string                  `json:"return_url,omitempty"`
	CancelURL            string                  `json:"cancel_url,omitempty"`
	DefaultLang          string                  `json:"default_lang,omitempty"`
	BillingCountry       string                  `json:"billing_country,omitempty"`
	BillingState         string                  `json:"billing_state,omitempty"`
	BillingCity          string                  `json:"billing_city,omitempty"`
	BillingAddress       string                  `json:"billing_address,omitempty"`
	BillingPostalCode    string                  `json:"billing_postal_code,omitempty"`
	DeliveryFirstName    string                  `json:"delivery_firstname,omitempty"`
	DeliveryLastName     string                  `json:"delivery_lastname,omitempty"`
	DeliveryCountry      string                  `json:"delivery_country,omitempty"`
	DeliveryState        string                  `json:"delivery_state,omitempty"`
	DeliveryCity         string                  `json:"delivery_city,omitempty"`
	DeliveryDistrictName string                  `json:"delivery_district_name,omitempty"`
	DeliveryStreetName   string                  `json:"delivery_street_name,omitempty"`
	DeliveryAddress      string                  `json:"delivery_address,omitempty"`
	DeliveryPostalCode   string                  `json:"delivery_postal_code,omitempty"`
	OS                   string                  `json:"os,omitempty"`
	Browser              string                  `json:"browser,omitempty"`
	BrowserLang          string                  `json:"browser_lang,omitempty"`
	TimeZone             string                  `json:"time_zone,omitempty"`
	Resolution           string                  `json:"resolution,omitempty"`
	ColorDepth           string                  `json:"color_depth,omitempty"`
	UserAgent            string                  `json:"user_agent,omitempty"`
	CookieNew            string                  `json:"cookie_new,omitempty"`
	CookieOld            string                  `json:"cookie_old,omitempty"`
	ChallengeWindowSize  string                  `json:"challenge_window_size,omitempty"`
	SessionID            string                  `json:"session_id,omitempty"`
	Installments         string                  `json:"installments,omitempty"`
	InstallmentsID       string                  `json:"installments_id,omitempty"`
	DeviceFingerprint    string                  `json:"device_fingerprint,omitempty"`
	PlatformSource       string                  `json:"platform_source,omitempty"`
	DeviceType           string                  `json:"device_type,omitempty"`
	OrderType            string                  `json:"order_type,omitempty"`
	CheckoutTime         string                  `json:"checkout_time,omitempty"`
	AntifraudTokenCookie string                  `json:"antifraud_token_cookie,omitempty"`
	CartItems            []CartItem              `json:"cart_items,omitempty"`
	AccountOwner         []AccountOwner          `json:"account_owner,omitempty"`
	TotalDiscount        []DiscountUsed          `json:"total_discount,omitempty"`
	AdditionalInfo       []AdditionalInformation `json:"additional_information,omitempty"`
	PriceID              string                  `json:"price_id,omitempty"`
	QuoteID              string                  `json:"quote_id,omitempty"`
	QuotePrice           string                  `json:"quote_price,omitempty"`
	StorefrontDomains    string                  `json:"storefront_domains,omitempty"`
	Accept               string                  `json:"accept,omitempty"`
	Subscription         *Subscription           `json:"subscription,omitempty"`
}

// Payment is a direct payment (Authorise): the order with a card, or with
// token_id for a stored card, or with payment_method (and return_url) for
// an alternative payment method.
type Payment struct {
	Order
	Card            string `json:"card,omitempty"`
	ExpirationMonth string `json:"expiration_month,omitempty"`
	ExpirationYear  string `json:"expiration_year,omitempty"`
	SecurityCode    string `json:"security_code,omitempty"`
}

// isAPM reports whether the payment is by an alternative payment method,
// which has its own signing recipe.
func (p *Payment) isAPM() bool { return p.PaymentMethod != "" && p.Card == "" }

// CartItem is one entry of cart_items.
type CartItem struct {
	BasicItemData CartItemData `json:"basic_item_data"`
}

// CartItemData describes a cart item.
type CartItemData struct {
	Name      string    `json:"name,omitempty"`
	Quantity  string    `json:"quantity,omitempty"`
	Type      string    `json:"type,omitempty"`
	Price     CartPrice `json:"price"`
	Category  string    `json:"category,omitempty"`
	ProductID string    `json:"productId,omitempty"`
}

// CartPrice is a cart item's price.
type CartPrice struct {
	AmountUSD           string `json:"amount_usd,omitempty"`
	AmountLocalCurrency string `json:"amount_local_currency,omitempty"`
	Currency            string `json:"currency,omitempty"`
}

// AccountOwner describes the shopper's account at the merchant.
type AccountOwner struct {
	FirstName       string `json:"first_name,omitempty"`
	LastName        string `json:"last_name,omitempty"`
	Email           string `json:"email,omitempty"`
	AccountID       string `json:"account_id,omitempty"`
	Created         string `json:"created,omitempty"`
	PastOrdersCount string `json:"past_orders_count,omitempty"`
	PastOrdersSum   string `json:"past_orders_sum,omitempty"`
	LastLoginIP     string `json:"lastLogin_ip,omitempty"`
	RegistrationIP  string `json:"registration_ip,omitempty"`
}

// DiscountUsed is one entry of total_discount.
type DiscountUsed struct {
	CouponCodeUsed string `json:"coupon_code_used,omitempty"`
	DiscountType   string `json:"discount_type,omitempty"`
}

// AdditionalInformation carries an external 3-D Secure result.
type AdditionalInformation struct {
	MPIInfo MPIInfo `json:"mpi_info"`
}

// MPIInfo is a 3-D Secure result from the merchant's own MPI.
type MPIInfo struct {
	ECI       string `json:"eci,omitempty"`
	CAVV      string `json:"cavv,omitempty"`
	XID       string `json:"xid,omitempty"`
	DSTransID string `json:"dsTransID,omitempty"`
}

// Subscription asks for a recurring charge on the paid card.
type Subscription struct {
	Contract       string `json:"contract,omitempty"`
	ContractName   string `json:"contract_name,omitempty"`
	ContractAmount string `json:"contract_amount,omitempty"`
	Interval       string `json:"interval,omitempty"`
	IntervalCount  string `json:"interval_count,omitempty"`
	BillingCycle   string `json:"billing_cycle,omitempty"`
	PromotionCycle string `json:"promotion_cycle,omitempty"`
	ContractStart  string `json:"contract_start,omitempty"`
	ContractEnd    string `json:"contract_end,omitempty"`
	PriceID        string `json:"price_id,omitempty"`
}

// Person is the shopper as an APM needs them.
type Person struct {
	DocumentNumber          string           `json:"document_number,omitempty"`
	DocumentType            string           `json:"document_type,omitempty"`
	SocialName              string           `json:"social_name,omitempty"`
	Email                   string           `json:"email,omitempty"`
	PhoneCountryCode        string           `json:"phone_country_code,omitempty"`
	PhoneAreaCode           string           `json:"phone_area_code,omitempty"`
	PhoneNumber             string           `json:"phone_number,omitempty"`
	BirthDate               string           `json:"birth_date,omitempty"`
	NetMonthlyAverageIncome string           `json:"net_monthly_average_income,omitempty"`
	AddressStreet           string           `json:"address_street,omitempty"`
	AddressNumber           string           `json:"address_number,omitempty"`
	AddressComplement       string           `json:"address_complement,omitempty"`
	AddressPostalCode       string           `json:"address_postal_code,omitempty"`
	AddressCity             string           `json:"address_city,omitempty"`
	AddressState            string           `json:"address_state,omitempty"`
	AddressCountry          string           `json:"address_country,omitempty"`
	FiscalCountry           string           `json:"fiscal_country,omitempty"`
	Documents               *PersonDocuments `json:"documents,omitempty"`
}

// PersonDocuments are the shopper's documents for an APM.
type PersonDocuments struct {
	FileType string          `json:"file_type,omitempty"`
	FileData string          `json:"file_data,omitempty"`
	FileURL  string          `json:"file_url,omitempty"`
	Labels   *DocumentLabels `json:"labels,omitempty"`
}

// DocumentLabels label a document with the shopper's bank account.
type DocumentLabels struct {
	PersonBankAccountID string       `json:"person_bank_account_id,omitempty"`
	BankAccount         *BankAccount `json:"bank_account,omitempty"`
}

// BankAccount is the shopper's bank account for an APM.
type BankAccount struct {
	AccountType         string `json:"account_type,omitempty"`
	AccountNumber       string `json:"account_number,omitempty"`
	BranchNumber        string `json:"branch_number,omitempty"`
	OwnerDocumentNumber string `json:"owner_document_number,omitempty"`
	OwnerName           string `json:"owner_name,omitempty"`
	BranchCountry       string `json:"branch_country,omitempty"`
	Currency            string `json:"currency,omitempty"`
	Bank                *Bank  `json:"bank,omitempty"`
}

// Bank names a bank.
type Bank struct {
	Code string `json:"code,omitempty"`
	Name string `json:"name,omitempty"`
}

// PaymentResult is the answer of Authorise (the XML respon). OrderStatus is
// "1" paid or authorised, "0" failed, "-1" waiting for the shopper
// (IssuerURL), "-2" held for review; ResultInfo is "code:message".
type PaymentResult struct {
	XMLName                  xml.Name    `xml:"respon" json:"-"`
	MerchantID               string      `xml:"merchant_id"`
	AccountID                string      `xml:"account_id"`
	OrderNo                  string      `xml:"order_no"`
	Amount                   string      `xml:"amount"`
	Currency                 string      `xml:"currency"`
	TransactionID            string      `xml:"transaction_id"`
	Card                     string      `xml:"card"`
	OrderStatus              string      `xml:"order_status"`
	ResultInfo               string      `xml:"result_info"`
	ContractName             string      `xml:"contract_name"`
	RecurringID              string      `xml:"recurring_id"`
	RecurringDeductionPeriod string      `xml:"recurring_deduction_period"`
	RecurringDeductionTime   string      `xml:"recurring_deduction_time"`
	Note                     string      `xml:"note"`
	Custom                   string      `xml:"custom"`
	TokenID                  string      `xml:"token_id"`
	Connector                string      `xml:"connector"`
	ThreeDSResult            string      `xml:"threeds_result"`
	RiskAction               string      `xml:"risk_action"`
	RiskScore                string      `xml:"risk_score"`
	RiskReasons              RiskReasons `xml:"risk_reasons"`
	IssuerURL                string      `xml:"issuer_url"`
	EncryptionData           string      `xml:"encryption_data"`
	// Replayed: this is the first answer to the same request, given
	// again; nothing was carried out this time.
	Replayed bool `xml:"-" json:"-"`
}

// Order statuses of a PaymentResult and of notifications.
const (
	OrderSucceeded = "1"
	OrderFailed    = "0"
	OrderPending   = "-1"
	OrderInReview  = "-2"
)

// RiskReasons are the risk rules that looked at a payment.
type RiskReasons struct {
	Reasons []RiskReason
}

// RiskReason is one rule and what it said.
type RiskReason struct {
	Name   string `xml:"name"`
	Status string `xml:"status"`
}

// UnmarshalXML reads the name and status elements, which come in pairs.
func (r *RiskReasons) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	var pairs struct {
		Inner []struct {
			XMLName xml.Name
			Value   string `xml:",chardata"`
		} `xml:",any"`
	}
	if err := d.DecodeElement(&pairs, &start); err != nil {
		return err
	}
	for _, e := range pairs.Inner {
		switch e.XMLName.Local {
		case "name":
			r.Reasons = append(r.Reasons, RiskReason{Name: e.Value})
		case "status":
			if n := len(r.Reasons); n > 0 && r.Reasons[n-1].Status == "" {
				r.Reasons[n-1].Status = e.Value
			}
		}
	}
	return nil
}

// HostedPage is the answer of Checkout: a page to give the shopper's
// browser as it is; it takes them to the payment page.
type HostedPage struct {
	HTML []byte
}

// CaptureEntry asks to capture an authorised order; CaptureAmount, when
// given, captures part of it.
type CaptureEntry struct {
	TransactionID string `json:"transaction_id"`
	OrderNo       string `json:"order_no,omitempty"`
	Currency      string `json:"currency,omitempty"`
	Amount        string `json:"amount,omitempty"`
	CaptureAmount string `json:"capture_amount,omitempty"`
}

// CaptureResult is what became of a CaptureEntry: CaptureStatus "1"
// captured, else ErrorMessage says why ("code:message").
type CaptureResult struct {
	TransactionID string `json:"transaction_id"`
	OrderNo       string `json:"order_no"`
	Currency      string `json:"currency"`
	Amount        string `json:"amount"`
	CaptureAmount string `json:"capture_amount"`
	CaptureStatus string `json:"capture_status"`
	ErrorMessage  string `json:"error_message"`
}

// ReviewEntry decides an order held for review: ReviewFlag "1" approves,
// "0" rejects.
type ReviewEntry struct {
	TransactionID string `json:"transaction_id"`
	OrderNo       string `json:"order_no,omitempty"`
	Currency      string `json:"currency,omitempty"`
	Amount        string `json:"amount,omitempty"`
	ReviewFlag    string `json:"review_flag"`
}

// ReviewResult is what became of a ReviewEntry.
type ReviewResult struct {
	TransactionID string `json:"transaction_id"`
	OrderNo       string `json:"order_no"`
	Currency      string `json:"currency"`
	Amount        string `json:"amount"`
	ReviewFlag    string `json:"review_flag"`
	ReviewStatus  string `json:"review_status"`
	ErrorMessage  string `json:"error_message"`
}

// CancelEntry cancels an order before capture.
type CancelEntry struct {
	TransactionID string `json:"transaction_id"`
	OrderNo       string `json:"order_no,omitempty"`
	Currency      string `json:"currency,omitempty"`
	Amount        string `json:"amount,omitempty"`
}

// CancelResult is what became of a CancelEntry.
type CancelResult struct {
	TransactionID string `json:"transaction_id"`
	OrderNo       string `json:"order_no"`
	Currency      string `json:"currency"`
	Amount        string `json:"amount"`
	CancelStatus  string `json:"cancel_status"`
	ErrorMessage  string `json:"error_message"`
}

// RefundEntry refunds RefundAmount of a paid order.
type RefundEntry struct {
	TransactionID string `json:"transaction_id"`
	OrderNo       string `json:"order_no,omitempty"`
	Currency      string `json:"currency,omitempty"`
	Amount        string `json:"amount,omitempty"`
	RefundAmount  string `json:"refund_amount"`
	RefundReason  string `json:"refund_reason,omitempty"`
}

// RefundResult is what became of a RefundEntry: RefundStatus "1" taken
// (the acquirer's outcome follows in a refund notification).
type RefundResult struct {
	TransactionID     string `json:"transaction_id"`
	OrderNo           string `json:"order_no"`
	Currency          string `json:"currency"`
	Amount            string `json:"amount"`
	RefundAmount      string `json:"refund_amount"`
	RefundReason      string `json:"refund_reason"`
	RefundStatus      string `json:"refund_status"`
	RefundMessage     string `json:"refund_message"`
	RefundReference   string `json:"refund_reference"`
	RefundReferenceID string `json:"refund_reference_id"`
}

// BatchHead is what every batch answer carries: ReturnStatus "1" when the
// batch was taken (each entry then has its own status), ReturnMessage
// "code:message".
//
// A batch is also answered from the gateway's replay store when the same
// body comes again within 24 h, with or without the same key: Replayed
// then says nothing was carried out this time (two identical refunds of
// one order on one day need different reasons, say).
type BatchHead struct {
	MerchantID     string `json:"merchant_id"`
	AccountID      string `json:"account_id"`
	ReturnStatus   string `json:"return_status"`
	ReturnMessage  string `json:"return_message"`
	EncryptionData string `json:"encryption_data"`
	Replayed       bool   `json:"-"`
}

// CaptureAnswer is the answer of Capture.
type CaptureAnswer struct {
	BatchHead
	Orders []CaptureResult `json:"capture_orders"`
}

// ReviewAnswer is the answer of Review.
type ReviewAnswer struct {
	BatchHead
	Orders []ReviewResult `json:"review_orders"`
}

// CancelAnswer is the answer of Cancel.
type CancelAnswer struct {
	BatchHead
	Orders []CancelResult `json:"cancel_orders"`
}

// RefundAnswer is the answer of Refund.
type RefundAnswer struct {
	BatchHead
	Orders []RefundResult `json:"refund_orders"`
}

// OrdersQuery selects orders: by order numbers or transaction ids
// (comma-separated, at most 100 together), by a time window (14-digit
// yyyyMMddHHmmss), or none of these for the latest changes. Orders pages
// through the answer with Cursor.
type OrdersQuery struct {
	Orders    string `json:"orders,omitempty"`
	Trades    string `json:"trades,omitempty"`
	StartTime string `json:"start_time,omitempty"`
	EndTime   string `json:"end_time,omitempty"`
	Cursor    string `json:"cursor,omitempty"`
}

// OrdersPage is one answer of QueryOrders; NextCursor, when not empty,
// reads on.
type OrdersPage struct {
	MerchantID    string         `json:"merchant_id"`
	AccountID     string         `json:"account_id"`
	ReturnStatus  string         `json:"return_status"`
	ReturnMessage string         `json:"return_message"`
	NextCursor    string         `json:"next_cursor"`
	Orders        []QueriedOrder `json:"orders_list"`
}

// QueriedOrder is an order as the record holds it. PaymentStatus is one of
// the Payment* codes; QueryResult "1" found.
type QueriedOrder struct {
	OrderNo             string              `json:"order_no"`
	TransactionID       string              `json:"transaction_id"`
	ReferenceNo         string              `json:"reference_no"`
	Amount              string              `json:"amount"`
	Currency            string              `json:"currency"`
	Website             string              `json:"website"`
	Card                string              `json:"card"`
	PaymentStatus       string              `json:"payment_status"`
	QueryResult         string              `json:"query_result"`
	ResultInfo          string              `json:"result_info"`
	Is3DS               string              `json:"is3ds"`
	ShopperEmail        string              `json:"shopper_email"`
	ShopperPhone        string              `json:"shopper_phone"`
	TransactionDate     string              `json:"transaction_date"`
	AntifraudProvider   string              `json:"antifraud_provider"`
	FraudCheckResult    []FraudCheck        `json:"fraud_check_result"`
	DeliveryInformation DeliveryInformation `json:"delivery_information"`
	SubscriptionResult  *SubscriptionResult `json:"subscription_result"`
	NotifyID            string              `json:"notify_id"`
	NotifyStatus        string              `json:"notify_status"`
	NotifyAttempts      int                 `json:"notify_attempts"`
}

// Payment statuses of a queried order (docs/design.md §4).
const (
	PaymentPending           = "1000"
	PaymentAuthorised        = "2000"
	PaymentInReview          = "2100"
	PaymentPaid              = "3000"
	PaymentRefunded          = "4000"
	PaymentPartiallyRefunded = "4100"
	PaymentCancelled         = "5000"
	PaymentFailed            = "6000"
	PaymentExpired           = "7000"
)

// FraudCheck is one risk check of a queried order.
type FraudCheck struct {
	CheckItems string `json:"check_items"`
	Status     string `json:"status"`
}

// DeliveryInformation is a queried order's delivery address.
type DeliveryInformation struct {
	DeliveryFirstName  string `json:"delivery_firstname"`
	DeliveryLastName   string `json:"delivery_lastname"`
	DeliveryCountry    string `json:"delivery_country"`
	DeliveryState      string `json:"delivery_state"`
	DeliveryCity       string `json:"delivery_city"`
	DeliveryAddress    string `json:"delivery_address"`
	DeliveryPostalCode string `json:"delivery_postal_code"`
}

// SubscriptionResult is a queried order's subscription.
type SubscriptionResult struct {
	ContractName             string `json:"contract_name"`
	RecurringID              string `json:"recurring_id"`
	RecurringStatus          string `json:"recurring_status"`
	RecurringDeductionPeriod string `json:"recurring_deduction_period"`
	RecurringDeductionTime   string `json:"recurring_deduction_time"`
}

// RefundsQuery selects refunds by the orders' transaction ids or by
// refund_reference_id, comma-separated.
type RefundsQuery struct {
	Trades            string `json:"trades,omitempty"`
	RefundReferenceID string `json:"refund_reference_id,omitempty"`
}

// RefundsAnswer is the answer of QueryRefunds.
type RefundsAnswer struct {
	MerchantID    string          `json:"merchant_id"`
	AccountID     string          `json:"account_id"`
	ReturnStatus  string          `json:"return_status"`
	ReturnMessage string          `json:"return_message"`
	Refunds       []QueriedRefund `json:"refund_list"`
}

// QueriedRefund is a refund as the record holds it.
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
	QueryResult       string `json:"query_result"`
}

// Payout sends PaymentAmount of PaymentCurrency to a beneficiary's bank
// account. RequestID (a UUID) names it: sending it again is answered with
// the payout as it stands.
type Payout struct {
	RequestID         string      `json:"request_id"`
	PaymentAmount     string      `json:"payment_amount"`
	PaymentCurrency   string      `json:"payment_currency"`
	PaymentDate       string      `json:"payment_date,omitempty"`
	PaymentMethod     string      `json:"payment_method,omitempty"`
	SourceAmount      string      `json:"source_amount,omitempty"`
	SourceCurrency    string      `json:"source_currency,omitempty"`
	FeePaidBy         string      `json:"fee_paid_by,omitempty"`
	SwiftChargeOption string      `json:"swift_charge_option,omitempty"`
	FundSource        string      `json:"fund_source,omitempty"`
	Reason            string      `json:"reason,omitempty"`
	Reference         string      `json:"reference,omitempty"`
	ClientData        string      `json:"client_data,omitempty"`
	NotifyURL         string      `json:"notify_url,omitempty"`
	BeneficiaryID     string      `json:"beneficiary_id,omitempty"`
	Beneficiary       Beneficiary `json:"beneficiary"`
	Payer             *Payer      `json:"payer,omitempty"`
}

// Beneficiary is who a payout pays.
type Beneficiary struct {
	EntityType      string           `json:"entity_type,omitempty"`
	CompanyName     string           `json:"company_name,omitempty"`
	FirstName       string           `json:"first_name,omitempty"`
	LastName        string           `json:"last_name,omitempty"`
	DateOfBirth     string           `json:"date_of_birth,omitempty"`
	Address         *Address         `json:"address,omitempty"`
	BankDetails     *BankDetails     `json:"bank_details,omitempty"`
	AdditionalInfo  *BeneficiaryInfo `json:"additional_info,omitempty"`
	PersonDocuments []PersonDocument `json:"person_documents,omitempty"`
}

// Address is a beneficiary's address.
type Address struct {
	Street        string `json:"street,omitempty"`
	Number        string `json:"number,omitempty"`
	Complement    string `json:"complement,omitempty"`
	StreetAddress string `json:"street_address,omitempty"`
	City          string `json:"city,omitempty"`
	State         string `json:"state,omitempty"`
	Postcode      string `json:"postcode,omitempty"`
	CountryCode   string `json:"country_code,omitempty"`
}

// BankDetails is the beneficiary's bank account. An answer carries
// LocalClearingSystem and no BankCode.
type BankDetails struct {
	AccountName         string `json:"account_name,omitempty"`
	AccountNumber       string `json:"account_number,omitempty"`
	AccountCurrency     string `json:"account_currency,omitempty"`
	BankAccountCategory string `json:"bank_account_category,omitempty"`
	IBAN                string `json:"iban,omitempty"`
	SwiftCode           string `json:"swift_code,omitempty"`
	BankCode            string `json:"bank_code,omitempty"`
	BankName            string `json:"bank_name,omitempty"`
	BankBranch          string `json:"bank_branch,omitempty"`
	BankCountryCode     string `json:"bank_country_code,omitempty"`
	BankStreetAddress   string `json:"bank_street_address,omitempty"`
	OwnerDocumentNumber string `json:"owner_document_number,omitempty"`
	BindingMobileNumber string `json:"binding_mobile_number,omitempty"`
	TransactionRef      string `json:"transaction_reference,omitempty"`
	LocalClearingSystem string `json:"local_clearing_system,omitempty"`
}

// BeneficiaryInfo is more about the beneficiary.
type BeneficiaryInfo struct {
	BusinessArea                    string `json:"business_area,omitempty"`
	BusinessPhoneNumber             string `json:"business_phone_number,omitempty"`
	BusinessRegistrationNumber      string `json:"business_registration_number,omitempty"`
	PersonalEmail                   string `json:"personal_email,omitempty"`
	PersonalIDNumber                string `json:"personal_id_number,omitempty"`
	PersonalIDType                  string `json:"personal_id_type,omitempty"`
	PersonalMobileNumber            string `json:"personal_mobile_number,omitempty"`
	PersonalNetMonthlyAverageIncome string `json:"personal_net_monthly_average_income,omitempty"`
	PersonalPhoneCountryCode        string `json:"personal_phone_country_code,omitempty"`
	PersonalPhoneAreaCode           string `json:"personal_phone_area_code,omitempty"`
	PersonalFiscalCountry           string `json:"personal_fiscal_country,omitempty"`
}

// PersonDocument is one of the beneficiary's documents.
type PersonDocument struct {
	FileType string   `json:"file_type,omitempty"`
	FileURL  string   `json:"file_url,omitempty"`
	Labels   []string `json:"labels,omitempty"`
}

// Payer is who a payout is paid for.
type Payer struct {
	EntityType     string        `json:"entity_type,omitempty"`
	CompanyName    string        `json:"company_name,omitempty"`
	FirstName      string        `json:"first_name,omitempty"`
	LastName       string        `json:"last_name,omitempty"`
	DateOfBirth    string        `json:"date_of_birth,omitempty"`
	Address        *PayerAddress `json:"address,omitempty"`
	AdditionalInfo *PayerInfo    `json:"additional_info,omitempty"`
}

// PayerAddress is the payer's address.
type PayerAddress struct {
	StreetAddress string `json:"street_address,omitempty"`
	City          string `json:"city,omitempty"`
	State         string `json:"state,omitempty"`
	Postcode      string `json:"postcode,omitempty"`
	CountryCode   string `json:"country_code,omitempty"`
}

// PayerInfo is more about the payer.
type PayerInfo struct {
	BusinessRegistrationNumber string `json:"business_registration_number,omitempty"`
	BusinessRegistrationType   string `json:"business_registration_type,omitempty"`
	ExternalID                 string `json:"external_id,omitempty"`
	PersonalEmail              string `json:"personal_email,omitempty"`
	PersonalIDNumber           string `json:"personal_id_number,omitempty"`
	Job                        string `json:"job,omitempty"`
}

// PayoutResult is a payout as it stands: the request echoed, with the
// gateway's figures. Status is one of the Payout* statuses.
type PayoutResult struct {
	MerchantID string `json:"merchant_id"`
	AccountID  string `json:"account_id"`
	Payout
	TransactionID             string      `json:"transaction_id"`
	ShortReferenceID          string      `json:"short_reference_id"`
	PayerID                   string      `json:"payer_id"`
	Status                    string      `json:"status"`
	FailureType               string      `json:"failure_type"`
	FailureReason             string      `json:"failure_reason"`
	AmountBeneficiaryReceives json.Number `json:"amount_beneficiary_receives"`
	AmountPayerPays           json.Number `json:"amount_payer_pays"`
	FeeAmount                 json.Number `json:"fee_amount"`
	FeeCurrency               string      `json:"fee_currency"`
	CreatedAt                 string      `json:"created_at"`
	LastUpdatedAt             string      `json:"last_updated_at"`
	ResultInfo                string      `json:"result_info"`
	EncryptionData            string      `json:"encryption_data"`
	Replayed                  bool        `json:"-"`
}

// Payout statuses.
const (
	PayoutCompleted = "COMPLETED"
	PayoutFailed    = "FAILED"
)

// SubscriptionChange acts on a subscription: Action "query", "pause",
// "resume", or "update" (a new ContractAmount or next
// RecurringDeductionTime).
type SubscriptionChange struct {
	RecurringID            string `json:"recurring_id"`
	Action                 string `json:"action"`
	ContractAmount         string `json:"contract_amount,omitempty"`
	RecurringDeductionTime string `json:"recurring_deduction_time,omitempty"`
}

// SubscriptionAnswer is a subscription as it stands.
type SubscriptionAnswer struct {
	MerchantID               string `json:"merchant_id"`
	AccountID                string `json:"account_id"`
	RecurringID              string `json:"recurring_id"`
	RecurringStatus          string `json:"recurring_status"`
	ContractName             string `json:"contract_name"`
	ContractAmount           string `json:"contract_amount"`
	Currency                 string `json:"currency"`
	RecurringDeductionPeriod string `json:"recurring_deduction_period"`
	RecurringDeductionTime   string `json:"recurring_deduction_time"`
	Charges                  int    `json:"charges"`
	ResultInfo               string `json:"result_info"`
	EncryptionData           string `json:"encryption_data"`
}

// TokenAnswer is the answer of DeleteToken.
type TokenAnswer struct {
	MerchantID     string `json:"merchant_id"`
	AccountID      string `json:"account_id"`
	TokenID        string `json:"token_id"`
	ResultInfo     string `json:"result_info"`
	EncryptionData string `json:"encryption_data"`
}

// DisputeRequest lists the account's disputes (Action "list", no
// DisputeID) or acts on one: "query", "accept", or "evidence" with
// Evidence, whose EvidenceSHA256 the client fills.
type DisputeRequest struct {
	DisputeID      string     `json:"dispute_id,omitempty"`
	Action         string     `json:"action,omitempty"`
	Evidence       []Evidence `json:"evidence,omitempty"`
	EvidenceSHA256 string     `json:"evidence_sha256,omitempty"`
}

// Evidence is one piece of a challenge: a text, or a file in base64.
type Evidence struct {
	Name          string `json:"name,omitempty"`
	Text          string `json:"text,omitempty"`
	ContentType   string `json:"content_type,omitempty"`
	ContentBase64 string `json:"content_base64,omitempty"`
}

// DisputeAnswer lists disputes as they stand.
type DisputeAnswer struct {
	MerchantID     string    `json:"merchant_id"`
	AccountID      string    `json:"account_id"`
	Disputes       []Dispute `json:"disputes"`
	ResultInfo     string    `json:"result_info"`
	EncryptionData string    `json:"encryption_data"`
}

// Dispute is a shopper's dispute of a payment.
type Dispute struct {
	DisputeID     string `json:"dispute_id"`
	TransactionID string `json:"transaction_id"`
	OrderNo       string `json:"order_no"`
	Amount        string `json:"amount"`
	Currency      string `json:"currency"`
	Fee           string `json:"fee"`
	Reason        string `json:"reason"`
	Stage         string `json:"stage"`
	Status        string `json:"status"`
	EvidenceDueBy string `json:"evidence_due_by"`
	CreatedAt     string `json:"created_at"`
}

// OptimiseRequest asks which payment methods and connectors do best for a
// payment like this one.
type OptimiseRequest struct {
	RequestID    string `json:"request_id"`
	Currency     string `json:"currency"`
	Amount       string `json:"amount"`
	Country      string `json:"country,omitempty"`
	ShopperEmail string `json:"shopper_email,omitempty"`
}

// OptimiseAnswer ranks payment methods and connectors by success rate.
type OptimiseAnswer struct {
	MerchantID     string          `json:"merchant_id"`
	AccountID      string          `json:"account_id"`
	RequestID      string          `json:"request_id"`
	Currency       string          `json:"currency"`
	Amount         string          `json:"amount"`
	Country        string          `json:"country"`
	WindowDays     int             `json:"window_days"`
	PaymentMethods []MethodRank    `json:"payment_methods"`
	Connectors     []ConnectorRank `json:"connectors"`
	ResultInfo     string          `json:"result_info"`
	EncryptionData string          `json:"encryption_data"`
}

// MethodRank is a payment method's success over the window.
type MethodRank struct {
	PaymentMethod string `json:"payment_method"`
	Brand         string `json:"brand"`
	Rank          int    `json:"rank"`
	SuccessRate   string `json:"success_rate"`
	SampleSize    int    `json:"sample_size"`
	Succeeded     int    `json:"succeeded"`
}

// ConnectorRank is a connector's success over the window.
type ConnectorRank struct {
	Connector   string `json:"connector"`
	Rank        int    `json:"rank"`
	SuccessRate string `json:"success_rate"`
	SampleSize  int    `json:"sample_size"`
	Succeeded   int    `json:"succeeded"`
}

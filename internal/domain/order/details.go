// Package order holds the payment order as the merchant sends it: every field
// of the interface's payment order except the card data, which never leaves
// the API edge unencrypted.
package order

// Details is a payment order's fields, named as in the interface. It is stored
// whole with the order and travels in workflow inputs, so it must never hold
// card data.
type Details struct {
	MerchantID string `json:"merchant_id"`
	AccountID  string `json:"account_id"`
	OrderNo    string `json:"order_no"`
	Currency   string `json:"currency"`
	Amount     Text   `json:"amount"`

	ItemTotal        Text `json:"item_total,omitempty"`
	Shipping         Text `json:"shipping,omitempty"`
	Handling         Text `json:"handling,omitempty"`
	TaxTotal         Text `json:"tax_total,omitempty"`
	Insurance        Text `json:"insurance,omitempty"`
	ShippingDiscount Text `json:"shipping_discount,omitempty"`
	Discount         Text `json:"discount,omitempty"`

	Website string `json:"website,omitempty"`
	Items   string `json:"items,omitempty"`
	Note    string `json:"note,omitempty"`

	ShopperID    string `json:"shopper_id,omitempty"`
	ShopperEmail string `json:"shopper_email,omitempty"`
	ShopperIP    string `json:"shopper_ip,omitempty"`
	ShopperPhone string `json:"shopper_phone,omitempty"`
	ShopperLevel Text   `json:"shopper_level,omitempty"`

	Open3D    string `json:"open3d,omitempty"`
	TokenFlag string `json:"token_flag,omitempty"`
	TokenID   string `json:"token_id,omitempty"`

	FirstName string `json:"first_name,omitempty"`
	LastName  string `json:"last_name,omitempty"`
	NotifyURL string `json:"notify_url,omitempty"`
	ReturnURL string `json:"return_url,omitempty"`
	CancelURL string `json:"cancel_url,omitempty"`
	Document  string `json:"document,omitempty"`
	BirthDate string `json:"birth_date,omitempty"`

	BillingCountry    string `json:"billing_country,omitempty"`
	BillingState      string `json:"billing_state,omitempty"`
	BillingCity       string `json:"billing_city,omitempty"`
	BillingAddress    string `json:"billing_address,omitempty"`
	BillingPostalCode Text   `json:"billing_postal_code,omitempty"`

	OS                  string `json:"os,omitempty"`
	Browser             string `json:"browser,omitempty"`
	BrowserLang         string `json:"browser_lang,omitempty"`
	TimeZone            Text   `json:"time_zone,omitempty"`
	Resolution          string `json:"resolution,omitempty"`
	ColorDepth          Text   `json:"color_depth,omitempty"`
	UserAgent           string `json:"user_agent,omitempty"`
	CookieNew           string `json:"cookie_new,omitempty"`
	CookieOld           string `json:"cookie_old,omitempty"`
	ChallengeWindowSize Text   `json:"challenge_window_size,omitempty"`
	SessionID           string `json:"session_id,omitempty"`

	DeliveryFirstName  string `json:"delivery_firstname,omitempty"`
	DeliveryLastName   string `json:"delivery_lastname,omitempty"`
	DeliveryCountry    string `json:"delivery_country,omitempty"`
	DeliveryState      string `json:"delivery_state,omitempty"`
	DeliveryCity       string `json:"delivery_city,omitempty"`
	DeliveryAddress    string `json:"delivery_address,omitempty"`
	DeliveryPostalCode Text   `json:"delivery_postal_code,omitempty"`

	Custom               string `json:"custom,omitempty"`
	Installments         Text   `json:"installments,omitempty"`
	InstallmentsID       string `json:"installments_id,omitempty"`
	DeviceFingerprint    string `json:"device_fingerprint,omitempty"`
	PlatformSource       string `json:"platform_source,omitempty"`
	DeviceType           string `json:"device_type,omitempty"`
	OrderType            string `json:"order_type,omitempty"`
	CheckoutTime         Text   `json:"checkout_time,omitempty"`
	AntifraudTokenCookie string `json:"antifraud_token_cookie,omitempty"`

	CartItems             []CartItem              `json:"cart_items,omitempty"`
	AccountOwner          []AccountOwner          `json:"account_owner,omitempty"`
	TotalDiscount         []Discount              `json:"total_discount,omitempty"`
	AdditionalInformation []AdditionalInformation `json:"additional_information,omitempty"`

	PriceID           string `json:"price_id,omitempty"`
	QuoteID           string `json:"quote_id,omitempty"`
	QuotePrice        Text   `json:"quote_price,omitempty"`
	StorefrontDomains string `json:"storefront_domains,omitempty"`
	Accept            string `json:"accept,omitempty"`

	Subscription *Subscription `json:"subscription,omitempty"`

	// Alternative payment method orders.
	PaymentMethod        string  `json:"payment_method,omitempty"`
	BankCode             string  `json:"bank_code,omitempty"`
	DeliveryDistrictName string  `json:"delivery_district_name,omitempty"`
	DeliveryStreetName   string  `json:"delivery_street_name,omitempty"`
	Person               *Person `json:"person,omitempty"`

	// Hosted payment.
	DefaultLang string `json:"default_lang,omitempty"`
}

// Person is the payer of an alternative payment method.
type Person struct {
	DocumentNumber          string           `json:"document_number,omitempty"`
	DocumentType            string           `json:"document_type,omitempty"`
	SocialName              string           `json:"social_name,omitempty"`
	Email                   string           `json:"email,omitempty"`
	PhoneCountryCode        Text             `json:"phone_country_code,omitempty"`
	PhoneAreaCode           Text             `json:"phone_area_code,omitempty"`
	PhoneNumber             Text             `json:"phone_number,omitempty"`
	BirthDate               string           `json:"birth_date,omitempty"`
	NetMonthlyAverageIncome Text             `json:"net_monthly_average_income,omitempty"`
	AddressStreet           string           `json:"address_street,omitempty"`
	AddressNumber           Text             `json:"address_number,omitempty"`
	AddressComplement       string           `json:"address_complement,omitempty"`
	AddressPostalCode       Text             `json:"address_postal_code,omitempty"`
	AddressCity             string           `json:"address_city,omitempty"`
	AddressState            string           `json:"address_state,omitempty"`
	AddressCountry          string           `json:"address_country,omitempty"`
	FiscalCountry           string           `json:"fiscal_country,omitempty"`
	Documents               *PersonDocuments `json:"documents,omitempty"`
}

// PersonDocuments are a person's supporting documents.
type PersonDocuments struct {
	FileType string          `json:"file_type,omitempty"`
	FileData string          `json:"file_data,omitempty"`
	FileURL  string          `json:"file_url,omitempty"`
	Labels   *DocumentLabels `json:"labels,omitempty"`
}

// DocumentLabels link a document to a bank account.
type DocumentLabels struct {
	PersonBankAccountID string       `json:"person_bank_account_id,omitempty"`
	BankAccount         *BankAccount `json:"bank_account,omitempty"`
}

// BankAccount is a person's bank account.
type BankAccount struct {
	AccountType         string `json:"account_type,omitempty"`
	AccountNumber       Text   `json:"account_number,omitempty"`
	BranchNumber        Text   `json:"branch_number,omitempty"`
	OwnerDocumentNumber Text   `json:"owner_document_number,omitempty"`
	OwnerName           string `json:"owner_name,omitempty"`
	BranchCountry       string `json:"branch_country,omitempty"`
	Currency            string `json:"currency,omitempty"`
	Bank                *Bank  `json:"bank,omitempty"`
}

// Bank names a bank.
type Bank struct {
	Code Text   `json:"code,omitempty"`
	Name string `json:"name,omitempty"`
}

// CartItem is one entry of cart_items.
type CartItem struct {
	BasicItemData BasicItemData `json:"basic_item_data"`
}

// BasicItemData describes one cart item.
type BasicItemData struct {
	Name      string    `json:"name,omitempty"`
	Quantity  Text      `json:"quantity,omitempty"`
	Type      string    `json:"type,omitempty"`
	Price     ItemPrice `json:"price"`
	Category  string    `json:"category,omitempty"`
	ProductID Text      `json:"productId,omitempty"`
}

// ItemPrice is a cart item's price. The interface sends numbers here; they are
// kept as their literal text.
type ItemPrice struct {
	AmountUSD           Text   `json:"amount_usd,omitempty"`
	AmountLocalCurrency Text   `json:"amount_local_currency,omitempty"`
	Currency            string `json:"currency,omitempty"`
}

// AccountOwner describes the shopper's account at the merchant.
type AccountOwner struct {
	FirstName       string `json:"first_name,omitempty"`
	LastName        string `json:"last_name,omitempty"`
	Email           string `json:"email,omitempty"`
	AccountID       string `json:"account_id,omitempty"`
	Created         Text   `json:"created,omitempty"`
	PastOrdersCount Text   `json:"past_orders_count,omitempty"`
	PastOrdersSum   Text   `json:"past_orders_sum,omitempty"`
	LastLoginIP     string `json:"lastLogin_ip,omitempty"`
	RegistrationIP  string `json:"registration_ip,omitempty"`
}

// Discount is one entry of total_discount.
type Discount struct {
	CouponCodeUsed string `json:"coupon_code_used,omitempty"`
	DiscountType   string `json:"discount_type,omitempty"`
}

// AdditionalInformation is one entry of additional_information.
type AdditionalInformation struct {
	MPIInfo *MPIInfo `json:"mpi_info,omitempty"`
}

// MPIInfo carries a merchant-run 3-D Secure result.
type MPIInfo struct {
	ECI       string `json:"eci,omitempty"`
	CAVV      string `json:"cavv,omitempty"`
	XID       string `json:"xid,omitempty"`
	DSTransID string `json:"dsTransID,omitempty"`
}

// Subscription is the recurring contract attached to an order.
type Subscription struct {
	Contract       string `json:"contract,omitempty"`
	ContractName   string `json:"contract_name,omitempty"`
	ContractAmount Text   `json:"contract_amount,omitempty"`
	Interval       string `json:"interval,omitempty"`
	IntervalCount  Text   `json:"interval_count,omitempty"`
	BillingCycle   Text   `json:"billing_cycle,omitempty"`
	PromotionCycle Text   `json:"promotion_cycle,omitempty"`
	ContractStart  string `json:"contract_start,omitempty"`
	ContractEnd    string `json:"contract_end,omitempty"`
	PriceID        string `json:"price_id,omitempty"`
}

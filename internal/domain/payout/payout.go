// Package payout is the pure core of payouts (POST /v1/payout): the request
// as the merchant sends it, its validation, the fee and who pays it, the
// exchange-rate quote, the short reference and timestamps of the answer, and
// the payout's statuses with the transitions between them.
//
// Nothing here does I/O. The API validates a request with Validate, the
// payout workflow prices it with Price (over a rate table and a fee schedule
// that activities load), and both follow a payout's life with CanTransition.
// Money is int64 minor units (money.Amount) throughout; no float is used.
package payout

import "github.com/paygate/paygate/internal/domain/order"

// Text is a string field that also accepts a JSON number or boolean and keeps
// its literal text (the order package's Text): amounts, postcodes and numbers
// of accounts and documents may come unquoted, and reading them as text means
// no float ever rounds them.
type Text = order.Text

// Request is the body of POST /v1/payout, with every field of the
// interface, named as there. Values are kept as sent; Validate reads them
// and returns the checked, canonical form.
type Request struct {
	MerchantID string `json:"merchant_id"`
	AccountID  string `json:"account_id"`
	// RequestID is the merchant's UUID for this payout, and its idempotency
	// key: one payout per merchant and request_id (docs/design.md §1).
	RequestID string `json:"request_id"`

	PaymentCurrency string `json:"payment_currency"`
	PaymentAmount   Text   `json:"payment_amount"`
	SourceCurrency  string `json:"source_currency,omitempty"`
	SourceAmount    Text   `json:"source_amount,omitempty"`
	PaymentDate     string `json:"payment_date,omitempty"`

	PaymentMethod     string `json:"payment_method"`
	FeePaidBy         string `json:"fee_paid_by"`
	SwiftChargeOption string `json:"swift_charge_option,omitempty"`
	FundSource        string `json:"fund_source,omitempty"`

	Beneficiary   *Beneficiary `json:"beneficiary,omitempty"`
	BeneficiaryID string       `json:"beneficiary_id,omitempty"`
	Payer         *Payer       `json:"payer,omitempty"`

	Reason     string `json:"reason,omitempty"`
	Reference  string `json:"reference,omitempty"`
	ClientData string `json:"client_data,omitempty"`
	NotifyURL  string `json:"notify_url,omitempty"`

	// EncryptionData is the signature over merchant_id, account_id,
	// request_id, payment_currency and payment_amount (docs/design.md §3). The API
	// checks it before Validate runs; Validate does not look at it.
	EncryptionData string `json:"encryption_data,omitempty"`
}

// Beneficiary is the party who receives the payout.
type Beneficiary struct {
	EntityType  string `json:"entity_type"`
	CompanyName string `json:"company_name,omitempty"`
	FirstName   string `json:"first_name,omitempty"`
	LastName    string `json:"last_name,omitempty"`
	DateOfBirth string `json:"date_of_birth,omitempty"`

	Address         BeneficiaryAddress        `json:"address,omitzero"`
	AdditionalInfo  BeneficiaryAdditionalInfo `json:"additional_info,omitzero"`
	PersonDocuments []PersonDocument          `json:"person_documents,omitempty"`
	BankDetails     BankDetails               `json:"bank_details,omitzero"`
}

// BeneficiaryAddress is the beneficiary's postal address.
type BeneficiaryAddress struct {
	Street        string `json:"street,omitempty"`
	Number        Text   `json:"number,omitempty"`
	StreetAddress string `json:"street_address,omitempty"`
	Complement    string `json:"complement,omitempty"`
	City          string `json:"city,omitempty"`
	State         string `json:"state,omitempty"`
	Postcode      Text   `json:"postcode,omitempty"`
	CountryCode   string `json:"country_code,omitempty"`
}

// BeneficiaryAdditionalInfo is what some corridors ask of a beneficiary
// beyond name and address.
type BeneficiaryAdditionalInfo struct {
	BusinessArea                    string `json:"business_area,omitempty"`
	BusinessPhoneNumber             Text   `json:"business_phone_number,omitempty"`
	BusinessRegistrationNumber      Text   `json:"business_registration_number,omitempty"`
	PersonalEmail                   string `json:"personal_email,omitempty"`
	PersonalIDNumber                Text   `json:"personal_id_number,omitempty"`
	PersonalIDType                  string `json:"personal_id_type,omitempty"`
	PersonalMobileNumber            Text   `json:"personal_mobile_number,omitempty"`
	PersonalNetMonthlyAverageIncome Text   `json:"personal_net_monthly_average_income,omitempty"`
	PersonalPhoneCountryCode        Text   `json:"personal_phone_country_code,omitempty"`
	PersonalPhoneAreaCode           Text   `json:"personal_phone_area_code,omitempty"`
	PersonalFiscalCountry           string `json:"personal_fiscal_country,omitempty"`
}

// PersonDocument is one supporting document of the beneficiary, given by URL.
type PersonDocument struct {
	FileType string   `json:"file_type,omitempty"`
	FileURL  string   `json:"file_url,omitempty"`
	Labels   []string `json:"labels,omitempty"`
}

// BankDetails is the beneficiary's bank account.
type BankDetails struct {
	AccountCurrency     string `json:"account_currency,omitempty"`
	AccountName         string `json:"account_name,omitempty"`
	OwnerDocumentNumber Text   `json:"owner_document_number,omitempty"`
	AccountNumber       Text   `json:"account_number,omitempty"`
	BankAccountCategory string `json:"bank_account_category,omitempty"`
	BankBranch          Text   `json:"bank_branch,omitempty"`
	BankCountryCode     string `json:"bank_country_code,omitempty"`
	BankCode            Text   `json:"bank_code,omitempty"`
	BankName            string `json:"bank_name,omitempty"`
	BankStreetAddress   string `json:"bank_street_address,omitempty"`
	BindingMobileNumber Text   `json:"binding_mobile_number,omitempty"`
	IBAN                string `json:"iban,omitempty"`
	SwiftCode           string `json:"swift_code,omitempty"`
	// TransactionReference is a reference for the beneficiary's bank.
	TransactionReference string `json:"transaction_reference,omitempty"`
	// LocalClearingSystem is not among the interface's request fields (only
	// its answer carries it). A merchant may send it to choose among the
	// local systems of a LOCAL payout; without it Validate picks the default
	// one, and the canonical request carries the choice for the answer.
	LocalClearingSystem string `json:"local_clearing_system,omitempty"`
}

// Payer is the party on whose behalf the payout is made: the originator that
// a cross-border transfer must name.
type Payer struct {
	EntityType  string `json:"entity_type"`
	CompanyName string `json:"company_name,omitempty"`
	FirstName   string `json:"first_name,omitempty"`
	LastName    string `json:"last_name,omitempty"`
	DateOfBirth string `json:"date_of_birth,omitempty"`

	Address        PayerAddress        `json:"address,omitzero"`
	AdditionalInfo PayerAdditionalInfo `json:"additional_info,omitzero"`
}

// PayerAddress is the payer's postal address.
type PayerAddress struct {
	StreetAddress string `json:"street_address,omitempty"`
	City          string `json:"city,omitempty"`
	State         string `json:"state,omitempty"`
	Postcode      Text   `json:"postcode,omitempty"`
	CountryCode   string `json:"country_code,omitempty"`
}

// PayerAdditionalInfo is what some corridors ask of a payer beyond name and
// address.
type PayerAdditionalInfo struct {
	BusinessRegistrationNumber Text   `json:"business_registration_number,omitempty"`
	BusinessRegistrationType   string `json:"business_registration_type,omitempty"`
	ExternalID                 Text   `json:"external_id,omitempty"`
	PersonalEmail              string `json:"personal_email,omitempty"`
	PersonalIDNumber           Text   `json:"personal_id_number,omitempty"`
	Job                        string `json:"job,omitempty"`
}

// SignedValues are the values of the compatible payout signature, in the
// order of docs/design.md §3 (the sign key follows them).
func (r *Request) SignedValues() []string {
	return []string{r.MerchantID, r.AccountID, r.RequestID, r.PaymentCurrency, r.PaymentAmount.String()}
}

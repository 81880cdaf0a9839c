package payout

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/signing"
)

// today is the day every validation test runs on.
var today = time.Date(2026, time.March, 14, 10, 30, 0, 0, time.UTC)

// validRequest is a complete SWIFT payout to a German company, funded in USD.
func validRequest() Request {
	return Request{
		MerchantID:        "10086",
		AccountID:         "10086001",
		RequestID:         "3f2b8c1e-6a4d-4c1b-9e8f-2d7a5b6c9e01",
		PaymentCurrency:   "EUR",
		PaymentAmount:     "1500.00",
		SourceCurrency:    "USD",
		PaymentDate:       "2026-03-14",
		PaymentMethod:     "SWIFT",
		FeePaidBy:         "PAYER",
		SwiftChargeOption: "SHARED",
		FundSource:        "DepositAccount",
		Beneficiary: &Beneficiary{
			EntityType:  "COMPANY",
			CompanyName: "Müller Maschinenbau GmbH",
			Address: BeneficiaryAddress{
				StreetAddress: "Hauptstraße 5", City: "Berlin", Postcode: "10115", CountryCode: "DE",
			},
			AdditionalInfo: BeneficiaryAdditionalInfo{
				BusinessPhoneNumber: "+49 30 1234567", BusinessRegistrationNumber: "HRB 12345",
			},
			PersonDocuments: []PersonDocument{
				{FileType: "REGISTRATION", FileURL: "https://files.example/reg.pdf", Labels: []string{"company"}},
			},
			BankDetails: BankDetails{
				AccountName: "Müller Maschinenbau GmbH", BankCountryCode: "DE", AccountCurrency: "EUR",
				IBAN: "DE89370400440532013000", SwiftCode: "COBADEFFXXX", BankName: "Commerzbank",
			},
		},
		BeneficiaryID: "BEN-0001",
		Payer: &Payer{
			EntityType:  "COMPANY",
			CompanyName: "Paygate Demo Ltd",
			Address:     PayerAddress{StreetAddress: "1 High Street", City: "London", Postcode: "EC1A 1BB", CountryCode: "GB"},
		},
		Reason:     "Invoice payment",
		Reference:  "INV-2026-031",
		ClientData: "batch=7\nline=3",
		NotifyURL:  "https://merchant.example/payouts/notify",
	}
}

// localRequest turns the valid request into a LOCAL payout of currency to
// a bank in bankCountry with the given account data.
func localRequest(currency, bankCountry string, edit func(*BankDetails)) Request {
	r := validRequest()
	r.PaymentMethod = "LOCAL"
	r.SwiftChargeOption = ""
	r.PaymentCurrency = currency
	r.Beneficiary.BankDetails = BankDetails{AccountName: "Jane Roe", BankCountryCode: bankCountry}
	edit(&r.Beneficiary.BankDetails)
	return r
}

func TestValidateAcceptsAndCanonicalises(t *testing.T) {
	r := validRequest()
	r.RequestID = " 3F2B8C1E-6A4D-4C1B-9E8F-2D7A5B6C9E01 "
	r.Beneficiary.BankDetails.IBAN = " de89 3704 0044 0532 0130 00 "
	r.Beneficiary.BankDetails.SwiftCode = "cobadeff"
	r.PaymentDate = ""
	r.FundSource = ""
	r.Beneficiary.CompanyName = "  Müller Maschinenbau GmbH\t"

	in, err := Validate(r, today)
	if err != nil {
		t.Fatalf("Validate = %v, want no error", err)
	}
	want := Instruction{
		RequestID:         "3f2b8c1e-6a4d-4c1b-9e8f-2d7a5b6c9e01",
		PaymentMethod:     MethodSwift,
		FeePaidBy:         FeePayer,
		SwiftChargeOption: ChargeShared,
		FundSource:        SourceDepositAccount,
		ClearingSystem:    ClearingSwift,
		PaymentAmount:     money.Amount{Minor: 150000, Currency: "EUR"},
		SourceCurrency:    "USD",
		PaymentDate:       time.Date(2026, time.March, 14, 0, 0, 0, 0, time.UTC),
		IBAN:              "DE89370400440532013000",
		BIC:               "COBADEFF",
	}
	got := in
	got.Request = Request{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Validate =\n%+v\nwant\n%+v", got, want)
	}
	c := in.Request
	if c.RequestID != want.RequestID || c.PaymentDate != "2026-03-14" || c.FundSource != "DepositAccount" ||
		c.Beneficiary.BankDetails.IBAN != "DE89370400440532013000" || c.Beneficiary.BankDetails.SwiftCode != "COBADEFF" ||
		c.Beneficiary.CompanyName != "Müller Maschinenbau GmbH" {
		t.Errorf("canonical request = %+v / %+v", c, c.Beneficiary)
	}
	// The caller's request is not touched.
	if r.Beneficiary.BankDetails.IBAN != " de89 3704 0044 0532 0130 00 " || r.PaymentDate != "" {
		t.Errorf("Validate changed its argument: %+v", r.Beneficiary.BankDetails)
	}
	// The canonical request validates to the same instruction.
	again, err := Validate(in.Request, today)
	if err != nil || !reflect.DeepEqual(again, in) {
		t.Errorf("Validate(canonical) = %+v, %v; want %+v", again, err, in)
	}
}

func TestValidateFields(t *testing.T) {
	tests := []struct {
		name      string
		edit      func(r *Request)
		wantField string // "" when the request is valid
		wantCode  codes.Code
		wantErr   error // an error the FieldError wraps, when one is expected
	}{
		{"valid", func(r *Request) {}, "", codes.Code{}, nil},

		// Identity.
		{"missing merchant_id", func(r *Request) { r.MerchantID = " " }, "merchant_id", codes.MissingField, ErrMissing},
		{"merchant_id with a space", func(r *Request) { r.MerchantID = "100 86" }, "merchant_id", codes.InvalidField, nil},
		{"merchant_id too long", func(r *Request) { r.MerchantID = strings.Repeat("1", 65) }, "merchant_id", codes.InvalidField, nil},
		{"missing account_id", func(r *Request) { r.AccountID = "" }, "account_id", codes.MissingField, ErrMissing},
		{"missing request_id", func(r *Request) { r.RequestID = "" }, "request_id", codes.MissingField, ErrMissing},
		{"request_id without hyphens", func(r *Request) { r.RequestID = "3f2b8c1e6a4d4c1b9e8f2d7a5b6c9e01" }, "request_id", codes.InvalidField, ErrRequestID},
		{"request_id in braces", func(r *Request) { r.RequestID = "{3f2b8c1e-6a4d-4c1b-9e8f-2d7a5b6c9e01}" }, "request_id", codes.InvalidField, ErrRequestID},
		{"request_id with a non-hex digit", func(r *Request) { r.RequestID = "3f2b8c1e-6a4d-4c1b-9e8f-2d7a5b6c9e0g" }, "request_id", codes.InvalidField, ErrRequestID},
		{"nil request_id", func(r *Request) { r.RequestID = "00000000-0000-0000-0000-000000000000" }, "request_id", codes.InvalidField, ErrRequestID},
		{"upper-case request_id", func(r *Request) { r.RequestID = "3F2B8C1E-6A4D-4C1B-9E8F-2D7A5B6C9E01" }, "", codes.Code{}, nil},

		// Amounts and currencies.
		{"missing payment_currency", func(r *Request) { r.PaymentCurrency = "" }, "payment_currency", codes.MissingField, ErrMissing},
		{"lower-case payment_currency", func(r *Request) { r.PaymentCurrency = "eur" }, "payment_currency", codes.UnsupportedCurrency, money.ErrUnknownCurrency},
		{"unknown payment_currency", func(r *Request) { r.PaymentCurrency = "XXX" }, "payment_currency", codes.UnsupportedCurrency, money.ErrUnknownCurrency},
		{"missing payment_amount", func(r *Request) { r.PaymentAmount = "" }, "payment_amount", codes.MissingField, ErrMissing},
		{"zero payment_amount", func(r *Request) { r.PaymentAmount = "0.00" }, "payment_amount", codes.InvalidAmount, nil},
		{"negative payment_amount", func(r *Request) { r.PaymentAmount = "-5" }, "payment_amount", codes.InvalidAmount, money.ErrInvalidAmount},
		{"three fraction digits", func(r *Request) { r.PaymentAmount = "12.345" }, "payment_amount", codes.InvalidAmount, money.ErrInvalidAmount},
		{"exponent notation", func(r *Request) { r.PaymentAmount = "1e3" }, "payment_amount", codes.InvalidAmount, money.ErrInvalidAmount},
		{"payment_amount above the limit", func(r *Request) { r.PaymentAmount = "100000000000.01" }, "payment_amount", codes.InvalidAmount, money.ErrAmountTooLarge},
		{"payment_amount at the limit", func(r *Request) { r.PaymentAmount = "100000000000.00" }, "", codes.Code{}, nil},
		{"JPY with a fraction", func(r *Request) { r.PaymentCurrency = "JPY"; r.PaymentAmount = "100.50" }, "payment_amount", codes.InvalidAmount, money.ErrInvalidAmount},
		{"BHD payout", func(r *Request) {
			r.PaymentCurrency = "BHD"
			r.PaymentAmount = "12.5"
			r.Beneficiary.BankDetails.AccountCurrency = ""
		}, "", codes.Code{}, nil},
		{"unknown source_currency", func(r *Request) { r.SourceCurrency = "ABC" }, "source_currency", codes.UnsupportedCurrency, money.ErrUnknownCurrency},
		{"zero source_amount", func(r *Request) { r.SourceAmount = "0" }, "source_amount", codes.InvalidAmount, nil},
		{"source_amount with too many digits for JPY", func(r *Request) { r.SourceCurrency = "JPY"; r.SourceAmount = "10.5" }, "source_amount", codes.InvalidAmount, money.ErrInvalidAmount},

		// When.
		{"payment_date yesterday", func(r *Request) { r.PaymentDate = "2026-03-13" }, "payment_date", codes.InvalidField, nil},
		{"payment_date in 30 days", func(r *Request) { r.PaymentDate = "2026-04-13" }, "", codes.Code{}, nil},
		{"payment_date in 31 days", func(r *Request) { r.PaymentDate = "2026-04-14" }, "payment_date", codes.InvalidField, nil},
		{"payment_date without zero padding", func(r *Request) { r.PaymentDate = "2026-3-14" }, "payment_date", codes.InvalidField, nil},
		{"payment_date not a day", func(r *Request) { r.PaymentDate = "2026-02-30" }, "payment_date", codes.InvalidField, nil},
		{"payment_date with a time", func(r *Request) { r.PaymentDate = "2026-03-14T00:00:00Z" }, "payment_date", codes.InvalidField, nil},

		// How.
		{"missing payment_method", func(r *Request) { r.PaymentMethod = "" }, "payment_method", codes.MissingField, ErrMissing},
		{"unknown payment_method", func(r *Request) { r.PaymentMethod = "ACH" }, "payment_method", codes.UnsupportedMethod, nil},
		{"lower-case payment_method", func(r *Request) { r.PaymentMethod = "swift" }, "payment_method", codes.UnsupportedMethod, nil},
		{"missing fee_paid_by", func(r *Request) { r.FeePaidBy = "" }, "fee_paid_by", codes.MissingField, ErrMissing},
		{"unknown fee_paid_by", func(r *Request) { r.FeePaidBy = "SHARED" }, "fee_paid_by", codes.InvalidField, nil},
		{"beneficiary pays the fee", func(r *Request) { r.FeePaidBy = "BENEFICIARY" }, "", codes.Code{}, nil},
		{"missing swift_charge_option", func(r *Request) { r.SwiftChargeOption = "" }, "swift_charge_option", codes.MissingField, ErrMissing},
		{"SWIFT OUR spelled as SWIFT does", func(r *Request) { r.SwiftChargeOption = "OUR" }, "swift_charge_option", codes.InvalidField, nil},
		{"payer bears the SWIFT charges", func(r *Request) { r.SwiftChargeOption = "PAYER" }, "", codes.Code{}, nil},
		{"unknown fund_source", func(r *Request) { r.FundSource = "Card" }, "fund_source", codes.InvalidField, nil},

		// Beneficiary.
		{"no beneficiary", func(r *Request) { r.Beneficiary = nil }, "beneficiary", codes.MissingField, ErrMissing},
		{"missing entity_type", func(r *Request) { r.Beneficiary.EntityType = "" }, "beneficiary.entity_type", codes.MissingField, ErrMissing},
		{"unknown entity_type", func(r *Request) { r.Beneficiary.EntityType = "ORG" }, "beneficiary.entity_type", codes.InvalidField, nil},
		{"company without company_name", func(r *Request) { r.Beneficiary.CompanyName = "" }, "beneficiary.company_name", codes.MissingField, ErrMissing},
		{"person without last_name", func(r *Request) {
			r.Beneficiary.EntityType = "PERSONAL"
			r.Beneficiary.FirstName = "Jane"
		}, "beneficiary.last_name", codes.MissingField, ErrMissing},
		{"person with names", func(r *Request) {
			r.Beneficiary.EntityType, r.Beneficiary.CompanyName = "PERSONAL", ""
			r.Beneficiary.FirstName, r.Beneficiary.LastName = "Zoë", "O'Brien-Łukasiewicz"
			r.Beneficiary.DateOfBirth = "1980-02-29"
		}, "", codes.Code{}, nil},
		{"name with a NUL", func(r *Request) { r.Beneficiary.CompanyName = "ACME\x00" }, "beneficiary.company_name", codes.InvalidField, nil},
		{"name with a line feed", func(r *Request) { r.Beneficiary.CompanyName = "ACME\nLtd" }, "beneficiary.company_name", codes.InvalidField, nil},
		{"name with a C1 control", func(r *Request) { r.Beneficiary.CompanyName = "AC\u0085ME" }, "beneficiary.company_name", codes.InvalidField, nil},
		{"name with a right-to-left override", func(r *Request) { r.Beneficiary.CompanyName = "ACME\u202eLtd" }, "beneficiary.company_name", codes.InvalidField, nil},
		{"name with a zero-width non-joiner", func(r *Request) { r.Beneficiary.CompanyName = "می\u200cخواهم" }, "", codes.Code{}, nil},
		{"name not UTF-8", func(r *Request) { r.Beneficiary.CompanyName = "ACME\xff" }, "beneficiary.company_name", codes.InvalidField, nil},
		{"company_name of 200 non-ASCII characters", func(r *Request) { r.Beneficiary.CompanyName = strings.Repeat("ü", 200) }, "", codes.Code{}, nil},
		{"company_name of 201 characters", func(r *Request) { r.Beneficiary.CompanyName = strings.Repeat("a", 201) }, "beneficiary.company_name", codes.InvalidField, nil},
		{"date_of_birth tomorrow", func(r *Request) { r.Beneficiary.DateOfBirth = "2026-03-15" }, "beneficiary.date_of_birth", codes.InvalidField, nil},
		{"date_of_birth before 1900", func(r *Request) { r.Beneficiary.DateOfBirth = "1899-12-31" }, "beneficiary.date_of_birth", codes.InvalidField, nil},
		{"date_of_birth day-month-year", func(r *Request) { r.Beneficiary.DateOfBirth = "29-02-1980" }, "beneficiary.date_of_birth", codes.InvalidField, nil},
		{"missing city", func(r *Request) { r.Beneficiary.Address.City = "" }, "beneficiary.address.city", codes.MissingField, ErrMissing},
		{"postcode with a symbol", func(r *Request) { r.Beneficiary.Address.Postcode = "10115!" }, "beneficiary.address.postcode", codes.InvalidField, nil},
		{"country UK", func(r *Request) { r.Beneficiary.Address.CountryCode = "UK" }, "beneficiary.address.country_code", codes.InvalidField, nil},
		{"missing country", func(r *Request) { r.Beneficiary.Address.CountryCode = "" }, "beneficiary.address.country_code", codes.MissingField, ErrMissing},
		{"bad email", func(r *Request) { r.Beneficiary.AdditionalInfo.PersonalEmail = "jane@localhost" }, "beneficiary.additional_info.personal_email", codes.InvalidField, nil},
		{"good email", func(r *Request) { r.Beneficiary.AdditionalInfo.PersonalEmail = "jane.roe+pay@mail.example.com" }, "", codes.Code{}, nil},
		{"phone with letters", func(r *Request) { r.Beneficiary.AdditionalInfo.BusinessPhoneNumber = "+49 CALL ME" }, "beneficiary.additional_info.business_phone_number", codes.InvalidField, nil},
		{"phone country code", func(r *Request) { r.Beneficiary.AdditionalInfo.PersonalPhoneCountryCode = "+55" }, "", codes.Code{}, nil},
		{"phone country code too long", func(r *Request) { r.Beneficiary.AdditionalInfo.PersonalPhoneCountryCode = "5555" }, "beneficiary.additional_info.personal_phone_country_code", codes.InvalidField, nil},
		{"income with a comma", func(r *Request) { r.Beneficiary.AdditionalInfo.PersonalNetMonthlyAverageIncome = "1,000" }, "beneficiary.additional_info.personal_net_monthly_average_income", codes.InvalidField, nil},
		{"fiscal country lower case", func(r *Request) { r.Beneficiary.AdditionalInfo.PersonalFiscalCountry = "de" }, "beneficiary.additional_info.personal_fiscal_country", codes.InvalidField, nil},
		{"second document's URL", func(r *Request) {
			r.Beneficiary.PersonDocuments = append(r.Beneficiary.PersonDocuments, PersonDocument{FileType: "ID", FileURL: "ftp://files.example/id.pdf"})
		}, "beneficiary.person_documents[1].file_url", codes.InvalidField, nil},
		{"too many documents", func(r *Request) {
			r.Beneficiary.PersonDocuments = make([]PersonDocument, 11)
		}, "beneficiary.person_documents", codes.InvalidField, nil},
		{"empty label", func(r *Request) { r.Beneficiary.PersonDocuments[0].Labels = []string{"a", " "} }, "beneficiary.person_documents[0].labels[1]", codes.MissingField, ErrMissing},

		// Bank details of a SWIFT payout.
		{"missing account_name", func(r *Request) { r.Beneficiary.BankDetails.AccountName = "" }, "beneficiary.bank_details.account_name", codes.MissingField, ErrMissing},
		{"missing bank_country_code", func(r *Request) { r.Beneficiary.BankDetails.BankCountryCode = "" }, "beneficiary.bank_details.bank_country_code", codes.MissingField, ErrMissing},
		{"unknown account_currency", func(r *Request) { r.Beneficiary.BankDetails.AccountCurrency = "EURO" }, "beneficiary.bank_details.account_currency", codes.UnsupportedCurrency, money.ErrUnknownCurrency},
		{"IBAN with a wrong check digit", func(r *Request) { r.Beneficiary.BankDetails.IBAN = "DE88370400440532013000" }, "beneficiary.bank_details.iban", codes.InvalidField, ErrIBANChecksum},
		{"IBAN one digit short", func(r *Request) { r.Beneficiary.BankDetails.IBAN = "DE8937040044053201300" }, "beneficiary.bank_details.iban", codes.InvalidField, ErrIBANLength},
		{"IBAN with dashes", func(r *Request) { r.Beneficiary.BankDetails.IBAN = "DE89-3704-0044-0532-0130-00" }, "beneficiary.bank_details.iban", codes.InvalidField, ErrIBANFormat},
		{"missing IBAN for an IBAN country", func(r *Request) {
			r.Beneficiary.BankDetails.IBAN = ""
			r.Beneficiary.BankDetails.AccountNumber = "0532013000"
		}, "beneficiary.bank_details.iban", codes.MissingField, ErrMissing},
		{"SWIFT to a country without IBANs", func(r *Request) {
			r.PaymentCurrency = "USD"
			r.Beneficiary.BankDetails = BankDetails{AccountName: "Jane Roe", BankCountryCode: "US", AccountNumber: "000123456789", SwiftCode: "CHASUS33"}
		}, "", codes.Code{}, nil},
		{"SWIFT to a country without IBANs and no account_number", func(r *Request) {
			r.Beneficiary.BankDetails = BankDetails{AccountName: "Jane Roe", BankCountryCode: "US", SwiftCode: "CHASUS33"}
		}, "beneficiary.bank_details.account_number", codes.MissingField, ErrMissing},
		{"account_number with a space", func(r *Request) {
			r.Beneficiary.BankDetails = BankDetails{AccountName: "Jane Roe", BankCountryCode: "US", SwiftCode: "CHASUS33", AccountNumber: "0001 2345"}
		}, "beneficiary.bank_details.account_number", codes.InvalidField, nil},
		{"missing swift_code", func(r *Request) { r.Beneficiary.BankDetails.SwiftCode = "" }, "beneficiary.bank_details.swift_code", codes.MissingField, ErrMissing},
		{"BIC of 6 characters", func(r *Request) { r.Beneficiary.BankDetails.SwiftCode = "COBADE" }, "beneficiary.bank_details.swift_code", codes.InvalidField, ErrBICFormat},
		{"BIC of an unknown country", func(r *Request) { r.Beneficiary.BankDetails.SwiftCode = "COBAUKFF" }, "beneficiary.bank_details.swift_code", codes.InvalidField, ErrBICCountry},
		{"local_clearing_system on SWIFT", func(r *Request) { r.Beneficiary.BankDetails.LocalClearingSystem = "SEPA" }, "beneficiary.bank_details.local_clearing_system", codes.InvalidField, nil},
		{"local_clearing_system swift in lower case", func(r *Request) { r.Beneficiary.BankDetails.LocalClearingSystem = "swift" }, "beneficiary.bank_details.local_clearing_system", codes.InvalidField, nil},
		{"local_clearing_system SWIFT on LOCAL", func(r *Request) {
			*r = localRequest("EUR", "DE", func(b *BankDetails) { b.IBAN, b.LocalClearingSystem = "DE89370400440532013000", "SWIFT" })
		}, "beneficiary.bank_details.local_clearing_system", codes.InvalidField, nil},
		{"unknown bank_account_category", func(r *Request) { r.Beneficiary.BankDetails.BankAccountCategory = "Current" }, "beneficiary.bank_details.bank_account_category", codes.InvalidField, nil},
		{"binding_mobile_number too short", func(r *Request) { r.Beneficiary.BankDetails.BindingMobileNumber = "123" }, "beneficiary.bank_details.binding_mobile_number", codes.InvalidField, nil},

		// Bank details of a LOCAL payout.
		{"LOCAL with swift_charge_option", func(r *Request) {
			*r = localRequest("EUR", "DE", func(b *BankDetails) { b.IBAN = "DE89370400440532013000" })
			r.SwiftChargeOption = "SHARED"
		}, "swift_charge_option", codes.InvalidField, nil},
		{"SEPA without IBAN", func(r *Request) {
			*r = localRequest("EUR", "FR", func(b *BankDetails) { b.AccountNumber = "0500013M026" })
		}, "beneficiary.bank_details.iban", codes.MissingField, ErrMissing},
		{"ACH routing number with a bad check digit", func(r *Request) {
			*r = localRequest("USD", "US", func(b *BankDetails) { b.AccountNumber = "000123456789"; b.BankCode = "021000022" })
		}, "beneficiary.bank_details.bank_code", codes.InvalidField, nil},
		{"ACH account number with letters", func(r *Request) {
			*r = localRequest("USD", "US", func(b *BankDetails) { b.AccountNumber = "00012345678X"; b.BankCode = "021000021" })
		}, "beneficiary.bank_details.account_number", codes.InvalidField, nil},
		{"ACH clearing system SEPA", func(r *Request) {
			*r = localRequest("USD", "US", func(b *BankDetails) {
				b.AccountNumber, b.BankCode, b.LocalClearingSystem = "000123456789", "021000021", "SEPA"
			})
		}, "beneficiary.bank_details.local_clearing_system", codes.InvalidField, nil},
		{"UK sort code of 5 digits", func(r *Request) {
			*r = localRequest("GBP", "GB", func(b *BankDetails) { b.AccountNumber = "31926819"; b.BankCode = "60161" })
		}, "beneficiary.bank_details.bank_code", codes.InvalidField, nil},
		{"LOCAL JPY to Japan", func(r *Request) {
			*r = localRequest("JPY", "JP", func(b *BankDetails) { b.AccountNumber = "1234567" })
			r.PaymentAmount = "150000"
		}, "payment_method", codes.UnsupportedMethod, nil},
		{"LOCAL into an account of another currency", func(r *Request) {
			*r = localRequest("EUR", "DE", func(b *BankDetails) { b.IBAN = "DE89370400440532013000"; b.AccountCurrency = "USD" })
		}, "beneficiary.bank_details.account_currency", codes.UnsupportedCurrency, nil},

		// Payer and the rest.
		{"no payer", func(r *Request) { r.Payer = nil }, "payer", codes.MissingField, ErrMissing},
		{"payer without country", func(r *Request) { r.Payer.Address.CountryCode = "" }, "payer.address.country_code", codes.MissingField, ErrMissing},
		{"payer person without first_name", func(r *Request) {
			r.Payer.EntityType, r.Payer.LastName = "PERSONAL", "Doe"
		}, "payer.first_name", codes.MissingField, ErrMissing},
		{"payer external_id with a space", func(r *Request) { r.Payer.AdditionalInfo.ExternalID = "ext 1" }, "payer.additional_info.external_id", codes.InvalidField, nil},
		{"beneficiary_id with a space", func(r *Request) { r.BeneficiaryID = "BEN 1" }, "beneficiary_id", codes.InvalidField, nil},
		{"reference of 141 characters", func(r *Request) { r.Reference = strings.Repeat("r", 141) }, "reference", codes.InvalidField, nil},
		{"client_data with a NUL", func(r *Request) { r.ClientData = "a\x00b" }, "client_data", codes.InvalidField, nil},
		{"notify_url javascript", func(r *Request) { r.NotifyURL = "javascript:alert(1)" }, "notify_url", codes.InvalidField, nil},
		{"notify_url without host", func(r *Request) { r.NotifyURL = "https:///path" }, "notify_url", codes.InvalidField, nil},
		{"notify_url with user info", func(r *Request) { r.NotifyURL = "https://user:pass@shop.example/payouts" }, "notify_url", codes.InvalidField, nil},

		// The first failure in the fixed order wins.
		{"merchant_id before IBAN", func(r *Request) {
			r.MerchantID = ""
			r.Beneficiary.BankDetails.IBAN = "DE88370400440532013000"
		}, "merchant_id", codes.MissingField, ErrMissing},
		{"IBAN before notify_url", func(r *Request) {
			r.NotifyURL = "mailto:x@example.com"
			r.Beneficiary.BankDetails.IBAN = "DE88370400440532013000"
		}, "beneficiary.bank_details.iban", codes.InvalidField, ErrIBANChecksum},
		{"beneficiary before payer", func(r *Request) {
			r.Payer = nil
			r.Beneficiary.Address.City = ""
		}, "beneficiary.address.city", codes.MissingField, ErrMissing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := validRequest()
			tc.edit(&r)
			in, err := Validate(r, today)
			if tc.wantField == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want no error", err)
				}
				if in.RequestID == "" || in.PaymentAmount.Minor <= 0 {
					t.Errorf("Validate = %+v, want a filled instruction", in)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate = %+v, %v; want a *FieldError for %s", in, err, tc.wantField)
			}
			if fe.Field != tc.wantField || fe.Code != tc.wantCode {
				t.Errorf("Validate error = %s %s (%s), want %s %s", fe.Code.ID, fe.Field, fe.Reason, tc.wantCode.ID, tc.wantField)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("Validate error = %v, want it to wrap %v", err, tc.wantErr)
			}
			if !reflect.DeepEqual(in, Instruction{}) {
				t.Errorf("Validate returned an instruction with its error: %+v", in)
			}
			// The same request gives the same answer.
			if _, again := Validate(r, today); again.Error() != err.Error() {
				t.Errorf("second Validate = %v, first %v", again, err)
			}
		})
	}
}

func TestValidateLocal(t *testing.T) {
	tests := []struct {
		name     string
		r        Request
		wantSys  ClearingSystem
		wantIBAN IBAN
	}{
		{"SEPA by default", localRequest("EUR", "FR", func(b *BankDetails) { b.IBAN = "FR14 2004 1010 0505 0001 3M02 606" }), ClearingSEPA, "FR1420041010050500013M02606"},
		{"ACH by default", localRequest("USD", "US", func(b *BankDetails) { b.AccountNumber = "000123456789"; b.BankCode = "021000021" }), ClearingACH, ""},
		{"Fedwire on request", localRequest("USD", "US", func(b *BankDetails) {
			b.AccountNumber, b.BankCode, b.LocalClearingSystem = "000123456789", "011000015", "FEDWIRE"
		}), ClearingFedwire, ""},
		{"Faster Payments by default", localRequest("GBP", "GB", func(b *BankDetails) { b.AccountNumber = "31926819"; b.BankCode = "601613" }), ClearingFasterPayments, ""},
		{"CHAPS on request", localRequest("GBP", "GB", func(b *BankDetails) {
			b.AccountNumber, b.BankCode, b.LocalClearingSystem = "31926819", "601613", "CHAPS"
		}), ClearingCHAPS, ""},
		{"SEPA to a UK IBAN in EUR", localRequest("EUR", "GB", func(b *BankDetails) { b.IBAN = "GB82WEST12345698765432" }), ClearingSEPA, "GB82WEST12345698765432"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, err := Validate(tc.r, today)
			if err != nil {
				t.Fatalf("Validate = %v", err)
			}
			if in.PaymentMethod != MethodLocal || in.ClearingSystem != tc.wantSys || in.IBAN != tc.wantIBAN || in.SwiftChargeOption != "" {
				t.Errorf("Validate = method %s, system %s, IBAN %s, charge %q; want LOCAL, %s, %s, none",
					in.PaymentMethod, in.ClearingSystem, in.IBAN, in.SwiftChargeOption, tc.wantSys, tc.wantIBAN)
			}
			if got := in.Request.Beneficiary.BankDetails.LocalClearingSystem; got != string(tc.wantSys) {
				t.Errorf("canonical local_clearing_system = %q, want %q", got, tc.wantSys)
			}
		})
	}
}

// TestValidateSwiftClearingSystem: a SWIFT payout's clearing system is
// SWIFT whether the request leaves local_clearing_system out or sends the
// SWIFT its answer shows, and both requests have one canonical form, so a
// repeat of either is the same payout.
func TestValidateSwiftClearingSystem(t *testing.T) {
	base, err := Validate(validRequest(), today)
	if err != nil {
		t.Fatal(err)
	}
	baseJSON, _ := json.Marshal(base.Request)
	tests := []struct {
		name  string
		given string
	}{
		{name: "absent", given: ""},
		{name: "SWIFT as the answer shows it", given: "SWIFT"},
		{name: "SWIFT with spaces around", given: " SWIFT "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := validRequest()
			r.Beneficiary.BankDetails.LocalClearingSystem = tc.given
			in, err := Validate(r, today)
			if err != nil {
				t.Fatalf("Validate = %v", err)
			}
			if in.ClearingSystem != ClearingSwift || in.Clearing() != ClearingSwift {
				t.Errorf("clearing system = %q (Clearing %q), want SWIFT", in.ClearingSystem, in.Clearing())
			}
			if got := in.Request.Beneficiary.BankDetails.LocalClearingSystem; got != "" {
				t.Errorf("canonical local_clearing_system = %q, want it left out", got)
			}
			if got, _ := json.Marshal(in.Request); string(got) != string(baseJSON) {
				t.Errorf("canonical request differs from the one without local_clearing_system:\n%s\n%s", got, baseJSON)
			}
		})
	}
}

// TestInstructionClearing: the answer's clearing system is the one Validate
// chose, and SWIFT for a SWIFT instruction stored before Validate recorded
// one.
func TestInstructionClearing(t *testing.T) {
	tests := []struct {
		name string
		in   Instruction
		want ClearingSystem
	}{
		{name: "SWIFT recorded", in: Instruction{PaymentMethod: MethodSwift, ClearingSystem: ClearingSwift}, want: ClearingSwift},
		{name: "SWIFT stored without one", in: Instruction{PaymentMethod: MethodSwift}, want: ClearingSwift},
		{name: "LOCAL by SEPA", in: Instruction{PaymentMethod: MethodLocal, ClearingSystem: ClearingSEPA}, want: ClearingSEPA},
		{name: "LOCAL by CHAPS", in: Instruction{PaymentMethod: MethodLocal, ClearingSystem: ClearingCHAPS}, want: ClearingCHAPS},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.in.Clearing(); got != tc.want {
				t.Errorf("Clearing = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestValidateDefaultsAndDates(t *testing.T) {
	r := validRequest()
	r.SourceCurrency = ""
	r.PaymentDate = ""
	r.SourceAmount = " 2000 "
	// Just before midnight UTC in a zone where it is already the next day:
	// today is the UTC date.
	late := time.Date(2026, time.March, 15, 5, 0, 0, 0, time.FixedZone("UTC+9", 9*3600))
	in, err := Validate(r, late)
	if err != nil {
		t.Fatalf("Validate = %v", err)
	}
	if in.SourceCurrency != "EUR" || in.Request.SourceCurrency != "EUR" {
		t.Errorf("source currency = %q / %q, want the payment currency EUR", in.SourceCurrency, in.Request.SourceCurrency)
	}
	if want := time.Date(2026, time.March, 14, 0, 0, 0, 0, time.UTC); !in.PaymentDate.Equal(want) || in.Request.PaymentDate != "2026-03-14" {
		t.Errorf("payment date = %v / %q, want today's UTC date 2026-03-14", in.PaymentDate, in.Request.PaymentDate)
	}
	if want := (money.Amount{Minor: 200000, Currency: "EUR"}); in.SourceAmountLimit != want || in.Request.SourceAmount != "2000" {
		t.Errorf("source amount limit = %+v / %q, want %+v", in.SourceAmountLimit, in.Request.SourceAmount, want)
	}
}

func TestFieldErrorResult(t *testing.T) {
	tests := []struct {
		name string
		edit func(r *Request)
		want string
	}{
		{"missing names only the field", func(r *Request) { r.Beneficiary.Address.City = "" }, "I0001:Missing required field: beneficiary.address.city"},
		{"invalid says what is wrong", func(r *Request) { r.Beneficiary.BankDetails.IBAN = "DE88370400440532013000" },
			"I0008:Invalid field value: beneficiary.bank_details.iban fails the mod-97 check"},
		{"amount", func(r *Request) { r.PaymentAmount = "0" }, "I0003:Invalid amount: payment_amount must be greater than zero"},
		{"currency", func(r *Request) { r.PaymentCurrency = "EURO" },
			"I0004:Currency not supported for this account: payment_currency must be a supported ISO 4217 currency code"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := validRequest()
			tc.edit(&r)
			_, err := Validate(r, today)
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate = %v, want a *FieldError", err)
			}
			if got := fe.Result().String(); got != tc.want {
				t.Errorf("Result = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCanonicalTrimsEveryString fills every string of a request, however
// deep, with padded text and checks that canonical trims them all, so a
// field added later cannot be forgotten.
func TestCanonicalTrimsEveryString(t *testing.T) {
	r := validRequest()
	r.Beneficiary.PersonDocuments = []PersonDocument{{Labels: []string{"x"}}}
	fill(reflect.ValueOf(&r).Elem())
	c := r.canonical()
	check(t, "request", reflect.ValueOf(c))
	if r.Beneficiary.FirstName != " x " {
		t.Errorf("canonical changed the request it copied: %q", r.Beneficiary.FirstName)
	}
}

func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(" x ")
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fill(v.Field(i))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			fill(v.Elem())
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			fill(v.Index(i))
		}
	}
}

func check(t *testing.T, path string, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.String() != "x" {
			t.Errorf("%s = %q, want it trimmed", path, v.String())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			check(t, path+"."+v.Type().Field(i).Name, v.Field(i))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			check(t, path, v.Elem())
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			check(t, path, v.Index(i))
		}
	}
}

// TestSignedValues checks the payout recipe of docs/design.md §3 against its vector
// in signature-vectors.json.
func TestSignedValues(t *testing.T) {
	r := Request{MerchantID: "10086", AccountID: "10086001", RequestID: "3f2b8c1e-6a4d-4c1b-9e8f-2d7a5b6c9e01",
		PaymentCurrency: "EUR", PaymentAmount: "1500.00", SourceAmount: "1700.00", Reason: "not signed"}
	want := []string{"10086", "10086001", "3f2b8c1e-6a4d-4c1b-9e8f-2d7a5b6c9e01", "EUR", "1500.00"}
	if got := r.SignedValues(); !reflect.DeepEqual(got, want) {
		t.Fatalf("SignedValues = %q, want %q", got, want)
	}
	const key, sig = "k3y-for-tests-0123456789abcdef", "ebafb938705990288a05ba97abe3db0186f4270efd795d9005ed718ad9ce9f50"
	if got := signing.Sign(key, r.SignedValues()...); got != sig {
		t.Errorf("Sign = %s, want the vector's %s", got, sig)
	}
}

// TestInstructionTravelsAsJSON pins that an instruction and its charges
// survive the JSON of a workflow input unchanged.
func TestInstructionTravelsAsJSON(t *testing.T) {
	in, err := Validate(validRequest(), today)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var back Instruction
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, in) {
		t.Fatalf("Instruction through JSON = %+v, %v; want %+v", back, err, in)
	}
	ch, err := Price(in, testRates(t), testFees(t), today)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(ch)
	var chBack Charges
	if err := json.Unmarshal(b, &chBack); err != nil || chBack != ch {
		t.Fatalf("Charges through JSON = %+v, %v; want %+v", chBack, err, ch)
	}
}

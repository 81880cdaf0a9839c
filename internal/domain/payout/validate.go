package payout

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
)

// DateLayout is the layout of payment_date and date_of_birth: YYYY-MM-DD.
const DateLayout = "2006-01-02"

// MaxDaysAhead is how far after today a payment_date may be. Funds are
// reserved when a payout is accepted, so a far date would hold the
// merchant's money, and a workflow, for months.
const MaxDaysAhead = 30

// Instruction is a validated payout request: the canonical request and the
// values read from it. It is what the API hands to the payout workflow, and
// what Price prices. Its fields are plain data, so it travels in workflow
// inputs as JSON.
type Instruction struct {
	// Request is the request in canonical form: every string trimmed of
	// surrounding whitespace, request_id in lower case, IBAN and BIC in
	// their electronic upper-case form, and the defaults filled in
	// (source_currency, payment_date, fund_source, local_clearing_system).
	// Two requests that mean the same payout have the same canonical form,
	// which is what a repeated request_id is compared by.
	Request Request `json:"request"`

	RequestID         string            `json:"request_id"`
	PaymentMethod     PaymentMethod     `json:"payment_method"`
	FeePaidBy         FeePaidBy         `json:"fee_paid_by"`
	SwiftChargeOption SwiftChargeOption `json:"swift_charge_option,omitempty"`
	FundSource        FundSource        `json:"fund_source"`
	ClearingSystem    ClearingSystem    `json:"local_clearing_system,omitempty"`

	// PaymentAmount is what the beneficiary is to receive, in the payment
	// currency (before the fee when the beneficiary bears it).
	PaymentAmount money.Amount `json:"payment_amount"`
	// SourceCurrency is the currency of the deposit account that funds the
	// payout; the payment currency when the request gave none.
	SourceCurrency string `json:"source_currency"`
	// SourceAmountLimit is source_amount: the most the payer agrees to pay,
	// fee included, in the source currency. Zero when the request gave none.
	SourceAmountLimit money.Amount `json:"source_amount_limit"`
	// PaymentDate is the day the payout is to be paid, midnight UTC.
	PaymentDate time.Time `json:"payment_date"`

	// IBAN and BIC are the beneficiary's, empty when not given.
	IBAN IBAN `json:"iban,omitempty"`
	BIC  BIC  `json:"bic,omitempty"`
}

// Validate checks every field of r and returns the instruction it makes, or
// a *FieldError for the first field, in a fixed order, that is missing or
// invalid. today is the current time; its UTC date is the day payment_date is
// compared with.
//
// The order is: the signed fields in the order of the signature (merchant_id,
// account_id, request_id, payment_currency, payment_amount), then
// source_currency, source_amount, payment_date, payment_method, fee_paid_by,
// swift_charge_option, fund_source, the beneficiary (entity and names, date
// of birth, address, additional_info, person_documents, bank_details),
// beneficiary_id, the payer (entity and names, date of birth, address,
// additional_info), reason, reference, client_data and notify_url. Within an
// object, each field is checked for presence and then for form before the
// next field. The same request and day always give the same answer.
//
// Surrounding whitespace of every value is ignored (as the signature ignores
// it). encryption_data is the API's to check and is not looked at here.
func Validate(r Request, today time.Time) (Instruction, error) {
	c := r.canonical()
	y, m, d := today.UTC().Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)

	v := &validator{}
	in := Instruction{}

	v.token("merchant_id", c.MerchantID, true, maxIDLength)
	v.token("account_id", c.AccountID, true, maxIDLength)
	if v.present("request_id", c.RequestID, true) {
		if id, err := ParseRequestID(c.RequestID); err != nil {
			v.fail("request_id", codes.InvalidField, err, "must be a UUID (8-4-4-4-12 hexadecimal digits)")
		} else {
			c.RequestID, in.RequestID = id, id
		}
	}

	// Amounts and currencies.
	v.currency("payment_currency", c.PaymentCurrency, true)
	if v.ok() && v.present("payment_amount", c.PaymentAmount.String(), true) {
		in.PaymentAmount = v.amount("payment_amount", c.PaymentAmount.String(), c.PaymentCurrency)
	}
	if c.SourceCurrency == "" {
		c.SourceCurrency = c.PaymentCurrency
	}
	v.currency("source_currency", c.SourceCurrency, true)
	in.SourceCurrency = c.SourceCurrency
	if v.ok() && c.SourceAmount != "" {
		in.SourceAmountLimit = v.amount("source_amount", c.SourceAmount.String(), c.SourceCurrency)
	}

	// When.
	if c.PaymentDate == "" {
		c.PaymentDate = day.Format(DateLayout)
	}
	if date, ok := v.date("payment_date", c.PaymentDate, true); ok {
		switch {
		case date.Before(day):
			v.fail("payment_date", codes.InvalidField, nil, "must not be before today (%s UTC)", day.Format(DateLayout))
		case date.After(day.AddDate(0, 0, MaxDaysAhead)):
			v.fail("payment_date", codes.InvalidField, nil, "must be at most %d days after today", MaxDaysAhead)
		}
		in.PaymentDate = date
	}

	// How.
	if v.present("payment_method", c.PaymentMethod, true) {
		switch m := PaymentMethod(c.PaymentMethod); m {
		case MethodSwift, MethodLocal:
			in.PaymentMethod = m
		default:
			v.fail("payment_method", codes.UnsupportedMethod, nil, "must be SWIFT or LOCAL")
		}
	}
	if v.present("fee_paid_by", c.FeePaidBy, true) {
		switch f := FeePaidBy(c.FeePaidBy); f {
		case FeePayer, FeeBeneficiary:
			in.FeePaidBy = f
		default:
			v.fail("fee_paid_by", codes.InvalidField, nil, "must be PAYER or BENEFICIARY")
		}
	}
	switch {
	case in.PaymentMethod == MethodSwift && v.present("swift_charge_option", c.SwiftChargeOption, true):
		switch o := SwiftChargeOption(c.SwiftChargeOption); o {
		case ChargeShared, ChargePayer:
			in.SwiftChargeOption = o
		default:
			v.fail("swift_charge_option", codes.InvalidField, nil, "must be SHARED or PAYER")
		}
	case in.PaymentMethod == MethodLocal && c.SwiftChargeOption != "":
		v.fail("swift_charge_option", codes.InvalidField, nil, "must be empty for a LOCAL payout")
	}
	if c.FundSource == "" {
		c.FundSource = string(SourceDepositAccount)
	}
	if FundSource(c.FundSource) != SourceDepositAccount {
		v.fail("fund_source", codes.InvalidField, nil, "must be DepositAccount")
	}
	in.FundSource = FundSource(c.FundSource)

	// Who receives it.
	if c.Beneficiary == nil {
		v.missing("beneficiary")
	} else {
		b := c.Beneficiary
		v.party("beneficiary", b.EntityType, b.CompanyName, b.FirstName, b.LastName, b.DateOfBirth, day)
		a := b.Address
		v.text("beneficiary.address.street_address", a.StreetAddress, false, maxAddressLine)
		v.text("beneficiary.address.street", a.Street, false, maxAddressLine)
		v.text("beneficiary.address.number", a.Number.String(), false, maxNumberText)
		v.text("beneficiary.address.complement", a.Complement, false, maxShortText)
		v.text("beneficiary.address.city", a.City, true, maxShortText)
		v.text("beneficiary.address.state", a.State, false, maxShortText)
		v.postcode("beneficiary.address.postcode", a.Postcode.String())
		v.country("beneficiary.address.country_code", a.CountryCode, true)
		v.beneficiaryInfo(b.AdditionalInfo)
		v.documents(b.PersonDocuments)
		v.bankDetails(&b.BankDetails, &in, c.PaymentCurrency)
	}
	v.token("beneficiary_id", c.BeneficiaryID, false, maxIDLength)

	// On whose behalf.
	if c.Payer == nil {
		v.missing("payer")
	} else {
		p := c.Payer
		v.party("payer", p.EntityType, p.CompanyName, p.FirstName, p.LastName, p.DateOfBirth, day)
		a := p.Address
		v.text("payer.address.street_address", a.StreetAddress, false, maxAddressLine)
		v.text("payer.address.city", a.City, false, maxShortText)
		v.text("payer.address.state", a.State, false, maxShortText)
		v.postcode("payer.address.postcode", a.Postcode.String())
		v.country("payer.address.country_code", a.CountryCode, true)
		i := p.AdditionalInfo
		v.documentNumber("payer.additional_info.business_registration_number", i.BusinessRegistrationNumber.String())
		v.text("payer.additional_info.business_registration_type", i.BusinessRegistrationType, false, maxCodeText)
		v.token("payer.additional_info.external_id", i.ExternalID.String(), false, maxIDLength)
		v.email("payer.additional_info.personal_email", i.PersonalEmail)
		v.documentNumber("payer.additional_info.personal_id_number", i.PersonalIDNumber.String())
		v.text("payer.additional_info.job", i.Job, false, maxShortText)
	}

	// What the merchant says about it.
	v.text("reason", c.Reason, false, maxReference)
	v.text("reference", c.Reference, false, maxReference)
	v.textLines("client_data", c.ClientData, false, maxClientData, true)
	v.url("notify_url", c.NotifyURL, false)

	if v.first != nil {
		return Instruction{}, v.first
	}
	in.Request = c
	return in, nil
}

// amount parses an amount of currency that must be greater than zero; every
// failure is I0003.
func (v *validator) amount(field, s, currency string) money.Amount {
	a, err := money.ParseExtended(s, currency)
	switch {
	case errors.Is(err, money.ErrAmountTooLarge):
		v.fail(field, codes.InvalidAmount, err, "must be at most %s", money.FromMinor(money.MaxMinor, currency).ExtendedString())
	case err != nil:
		v.fail(field, codes.InvalidAmount, err, "must be a decimal with at most two fraction digits and no more than %s allows", currency)
	case a.Minor <= 0:
		v.fail(field, codes.InvalidAmount, nil, "must be greater than zero")
	}
	return a
}

// party checks a beneficiary's or payer's entity type and the names it
// needs: a company its company_name, a person first and last name. A name
// that is given without being needed is checked all the same.
func (v *validator) party(prefix, entity, company, first, last, birth string, today time.Time) {
	if v.present(prefix+".entity_type", entity, true) {
		if e := EntityType(entity); e != EntityCompany && e != EntityPersonal {
			v.fail(prefix+".entity_type", codes.InvalidField, nil, "must be COMPANY or PERSONAL")
		}
	}
	person := EntityType(entity) == EntityPersonal
	v.text(prefix+".company_name", company, EntityType(entity) == EntityCompany, maxCompanyName)
	v.text(prefix+".first_name", first, person, maxPersonName)
	v.text(prefix+".last_name", last, person, maxPersonName)
	v.birthDate(prefix+".date_of_birth", birth, today)
}

// documentNumber checks the number of a document or registration: letters,
// digits, spaces, hyphens, dots and slashes, as registries print them.
func (v *validator) documentNumber(field, value string) {
	v.charset(field, value, false, maxDocumentNumber, " -./", "letters, digits, spaces, hyphens, dots or slashes")
}

// postcode checks a postal code: letters, digits, spaces and hyphens.
func (v *validator) postcode(field, value string) {
	v.charset(field, value, false, maxNumberText, " -", "letters, digits, spaces or hyphens")
}

// beneficiaryInfo checks the beneficiary's additional_info.
func (v *validator) beneficiaryInfo(i BeneficiaryAdditionalInfo) {
	const p = "beneficiary.additional_info."
	v.text(p+"business_area", i.BusinessArea, false, maxShortText)
	v.phone(p+"business_phone_number", i.BusinessPhoneNumber.String())
	v.documentNumber(p+"business_registration_number", i.BusinessRegistrationNumber.String())
	v.email(p+"personal_email", i.PersonalEmail)
	v.documentNumber(p+"personal_id_number", i.PersonalIDNumber.String())
	v.text(p+"personal_id_type", i.PersonalIDType, false, maxCodeText)
	v.phone(p+"personal_mobile_number", i.PersonalMobileNumber.String())
	v.decimal(p+"personal_net_monthly_average_income", i.PersonalNetMonthlyAverageIncome.String())
	if cc := strings.TrimPrefix(i.PersonalPhoneCountryCode.String(), "+"); i.PersonalPhoneCountryCode != "" {
		v.digits(p+"personal_phone_country_code", cc, true, 1, 3)
	}
	v.digits(p+"personal_phone_area_code", i.PersonalPhoneAreaCode.String(), false, 1, 5)
	v.country(p+"personal_fiscal_country", i.PersonalFiscalCountry, false)
}

// documents checks the beneficiary's person_documents.
func (v *validator) documents(docs []PersonDocument) {
	if len(docs) > maxDocuments {
		v.fail("beneficiary.person_documents", codes.InvalidField, nil, "must hold at most %d documents", maxDocuments)
		return
	}
	for i, d := range docs {
		p := fmt.Sprintf("beneficiary.person_documents[%d].", i)
		v.text(p+"file_type", d.FileType, false, maxCodeText)
		v.url(p+"file_url", d.FileURL, true)
		if len(d.Labels) > maxLabels {
			v.fail(p+"labels", codes.InvalidField, nil, "must hold at most %d labels", maxLabels)
		}
		for j, l := range d.Labels {
			v.text(fmt.Sprintf("%slabels[%d]", p, j), l, true, maxLabel)
		}
	}
}

// bankDetails checks the beneficiary's bank account against what the
// payment method needs, and records the IBAN, BIC and clearing system in in
// and their canonical forms in b:
//
//   - SWIFT: swift_code; an IBAN when the bank's country has IBANs, an
//     account_number otherwise; local_clearing_system empty or SWIFT (what
//     the answer echoes), the clearing system ClearingSwift.
//   - LOCAL: the country and currency must have a local rail (SEPA for EUR in
//     the SEPA area, ACH or FEDWIRE for USD in the US, FASTER_PAYMENTS, BACS
//     or CHAPS for GBP in the UK); local_clearing_system, when given, must be
//     one of that rail's, and defaults to its first; SEPA needs an IBAN, the
//     US an account number of 4 to 17 digits and an ABA routing number as
//     bank_code, the UK an eight-digit account number and a six-digit sort
//     code as bank_code; account_currency, when given, must be the payment
//     currency.
func (v *validator) bankDetails(b *BankDetails, in *Instruction, paymentCurrency string) {
	const p = "beneficiary.bank_details."
	v.text(p+"account_name", b.AccountName, true, maxAccountName)
	v.country(p+"bank_country_code", b.BankCountryCode, true)
	v.currency(p+"account_currency", b.AccountCurrency, false)
	if !v.ok() || in.PaymentMethod == "" {
		return // The rules below depend on fields that failed.
	}

	needIBAN, needAccount := false, false
	account := localAccount(-1)
	switch in.PaymentMethod {
	case MethodSwift:
		// The answer says SWIFT, so a merchant who sends the answer's
		// bank_details back is not refused. The canonical request leaves
		// it out either way: with or without it the request means the same
		// payout, and a payout stored before answers named SWIFT compares
		// equal to its repeat.
		switch ClearingSystem(b.LocalClearingSystem) {
		case "", ClearingSwift:
			b.LocalClearingSystem = ""
		default:
			v.fail(p+"local_clearing_system", codes.InvalidField, nil, "must be empty or SWIFT for a SWIFT payout")
		}
		in.ClearingSystem = ClearingSwift
		_, hasIBAN := IBANLength(b.BankCountryCode)
		needIBAN, needAccount = hasIBAN, !hasIBAN
	case MethodLocal:
		rail, ok := localRailFor(b.BankCountryCode, paymentCurrency)
		if !ok {
			v.fail("payment_method", codes.UnsupportedMethod, nil, "LOCAL is not offered for %s to a bank in %s; use SWIFT", paymentCurrency, b.BankCountryCode)
			return
		}
		if b.AccountCurrency != "" && b.AccountCurrency != paymentCurrency {
			v.fail(p+"account_currency", codes.UnsupportedCurrency, nil, "must be the payment currency %s for a LOCAL payout", paymentCurrency)
		}
		if b.LocalClearingSystem == "" {
			b.LocalClearingSystem = string(rail.systems[0])
		}
		if !slices.Contains(rail.systems, ClearingSystem(b.LocalClearingSystem)) {
			v.fail(p+"local_clearing_system", codes.InvalidField, nil, "must be one of %s for %s to %s", joinSystems(rail.systems), paymentCurrency, b.BankCountryCode)
		}
		in.ClearingSystem = ClearingSystem(b.LocalClearingSystem)
		account = rail.account
		needIBAN, needAccount = account == accountIBAN, account != accountIBAN
	}

	if v.present(p+"iban", b.IBAN, needIBAN) {
		if iban, err := ParseIBAN(b.IBAN); err != nil {
			v.fail(p+"iban", codes.InvalidField, err, "%s", ibanReason(err))
		} else {
			b.IBAN, in.IBAN = string(iban), iban
		}
	}
	if v.present(p+"swift_code", b.SwiftCode, in.PaymentMethod == MethodSwift) {
		if bic, err := ParseBIC(b.SwiftCode); err != nil {
			v.fail(p+"swift_code", codes.InvalidField, err, "must be a BIC of 8 or 11 characters: 4-letter bank code, ISO country, 2-character location, optional 3-character branch")
		} else {
			b.SwiftCode, in.BIC = string(bic), bic
		}
	}
	switch account {
	case accountABA:
		v.digits(p+"account_number", b.AccountNumber.String(), true, 4, 17)
		if v.present(p+"bank_code", b.BankCode.String(), true) && !abaChecksumOK(b.BankCode.String()) {
			v.fail(p+"bank_code", codes.InvalidField, nil, "must be a nine-digit ABA routing number")
		}
	case accountUKSortCode:
		v.digits(p+"account_number", b.AccountNumber.String(), true, 8, 8)
		v.digits(p+"bank_code", b.BankCode.String(), true, 6, 6)
	default:
		v.charset(p+"account_number", b.AccountNumber.String(), needAccount, maxAccountNumber, "-", "letters, digits or hyphens")
		v.charset(p+"bank_code", b.BankCode.String(), false, maxNumberText, " -", "letters, digits, spaces or hyphens")
	}
	v.charset(p+"bank_branch", b.BankBranch.String(), false, maxIDLength, " -", "letters, digits, spaces or hyphens")
	v.text(p+"bank_name", b.BankName, false, maxAccountName)
	v.text(p+"bank_street_address", b.BankStreetAddress, false, maxAddressLine)
	if b.BankAccountCategory != "" {
		if c := BankAccountCategory(b.BankAccountCategory); c != AccountChecking && c != AccountSavings {
			v.fail(p+"bank_account_category", codes.InvalidField, nil, "must be Checking or Savings")
		}
	}
	v.documentNumber(p+"owner_document_number", b.OwnerDocumentNumber.String())
	v.phone(p+"binding_mobile_number", b.BindingMobileNumber.String())
	v.text(p+"transaction_reference", b.TransactionReference, false, maxReference)
}

// Clearing is the clearing system the payout's answer names: the one
// Validate chose, or SWIFT for a SWIFT payout validated before Validate
// recorded it (its stored instruction has none).
func (in Instruction) Clearing() ClearingSystem {
	if in.ClearingSystem == "" && in.PaymentMethod == MethodSwift {
		return ClearingSwift
	}
	return in.ClearingSystem
}

// ibanReason words an IBAN error for the answer.
func ibanReason(err error) string {
	switch {
	case errors.Is(err, ErrIBANChecksum):
		return "fails the mod-97 check"
	case errors.Is(err, ErrIBANCheckDigits):
		return "has check digits outside 02 to 98"
	case errors.Is(err, ErrIBANLength):
		return "has the wrong length for its country"
	case errors.Is(err, ErrIBANCountry):
		return "is of a country without IBANs"
	}
	return "must be an IBAN: letters and digits, spaces allowed between them"
}

func joinSystems(s []ClearingSystem) string {
	names := make([]string, len(s))
	for i, x := range s {
		names[i] = string(x)
	}
	return strings.Join(names, ", ")
}

package payout

import "slices"

// The interface shows one value of each enumeration and says the others are
// "not shown". The values below are the ones we accept; each is matched
// exactly (upper case as the interface writes them, DepositAccount as
// written), because they are machine constants, not text for people.

// PaymentMethod is how the payout travels: payment_method.
type PaymentMethod string

const (
	// MethodSwift is an international wire over the SWIFT network (the
	// interface's sample).
	MethodSwift PaymentMethod = "SWIFT"
	// MethodLocal is a domestic transfer over a local clearing system
	// (SEPA, ACH, Faster Payments, ...), chosen by LocalClearingSystem.
	MethodLocal PaymentMethod = "LOCAL"
)

// FeePaidBy says who bears the gateway's fee: fee_paid_by.
type FeePaidBy string

const (
	// FeePayer adds the fee to what the payer pays; the beneficiary gets the
	// whole payment amount (the interface's sample).
	FeePayer FeePaidBy = "PAYER"
	// FeeBeneficiary takes the fee out of the transfer; the beneficiary gets
	// the payment amount less the fee.
	FeeBeneficiary FeePaidBy = "BENEFICIARY"
)

// SwiftChargeOption says who bears the correspondent and intermediary bank
// charges of a SWIFT payout: swift_charge_option.
type SwiftChargeOption string

const (
	// ChargeShared is SWIFT "SHA": the payer pays the sending side, the
	// intermediary banks may deduct their charges from the transfer (the
	// interface's sample).
	ChargeShared SwiftChargeOption = "SHARED"
	// ChargePayer is SWIFT "OUR": the payer also covers the intermediary
	// charges, for a surcharge, and the transfer arrives whole. SWIFT "BEN"
	// (the beneficiary bears everything) is not offered.
	ChargePayer SwiftChargeOption = "PAYER"
)

// FundSource is where the payout's money comes from: fund_source.
type FundSource string

// SourceDepositAccount is the merchant's deposit account at the gateway,
// credited by paid orders: the only source there is.
const SourceDepositAccount FundSource = "DepositAccount"

// EntityType says whether a party is a company or a person: entity_type.
type EntityType string

const (
	// EntityCompany is a company; it needs company_name (the interface's sample).
	EntityCompany EntityType = "COMPANY"
	// EntityPersonal is a natural person; it needs first_name and last_name.
	EntityPersonal EntityType = "PERSONAL"
)

// ClearingSystem is the clearing system that carries a payout to the
// beneficiary's bank: the answer's bank_details.local_clearing_system. For a
// LOCAL payout it is the domestic system chosen (or defaulted) for the
// corridor; for a SWIFT payout it is ClearingSwift.
type ClearingSystem string

const (
	// ClearingSwift names the SWIFT network for a SWIFT payout. The
	// interface's answer always carries local_clearing_system, and a SWIFT
	// payout is carried by no domestic system of ours: the wire goes over
	// SWIFT and the banks along the way decide how it settles. Naming SWIFT
	// says so, true for every corridor, where a domestic system derived from
	// the bank's country and currency would be a guess (and would have no
	// answer at all for USD to a German bank).
	ClearingSwift ClearingSystem = "SWIFT"
	// ClearingSEPA is a SEPA credit transfer in EUR to an account in the
	// SEPA area, identified by IBAN.
	ClearingSEPA ClearingSystem = "SEPA"
	// ClearingACH is a US ACH credit in USD: account number and ABA routing
	// number (bank_code). The default for the US.
	ClearingACH ClearingSystem = "ACH"
	// ClearingFedwire is a US Fedwire transfer in USD, same account data as ACH.
	ClearingFedwire ClearingSystem = "FEDWIRE"
	// ClearingFasterPayments is a UK Faster Payment in GBP: account number
	// and sort code (bank_code). The default for the UK.
	ClearingFasterPayments ClearingSystem = "FASTER_PAYMENTS"
	// ClearingBACS is a UK Bacs credit in GBP, same account data.
	ClearingBACS ClearingSystem = "BACS"
	// ClearingCHAPS is a UK CHAPS payment in GBP, same account data.
	ClearingCHAPS ClearingSystem = "CHAPS"
)

// BankAccountCategory is the kind of a beneficiary's account:
// bank_details.bank_account_category.
type BankAccountCategory string

const (
	// AccountChecking is a checking (current) account.
	AccountChecking BankAccountCategory = "Checking"
	// AccountSavings is a savings account.
	AccountSavings BankAccountCategory = "Savings"
)

// localRail is one country's local payouts: the currency they carry, the
// clearing systems that carry it (the first is the default) and the account
// data they need.
type localRail struct {
	currency string
	systems  []ClearingSystem
	account  localAccount
}

// localAccount names the account data a local rail needs.
type localAccount int

const (
	accountIBAN       localAccount = iota // an IBAN
	accountABA                            // account number and ABA routing number
	accountUKSortCode                     // eight-digit account number and six-digit sort code
)

// sepaCountries are the countries of the SEPA scheme whose accounts a SEPA
// payout may credit (EEA, Switzerland, the UK, and the microstates in the
// scheme). Overseas territories that use another country's IBANs are left
// out; they are reached with SWIFT.
var sepaCountries = []string{
	"AD", "AT", "BE", "BG", "CH", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GB", "GI", "GR", "HR",
	"HU", "IE", "IS", "IT", "LI", "LT", "LU", "LV", "MC", "MT", "NL", "NO", "PL", "PT", "RO", "SE", "SI",
	"SK", "SM", "VA",
}

// localRailFor returns the local rail for a payout to an account in
// bankCountry in currency. A UK account in EUR goes by SEPA, in GBP by the UK
// systems.
func localRailFor(bankCountry, currency string) (localRail, bool) {
	switch {
	case currency == "EUR" && slices.Contains(sepaCountries, bankCountry):
		return localRail{currency: "EUR", systems: []ClearingSystem{ClearingSEPA}, account: accountIBAN}, true
	case currency == "USD" && bankCountry == "US":
		return localRail{currency: "USD", systems: []ClearingSystem{ClearingACH, ClearingFedwire}, account: accountABA}, true
	case currency == "GBP" && bankCountry == "GB":
		return localRail{currency: "GBP", systems: []ClearingSystem{ClearingFasterPayments, ClearingBACS, ClearingCHAPS}, account: accountUKSortCode}, true
	}
	return localRail{}, false
}

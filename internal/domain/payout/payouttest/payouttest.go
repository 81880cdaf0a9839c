// Package payouttest holds payout fixtures for tests; only tests import it.
package payouttest

import (
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/payout"
)

// Valid is a validated SWIFT payout of 100.00 USD to a German
// company.
func Valid(t testing.TB) payout.Instruction {
	t.Helper()
	req := payout.Request{
		MerchantID: "10086", AccountID: "10086001", RequestID: "3F2B8C1E-6A4D-4C1B-9E8F-2D7A5B6C9E01",
		PaymentCurrency: "USD", PaymentAmount: "100.00", PaymentMethod: "SWIFT", FeePaidBy: "PAYER",
		SwiftChargeOption: "SHARED", EncryptionData: "abc",
		Beneficiary: &payout.Beneficiary{EntityType: "COMPANY", CompanyName: "Muller GmbH",
			Address: payout.BeneficiaryAddress{City: "Berlin", CountryCode: "DE"},
			BankDetails: payout.BankDetails{AccountName: "Muller GmbH", BankCountryCode: "DE", BankCode: "37040044",
				IBAN: "de89 3704 0044 0532 0130 00", SwiftCode: "cobadeffxxx"}},
		Payer: &payout.Payer{EntityType: "COMPANY", CompanyName: "Demo Ltd", Address: payout.PayerAddress{CountryCode: "US"}},
	}
	in, err := payout.Validate(req, time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

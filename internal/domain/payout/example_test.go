package payout_test

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/payout"
)

func ExampleParseIBAN() {
	iban, err := payout.ParseIBAN("gb82 west 1234 5698 7654 32")
	fmt.Println(iban, iban.Printed(), err)

	_, err = payout.ParseIBAN("GB83WEST12345698765432")
	fmt.Println(errors.Is(err, payout.ErrIBANChecksum))
	// Output:
	// GB82WEST12345698765432 GB82 WEST 1234 5698 7654 32 <nil>
	// true
}

func ExampleValidate() {
	req := payout.Request{
		MerchantID: "10086", AccountID: "10086001", RequestID: "3f2b8c1e-6a4d-4c1b-9e8f-2d7a5b6c9e01",
		PaymentCurrency: "EUR", PaymentAmount: "1500.00", SourceCurrency: "USD",
		PaymentMethod: "SWIFT", FeePaidBy: "PAYER", SwiftChargeOption: "SHARED",
		Beneficiary: &payout.Beneficiary{
			EntityType: "COMPANY", CompanyName: "Müller GmbH",
			Address: payout.BeneficiaryAddress{City: "Berlin", CountryCode: "DE"},
			BankDetails: payout.BankDetails{
				AccountName: "Müller GmbH", BankCountryCode: "DE",
				IBAN: "DE89 3704 0044 0532 0130 01", SwiftCode: "COBADEFF",
			},
		},
		Payer: &payout.Payer{EntityType: "COMPANY", CompanyName: "Demo Ltd", Address: payout.PayerAddress{CountryCode: "GB"}},
	}
	_, err := payout.Validate(req, time.Date(2026, time.March, 14, 9, 0, 0, 0, time.UTC))
	var fe *payout.FieldError
	if errors.As(err, &fe) {
		fmt.Println(fe.Result())
	}
	// Output:
	// I0008:Invalid field value: beneficiary.bank_details.iban fails the mod-97 check
}

func ExamplePrice() {
	at := time.Date(2026, time.March, 14, 9, 0, 0, 0, time.UTC)
	rates, _ := payout.NewRates([]payout.RateEntry{{Source: "USD", Target: "JPY", Rate: "151.23456789"}})
	fees, _ := payout.NewFeeSchedule([]payout.FeeRule{
		{PaymentMethod: payout.MethodSwift, Currency: "USD", FixedMinor: 500, BasisPoints: 25, MinimumMinor: 1000},
	})
	in := payout.Instruction{
		PaymentMethod: payout.MethodSwift, FeePaidBy: payout.FeePayer, SwiftChargeOption: payout.ChargeShared,
		PaymentAmount: money.FromMinor(10_000, "JPY"), SourceCurrency: "USD",
	}
	ch, err := payout.Price(in, rates, fees, at)
	fmt.Println(ch.BeneficiaryReceives, ch.BeneficiaryReceives.Currency, "for", ch.PayerPays, ch.PayerPays.Currency,
		"of which fee", ch.Fee, "at", ch.Quote.Rate, err)
	// Output:
	// 10000 JPY for 76.13 USD of which fee 10.00 at 151.23456789 <nil>
}

func ExampleNewShortReference() {
	random := bytes.NewReader([]byte{7, 4, 11, 11, 14, 30, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	ref, err := payout.NewShortReference(time.Date(2026, time.March, 14, 9, 0, 0, 0, time.UTC), random)
	fmt.Println(ref, err, payout.ValidShortReference(ref))
	fmt.Println(payout.FormatTimestamp(time.Date(2026, time.March, 14, 18, 26, 53, 0, time.FixedZone("JST", 9*3600))))
	// Output:
	// 20260314-HELLO4 <nil> true
	// 2026-03-14T09:26:53+00:00
}

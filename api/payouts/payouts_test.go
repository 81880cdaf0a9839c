package payouts

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/payout"
	"github.com/paygate/paygate/internal/domain/payout/payouttest"
	"github.com/paygate/paygate/models"
)

func TestPayoutAnswerEchoesTheCanonicalRequest(t *testing.T) {
	in := payouttest.Valid(t)
	raw, _ := json.Marshal(in)
	at := time.Date(2026, 11, 23, 9, 26, 53, 0, time.UTC)
	p := &models.Payout{ID: "payout/10086/x", MerchantID: "10086", AccountID: "10086001", RequestID: in.RequestID,
		TransactionID: "1574539591911063552", ShortReferenceID: "20261123-ABC123", Status: "COMPLETED",
		PaymentCurrency: "USD", PaymentAmount: 10000, SourceCurrency: "USD", FeeAmount: 500, PayerPaysAmount: 10500,
		BeneficiaryReceivesAmount: 10000, Request: raw, CreatedAt: at, UpdatedAt: at}
	body, err := PayoutAnswer(p)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(body)
	var got map[string]any
	_ = json.Unmarshal(out, &got)
	bank := got["beneficiary"].(map[string]any)["bank_details"].(map[string]any)
	if _, has := bank["bank_code"]; has {
		t.Errorf("bank_details carries bank_code: %v", bank)
	}
	if bank["local_clearing_system"] != "SWIFT" || bank["iban"] != "DE89370400440532013000" || bank["swift_code"] != "COBADEFFXXX" {
		t.Errorf("bank_details = %v", bank)
	}
	want := map[string]any{"amount_payer_pays": 105.0, "fee_amount": 5.0, "amount_beneficiary_receives": 100.0,
		"fee_currency": "USD", "created_at": "2026-11-23T09:26:53+00:00", "status": "COMPLETED",
		"request_id": "3f2b8c1e-6a4d-4c1b-9e8f-2d7a5b6c9e01", "encryption_data": "", "payer_id": "10086001"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if !sameRequest(raw, in.Request) {
		t.Error("the stored request differs from itself")
	}
	other := in.Request
	other.PaymentAmount = "100.01"
	if sameRequest(raw, other) {
		t.Error("another amount is the same request")
	}
	resigned := in.Request
	resigned.EncryptionData = "other"
	if !sameRequest(raw, resigned) {
		t.Error("the signature made a difference")
	}
}

// TestPayoutAnswerClearingSystem: the answer's
// bank_details.local_clearing_system names what carries the payout: SWIFT
// for a SWIFT payout (also one stored before the instruction recorded it),
// the chosen domestic system for a LOCAL one.
func TestPayoutAnswerClearingSystem(t *testing.T) {
	day := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	local := func(t *testing.T, currency, country, system string, bank payout.BankDetails) payout.Instruction {
		t.Helper()
		req := payouttest.Valid(t).Request
		req.PaymentMethod, req.SwiftChargeOption, req.PaymentCurrency = "LOCAL", "", currency
		bank.AccountName, bank.BankCountryCode, bank.LocalClearingSystem = "Jane Roe", country, system
		req.Beneficiary.BankDetails = bank
		in, err := payout.Validate(req, day)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	tests := []struct {
		name string
		in   func(t *testing.T) payout.Instruction
		want string
	}{
		{name: "SWIFT", in: func(t *testing.T) payout.Instruction { return payouttest.Valid(t) }, want: "SWIFT"},
		{name: "SWIFT stored before the clearing system was recorded", in: func(t *testing.T) payout.Instruction {
			in := payouttest.Valid(t)
			in.ClearingSystem = ""
			return in
		}, want: "SWIFT"},
		{name: "SWIFT sent back with the answer's value", in: func(t *testing.T) payout.Instruction {
			req := payouttest.Valid(t).Request
			req.Beneficiary.BankDetails.LocalClearingSystem = "SWIFT"
			in, err := payout.Validate(req, day)
			if err != nil {
				t.Fatal(err)
			}
			return in
		}, want: "SWIFT"},
		{name: "LOCAL in EUR defaults to SEPA", in: func(t *testing.T) payout.Instruction {
			return local(t, "EUR", "DE", "", payout.BankDetails{IBAN: "DE89370400440532013000"})
		}, want: "SEPA"},
		{name: "LOCAL in GBP as asked", in: func(t *testing.T) payout.Instruction {
			return local(t, "GBP", "GB", "CHAPS", payout.BankDetails{AccountNumber: "31926819", BankCode: "601613"})
		}, want: "CHAPS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw, _ := json.Marshal(tc.in(t))
			body, err := PayoutAnswer(&models.Payout{ID: "payout/10086/x", MerchantID: "10086", AccountID: "10086001",
				PaymentCurrency: "USD", SourceCurrency: "USD", Request: raw})
			if err != nil {
				t.Fatal(err)
			}
			bank := body["beneficiary"].(map[string]any)["bank_details"].(map[string]any)
			if got := bank["local_clearing_system"]; got != tc.want {
				t.Errorf("local_clearing_system = %v, want %s", got, tc.want)
			}
			if _, has := bank["bank_code"]; has {
				t.Errorf("bank_details carries bank_code: %v", bank)
			}
		})
	}
}

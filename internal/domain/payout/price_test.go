package payout

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/money"
)

func amt(minor int64, currency string) money.Amount { return money.FromMinor(minor, currency) }

func TestFeeRuleFee(t *testing.T) {
	swiftUSD := FeeRule{PaymentMethod: MethodSwift, Currency: "USD", FixedMinor: 500, BasisPoints: 25,
		MinimumMinor: 1000, MaximumMinor: 50_000, SwiftPayerSurchargeMinor: 1500}
	percentOnly := FeeRule{PaymentMethod: MethodLocal, Currency: "EUR", BasisPoints: 25}
	jpy := FeeRule{PaymentMethod: MethodSwift, Currency: "JPY", FixedMinor: 300, BasisPoints: 50}
	tests := []struct {
		name   string
		rule   FeeRule
		source int64
		charge SwiftChargeOption
		want   int64
	}{
		{"minimum applies", swiftUSD, 100_000, ChargeShared, 1000},
		{"fixed plus percent", swiftUSD, 1_000_000, ChargeShared, 3000},
		{"maximum caps", swiftUSD, 300_000_000, ChargeShared, 50_000},
		{"surcharge when the payer bears SWIFT charges", swiftUSD, 1_000_000, ChargePayer, 4500},
		{"surcharge after the cap", swiftUSD, 300_000_000, ChargePayer, 51_500},
		{"surcharge after the minimum", swiftUSD, 0, ChargePayer, 2500},
		{"half a cent rounds up", percentOnly, 200, "", 1},         // 0.5
		{"under half a cent rounds down", percentOnly, 199, "", 0}, // 0.4975
		{"one and a half cents round up", percentOnly, 600, "", 2}, // 1.5
		{"fraction above half", percentOnly, 12_345, "", 31},       // 30.8625
		{"just under a cent", percentOnly, 3, "", 0},               // 0.0075
		{"nothing on nothing", percentOnly, 0, "", 0},
		{"yen", jpy, 12_345, "", 362}, // 300 + 61.725
		{"largest amount", percentOnly, money.MaxMinor, "", 25_000_000_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.rule.Fee(tc.source, tc.charge)
			if err != nil || got != tc.want {
				t.Errorf("Fee(%d, %q) = %d, %v; want %d", tc.source, tc.charge, got, err, tc.want)
			}
		})
	}
	for _, bad := range []int64{-1, money.MaxMinor + 1, math.MaxInt64} {
		if _, err := percentOnly.Fee(bad, ""); !errors.Is(err, money.ErrAmountTooLarge) {
			t.Errorf("Fee(%d) error = %v, want ErrAmountTooLarge", bad, err)
		}
	}
}

func TestNewFeeSchedule(t *testing.T) {
	ok := FeeRule{PaymentMethod: MethodSwift, Currency: "USD", FixedMinor: 500}
	tests := []struct {
		name    string
		rules   []FeeRule
		wantErr bool
	}{
		{"valid", []FeeRule{ok, {PaymentMethod: MethodLocal, Currency: "USD"}, {PaymentMethod: MethodSwift, Currency: "BHD", FixedMinor: 2000}}, false},
		{"empty", nil, false},
		{"twice", []FeeRule{ok, ok}, true},
		{"unknown method", []FeeRule{{PaymentMethod: "ACH", Currency: "USD"}}, true},
		{"unknown currency", []FeeRule{{PaymentMethod: MethodSwift, Currency: "usd"}}, true},
		{"negative fixed", []FeeRule{{PaymentMethod: MethodSwift, Currency: "USD", FixedMinor: -1}}, true},
		{"too many basis points", []FeeRule{{PaymentMethod: MethodSwift, Currency: "USD", BasisPoints: 10_001}}, true},
		{"maximum below minimum", []FeeRule{{PaymentMethod: MethodSwift, Currency: "USD", MinimumMinor: 100, MaximumMinor: 99}}, true},
		{"SWIFT surcharge on LOCAL", []FeeRule{{PaymentMethod: MethodLocal, Currency: "USD", SwiftPayerSurchargeMinor: 1}}, true},
		{"huge fixed", []FeeRule{{PaymentMethod: MethodSwift, Currency: "USD", FixedMinor: money.MaxMinor + 1}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewFeeSchedule(tc.rules)
			if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, ErrFeeSchedule)) {
				t.Fatalf("NewFeeSchedule error = %v, want error %t", err, tc.wantErr)
			}
			if err == nil {
				for _, r := range tc.rules {
					if got, found := s.Rule(r.PaymentMethod, r.Currency); !found || got != r {
						t.Errorf("Rule(%s, %s) = %+v, %t", r.PaymentMethod, r.Currency, got, found)
					}
				}
			}
		})
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in      string
		want    Rate
		wantErr bool
	}{
		{"151.23456789", 15_123_456_789, false},
		{"1", RateScale, false},
		{"0.92", 92_000_000, false},
		{" 0.376 ", 37_600_000, false},
		{"0.00000001", 1, false},
		{"9999999999.99999999", 999_999_999_999_999_999, false},
		{"0", 0, true},
		{"0.00000000", 0, true},
		{"0.000000001", 0, true},
		{"12345678901", 0, true},
		{"1e3", 0, true},
		{"-1", 0, true},
		{"+1", 0, true},
		{"1.", 0, true},
		{".5", 0, true},
		{"1,5", 0, true},
		{"", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseRate(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("ParseRate(%q) = %d, %v; want %d, error %t", tc.in, got, err, tc.want, tc.wantErr)
			}
			if err != nil {
				if !errors.Is(err, ErrInvalidRate) {
					t.Errorf("error %v is not ErrInvalidRate", err)
				}
				return
			}
			if back, err := ParseRate(got.String()); err != nil || back != got {
				t.Errorf("ParseRate(%q) = %d, %v; want %d back", got.String(), back, err, got)
			}
		})
	}
	for r, want := range map[Rate]string{15_125_000_000: "151.25", RateScale: "1", 1: "0.00000001", 37_600_000: "0.376"} {
		if got := r.String(); got != want {
			t.Errorf("Rate(%d).String() = %q, want %q", int64(r), got, want)
		}
	}
}

func TestConvert(t *testing.T) {
	usdJPY := Rate(15_123_456_789) // 151.23456789
	bhdJPY := Rate(39_750_000_000) // 397.5
	tests := []struct {
		name string
		a    money.Amount
		to   string
		rate Rate
		mode Rounding
		want int64
	}{
		{"USD→JPY down", amt(10_000, "USD"), "JPY", usdJPY, RoundDown, 15_123}, // 15123.456789
		{"USD→JPY up", amt(10_000, "USD"), "JPY", usdJPY, RoundUp, 15_124},
		{"USD→JPY half up", amt(10_000, "USD"), "JPY", usdJPY, RoundHalfUp, 15_123},
		{"USD→BHD exact", amt(10_000, "USD"), "BHD", 37_600_000, RoundDown, 37_600}, // 37.600 BHD
		{"JPY→BHD exact", amt(10_000, "JPY"), "BHD", 251_000, RoundDown, 25_100},    // 0.00251
		{"BHD→JPY down", amt(1_234, "BHD"), "JPY", bhdJPY, RoundDown, 490},          // 490.515
		{"BHD→JPY half up", amt(1_234, "BHD"), "JPY", bhdJPY, RoundHalfUp, 491},
		{"exact half, half up", amt(3, "USD"), "JPY", 150 * RateScale, RoundHalfUp, 5}, // 4.5
		{"exact half, down", amt(3, "USD"), "JPY", 150 * RateScale, RoundDown, 4},
		{"exact, up adds nothing", amt(2, "USD"), "JPY", 150 * RateScale, RoundUp, 3},
		{"zero", amt(0, "USD"), "JPY", usdJPY, RoundUp, 0},
		{"same currency at 1", amt(12_345, "EUR"), "EUR", RateScale, RoundDown, 12_345},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Convert(tc.a, tc.to, tc.rate, tc.mode)
			if err != nil || got != amt(tc.want, tc.to) {
				t.Errorf("Convert(%+v, %s, %s) = %+v, %v; want %d %s", tc.a, tc.to, tc.rate, got, err, tc.want, tc.to)
			}
		})
	}

	if _, err := Convert(amt(money.MaxMinor, "JPY"), "BHD", Rate(999_999_999_999_999_999), RoundDown); !errors.Is(err, money.ErrAmountTooLarge) {
		t.Errorf("huge conversion error = %v, want ErrAmountTooLarge", err)
	}
	if _, err := Convert(amt(1, "USD"), "XXX", RateScale, RoundDown); !errors.Is(err, money.ErrUnknownCurrency) {
		t.Errorf("unknown currency error = %v", err)
	}
	if _, err := Convert(amt(-1, "USD"), "EUR", RateScale, RoundDown); !errors.Is(err, ErrInvalidRate) {
		t.Errorf("negative amount error = %v", err)
	}
}

// TestSourceForNeverLeavesTheBeneficiaryShort is the rounding that matters:
// the source amount for ¥10 000 at 151.23456789 is 66.1224... USD. Rounded
// down ($66.12) it buys only ¥9 999; rounded up ($66.13), as quotes do, it
// buys ¥10 001.
func TestSourceForNeverLeavesTheBeneficiaryShort(t *testing.T) {
	rate := Rate(15_123_456_789)
	target := amt(10_000, "JPY")
	up, err := SourceFor(target, "USD", rate, RoundUp)
	if err != nil || up != amt(6_613, "USD") {
		t.Fatalf("SourceFor up = %+v, %v; want 66.13 USD", up, err)
	}
	down, _ := SourceFor(target, "USD", rate, RoundDown)
	if down != amt(6_612, "USD") {
		t.Fatalf("SourceFor down = %+v, want 66.12 USD", down)
	}
	if back, _ := Convert(down, "JPY", rate, RoundDown); back.Minor >= target.Minor {
		t.Errorf("rounded down, %s USD buys %d JPY; the test means to show it falls short", down, back.Minor)
	}
	if back, _ := Convert(up, "JPY", rate, RoundDown); back.Minor < target.Minor {
		t.Errorf("rounded up, %s USD buys only %d JPY, want at least %d", up, back.Minor, target.Minor)
	}

	// And for amounts and rates across exponents 0, 2 and 3.
	for _, tc := range []struct {
		target money.Amount
		from   string
		rate   Rate
		want   int64
	}{
		{amt(100_000, "BHD"), "USD", 37_600_000, 26_596}, // 100.000 BHD = 265.957... USD
		{amt(1_000, "BHD"), "JPY", 251_000, 399},         // 1.000 BHD = 398.4 JPY
		{amt(1, "JPY"), "BHD", 39_750_000_000, 3},        // 1 JPY = 0.0025157 BHD
		{amt(150_000, "EUR"), "USD", 92_000_000, 163_044},
	} {
		got, err := SourceFor(tc.target, tc.from, tc.rate, RoundUp)
		if err != nil || got != amt(tc.want, tc.from) {
			t.Errorf("SourceFor(%+v, %s, %s) = %+v, %v; want %d", tc.target, tc.from, tc.rate, got, err, tc.want)
			continue
		}
		if back, _ := Convert(got, tc.target.Currency, tc.rate, RoundDown); back.Minor < tc.target.Minor {
			t.Errorf("%+v buys %+v, short of %+v", got, back, tc.target)
		}
	}
}

func testRates(t *testing.T) Rates {
	t.Helper()
	r, err := NewRates([]RateEntry{
		{Source: "USD", Target: "EUR", Rate: "0.92"},
		{Source: "USD", Target: "JPY", Rate: "151.23456789"},
		{Source: "USD", Target: "BHD", Rate: "0.376"},
		{Source: "JPY", Target: "BHD", Rate: "0.00251"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestNewRates(t *testing.T) {
	tests := []struct {
		name    string
		entries []RateEntry
	}{
		{"unknown currency", []RateEntry{{Source: "USD", Target: "XXX", Rate: "1"}}},
		{"lower case", []RateEntry{{Source: "usd", Target: "EUR", Rate: "1"}}},
		{"identity", []RateEntry{{Source: "USD", Target: "USD", Rate: "1"}}},
		{"bad rate", []RateEntry{{Source: "USD", Target: "EUR", Rate: "0.92.1"}}},
		{"zero rate", []RateEntry{{Source: "USD", Target: "EUR", Rate: "0"}}},
		{"twice", []RateEntry{{Source: "USD", Target: "EUR", Rate: "0.92"}, {Source: "USD", Target: "EUR", Rate: "0.93"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewRates(tc.entries); !errors.Is(err, ErrRateTable) {
				t.Errorf("NewRates error = %v, want ErrRateTable", err)
			}
		})
	}
	r := testRates(t)
	if got, ok := r.Rate("USD", "USD"); !ok || got != RateScale {
		t.Errorf("Rate(USD, USD) = %s, %t; want 1", got, ok)
	}
	if _, ok := r.Rate("EUR", "USD"); ok {
		t.Error("Rate(EUR, USD) found: rates must not be inverted")
	}
	if _, ok := r.Rate("EUR", "JPY"); ok {
		t.Error("Rate(EUR, JPY) found: rates must not be crossed")
	}
}

func TestQuote(t *testing.T) {
	at := time.Date(2026, time.March, 14, 9, 0, 0, 0, time.UTC)
	r := testRates(t)
	q, err := r.Quote(amt(10_000, "JPY"), "USD", at)
	want := Quote{SourceCurrency: "USD", PaymentCurrency: "JPY", Rate: 15_123_456_789,
		PaymentAmount: amt(10_000, "JPY"), SourceAmount: amt(6_613, "USD"), QuotedAt: at}
	if err != nil || q != want {
		t.Errorf("Quote = %+v, %v; want %+v", q, err, want)
	}
	q, err = r.Quote(amt(1_000, "BHD"), "JPY", at)
	if err != nil || q.SourceAmount != amt(399, "JPY") || q.Rate != 251_000 {
		t.Errorf("Quote JPY→BHD = %+v, %v", q, err)
	}
	q, err = r.Quote(amt(12_345, "EUR"), "EUR", at)
	if err != nil || q.SourceAmount != amt(12_345, "EUR") || q.Rate != RateScale {
		t.Errorf("same-currency quote = %+v, %v", q, err)
	}
	if _, err := r.Quote(amt(100, "USD"), "EUR", at); !errors.Is(err, ErrNoRate) {
		t.Errorf("EUR→USD quote error = %v, want ErrNoRate", err)
	}
}

func testFees(t *testing.T) FeeSchedule {
	t.Helper()
	s, err := NewFeeSchedule([]FeeRule{
		{PaymentMethod: MethodSwift, Currency: "USD", FixedMinor: 500, BasisPoints: 25, MinimumMinor: 1000, MaximumMinor: 50_000, SwiftPayerSurchargeMinor: 1500},
		{PaymentMethod: MethodLocal, Currency: "EUR", FixedMinor: 20, BasisPoints: 10, MinimumMinor: 50},
		{PaymentMethod: MethodSwift, Currency: "JPY", FixedMinor: 200},
		{PaymentMethod: MethodLocal, Currency: "USD"}, // free
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPrice(t *testing.T) {
	at := time.Date(2026, time.March, 14, 9, 0, 0, 0, time.UTC)
	rates, fees := testRates(t), testFees(t)
	swift := func(payment money.Amount, source string, by FeePaidBy, charge SwiftChargeOption) Instruction {
		return Instruction{PaymentMethod: MethodSwift, FeePaidBy: by, SwiftChargeOption: charge, PaymentAmount: payment, SourceCurrency: source}
	}
	local := func(payment money.Amount, by FeePaidBy) Instruction {
		return Instruction{PaymentMethod: MethodLocal, FeePaidBy: by, PaymentAmount: payment, SourceCurrency: payment.Currency}
	}
	withLimit := func(in Instruction, limit money.Amount) Instruction { in.SourceAmountLimit = limit; return in }

	tests := []struct {
		name      string
		in        Instruction
		rate      Rate
		fee       money.Amount
		payerPays money.Amount
		transfer  money.Amount
		receives  money.Amount
		wantErr   error
		failure   FailureType
	}{
		{
			// 1500 EUR at 0.92 = 1630.434... USD, rounded up; fee 500 + 407.61→408 = 908, raised to the minimum 1000.
			name: "payer pays the fee, USD to EUR", in: swift(amt(150_000, "EUR"), "USD", FeePayer, ChargeShared),
			rate: 92_000_000, fee: amt(1_000, "USD"), payerPays: amt(164_044, "USD"), transfer: amt(163_044, "USD"), receives: amt(150_000, "EUR"),
		},
		{
			name: "payer also bears the SWIFT charges", in: swift(amt(150_000, "EUR"), "USD", FeePayer, ChargePayer),
			rate: 92_000_000, fee: amt(2_500, "USD"), payerPays: amt(165_544, "USD"), transfer: amt(163_044, "USD"), receives: amt(150_000, "EUR"),
		},
		{
			// 1620.44 USD sent at 0.92 = 1490.8048 EUR, rounded down.
			name: "beneficiary pays the fee, USD to EUR", in: swift(amt(150_000, "EUR"), "USD", FeeBeneficiary, ChargeShared),
			rate: 92_000_000, fee: amt(1_000, "USD"), payerPays: amt(163_044, "USD"), transfer: amt(162_044, "USD"), receives: amt(149_080, "EUR"),
		},
		{
			// 1500 + 1.50 (10 bp) + 0.20.
			name: "no exchange, payer pays", in: local(amt(150_000, "EUR"), FeePayer),
			rate: RateScale, fee: amt(170, "EUR"), payerPays: amt(150_170, "EUR"), transfer: amt(150_000, "EUR"), receives: amt(150_000, "EUR"),
		},
		{
			name: "no exchange, beneficiary gets the amount less the fee", in: local(amt(150_000, "EUR"), FeeBeneficiary),
			rate: RateScale, fee: amt(170, "EUR"), payerPays: amt(150_000, "EUR"), transfer: amt(149_830, "EUR"), receives: amt(149_830, "EUR"),
		},
		{
			// ¥10 000 costs 66.13 USD (66.122... rounded up); 500 + 16.53→17 is under the minimum.
			name: "USD to JPY", in: swift(amt(10_000, "JPY"), "USD", FeePayer, ChargeShared),
			rate: 15_123_456_789, fee: amt(1_000, "USD"), payerPays: amt(7_613, "USD"), transfer: amt(6_613, "USD"), receives: amt(10_000, "JPY"),
		},
		{
			// 100.000 BHD costs 265.96 USD (265.957... rounded up).
			name: "USD to BHD", in: swift(amt(100_000, "BHD"), "USD", FeePayer, ChargeShared),
			rate: 37_600_000, fee: amt(1_000, "USD"), payerPays: amt(27_596, "USD"), transfer: amt(26_596, "USD"), receives: amt(100_000, "BHD"),
		},
		{
			// 1.000 BHD costs ¥399 (398.4 rounded up); the ¥200 fee is 0.502 BHD, so 0.498 BHD arrives.
			name: "JPY to BHD, beneficiary pays", in: swift(amt(1_000, "BHD"), "JPY", FeeBeneficiary, ChargeShared),
			rate: 251_000, fee: amt(200, "JPY"), payerPays: amt(399, "JPY"), transfer: amt(199, "JPY"), receives: amt(498, "BHD"),
		},
		{
			// ¥10 000 costs 66.13 USD, which buys ¥10 001.14: with no fee the beneficiary
			// still receives ¥10 000, never more than asked.
			name: "beneficiary pays a zero fee", in: Instruction{PaymentMethod: MethodLocal, FeePaidBy: FeeBeneficiary, PaymentAmount: amt(10_000, "JPY"), SourceCurrency: "USD"},
			rate: 15_123_456_789, fee: amt(0, "USD"), payerPays: amt(6_613, "USD"), transfer: amt(6_613, "USD"), receives: amt(10_000, "JPY"),
		},
		{
			// The 10.00 USD fee is ¥1512.3456789, rounded up to ¥1513.
			name: "beneficiary pays, the fee converts with a fraction", in: swift(amt(100_000, "JPY"), "USD", FeeBeneficiary, ChargeShared),
			rate: 15_123_456_789, fee: amt(1_000, "USD"), payerPays: amt(66_123, "USD"), transfer: amt(65_123, "USD"), receives: amt(98_487, "JPY"),
		},
		{
			name: "source_amount covers it exactly", in: withLimit(swift(amt(150_000, "EUR"), "USD", FeePayer, ChargeShared), amt(164_044, "USD")),
			rate: 92_000_000, fee: amt(1_000, "USD"), payerPays: amt(164_044, "USD"), transfer: amt(163_044, "USD"), receives: amt(150_000, "EUR"),
		},
		{
			name: "source_amount a cent short", in: withLimit(swift(amt(150_000, "EUR"), "USD", FeePayer, ChargeShared), amt(164_043, "USD")),
			wantErr: ErrSourceLimitExceeded, failure: FailureAmountNotPayable,
		},
		{
			// 0.50 EUR: the minimum fee of 0.50 leaves nothing to send.
			name: "fee eats the transfer", in: local(amt(50, "EUR"), FeeBeneficiary),
			wantErr: ErrFeeExceedsAmount, failure: FailureAmountNotPayable,
		},
		{
			// 0.51 EUR less 0.50 is one cent: paid.
			name: "fee leaves a cent", in: local(amt(51, "EUR"), FeeBeneficiary),
			rate: RateScale, fee: amt(50, "EUR"), payerPays: amt(51, "EUR"), transfer: amt(1, "EUR"), receives: amt(1, "EUR"),
		},
		{
			name: "no rate", in: swift(amt(10_000, "GBP"), "USD", FeePayer, ChargeShared),
			wantErr: ErrNoRate, failure: FailureQuoteUnavailable,
		},
		{
			name: "no fee rule", in: local(amt(10_000, "JPY"), FeePayer),
			wantErr: ErrNoFeeRule, failure: FailureQuoteUnavailable,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch, err := Price(tc.in, rates, fees, at)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Price = %+v, %v; want %v", ch, err, tc.wantErr)
				}
				if got := FailureTypeOf(err); got != tc.failure {
					t.Errorf("FailureTypeOf = %s, want %s", got, tc.failure)
				}
				return
			}
			if err != nil {
				t.Fatalf("Price = %v", err)
			}
			if ch.Quote.Rate != tc.rate || ch.Fee != tc.fee || ch.PayerPays != tc.payerPays || ch.Transfer != tc.transfer || ch.BeneficiaryReceives != tc.receives {
				t.Errorf("Price = rate %s, fee %+v, payer pays %+v, transfer %+v, receives %+v\nwant rate %s, fee %+v, payer pays %+v, transfer %+v, receives %+v",
					ch.Quote.Rate, ch.Fee, ch.PayerPays, ch.Transfer, ch.BeneficiaryReceives,
					tc.rate, tc.fee, tc.payerPays, tc.transfer, tc.receives)
			}
			// The ledger's legs balance to the minor unit.
			if ch.PayerPays.Minor != ch.Transfer.Minor+ch.Fee.Minor || ch.PayerPays.Currency != ch.Fee.Currency || ch.Transfer.Currency != ch.Fee.Currency {
				t.Errorf("payer pays %+v, want transfer %+v + fee %+v", ch.PayerPays, ch.Transfer, ch.Fee)
			}
			if ch.FeePaidBy != tc.in.FeePaidBy || !ch.Quote.QuotedAt.Equal(at) {
				t.Errorf("Price = %+v", ch)
			}
		})
	}
	if FailureTypeOf(nil) != "" || FailureTypeOf(errors.New("other")) != FailureUnknown {
		t.Error("FailureTypeOf of nil or an unknown error")
	}
}

// TestPriceAfterValidate prices what Validate returns, end to end.
func TestPriceAfterValidate(t *testing.T) {
	in, err := Validate(validRequest(), today)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := Price(in, testRates(t), testFees(t), today)
	if err != nil {
		t.Fatal(err)
	}
	if ch.BeneficiaryReceives != amt(150_000, "EUR") || ch.PayerPays != amt(164_044, "USD") || ch.Fee != amt(1_000, "USD") {
		t.Errorf("Price = %+v", ch)
	}
}

package payout

import (
	"encoding/json"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
)

// Fuzz targets: go test -run='^$' -fuzz='^FuzzValidate$' ./internal/domain/payout
// (and FuzzParseIBAN, FuzzPrice; or make fuzz). Plain go test runs the seeds.

// FuzzValidate feeds Validate any JSON body and checks that it never panics
// and answers the same twice; that a refusal names a field and one of the
// result codes validation may use; that it never changes the caller's
// request; and that an accepted request's canonical form validates again to
// the very same instruction, with amounts in range and identifiers in their
// canonical forms.
func FuzzValidate(f *testing.F) {
	seed := func(edit func(r *Request)) {
		r := validRequest()
		edit(&r)
		b, err := json.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, int8(0))
	}
	seed(func(r *Request) {})
	seed(func(r *Request) { r.Beneficiary.BankDetails.IBAN = "de89 3704 0044 0532 0130 00" })
	seed(func(r *Request) { r.Beneficiary.BankDetails.IBAN = "DE88370400440532013000" })
	seed(func(r *Request) { r.PaymentCurrency, r.PaymentAmount = "BHD", "12.5" })
	seed(func(r *Request) { r.PaymentCurrency, r.PaymentAmount = "JPY", "100.50" })
	seed(func(r *Request) { r.PaymentDate = "2026-02-30" })
	seed(func(r *Request) { r.FeePaidBy, r.SwiftChargeOption = "BENEFICIARY", "PAYER" })
	seed(func(r *Request) { r.Beneficiary.CompanyName = "ACME\u202e\x00" })
	seed(func(r *Request) { r.Payer = nil; r.Beneficiary.PersonDocuments = make([]PersonDocument, 3) })
	seed(func(r *Request) {
		*r = localRequest("USD", "US", func(b *BankDetails) { b.AccountNumber, b.BankCode = "000123456789", "021000021" })
	})
	seed(func(r *Request) {
		*r = localRequest("GBP", "GB", func(b *BankDetails) {
			b.AccountNumber, b.BankCode, b.LocalClearingSystem = "31926819", "601613", "BACS"
		})
	})
	for _, s := range []string{
		`{}`, `null`, `[]`, `{"beneficiary":null,"payer":{}}`, `{"payment_amount":12.30,"payment_currency":"USD"}`,
		`{"payment_amount":1e400}`, `{"beneficiary":{"person_documents":[{"labels":["",""]}]}}`,
		`{"request_id":"3F2B8C1E-6A4D-4C1B-9E8F-2D7A5B6C9E01","merchant_id":"1","account_id":"2"}`,
	} {
		f.Add([]byte(s), int8(3))
	}

	f.Fuzz(func(t *testing.T, body []byte, dayOffset int8) {
		var r Request
		if json.Unmarshal(body, &r) != nil {
			return
		}
		day := today.AddDate(0, 0, int(dayOffset))
		before, _ := json.Marshal(r)

		in, err := Validate(r, day)
		in2, err2 := Validate(r, day)
		if !reflect.DeepEqual(in, in2) || (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("Validate answered %+v, %v then %+v, %v", in, err, in2, err2)
		}
		if after, _ := json.Marshal(r); string(after) != string(before) {
			t.Fatalf("Validate changed its argument:\n%s\n%s", before, after)
		}

		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate error %T %v, want *FieldError", err, err)
			}
			switch fe.Code {
			case codes.MissingField, codes.InvalidAmount, codes.UnsupportedCurrency, codes.InvalidField, codes.UnsupportedMethod:
			default:
				t.Fatalf("Validate error code %s, not one validation uses", fe.Code.ID)
			}
			if fe.Field == "" || fe.Reason == "" || !strings.HasPrefix(fe.Result().String(), fe.Code.ID+":") {
				t.Fatalf("FieldError %+v lacks a field, reason or result", fe)
			}
			return
		}

		if in.PaymentAmount.Minor <= 0 || in.PaymentAmount.Minor > money.MaxMinor || !money.KnownExtendedCurrency(in.PaymentAmount.Currency) {
			t.Fatalf("accepted payment amount %+v", in.PaymentAmount)
		}
		if id, err := ParseRequestID(in.RequestID); err != nil || id != in.RequestID {
			t.Fatalf("accepted request_id %q is not canonical", in.RequestID)
		}
		if in.IBAN != "" {
			if back, err := ParseIBAN(string(in.IBAN)); err != nil || back != in.IBAN {
				t.Fatalf("accepted IBAN %q does not parse back: %v", in.IBAN, err)
			}
		}
		if in.PaymentDate.Before(day.UTC().Truncate(24*time.Hour)) || in.PaymentDate.After(day.UTC().AddDate(0, 0, MaxDaysAhead)) {
			t.Fatalf("accepted payment date %v on %v", in.PaymentDate, day)
		}
		again, err := Validate(in.Request, day)
		if err != nil || !reflect.DeepEqual(again, in) {
			t.Fatalf("canonical request validates to %+v, %v; want %+v", again, err, in)
		}
	})
}

// referenceIBAN is an independent reading of an IBAN: spaces dropped, ASCII
// letters upper-cased, then the registry length, check-digit range and the
// mod-97 check computed on the whole number with math/big.
func referenceIBAN(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) > maxIBANInput {
		return "", false
	}
	v := strings.ToUpper(strings.ReplaceAll(s, " ", ""))
	for _, r := range v {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return "", false
		}
	}
	for _, r := range strings.ReplaceAll(s, " ", "") {
		if r > 0x7f { // strings.ToUpper maps some non-ASCII letters to ASCII (ſ→S, K→K).
			return "", false
		}
	}
	if len(v) < 5 {
		return "", false
	}
	n, ok := ibanLengths[v[:2]]
	if !ok || len(v) != n || v[2] < '0' || v[2] > '9' || v[3] < '0' || v[3] > '9' {
		return "", false
	}
	if cd := (v[2]-'0')*10 + v[3] - '0'; cd < 2 || cd > 98 {
		return "", false
	}
	var digits strings.Builder
	for _, r := range v[4:] + v[:4] {
		if r >= 'A' {
			digits.WriteString(big.NewInt(int64(r - 'A' + 10)).String())
		} else {
			digits.WriteRune(r)
		}
	}
	num, _ := new(big.Int).SetString(digits.String(), 10)
	return v, new(big.Int).Mod(num, big.NewInt(97)).Int64() == 1
}

// FuzzParseIBAN checks ParseIBAN against referenceIBAN, and that every IBAN
// it accepts reads back from its printed and lower-case forms, and is refused
// once any one of its digits is changed (mod 97 catches every single-digit
// error).
func FuzzParseIBAN(f *testing.F) {
	for _, s := range []string{
		"GB82WEST12345698765432", "GB82 WEST 1234 5698 7654 32", "gb82west12345698765432", "GB83WEST12345698765432",
		"DE89370400440532013000", "DE8937040044053201300", "NO9386011117947", "RU0204452560040702810412345678901",
		"MT84MALT011000012345MTLCAST001S", "LC55HEMM000100010012001200023015", "GB01WEST12345698760003",
		"XK051212012345678906", "US12345678901234567890", "", " ", "GB", "GB82\tWEST12345698765432",
		"GB82-WEST", "ＧＢ82WEST12345698765432", "ſB82WEST12345698765432", "GB82WEST1234569876543\u212a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseIBAN(s)
		want, ok := referenceIBAN(s)
		if (err == nil) != ok {
			t.Fatalf("ParseIBAN(%q) = %q, %v; the reference says valid = %t", s, got, err, ok)
		}
		if err != nil {
			for _, known := range []error{ErrIBANFormat, ErrIBANCountry, ErrIBANLength, ErrIBANCheckDigits, ErrIBANChecksum} {
				if errors.Is(err, known) {
					return
				}
			}
			t.Fatalf("ParseIBAN(%q) error %v is none of the IBAN errors", s, err)
		}
		if string(got) != want {
			t.Fatalf("ParseIBAN(%q) = %q, want %q", s, got, want)
		}
		for _, form := range []string{got.Printed(), strings.ToLower(string(got))} {
			if back, err := ParseIBAN(form); err != nil || back != got {
				t.Fatalf("ParseIBAN(%q) = %q, %v; want %q", form, back, err, got)
			}
		}
		for i := 2; i < len(got); i++ {
			c := got[i]
			if c < '0' || c > '9' {
				continue
			}
			changed := string(got[:i]) + string('0'+(c-'0'+1)%10) + string(got[i+1:])
			if _, err := ParseIBAN(changed); err == nil {
				t.Fatalf("ParseIBAN(%q) accepted %q with digit %d changed", changed, got, i)
			}
		}
	})
}

// FuzzPrice prices payouts of any amount, rate and fee rule between
// currencies of exponents 0, 2 and 3, and checks that a priced payout
// balances to the minor unit (the payer pays the transfer plus the fee),
// that the payer's side never leaves the beneficiary short when the payer
// pays the fee, that the beneficiary never receives more than asked when it
// pays the fee, and that every refusal maps to a failure type other than
// UNKNOWN.
func FuzzPrice(f *testing.F) {
	f.Add(int64(150_000), int64(92_000_000), int64(500), int64(25), int64(1000), uint8(0), uint8(1), true)
	f.Add(int64(10_000), int64(15_123_456_789), int64(0), int64(0), int64(0), uint8(0), uint8(2), false)
	f.Add(int64(1_000), int64(251_000), int64(200), int64(10_000), int64(0), uint8(2), uint8(3), false)
	f.Add(int64(1), int64(1), int64(0), int64(1), int64(0), uint8(3), uint8(2), true)
	f.Add(money.MaxMinor, int64(999_999_999_999_999_999), int64(0), int64(0), int64(0), uint8(2), uint8(3), true)
	currencies := []string{"USD", "EUR", "JPY", "BHD"}
	f.Fuzz(func(t *testing.T, payment, rate, fixed, bps, minimum int64, src, dst uint8, payerPays bool) {
		source, target := currencies[int(src)%len(currencies)], currencies[int(dst)%len(currencies)]
		if payment <= 0 || payment > money.MaxMinor || rate <= 0 {
			return
		}
		var entries []RateEntry
		if source != target {
			entries = []RateEntry{{Source: source, Target: target, Rate: Rate(rate).String()}}
		}
		rates, err := NewRates(entries)
		if err != nil {
			return // a rate too large to write with ten integer digits
		}
		fees, err := NewFeeSchedule([]FeeRule{{PaymentMethod: MethodSwift, Currency: source, FixedMinor: fixed, BasisPoints: bps, MinimumMinor: minimum}})
		if err != nil {
			return
		}
		by := FeeBeneficiary
		if payerPays {
			by = FeePayer
		}
		in := Instruction{PaymentMethod: MethodSwift, FeePaidBy: by, SwiftChargeOption: ChargeShared,
			PaymentAmount: money.FromMinor(payment, target), SourceCurrency: source}
		ch, err := Price(in, rates, fees, today)
		if err != nil {
			if FailureTypeOf(err) == FailureUnknown {
				t.Fatalf("Price(%+v) error %v maps to UNKNOWN", in, err)
			}
			return
		}
		if ch.PayerPays.Minor != ch.Transfer.Minor+ch.Fee.Minor || ch.Fee.Minor < 0 || ch.Transfer.Minor <= 0 ||
			ch.PayerPays.Minor > money.MaxMinor || ch.BeneficiaryReceives.Minor <= 0 {
			t.Fatalf("Price(%+v) = %+v does not balance", in, ch)
		}
		if by == FeePayer && ch.BeneficiaryReceives != in.PaymentAmount {
			t.Fatalf("payer pays: receives %+v, want %d", ch.BeneficiaryReceives, payment)
		}
		if ch.BeneficiaryReceives.Minor > payment {
			t.Fatalf("receives %+v, more than the %d asked", ch.BeneficiaryReceives, payment)
		}
		// What the transfer buys covers what the beneficiary receives. A
		// transfer that buys more than money.MaxMinor covers it too.
		bought, err := Convert(ch.Transfer, target, ch.Quote.Rate, RoundDown)
		if err == nil && bought.Minor < ch.BeneficiaryReceives.Minor {
			t.Fatalf("transfer %+v buys %+v, short of the %+v received", ch.Transfer, bought, ch.BeneficiaryReceives)
		}
		if err != nil && !errors.Is(err, money.ErrAmountTooLarge) {
			t.Fatalf("Convert of the transfer: %v", err)
		}
	})
}

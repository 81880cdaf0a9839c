package signing

import (
	"strings"
	"testing"
)

// paymentResultVector is the payment-result vector of signature-vectors.json.
func paymentResultVector(t *testing.T) vector {
	t.Helper()
	for _, v := range loadVectors(t) {
		if strings.HasPrefix(v.Operation, "payment result") {
			return v
		}
	}
	t.Fatal("no payment result vector in testdata/signature-vectors.json")
	return vector{}
}

// TestPaymentResultRecipe pins the recipe's field names and order to the
// vector file: the names a form carries, in the order they are signed.
func TestPaymentResultRecipe(t *testing.T) {
	v := paymentResultVector(t)
	var names, values []string
	PaymentResultFrom(func(name string) string {
		for _, f := range v.Fields {
			if f[0] == name {
				return f[1]
			}
		}
		return ""
	}).Each(func(name, value string) {
		names = append(names, name)
		values = append(values, value)
	})
	if len(names) != len(v.Fields) {
		t.Fatalf("recipe has %d fields %v, the vector %d", len(names), names, len(v.Fields))
	}
	for i, f := range v.Fields {
		if names[i] != f[0] || values[i] != f[1] {
			t.Errorf("field %d = %s=%q, want %s=%q", i, names[i], values[i], f[0], f[1])
		}
	}
}

func TestSignPaymentResult(t *testing.T) {
	v := paymentResultVector(t)
	vectorResult := PaymentResult{
		MerchantID: "10086", AccountID: "10086001", TransactionID: "1379868670095785984",
		OrderNo: "ORD-2026-0002", Currency: "USD", Amount: "12.34", OrderStatus: "1", ResultInfo: "0000:Success",
	}
	cases := []struct {
		name   string
		key    string
		result func() PaymentResult
		want   string
	}{
		{"vector", v.SignKey, func() PaymentResult { return vectorResult }, v.EncryptionData},
		{"values trimmed as in every recipe", v.SignKey, func() PaymentResult {
			r := vectorResult
			r.Amount, r.ResultInfo = " 12.34 ", "0000:Success\n"
			return r
		}, v.EncryptionData},
		{"key trimmed", " " + v.SignKey + " ", func() PaymentResult { return vectorResult }, v.EncryptionData},
		{"refusal before any order", v.SignKey, func() PaymentResult {
			return PaymentResult{MerchantID: "10086", AccountID: "10086001", OrderStatus: "0",
				ResultInfo: "I0013:Signature verification failed"}
		}, SignUpper(v.SignKey, "10086", "10086001", "", "", "", "", "0", "I0013:Signature verification failed")},
		{"another key", "another-key", func() PaymentResult { return vectorResult },
			SignUpper("another-key", v.values()...)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := SignPaymentResult(tc.key, tc.result())
			if got != tc.want {
				t.Fatalf("SignPaymentResult = %s, want %s", got, tc.want)
			}
			if got != strings.ToUpper(got) {
				t.Errorf("SignPaymentResult = %s, want upper-case hex", got)
			}
			for _, sig := range []string{got, strings.ToLower(got)} {
				if !VerifyPaymentResult(tc.key, sig, tc.result()) {
					t.Errorf("VerifyPaymentResult(%s) = false", sig)
				}
			}
		})
	}
}

// TestVerifyPaymentResultRefusesChangedFields: every field of the recipe is
// covered, and fields move nowhere without the signature noticing.
func TestVerifyPaymentResultRefusesChangedFields(t *testing.T) {
	v := paymentResultVector(t)
	signed := PaymentResult{
		MerchantID: "10086", AccountID: "10086001", TransactionID: "1379868670095785984",
		OrderNo: "ORD-2026-0002", Currency: "USD", Amount: "12.34", OrderStatus: "1", ResultInfo: "0000:Success",
	}
	cases := []struct {
		name   string
		change func(r *PaymentResult)
	}{
		{"merchant_id", func(r *PaymentResult) { r.MerchantID = "10087" }},
		{"account_id", func(r *PaymentResult) { r.AccountID = "10086002" }},
		{"transaction_id", func(r *PaymentResult) { r.TransactionID = "1379868670095785985" }},
		{"order_no", func(r *PaymentResult) { r.OrderNo = "ORD-2026-0003" }},
		{"currency", func(r *PaymentResult) { r.Currency = "EUR" }},
		{"amount", func(r *PaymentResult) { r.Amount = "12.35" }},
		{"order_status", func(r *PaymentResult) { r.OrderStatus = "0" }},
		{"result_info", func(r *PaymentResult) { r.ResultInfo = "A0001:Declined" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := signed
			tc.change(&r)
			if VerifyPaymentResult(v.SignKey, v.EncryptionData, r) {
				t.Fatalf("VerifyPaymentResult accepted the vector's signature with %s changed", tc.name)
			}
		})
	}
}

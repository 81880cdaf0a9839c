package signing

import "testing"

// The optimise vectors: signature-vectors.json holds none for optimise, so
// these were computed apart from this code (Python's hashlib over the same
// concatenation) and pin the recipes' fields and order.
const (
	optimiseKey           = "k3y-for-tests-0123456789abcdef"
	optimiseRequestVector = "72a6d625b802ae27be74ad69ab8669bf799dab17b0aec5bac93d8c0a0a75a0a7"
	optimiseResultVector  = "A25FD8378A3E1190071527933C14D89FB6B94BBA853A7872400E31A3E6592C4A"
)

var optimiseRequest = OptimiseRequest{MerchantID: "10086", AccountID: "10086001", RequestID: "OPT-2026-0001",
	Currency: "EUR", Amount: "25.00", ShopperEmail: "ada@example.com"}

var optimiseResult = OptimiseResult{MerchantID: "10086", AccountID: "10086001", RequestID: "OPT-2026-0001",
	Currency: "EUR", Amount: "25.00", ResultInfo: "0000:Success", Methods: []OptimiseMethod{
		{PaymentMethod: "CARD", Brand: "visa", SuccessRate: "0.6667", SampleSize: "3"},
		{PaymentMethod: "IDEAL", Brand: "", SuccessRate: "", SampleSize: "0"},
	}}

func TestOptimiseRequestVector(t *testing.T) {
	vals := optimiseRequest.Values()
	if got := Sign(optimiseKey, vals...); got != optimiseRequestVector {
		t.Errorf("signature = %s, want %s", got, optimiseRequestVector)
	}
	if !Verify(optimiseKey, optimiseRequestVector, vals...) {
		t.Error("the vector does not verify")
	}
	// Every field is covered: changing any one breaks the signature.
	for i := range vals {
		changed := append([]string(nil), vals...)
		changed[i] += "x"
		if Verify(optimiseKey, optimiseRequestVector, changed...) {
			t.Errorf("field %d changed and the signature still verifies", i)
		}
	}
}

func TestOptimiseResultVector(t *testing.T) {
	if got := SignOptimiseResult(optimiseKey, optimiseResult); got != optimiseResultVector {
		t.Errorf("signature = %s, want %s", got, optimiseResultVector)
	}
	swapped := optimiseResult
	swapped.Methods = []OptimiseMethod{optimiseResult.Methods[1], optimiseResult.Methods[0]}
	if SignOptimiseResult(optimiseKey, swapped) == optimiseResultVector {
		t.Error("a reordered ranking signs the same")
	}
}

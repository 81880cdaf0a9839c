package risk_test

import (
	"fmt"

	"github.com/paygate/paygate/internal/domain/risk"
)

// A GB billing address with a US card, and the shopper's IP used by 20
// other orders of the account in the last hour: each alone would pass,
// together they hold the payment for review.
func ExampleEvaluate() {
	bin := risk.BIN("424242******4242")
	res := risk.Evaluate(risk.Config{}, risk.Facts{
		Amount:         1234,
		Currency:       "USD",
		CardBIN:        bin,
		CardCountry:    risk.CardCountry(bin),
		BillingCountry: "GB",
		IPOrders:       20,
	})
	fmt.Println(res.Action, res.Score, res.Rule, risk.CodeFor(res.Rule))
	for _, r := range res.Reasons {
		if r.Status != risk.Accept {
			fmt.Println(r.Name, r.Status)
		}
	}
	// Output:
	// REVIEW 60 ip_velocity R0004:Too many payments with the same card, email, IP address or device
	// ip_velocity REVIEW
	// country_mismatch REVIEW
}

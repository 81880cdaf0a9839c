package connector

import "slices"

// Offer is what a connector can take: the card brands it charges and the
// alternative payment methods its provider runs. It is the connector's own
// word on its reach, so that POST /v1/optimise never proposes a method the
// account's connector would refuse.
type Offer struct {
	// CardBrands are the brands, as card.Brand names them ("visa",
	// "mastercard", ...), whose cards the connector charges.
	CardBrands []string
	// APMs are the alternative payment methods, as apm.Methods names them
	// ("PIX", ...), the connector takes; none for a card-only acquirer.
	APMs []string
	// ExternalThreeDS: the connector takes a 3-D Secure result the
	// merchant's own server produced (mpi_info). Installments: it takes
	// a payment in monthly installments.
	ExternalThreeDS bool
	Installments    bool
}

// Merge is what several connectors take together: each brand and method
// once, in the order they first appear (a routed account's payments may
// go to any of them).
func Merge(offers ...Offer) Offer {
	var out Offer
	for _, o := range offers {
		for _, b := range o.CardBrands {
			if !slices.Contains(out.CardBrands, b) {
				out.CardBrands = append(out.CardBrands, b)
			}
		}
		for _, m := range o.APMs {
			if !slices.Contains(out.APMs, m) {
				out.APMs = append(out.APMs, m)
			}
		}
	}
	return out
}

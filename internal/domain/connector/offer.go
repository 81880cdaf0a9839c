package connector

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
}

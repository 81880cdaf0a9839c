package order

// Kind is how the shopper pays for an order. The values travel in the order
// workflow's input, so they must never change.
type Kind string

// The kinds of order.
const (
	// KindCard: the merchant sends the card (direct payment). It is the
	// zero value, so orders started before kinds existed are card orders.
	KindCard Kind = ""
	// KindCheckout: the shopper gives the card on our hosted payment page.
	KindCheckout Kind = "checkout"
	// KindAPM: the shopper pays with an alternative payment method at its
	// provider.
	KindAPM Kind = "apm"
)

package simbank

import (
	"github.com/paygate/paygate/internal/domain/card"
	"github.com/paygate/paygate/internal/domain/connector"
)

// Offer is what sim-bank takes: cards of every brand the gateway recognises
// and nothing else (no APMs, no 3-D Secure).
func (c *Client) Offer() connector.Offer {
	return connector.Offer{CardBrands: card.Brands()}
}

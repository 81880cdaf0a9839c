package simacquirer

import (
	"slices"

	"github.com/paygate/paygate/internal/domain/card"
	"github.com/paygate/paygate/internal/domain/connector"
)

// apms are the alternative payment methods the simulator's APM provider runs
// (its GET /v1/apm/methods), by their names in the apm table. They are
// listed here rather than taken from that table: a method added to the
// table is not one this provider runs until it says so.
var apms = []string{"IDEAL", "OXXO", "PIX"}

// Offer is what the simulated acquirer takes: cards of every brand the
// gateway recognises (the simulator decides by card number, not by brand)
// and the APMs its provider runs.
func (c *Connector) Offer() connector.Offer {
	return connector.Offer{CardBrands: card.Brands(), APMs: slices.Clone(apms), ExternalThreeDS: true, Installments: true}
}

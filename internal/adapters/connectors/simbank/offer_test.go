package simbank

import (
	"slices"
	"testing"

	"github.com/paygate/paygate/internal/domain/card"
)

// TestOffer: cards of every brand, no APM.
func TestOffer(t *testing.T) {
	o := (&Client{}).Offer()
	if !slices.Equal(o.CardBrands, card.Brands()) || len(o.APMs) != 0 {
		t.Errorf("Offer = %+v, want every card brand and no APM", o)
	}
}

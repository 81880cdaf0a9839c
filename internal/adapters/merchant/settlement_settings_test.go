package merchant_test

import (
	"errors"
	"testing"

	"github.com/paygate/paygate/internal/adapters/merchant"
)

// TestSettlementNotifyURLRefused: a settlement notify_url the deliveries
// would refuse every time is refused when it is set, before anything is
// stored.
func TestSettlementNotifyURLRefused(t *testing.T) {
	svc := newService(t, testDB(t))
	for _, tc := range []struct{ name, url string }{
		{"user info", "https://user:pass@shop.example/settlements"},
		{"not http", "ftp://shop.example/settlements"},
		{"no host", "https:///settlements"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := svc.SetSettlement(t.Context(), "30086", "30086001", merchant.SettlementSettings{NotifyURL: tc.url})
			if !errors.Is(err, merchant.ErrInvalidSettings) {
				t.Errorf("SetSettlement(%q) = %v, want ErrInvalidSettings", tc.url, err)
			}
		})
	}
}

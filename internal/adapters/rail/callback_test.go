package rail_test

import (
	"errors"
	"testing"

	"github.com/paygate/paygate/internal/adapters/rail"
	"github.com/paygate/paygate/internal/dev/railsim"
)

// TestReadCallback: a callback the rail simulator signs is read; a bad
// signature, no secret, or a body naming no transfer or no payout's key is
// refused with its error. Signed by the simulator, so the two cannot drift.
func TestReadCallback(t *testing.T) {
	const secret = "rail-secret"
	good := `{"transfer_id":"tr_1","idempotency_key":"payout/m1/r1"}`
	tests := []struct {
		name, secret, body, signature string
		want                          error
	}{
		{"signed by the rail", secret, good, railsim.Sign(secret, []byte(good)), nil},
		{"another secret", secret, good, railsim.Sign("other", []byte(good)), rail.ErrCallbackUnsigned},
		{"no secret here", "", good, railsim.Sign("", []byte(good)), rail.ErrCallbackUnsigned},
		{"not JSON", secret, "tr_1", railsim.Sign(secret, []byte("tr_1")), rail.ErrCallbackMalformed},
		{"no transfer", secret, `{"idempotency_key":"payout/m1/r1"}`, railsim.Sign(secret, []byte(`{"idempotency_key":"payout/m1/r1"}`)), rail.ErrCallbackMalformed},
		{"an order's key", secret, `{"transfer_id":"tr_1","idempotency_key":"order/1"}`,
			railsim.Sign(secret, []byte(`{"transfer_id":"tr_1","idempotency_key":"order/1"}`)), rail.ErrCallbackMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cb, err := rail.ReadCallback(tt.secret, []byte(tt.body), tt.signature)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if tt.want == nil && (cb.TransferID != "tr_1" || cb.IdempotencyKey != "payout/m1/r1") {
				t.Errorf("read %+v", cb)
			}
		})
	}
}

package integration

import (
	"context"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

// TestSignKeyRotation rotates an account's key: during the grace period both
// keys sign requests, and each answer is signed with the key its request
// proved, so a holder of the old key never obtains a new-key signature.
func TestSignKeyRotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	old, err := env.gw.Accounts.Create(ctx, merchant.NewAccount{Mode: testmode.Test,
		MerchantID: "20001", CaptureMode: models.CaptureAuto, Currencies: []string{"USD"},
	})
	if err != nil {
		t.Fatal(err)
	}
	newKey, err := env.gw.Accounts.RotateKey(ctx, old.MerchantID, old.AccountID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if newKey == old.SignKey {
		t.Fatal("rotation kept the key")
	}
	tests := []struct {
		name    string
		signKey string
		result  string
		answer  string // the key the answer is signed with; empty: unsigned
	}{
		{"new key", newKey, "0000:Success", newKey},
		{"old key within the grace period", old.SignKey, "0000:Success", old.SignKey},
		{"unrelated key", "not-a-key", "I0013:Signature verification failed", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, r := authorise(t, signCard(cardOrder(old, newOrderNo(t), "4242424242424242"), tc.signKey))
			if r.ResultInfo != tc.result {
				t.Fatalf("result_info = %q, want %q", r.ResultInfo, tc.result)
			}
			if tc.answer == "" {
				if r.EncryptionData != "" {
					t.Errorf("encryption_data = %q, want empty", r.EncryptionData)
				}
				return
			}
			checkResultSignature(t, r, tc.answer)
		})
	}

	// With no grace left, the old key is refused.
	if _, err := env.gw.Accounts.RotateKey(ctx, old.MerchantID, old.AccountID, -time.Second); err != nil {
		t.Fatal(err)
	}
	_, r := authorise(t, signCard(cardOrder(old, newOrderNo(t), "4242424242424242"), old.SignKey))
	if r.ResultInfo != "I0013:Signature verification failed" {
		t.Errorf("old key after the grace period: %q", r.ResultInfo)
	}
}

package signing

import "testing"

// TestPayoutResult: the payout result's signature covers what became of the
// payout, so one payout's COMPLETED and FAILED notifications, or two
// failure types, never share it; nor is it the request's signature.
func TestPayoutResult(t *testing.T) {
	const key = "k3y-for-tests-0123456789abcdef"
	base := map[string]string{
		"merchant_id": "10086", "account_id": "10086001", "request_id": "0b5f6e0c-3c1a-4f7e-9a51-8d2b1c7e4a10",
		"payment_currency": "USD", "payment_amount": "100.00", "transaction_id": "1234567890123456789",
		"status": "COMPLETED", "failure_type": "",
	}
	get := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	completed := SignPayoutResult(key, get(base))
	want := SignUpper(key, "10086", "10086001", "0b5f6e0c-3c1a-4f7e-9a51-8d2b1c7e4a10", "USD", "100.00",
		"1234567890123456789", "COMPLETED", "")
	if completed != want {
		t.Fatalf("COMPLETED signed %s, want %s", completed, want)
	}
	tests := []struct {
		name   string
		change map[string]string
	}{
		{"failed", map[string]string{"status": "FAILED", "failure_type": "RAIL_REJECTED"}},
		{"another failure type", map[string]string{"status": "FAILED", "failure_type": "INSUFFICIENT_FUNDS"}},
		{"another payout", map[string]string{"transaction_id": "1234567890123456780"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := map[string]string{}
			for k, v := range base {
				m[k] = v
			}
			for k, v := range tc.change {
				m[k] = v
			}
			if got := SignPayoutResult(key, get(m)); got == completed {
				t.Errorf("%s signs as COMPLETED", tc.name)
			}
			if !VerifyPayoutResult(key, SignPayoutResult(key, get(m)), get(m)) {
				t.Errorf("%s does not verify", tc.name)
			}
			if VerifyPayoutResult(key, completed, get(m)) {
				t.Errorf("the COMPLETED signature verifies %s", tc.name)
			}
		})
	}
	request := SignUpper(key, "10086", "10086001", "0b5f6e0c-3c1a-4f7e-9a51-8d2b1c7e4a10", "USD", "100.00")
	if completed == request {
		t.Error("the result is signed as the request")
	}
}

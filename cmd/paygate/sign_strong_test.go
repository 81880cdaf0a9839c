package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/domain/signing"
)

// TestSignStrong: paygate sign -strong prints the Paygate-Signature of the
// vectors in docs/decisions.md ("Strong signatures").
func TestSignStrong(t *testing.T) {
	const key = "k3y-for-tests-0123456789abcdef"
	dir := t.TempDir()
	bodyFile := filepath.Join(dir, "refund.json")
	refund := `{"merchant_id":"10086","account_id":"10086001","encryption_data":"","refund_orders":[{"transaction_id":"1379868670095785984","order_no":"ORD-1","currency":"USD","amount":"12.34","refund_amount":"2.00"}]}`
	if err := os.WriteFile(bodyFile, []byte(refund+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fixed := []string{"-key", key, "-strong", "-path", "/v1/refund", "-nonce", "n0nce-0123456789abcdef", "-time", "1781524800"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"JSON body", append(fixed, "-body", `{"merchant_id":"10086","account_id":"10086001"}`),
			"t=1781524800,n=n0nce-0123456789abcdef,v1=9c89f905a93a6a509c87874060cba241afe5dd81a5685a95bc0f207101d480e4"},
		{"form body", append(fixed, "-body", "merchant_id=10086&account_id=10086001"),
			"t=1781524800,n=n0nce-0123456789abcdef,v1=9c89f905a93a6a509c87874060cba241afe5dd81a5685a95bc0f207101d480e4"},
		{"body file", append(fixed, "-body-file", bodyFile),
			"t=1781524800,n=n0nce-0123456789abcdef,v1=132cad11b588de01d9cfd943e1277cbb712b57f8b855590fc2c440cf2e89814f"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(append([]string{"sign"}, tc.args...), &out); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(out.String()); got != tc.want {
				t.Errorf("sign -strong = %s, want %s", got, tc.want)
			}
		})
	}

	t.Run("fresh nonce and time", func(t *testing.T) {
		var out bytes.Buffer
		if err := run([]string{"sign", "-key", key, "-strong", "-path", "/v1/capture", "-body", "a=1"}, &out); err != nil {
			t.Fatal(err)
		}
		sig, err := signing.ParseStrongHeader(strings.TrimSpace(out.String()))
		if err != nil || len(sig.Nonce) != 32 || sig.Timestamp == 0 {
			t.Fatalf("header %q: %+v, %v", out.String(), sig, err)
		}
	})

	for _, bad := range [][]string{
		{"-strong", "-path", "/v1/refund", "-body", "a=1"},                                 // no key
		{"-key", key, "-strong", "-body", "a=1"},                                           // no path
		{"-key", key, "-strong", "-path", "/v1/refund"},                                    // no body
		{"-key", key, "-strong", "-path", "/v1/refund", "-body", "a=1", "-nonce", "short"}, // bad nonce
		{"-key", key, "-strong", "-path", "/v1/refund", "-body", `{"a":"1","A":"2"}`},      // ambiguous body
		{"-key", key, "-strong", "-path", "/v1/refund", "-body", "a=1", "10086"},           // values too
	} {
		var out bytes.Buffer
		if err := run(append([]string{"sign"}, bad...), &out); err == nil {
			t.Errorf("sign %q succeeded: %s", bad, out.String())
		}
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/domain/signing"
)

func TestSignPicksTheAccountsKey(t *testing.T) {
	file := filepath.Join(t.TempDir(), "demo-merchant.json")
	if err := os.WriteFile(file, []byte(`{"merchant_id":"10086","account_id":"10086001","sign_key":"auto-key",
		"manual_account_id":"10086002","manual_sign_key":"manual-key"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		key     string
		wantErr string
	}{
		{"the file's account", []string{"-key-file", file, "a", "b"}, "auto-key", ""},
		{"the automatic account by id", []string{"-key-file", file, "-account", "10086001", "a", "b"}, "auto-key", ""},
		{"the manual account by id", []string{"-key-file", file, "-account", "10086002", "a", "b"}, "manual-key", ""},
		{"an account the file lacks", []string{"-key-file", file, "-account", "99999999", "a"}, "", "no key of account 99999999"},
		{"an account without a file", []string{"-account", "10086002", "a"}, "", "-account picks a key from -key-file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := runSign(tc.args, &out)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, want := strings.TrimSpace(out.String()), signing.Sign(tc.key, "a", "b"); got != want {
				t.Errorf("signature %s, want %s (key %s)", got, want, tc.key)
			}
		})
	}
}

package main

import (
	"testing"
	"unicode/utf8"
)

func TestNewConsoleUser(t *testing.T) {
	tests := []struct {
		name, email, role, merchant string
		wantErr                     bool
	}{
		{"a merchant user", "Shop@Example.com ", "merchant", "10086", false},
		{"finance", "finance@example.com", "finance", "", false},
		{"ops", "ops@example.com", "ops", "", false},
		{"a merchant user without a merchant", "shop@example.com", "merchant", "", true},
		{"finance bound to a merchant", "finance@example.com", "finance", "10086", true},
		{"no such role", "root@example.com", "admin", "", true},
		{"not an email", "shop", "ops", "", true},
		{"a display name, not an address", "Shop <shop@example.com>", "ops", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := newConsoleUser(tc.email, "", tc.role, tc.merchant)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err == nil && u.Email != "shop@example.com" && u.Email != tc.email {
				t.Errorf("email %q not normalised", u.Email)
			}
		})
	}
	seen := map[string]bool{}
	for range 100 {
		p := newPassword()
		if utf8.RuneCountInString(p) != 20 || seen[p] {
			t.Fatalf("password %q: want 20 characters, never repeated", p)
		}
		seen[p] = true
	}
}
